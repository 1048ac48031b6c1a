// TrapTarget: what the fast path needs from OpenSM to ask a trapping switch
// which of its ports changed (port_prober.h): its node GUID, the directed
// route to it from the SM, its M_Key, and the ports OpenSM's model has
// linked. Read under OpenSM's read lock; values only, no pointer into OpenSM
// survives it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/result.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

struct TrapTarget {
  uint64_t node_guid = 0;
  std::string dr_path;         // "0,1,17": from the SM's port
  uint64_t m_key = 0;          // host order
  std::vector<uint8_t> ports;  // switch ports OpenSM has linked to something
};

// The switch answering to `lid` (trap 128's switch LID). Errors when the LID
// is no switch's or OpenSM has no directed route to it. Takes the read lock.
Result<TrapTarget> read_trap_target(osm_opensm_t* osm, uint16_t lid);

}  // namespace railyard::sm_plugin
