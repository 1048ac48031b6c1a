// Table writer: railyard's ForwardingTables into OpenSM's switches.
//
// Writes row i of the tables into snapshot.switches[i]->new_lft for LIDs
// 0..max_lid_ho (OpenSM has allocated new_lft, lft_size bytes, filled with
// OSM_NO_PATH, and set max_lid_ho to the highest LID in use before calling the
// engine). LIDs beyond the tables stay OSM_NO_PATH. OpenSM then sends only the
// 64-entry blocks that differ from what the switch holds; the writer counts
// those blocks (new_lft vs the switch's current lft) for the log.
// Must be called with OpenSM's lock held.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/lft.h"
#include "routing/lft_digest.h"
#include "routing/result.h"
#include "sm_plugin/subnet_snapshot.h"

namespace railyard::sm_plugin {

struct WriteStats {
  uint32_t switches = 0;          // switches written
  uint64_t changed_blocks = 0;    // 64-entry blocks that differ from the switch's current LFT
  uint32_t switches_changed = 0;  // switches with at least one changed block
  // Each switch's LFT as written (new_lft, entries 0..max_lid_ho), by
  // routing::switch_lft_digest; in row order.
  std::vector<routing::SwitchDigest> digests;
};

// Errors when the tables do not belong to the snapshot (row count) or a switch
// has no new_lft: both would be internal errors; the pass then fails.
Result<WriteStats> write_tables(const SubnetSnapshot& snapshot, const routing::ForwardingTables& tables);

}  // namespace railyard::sm_plugin
