#include "routing/lft.h"

#include <algorithm>
#include <cstring>

namespace railyard::routing {

uint64_t ForwardingTables::changed_blocks(const ForwardingTables& prev, const ForwardingTables& next) {
  constexpr uint32_t kBlock = 64;
  uint32_t switches = std::max(prev.num_switches(), next.num_switches());
  uint32_t lids = std::max(prev.num_lids(), next.num_lids());
  uint64_t changed = 0;
  for (uint32_t s = 0; s < switches; ++s) {
    for (uint32_t b = 0; b < lids; b += kBlock) {
      for (uint32_t l = b; l < std::min(lids, b + kBlock); ++l) {
        uint8_t a = (s < prev.num_switches() && l < prev.num_lids()) ? prev.get(s, Lid{static_cast<uint16_t>(l)}) : kNoPath;
        uint8_t c = (s < next.num_switches() && l < next.num_lids()) ? next.get(s, Lid{static_cast<uint16_t>(l)}) : kNoPath;
        if (a != c) {
          ++changed;
          break;
        }
      }
    }
  }
  return changed;
}

}  // namespace railyard::routing
