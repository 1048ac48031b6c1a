// JSON -> events (event_codec.h): the inverse of event_encoder.cpp, field by
// field, with the same omissions read back as the same defaults.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

#include "api/protocol/event_codec.h"
#include "api/protocol/event_names.h"
#include "api/protocol/field_reader.h"
#include "routing/topology_reader.h"

namespace railyard::protocol {

namespace {

using nlohmann::json;

CounterPort read_port(const FieldReader& r) {
  return CounterPort{r.guid("node_guid"), r.uint<uint8_t>("port"), r.string("node_name")};
}

// `digests` (since the divergence check): absent in older plugins' lines.
std::optional<Digests> read_digests(const FieldReader& r, bool per_switch) {
  if (!r.has("digests")) return std::nullopt;
  const FieldReader d = r.object("digests");
  Digests out;
  out.policy = d.digest("policy");
  out.lfts = d.digest("lfts");
  if (!per_switch) return out;
  // {"<switch GUID>": "<digest>", ...}; sorted keys of fixed width: GUID order.
  const FieldReader switches = d.object("switches");
  for (const std::string& key : switches.keys()) {
    const std::optional<uint64_t> guid = parse_hex64(key);
    if (!guid) throw switches.bad_value(key, "is not a switch GUID (\"0x\" and 1..16 hex digits)");
    out.switches.push_back({Guid{*guid}, switches.digest(key)});
  }
  std::sort(out.switches.begin(), out.switches.end(),
            [](const routing::SwitchDigest& a, const routing::SwitchDigest& b) { return a.guid < b.guid; });
  return out;
}

TrapEvent read_trap(const FieldReader& r) {
  TrapEvent e;
  e.trap_num = r.uint<uint16_t>("trap_num");
  e.issuer_lid = r.uint<uint16_t>("issuer_lid");
  e.generic = r.boolean("generic");
  e.producer_type = r.uint<uint32_t>("producer_type");
  if (e.generic && e.trap_num == 128) e.lid = r.uint<uint16_t>("lid");
  return e;
}

LftChangeEvent read_lft_change(const FieldReader& r) {
  LftChangeEvent e;
  e.switch_guid = r.guid("switch_guid");
  e.switch_lid = r.uint<uint16_t>("switch_lid");
  e.block = r.sint<int32_t>("block");
  if (e.block < -1) throw r.bad_value("block", "must be a block number, or -1 for the LFT top");
  e.lft_top = r.uint<uint16_t>("lft_top");
  return e;
}

UcastRoutingDoneEvent read_routing_done(const FieldReader& r) {
  UcastRoutingDoneEvent e;
  const std::optional<RoutingReason> reason = parse_routing_reason(r.string("reason"));
  if (!reason) throw r.bad_value("reason", "must be heavy_sweep, reroute, fast_path or none");
  e.reason = *reason;
  e.requests = r.strings("requests");
  e.engine_ok = r.boolean("engine_ok");
  // Since the fast path: older plugins never sent it.
  if (r.has("blocks_changed")) {
    e.blocks_changed = r.sint<int64_t>("blocks_changed");
    if (e.blocks_changed < 0) throw r.bad_value("blocks_changed", "must not be negative");
  }
  e.digests = read_digests(r, false);
  return e;
}

FastPathEvent read_fast_path(const FieldReader& r) {
  FastPathEvent e;
  // `trigger` came with the trap fast path, `detours` and `ca_first` after it:
  // a line without them is an older plugin's.
  if (r.has("trigger")) e.trigger = r.string("trigger");
  if (e.trigger == kTrapTrigger) {
    e.trap_lid = r.uint<uint16_t>("trap_lid");
    e.links = r.strings("links");
    e.probe_ms = r.number("probe_ms");
    if (r.has("detours")) e.detours = r.uint<uint64_t>("detours");
  }
  if (r.has("known_down")) e.known_down = r.uint<uint32_t>("known_down");
  if (r.has("ca_first")) e.ca_first = r.boolean("ca_first");
  if (e.ca_first) e.ca_acked_ms = r.number("ca_acked_ms");
  e.requests = r.strings("requests");
  const std::string path = r.string("path");
  if (path != kPathPush && path != kPathOpenSm) throw r.bad_value("path", "must be push or opensm");
  e.pushed = path == kPathPush;
  if (!e.pushed) e.reason = r.string("reason");
  e.incremental = r.boolean("incremental");
  e.entries_changed = r.uint<uint64_t>("entries_changed");
  e.blocks_changed = r.uint<uint64_t>("blocks_changed");
  e.blocks_sent = r.uint<uint64_t>("blocks_sent");
  e.blocks_acked = r.uint<uint64_t>("blocks_acked");
  e.reposted = r.uint<uint64_t>("reposted");
  e.rounds = r.uint<uint32_t>("rounds");
  const FieldReader stage = r.object("stage_ms");
  e.read_ms = stage.number("read");
  e.route_ms = stage.number("route");
  e.order_ms = stage.number("order");
  e.push_ms = stage.number("push");
  e.total_ms = r.number("total_ms");
  e.digests = read_digests(r, false);
  return e;
}

RoutingPassEvent read_routing_pass(const FieldReader& r) {
  RoutingPassEvent e;
  e.pass = r.uint<uint64_t>("pass");
  const std::string status = r.string("status");
  if (status != kStatusOk && status != kStatusRefused) throw r.bad_value("status", "must be ok or refused");
  e.ok = status == kStatusOk;
  if (!e.ok) e.reason = r.string("reason");
  e.switches = r.uint<uint32_t>("switches");
  e.ca_ports = r.uint<uint32_t>("ca_ports");
  e.lids = r.uint<uint32_t>("lids");
  const FieldReader stage = r.object("stage_ms");
  e.stage_ms.policy = stage.number("policy");
  e.stage_ms.snapshot = stage.number("snapshot");
  e.stage_ms.plan = stage.number("plan");
  e.stage_ms.route = stage.number("route");
  e.stage_ms.write = stage.number("write");
  if (stage.has("hop_matrices")) {
    e.hops_ms = stage.number("hop_matrices");
    if (e.hops_ms < 0) throw stage.bad_value("hop_matrices", "must not be negative");
  }
  e.total_ms = r.number("total_ms");
  e.changed_blocks = r.uint<uint64_t>("changed_blocks");
  e.switches_changed = r.uint<uint32_t>("switches_changed");
  e.unreachable_pairs = r.uint<uint64_t>("unreachable_pairs");
  for (const FieldReader& ca : r.objects("unreachable_cas")) {
    UnreachableCa u;
    u.guid = ca.guid("guid");
    u.name = ca.string("name");
    u.lid = ca.uint<uint16_t>("lid");
    u.why = ca.string("why");
    if (ca.has("sources")) u.sources = ca.uint<uint32_t>("sources");
    e.unreachable_cas.push_back(std::move(u));
  }
  e.drained_pairs = r.uint<uint64_t>("drained_pairs");
  e.policy_file = r.string_or_null("policy_file");
  if (r.has("policy")) e.policy = r.string("policy");
  if (r.has("policy_error")) e.policy_error = r.string("policy_error");
  e.requests = r.strings("requests");
  e.digests = read_digests(r, true);
  return e;
}

FabricEvent read_fabric(const FieldReader& r) {
  FabricEvent e;
  e.pass = r.uint<uint64_t>("pass");
  const std::string text = r.string("topology");
  Result<routing::Fabric> fabric =
      routing::read_topology(text, "plugin snapshot (pass " + std::to_string(e.pass) + ")");
  if (!fabric) throw r.bad_value("topology", "does not read: " + fabric.error().message);
  e.fabric = std::make_shared<const routing::Fabric>(std::move(*fabric));
  return e;
}

FabricChangesEvent read_fabric_changes(const FieldReader& r) {
  FabricChangesEvent e;
  e.pass = r.uint<uint64_t>("pass");
  e.full = r.boolean("full");
  e.base = r.digest("base");
  e.fingerprint = r.digest("fingerprint");
  const std::vector<std::string> removed = r.strings("nodes_removed");
  for (size_t i = 0; i < removed.size(); ++i) {
    const std::optional<uint64_t> g = parse_hex64(removed[i]);
    if (!g) throw r.bad_value("nodes_removed[" + std::to_string(i) + "]", "must be a GUID (\"0x\" and 1..16 hex digits)");
    e.changes.nodes_removed.push_back(Guid{*g});
  }
  for (const FieldReader& n : r.objects("nodes")) {
    routing::NodeRecord node;
    node.guid = Guid{n.guid("guid")};
    const std::optional<routing::NodeType> type = parse_node_type(n.string("type"));
    if (!type) throw n.bad_value("type", "must be Switch, Ca or Rt");
    node.type = *type;
    node.num_ports = n.uint<uint8_t>("ports");
    node.system_guid = Guid{n.guid("system_guid")};
    node.desc = n.string("desc");
    node.name = n.string("name");
    const std::string states = n.string("states");
    if (states.size() != node.num_ports + 1u) {
      throw n.bad_value("states", "must have one character per port 0.." + std::to_string(node.num_ports));
    }
    for (size_t p = 0; p < states.size(); ++p) {
      const std::optional<routing::PortState> state = parse_port_state_char(states[p]);
      if (!state) throw n.bad_value("states", "must be made of ?, D, I, R and A");
      node.ports.push_back(routing::PortRecord{static_cast<uint8_t>(p), Guid{}, Lid{}, 0, *state});
    }
    for (const FieldReader& a : n.objects("addresses")) {
      const uint8_t port = a.uint<uint8_t>("port");
      if (port > node.num_ports) throw a.bad_value("port", "is beyond the node's " + std::to_string(node.num_ports) + " ports");
      routing::PortRecord& rec = node.ports[port];
      rec.guid = Guid{a.guid("guid")};
      rec.lid = Lid{a.uint<uint16_t>("lid")};
      rec.lmc = a.uint<uint8_t>("lmc");
      if (rec.lmc > 7) throw a.bad_value("lmc", "must be 0..7");
    }
    e.changes.nodes.push_back(std::move(node));
  }
  for (const FieldReader& l : r.objects("links_removed")) {
    e.changes.links_removed.push_back(routing::LinkEnd{Guid{l.guid("node")}, l.uint<uint8_t>("port")});
  }
  for (const FieldReader& l : r.objects("links")) {
    routing::LinkRecord link;
    link.a = routing::LinkEnd{Guid{l.guid("a")}, l.uint<uint8_t>("a_port")};
    link.b = routing::LinkEnd{Guid{l.guid("b")}, l.uint<uint8_t>("b_port")};
    const std::optional<routing::LinkWidth> width = parse_link_width(l.string("width"));
    if (!width) throw l.bad_value("width", "must be 1x, 2x, 4x, 8x, 12x or empty");
    const std::optional<routing::LinkSpeed> speed = parse_link_speed(l.string("speed"));
    if (!speed) throw l.bad_value("speed", "must be SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR or empty");
    const std::optional<routing::PortState> state = parse_port_state(l.string("state"));
    if (!state) throw l.bad_value("state", "must be unknown, down, init, armed or active");
    link.width = *width;
    link.speed = *speed;
    link.state = *state;
    e.changes.links.push_back(link);
  }
  return e;
}

PortCountersEvent read_port_counters(const FieldReader& r) {
  PortCountersEvent e;
  e.port = read_port(r);
  e.xmit_data = r.uint<uint64_t>("xmit_data");
  e.rcv_data = r.uint<uint64_t>("rcv_data");
  e.xmit_pkts = r.uint<uint64_t>("xmit_pkts");
  e.rcv_pkts = r.uint<uint64_t>("rcv_pkts");
  e.unicast_xmit_pkts = r.uint<uint64_t>("unicast_xmit_pkts");
  e.unicast_rcv_pkts = r.uint<uint64_t>("unicast_rcv_pkts");
  e.multicast_xmit_pkts = r.uint<uint64_t>("multicast_xmit_pkts");
  e.multicast_rcv_pkts = r.uint<uint64_t>("multicast_rcv_pkts");
  e.time_diff_s = r.sint<int64_t>("time_diff_s");
  return e;
}

PortErrorsEvent read_port_errors(const FieldReader& r) {
  PortErrorsEvent e;
  e.port = read_port(r);
  e.symbol_err = r.uint<uint64_t>("symbol_err");
  e.link_err_recover = r.uint<uint64_t>("link_err_recover");
  e.link_downed = r.uint<uint64_t>("link_downed");
  e.rcv_err = r.uint<uint64_t>("rcv_err");
  e.rcv_rem_phys_err = r.uint<uint64_t>("rcv_rem_phys_err");
  e.rcv_switch_relay_err = r.uint<uint64_t>("rcv_switch_relay_err");
  e.xmit_discards = r.uint<uint64_t>("xmit_discards");
  e.xmit_constraint_err = r.uint<uint64_t>("xmit_constraint_err");
  e.rcv_constraint_err = r.uint<uint64_t>("rcv_constraint_err");
  e.link_integrity = r.uint<uint64_t>("link_integrity");
  e.buffer_overrun = r.uint<uint64_t>("buffer_overrun");
  e.vl15_dropped = r.uint<uint64_t>("vl15_dropped");
  e.xmit_wait = r.uint<uint64_t>("xmit_wait");
  e.time_diff_s = r.sint<int64_t>("time_diff_s");
  return e;
}

PortSelectEvent read_port_select(const FieldReader& r) {
  PortSelectEvent e;
  e.port = read_port(r);
  e.xmit_wait = r.uint<uint64_t>("xmit_wait");
  e.time_diff_s = r.sint<int64_t>("time_diff_s");
  return e;
}

AckEvent read_ack(const FieldReader& r) { return AckEvent{r.string("id"), r.string("command")}; }

std::string read_sm_state(const FieldReader& r, std::string_view key) {
  std::string state = r.string(key);
  if (std::find(std::begin(kSmStates), std::end(kSmStates), state) == std::end(kSmStates)) {
    throw r.bad_value(key, "must be master, standby, discovering, not_active or unknown");
  }
  return state;
}

HelloEvent read_hello(const FieldReader& r) {
  HelloEvent e;
  e.plugin = r.string("plugin");
  e.version = r.string("version");
  e.pid = r.sint<int64_t>("pid");
  e.opensm = r.string("opensm");
  e.dropped = r.uint<uint64_t>("dropped");
  // Since the plugin reaches controllers on other hosts: optional.
  if (r.has("token")) e.token = r.string("token");
  if (r.has("sm_port_guid")) e.sm_port_guid = r.guid("sm_port_guid");
  if (r.has("sm_state")) e.sm_state = read_sm_state(r, "sm_state");
  return e;
}

SmStateEvent read_sm_state_event(const FieldReader& r) {
  SmStateEvent e;
  e.state = read_sm_state(r, "state");
  e.sm_port_guid = r.guid("sm_port_guid");
  return e;
}

// The body of each type that is not a SimpleEvent.
using BodyReader = EventBody (*)(const FieldReader&);
template <auto Read>
EventBody as_body(const FieldReader& r) {
  return Read(r);
}
constexpr std::pair<std::string_view, BodyReader> kReaders[] = {
    {"trap", as_body<read_trap>},
    {"lft_change", as_body<read_lft_change>},
    {"ucast_routing_done", as_body<read_routing_done>},
    {"routing_pass", as_body<read_routing_pass>},
    {"fabric", as_body<read_fabric>},
    {"port_counters", as_body<read_port_counters>},
    {"port_errors", as_body<read_port_errors>},
    {"port_select", as_body<read_port_select>},
    {"ack", as_body<read_ack>},
    {"hello", as_body<read_hello>},
    {"fast_path", as_body<read_fast_path>},
    {"fabric_changes", as_body<read_fabric_changes>},
    {"sm_state", as_body<read_sm_state_event>},
};

}  // namespace

Decoded<Envelope> decode_envelope(const json& line) {
  if (!line.is_object()) return DecodeError{DecodeError::Kind::kNotAnObject, "", "", "not a JSON object"};
  try {
    const FieldReader top(line, "");
    Envelope e;
    e.type = top.string("type");
    const FieldReader r(line, e.type);
    e.seq = r.uint<uint64_t>("seq");
    e.time = r.number("time");
    return e;
  } catch (const DecodeError& error) {
    return error;
  }
}

Decoded<EventBody> decode_event_body(std::string_view type, const json& line) {
  if (!line.is_object()) return DecodeError{DecodeError::Kind::kNotAnObject, "", "", "not a JSON object"};
  if (const std::optional<SimpleKind> kind = parse_simple_kind(type)) return EventBody{SimpleEvent{*kind}};
  for (const auto& [name, read] : kReaders) {
    if (name != type) continue;
    try {
      return read(FieldReader(line, type));
    } catch (const DecodeError& error) {
      return error;
    }
  }
  return DecodeError{DecodeError::Kind::kUnknownType, "", "", "unknown type '" + std::string(type) + "'"};
}

Decoded<Event> decode_event(const json& line) {
  Decoded<Envelope> envelope = decode_envelope(line);
  if (!envelope) return envelope.error();
  Decoded<EventBody> body = decode_event_body(envelope->type, line);
  if (!body) return body.error();
  return Event{envelope->seq, envelope->time, std::move(*body)};
}

Decoded<Event> decode_event_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DecodeError{DecodeError::Kind::kNotJson, "", "", "not JSON"};
  return decode_event(j);
}

}  // namespace railyard::protocol
