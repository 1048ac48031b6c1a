// The console's web assets (api/console/web/), built into the binary by
// api/console/embed.cmake: railyardd serves them under /console/, and
// `railyard verify --html` inlines grid.js into its report.
#pragma once

#include <span>
#include <string_view>

namespace railyard::console {

struct Asset {
  std::string_view name;          // "index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;
};

std::span<const Asset> assets();
// The asset called `name`; null when there is none.
const Asset* find_asset(std::string_view name);

}  // namespace railyard::console
