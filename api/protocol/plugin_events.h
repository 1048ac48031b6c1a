// The plugin's events: what libosmrailyard.so tells railyardd over the plugin
// socket (docs/plugin_protocol.md), as plain values. The one definition both
// sides use: the plugin fills them from OpenSM's data and encodes them
// (event_codec.h); the controller decodes the same structs from the lines.
//
// No OpenSM header here (only sm_plugin/ includes those): the plugin turns
// OpenSM's data into copies of numbers and short strings, never pointers into
// OpenSM. The one shared object is FabricEvent's immutable Fabric, which the
// plugin's channel thread serializes, so the topology text is never built
// under OpenSM's lock.
//
// Every struct compares by value (the round-trip tests). Fields that the wire
// carries only in some cases say so; the encoder leaves them out exactly then,
// and the decoder gives back the default shown here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "routing/fabric.h"
#include "routing/fabric_changes.h"
#include "routing/lft_digest.h"

namespace railyard::protocol {

// Events with no fields of their own.
enum class SimpleKind : uint8_t { kHeavySweepStart, kHeavySweepDone, kSubnetUp, kSaDbDumped, kStateChange };

struct SimpleEvent {
  SimpleKind kind = SimpleKind::kSubnetUp;
  bool operator==(const SimpleEvent&) const = default;
};

struct TrapEvent {
  uint16_t trap_num = 0;  // generic notices; vendor notices: the device id
  uint16_t issuer_lid = 0;
  bool generic = true;
  uint32_t producer_type = 0;  // generic: producer type; vendor: vendor id
  uint16_t lid = 0;            // generic trap 128 only: the LID of the switch that saw the change; 0 otherwise
  bool operator==(const TrapEvent&) const = default;
};

struct LftChangeEvent {
  uint64_t switch_guid = 0;
  uint16_t switch_lid = 0;
  int32_t block = -1;  // -1: only the LFT top changed
  uint16_t lft_top = 0;
  bool operator==(const LftChangeEvent&) const = default;
};

// What a routing pass (or a fast-path push) wrote, as digests
// (routing/lft_digest.h): the policy it planned with and the LFTs, in total
// and per switch. `switches` only in routing_pass (ascending GUID); a
// routing_pass or fast_path without digests (refused, an older plugin) has
// none on the wire.
struct Digests {
  uint64_t policy = 0;
  uint64_t lfts = 0;
  std::vector<routing::SwitchDigest> switches;
  bool operator==(const Digests&) const = default;
};

// kFastPath: not OpenSM's event but the plugin's fast path's: the last block
// it pushed was acknowledged.
enum class RoutingReason : uint8_t { kNone, kHeavySweep, kReroute, kFastPath };

struct UcastRoutingDoneEvent {
  RoutingReason reason = RoutingReason::kNone;
  std::vector<std::string> requests;  // controller request ids served by the pass before it
  bool engine_ok = false;             // railyard's last pass wrote the tables
  int64_t blocks_changed = -1;        // kFastPath: the LFT blocks it changed; < 0: not on the wire
  std::optional<Digests> digests;     // the tables in place (no `switches`); absent: unknown or older plugin
  bool operator==(const UcastRoutingDoneEvent&) const = default;
};

// How the plugin's fast path carried out controller commands, or a link
// failure it learnt of by trap 128.
struct FastPathEvent {
  std::string trigger = "command";  // "command" (requests) or "trap" (a port of trap_lid's switch changed)
  uint16_t trap_lid = 0;            // trap only (as links, probe_ms, detours)
  std::vector<std::string> links;   // the links the probe found changed, "GUID[port] down|up"
  double probe_ms = 0;
  uint64_t detours = 0;             // switches sent to by a route around the failure (OpenSM's crossed it)
  uint32_t known_down = 0;          // links found down earlier that OpenSM's model still had: routed as down
  bool ca_first = false;            // the CA columns were pushed first, then the switch LIDs'
  double ca_acked_ms = 0;           // ca_first only: push start -> every CA block acknowledged
  std::vector<std::string> requests;
  bool pushed = false;       // true: blocks pushed and acknowledged; false: left to OpenSM's reroute
  std::string reason;        // !pushed only: why
  bool incremental = false;  // the route was incremental (routing/reroute.h)
  uint64_t entries_changed = 0;
  uint64_t blocks_changed = 0;  // 64-entry LFT blocks that differ
  uint64_t blocks_sent = 0;     // Sets posted, re-posts included
  uint64_t blocks_acked = 0;
  uint64_t reposted = 0;
  uint32_t rounds = 0;
  double read_ms = 0, route_ms = 0, order_ms = 0, push_ms = 0, total_ms = 0;
  std::optional<Digests> digests;  // pushed only: the tables now in place (no `switches`)
  bool operator==(const FastPathEvent&) const = default;
};

struct UnreachableCa {
  uint64_t guid = 0;
  std::string name;
  uint16_t lid = 0;
  std::string why;       // "gone": no longer in the subnet (its link is down); "no route": in it, no route to it
  uint32_t sources = 0;  // "no route": CA ports that cannot reach it; 0: not on the wire
  bool operator==(const UnreachableCa&) const = default;
};

struct StageTimes {
  double policy = 0, snapshot = 0, plan = 0, route = 0, write = 0;
  bool operator==(const StageTimes&) const = default;
};

struct RoutingPassEvent {
  uint64_t pass = 0;
  bool ok = false;
  std::string reason;  // !ok only: why it was refused
  uint32_t switches = 0;
  uint32_t ca_ports = 0;
  uint32_t lids = 0;
  StageTimes stage_ms;
  double hops_ms = -1;  // hop matrices before the pass; < 0: built by OpenSM (not on the wire)
  double total_ms = 0;
  uint64_t changed_blocks = 0;
  uint32_t switches_changed = 0;
  uint64_t unreachable_pairs = 0;
  std::vector<UnreachableCa> unreachable_cas;
  uint64_t drained_pairs = 0;
  std::string policy_file;   // empty: no file, the default policy (null on the wire)
  std::string policy;        // the policy that planned: "default", the file, "last policy that applied"; may be empty
  std::string policy_error;  // the policy file does not parse (the last good one is in force); may be empty
  std::vector<std::string> requests;
  std::optional<Digests> digests;  // ok passes: the policy that planned and the LFTs written
  bool operator==(const RoutingPassEvent&) const = default;
};

// The routed fabric, as railyard topology text on the wire
// (routing/topology_writer.h, with LIDs). Equal when both are absent, or
// both write the same topology text.
struct FabricEvent {
  uint64_t pass = 0;
  std::shared_ptr<const routing::Fabric> fabric;  // null: an empty topology on the wire
  bool operator==(const FabricEvent& other) const;
};

// The routed fabric as changes (routing/fabric_changes.h): the whole fabric
// once per connection (`full`), then what changed since the last one sent on
// it. `base` is the fabric_fingerprint of the fabric the changes apply to
// (0 when full), `fingerprint` that of the result: the controller applies
// them only to a copy with that fingerprint, checks the result's, and asks
// for the whole fabric again (`send_fabric`) when either differs.
struct FabricChangesEvent {
  uint64_t pass = 0;
  bool full = false;
  uint64_t base = 0;
  uint64_t fingerprint = 0;
  routing::FabricChanges changes;
  bool operator==(const FabricChangesEvent&) const = default;
};

struct CounterPort {
  uint64_t node_guid = 0;
  uint8_t port = 0;
  std::string node_name;
  bool operator==(const CounterPort&) const = default;
};

struct PortCountersEvent {
  CounterPort port;
  uint64_t xmit_data = 0, rcv_data = 0, xmit_pkts = 0, rcv_pkts = 0;
  uint64_t unicast_xmit_pkts = 0, unicast_rcv_pkts = 0, multicast_xmit_pkts = 0, multicast_rcv_pkts = 0;
  int64_t time_diff_s = 0;
  bool operator==(const PortCountersEvent&) const = default;
};

struct PortErrorsEvent {
  CounterPort port;
  uint64_t symbol_err = 0, link_err_recover = 0, link_downed = 0, rcv_err = 0, rcv_rem_phys_err = 0,
           rcv_switch_relay_err = 0, xmit_discards = 0, xmit_constraint_err = 0, rcv_constraint_err = 0,
           link_integrity = 0, buffer_overrun = 0, vl15_dropped = 0, xmit_wait = 0;
  int64_t time_diff_s = 0;
  bool operator==(const PortErrorsEvent&) const = default;
};

struct PortSelectEvent {
  CounterPort port;
  uint64_t xmit_wait = 0;
  int64_t time_diff_s = 0;
  bool operator==(const PortSelectEvent&) const = default;
};

struct AckEvent {
  std::string id;
  std::string command;  // the command's type, "reroute" or "policy_changed"
  bool operator==(const AckEvent&) const = default;
};

// OpenSM's SM state (SMInfo's SMState) as the wire writes it: "master",
// "standby", "discovering", "not_active", "unknown".
inline constexpr std::string_view kSmStates[] = {"master", "standby", "discovering", "not_active", "unknown"};
inline constexpr std::string_view kSmMaster = "master";

// The optional fields (since the plugin reaches controllers on other hosts,
// docs/plugin_protocol.md) are left off the wire when empty or 0.
struct HelloEvent {
  std::string plugin;
  std::string version;
  int64_t pid = 0;
  std::string opensm;
  uint64_t dropped = 0;
  std::string token;          // the controller's shared secret (TLS connections); empty: none
  uint64_t sm_port_guid = 0;  // the SM's port GUID; 0: unknown
  std::string sm_state;       // one of kSmStates; empty: unknown (an older plugin)
  bool operator==(const HelloEvent&) const = default;
};

// OpenSM's SM state changed (master, standby, ...): the controller follows
// which of several plugins is the master's.
struct SmStateEvent {
  std::string state;  // one of kSmStates
  uint64_t sm_port_guid = 0;
  bool operator==(const SmStateEvent&) const = default;
};

using EventBody = std::variant<SimpleEvent, TrapEvent, LftChangeEvent, UcastRoutingDoneEvent, RoutingPassEvent,
                               FabricEvent, PortCountersEvent, PortErrorsEvent, PortSelectEvent, AckEvent,
                               HelloEvent, FastPathEvent, FabricChangesEvent, SmStateEvent>;

// What every line carries besides its body.
struct Event {
  uint64_t seq = 0;  // per plugin process, 1, 2, ...; dropped events take numbers too
  double time = 0;   // Unix time, seconds (to the microsecond on the wire)
  EventBody body;
  bool operator==(const Event&) const = default;
};

// The `type` of a body ("trap", "routing_pass", ...).
std::string_view event_type(const EventBody& body);

}  // namespace railyard::protocol
