#include "routing/lft.h"

#include <algorithm>
#include <cstring>

namespace railyard::routing {

// Rows compare 64 bytes at a time (memcmp) over the LIDs both tables have;
// past a table's end, and for rows it lacks, entries count as kNoPath, which is
// what a switch holds for LIDs beyond its table.
uint64_t ForwardingTables::changed_blocks(const ForwardingTables& prev, const ForwardingTables& next) {
  constexpr uint32_t kBlock = 64;
  const uint32_t switches = std::max(prev.num_switches(), next.num_switches());
  const uint32_t lids = std::max(prev.num_lids(), next.num_lids());
  const uint32_t common = std::min(prev.num_lids(), next.num_lids());
  auto entry = [](const ForwardingTables& t, uint32_t s, uint32_t l) {
    return (s < t.num_switches() && l < t.num_lids()) ? t.ports_[t.index(s, l)] : kNoPath;
  };
  uint64_t changed = 0;
  for (uint32_t s = 0; s < switches; ++s) {
    const bool both = s < prev.num_switches() && s < next.num_switches();
    for (uint32_t b = 0; b < lids; b += kBlock) {
      const uint32_t end = std::min(lids, b + kBlock);
      if (both && end <= common) {
        changed += std::memcmp(prev.ports_.data() + prev.index(s, b), next.ports_.data() + next.index(s, b), end - b) != 0;
        continue;
      }
      for (uint32_t l = b; l < end; ++l) {
        if (entry(prev, s, l) != entry(next, s, l)) {
          ++changed;
          break;
        }
      }
    }
  }
  return changed;
}

}  // namespace railyard::routing
