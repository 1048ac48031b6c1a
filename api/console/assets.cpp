#include "api/console/assets.h"

namespace railyard::console {

const Asset* find_asset(std::string_view name) {
  for (const Asset& a : assets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace railyard::console
