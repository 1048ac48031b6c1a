// Directed-route SMPs for the fast path's port probe (IBA 1.3 vol. 1,
// 14.2.1.2 and 14.2.5.6): a Get(PortInfo) by directed route, and the port
// state read off its response. Pure bytes in, bytes out; the probe process
// (port_probe.cpp) sends them with libibumad.
//
// Why its own SMPs, not OpenSM's: trap 128 names the switch, not the port,
// and OpenSM records port states only in a heavy sweep (a Get(PortInfo)
// through OpenSM's receiver unlinks nodes and starts a partial discovery).
// A requester-only agent in a separate process asks the ports of the
// trapping switch directly.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "routing/result.h"

namespace railyard::sm_plugin {

inline constexpr size_t kSmpSize = 256;
inline constexpr uint8_t kSmpDirectClass = 0x81;
inline constexpr uint16_t kAttrPortInfo = 0x0015;
inline constexpr size_t kMaxHops = 63;

// The directed route to a node: the out port at each hop from the SM's port
// (OpenSM's osm_dr_path_t path[1..hop_count]); empty = the SM's own node.
struct DrPath {
  std::vector<uint8_t> hops;
};

// "0" (the SM's node), or out ports joined by commas, e.g. "0,1,17,3" (the
// leading 0 as infiniband-diags write it, optional).
Result<DrPath> parse_dr_path(std::string_view text);
std::string to_string(const DrPath& path);

using Smp = std::array<uint8_t, kSmpSize>;

// A Get(PortInfo) of `port` of the node at `path`, with transaction id `tid`.
Smp portinfo_get(const DrPath& path, uint8_t port, uint64_t tid, uint64_t m_key);

// What a PortInfo response says of the port.
struct PortStatus {
  uint8_t port = 0;
  uint8_t state = 0;       // PortState: 1 Down, 2 Init, 3 Armed, 4 Active
  uint8_t phys_state = 0;  // PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp, ...
};

// The transaction id and, for a good GetResp(PortInfo), the port's status;
// an error for anything else (wrong class, method or attribute, a non-zero
// status, a short MAD).
struct SmpReply {
  uint64_t tid = 0;
  PortStatus status;
};
Result<SmpReply> parse_portinfo_reply(std::span<const uint8_t> mad);

}  // namespace railyard::sm_plugin
