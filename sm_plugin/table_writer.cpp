#include "sm_plugin/table_writer.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace railyard::sm_plugin {

namespace {

constexpr uint32_t kBlock = IB_SMP_DATA_SIZE;  // 64 LFT entries per LinearForwardingTable block

}  // namespace

Result<WriteStats> write_tables(const SubnetSnapshot& snapshot, const routing::ForwardingTables& tables) {
  if (tables.num_switches() != snapshot.switches.size()) {
    return Error{"tables have " + std::to_string(tables.num_switches()) + " rows for " +
                 std::to_string(snapshot.switches.size()) + " switches"};
  }
  WriteStats stats;
  stats.digests.reserve(snapshot.switches.size());
  const auto rows = snapshot.fabric.switches();
  for (uint32_t i = 0; i < snapshot.switches.size(); ++i) {
    osm_switch_t* sw = snapshot.switches[i];
    if (sw == nullptr || sw->new_lft == nullptr) {
      return Error{"switch " + std::to_string(i) + " has no new LFT allocated by OpenSM"};
    }
    // Entries 0..max_lid_ho, never beyond the buffer OpenSM allocated.
    const uint32_t end = std::min<uint32_t>(uint32_t{sw->max_lid_ho} + 1, sw->lft_size);
    const auto row = tables.row(i);
    const uint32_t copy = std::min<uint32_t>(end, static_cast<uint32_t>(row.size()));
    std::memcpy(sw->new_lft, row.data(), copy);
    std::memset(sw->new_lft + copy, OSM_NO_PATH, end - copy);
    ++stats.switches;
    const Guid guid = snapshot.fabric.node(rows[i]).guid;
    stats.digests.push_back({guid, routing::switch_lft_digest(guid, {sw->new_lft, end})});

    // Blocks OpenSM will send: those differing from the switch's current LFT.
    uint64_t changed = 0;
    for (uint32_t start = 0; start < end; start += kBlock) {
      const uint32_t len = std::min(kBlock, end - start);
      if (sw->lft == nullptr || std::memcmp(sw->new_lft + start, sw->lft + start, len) != 0) ++changed;
    }
    stats.changed_blocks += changed;
    if (changed) ++stats.switches_changed;
  }
  return stats;
}

}  // namespace railyard::sm_plugin
