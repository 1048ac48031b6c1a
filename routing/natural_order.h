// Natural order of names: digit runs compare as numbers, so "node2" sorts
// before "node10" (host and switch names as operators write them).
#pragma once

#include <string_view>

namespace railyard::routing {

bool natural_less(std::string_view a, std::string_view b);

}  // namespace railyard::routing
