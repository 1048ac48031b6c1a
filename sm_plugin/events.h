// Events: what the plugin tells the controller (docs/plugin_protocol.md), as
// plain values.
//
// report() and the routing pass turn OpenSM's data into one of these structs
// (copies of numbers and short strings, no pointers into OpenSM) and push it
// onto the EventChannel; the channel's thread encodes it (event_json.h) and
// writes it. The one exception is FabricEvent: it shares an immutable Fabric,
// which the channel's thread serializes, so the topology text is never built
// under OpenSM's lock. No OpenSM header here: encoding and the channel are
// unit-tested without OpenSM.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "routing/fabric.h"

namespace railyard::sm_plugin {

// Events with no fields of their own.
enum class SimpleKind : uint8_t { kHeavySweepStart, kHeavySweepDone, kSubnetUp, kSaDbDumped, kStateChange };

struct SimpleEvent {
  SimpleKind kind = SimpleKind::kSubnetUp;
};

struct TrapEvent {
  uint16_t trap_num = 0;  // generic notices; vendor notices: the device id
  uint16_t issuer_lid = 0;
  bool generic = true;
  uint32_t producer_type = 0;  // generic: producer type; vendor: vendor id
  uint16_t lid = 0;            // trap 128: the LID of the switch that saw the change; 0 otherwise
};

struct LftChangeEvent {
  uint64_t switch_guid = 0;
  uint16_t switch_lid = 0;
  int32_t block = -1;  // -1: only the LFT top changed
  uint16_t lft_top = 0;
};

// kFastPath: not OpenSM's event but the fast path's (fast_path.h): the last
// block it pushed was acknowledged.
enum class RoutingReason : uint8_t { kNone, kHeavySweep, kReroute, kFastPath };

struct UcastRoutingDoneEvent {
  RoutingReason reason = RoutingReason::kNone;
  std::vector<std::string> requests;  // controller request ids served by the pass before it
  bool engine_ok = false;             // railyard's last pass wrote the tables
  int64_t blocks_changed = -1;        // kFastPath: the LFT blocks it changed; < 0: not sent
};

// How the fast path (fast_path.h) carried out controller commands.
struct FastPathEvent {
  std::string trigger = "command";  // "command" (requests) or "trap" (a port of trap_lid's switch changed)
  uint16_t trap_lid = 0;
  std::vector<std::string> links;   // trap: the links the probe found changed, "GUID[port] down|up"
  double probe_ms = 0;
  uint64_t detours = 0;             // trap: switches sent to by a route around the failure (OpenSM's crossed it)
  bool ca_first = false;            // the CA columns were pushed first, then the switch LIDs'
  double ca_acked_ms = 0;           // ca_first: push start -> every CA block acknowledged
  std::vector<std::string> requests;
  bool pushed = false;     // true: blocks pushed and acknowledged; false: left to OpenSM's reroute
  std::string reason;      // !pushed: why
  bool incremental = false;  // the route was incremental (routing/reroute.h)
  uint64_t entries_changed = 0;
  uint64_t blocks_changed = 0;  // 64-entry LFT blocks that differ
  uint64_t blocks_sent = 0;     // Sets posted, re-posts included
  uint64_t blocks_acked = 0;
  uint64_t reposted = 0;
  uint32_t rounds = 0;
  double read_ms = 0, route_ms = 0, order_ms = 0, push_ms = 0, total_ms = 0;
};

struct UnreachableCa {
  uint64_t guid = 0;
  std::string name;
  uint16_t lid = 0;
  std::string why;  // "gone": no longer in the subnet (its link is down); "no route": in the subnet, no route to it
  uint32_t sources = 0;  // "no route": CA ports that cannot reach it
};

struct StageTimes {
  double policy = 0, snapshot = 0, plan = 0, route = 0, write = 0;
};

struct RoutingPassEvent {
  uint64_t pass = 0;
  bool ok = false;
  std::string reason;  // why it was refused
  uint32_t switches = 0;
  uint32_t ca_ports = 0;
  uint32_t lids = 0;
  StageTimes stage_ms;
  double hops_ms = -1;  // hop matrices before the pass; < 0: built by OpenSM
  double total_ms = 0;
  uint64_t changed_blocks = 0;
  uint32_t switches_changed = 0;
  uint64_t unreachable_pairs = 0;
  std::vector<UnreachableCa> unreachable_cas;
  uint64_t drained_pairs = 0;
  std::string policy_file;   // empty: no file, the default policy
  std::string policy;        // the policy that planned: "default", the file, "last policy that applied"
  std::string policy_error;  // the policy file does not parse (the last good one is in force)
  std::vector<std::string> requests;
};

struct FabricEvent {
  uint64_t pass = 0;
  std::shared_ptr<const routing::Fabric> fabric;  // serialized by the channel's thread
};

struct CounterPort {
  uint64_t node_guid = 0;
  uint8_t port = 0;
  std::string node_name;
};

struct PortCountersEvent {
  CounterPort port;
  uint64_t xmit_data = 0, rcv_data = 0, xmit_pkts = 0, rcv_pkts = 0;
  uint64_t unicast_xmit_pkts = 0, unicast_rcv_pkts = 0, multicast_xmit_pkts = 0, multicast_rcv_pkts = 0;
  int64_t time_diff_s = 0;
};

struct PortErrorsEvent {
  CounterPort port;
  uint64_t symbol_err = 0, link_err_recover = 0, link_downed = 0, rcv_err = 0, rcv_rem_phys_err = 0,
           rcv_switch_relay_err = 0, xmit_discards = 0, xmit_constraint_err = 0, rcv_constraint_err = 0,
           link_integrity = 0, buffer_overrun = 0, vl15_dropped = 0, xmit_wait = 0;
  int64_t time_diff_s = 0;
};

struct PortSelectEvent {
  CounterPort port;
  uint64_t xmit_wait = 0;
  int64_t time_diff_s = 0;
};

struct AckEvent {
  std::string id;
  std::string command;
};

struct HelloEvent {
  std::string plugin;
  std::string version;
  int64_t pid = 0;
  std::string opensm;
  uint64_t dropped = 0;
};

using EventBody = std::variant<SimpleEvent, TrapEvent, LftChangeEvent, UcastRoutingDoneEvent, RoutingPassEvent,
                               FabricEvent, PortCountersEvent, PortErrorsEvent, PortSelectEvent, AckEvent,
                               HelloEvent, FastPathEvent>;

struct Event {
  uint64_t seq = 0;
  double time = 0;  // Unix time, seconds
  EventBody body;
};

// Unix time now, seconds.
double unix_time_now();

}  // namespace railyard::sm_plugin
