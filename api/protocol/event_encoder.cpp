// Events -> JSON text (event_codec.h). Byte for byte what the plugin has
// always sent: the same keys, the same rounding, the same omissions.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "api/protocol/event_codec.h"
#include "api/protocol/event_names.h"
#include "routing/topology_writer.h"

namespace railyard::protocol {

namespace {

using nlohmann::json;

std::string guid_text(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, guid);
  return buf;
}

// `v` rounded to `per_unit` steps (1000: milli-, 1e6: micro-), or as it is
// when scaling it would overflow: a line never carries a non-finite number
// (nlohmann::json writes those as null).
double rounded(double v, double per_unit) {
  const double r = std::round(v * per_unit) / per_unit;
  return std::isfinite(r) ? r : v;
}

// Milliseconds to the microsecond: enough for stage times, short lines.
double ms(double v) { return rounded(v, 1000.0); }

void put_port(json& j, const CounterPort& p) {
  j["node_guid"] = guid_text(p.node_guid);
  j["port"] = p.port;
  j["node_name"] = p.node_name;
}

json digests_json(const Digests& d, bool per_switch) {
  json j = {{"policy", routing::digest_text(d.policy)}, {"lfts", routing::digest_text(d.lfts)}};
  if (per_switch) {
    // Keys are fixed-width GUIDs, so the sorted object is in GUID order.
    json switches = json::object();
    for (const routing::SwitchDigest& s : d.switches) switches[guid_text(s.guid.value)] = routing::digest_text(s.lft);
    j["switches"] = std::move(switches);
  }
  return j;
}

void fill(json&, const SimpleEvent&) {}

void fill(json& j, const TrapEvent& e) {
  j["trap_num"] = e.trap_num;
  j["issuer_lid"] = e.issuer_lid;
  j["generic"] = e.generic;
  j["producer_type"] = e.producer_type;
  if (e.generic && e.trap_num == 128) j["lid"] = e.lid;
}

void fill(json& j, const LftChangeEvent& e) {
  j["switch_guid"] = guid_text(e.switch_guid);
  j["switch_lid"] = e.switch_lid;
  j["block"] = e.block;
  j["lft_top"] = e.lft_top;
}

void fill(json& j, const UcastRoutingDoneEvent& e) {
  j["reason"] = to_string(e.reason);
  j["requests"] = e.requests;
  j["engine_ok"] = e.engine_ok;
  if (e.blocks_changed >= 0) j["blocks_changed"] = e.blocks_changed;
  if (e.digests) j["digests"] = digests_json(*e.digests, false);
}

void fill(json& j, const FastPathEvent& e) {
  j["trigger"] = e.trigger;
  if (e.trigger == kTrapTrigger) {
    j["trap_lid"] = e.trap_lid;
    j["links"] = e.links;
    j["probe_ms"] = ms(e.probe_ms);
    j["detours"] = e.detours;
  }
  if (e.known_down) j["known_down"] = e.known_down;
  if (e.ca_first) {
    j["ca_first"] = true;
    j["ca_acked_ms"] = ms(e.ca_acked_ms);
  }
  j["requests"] = e.requests;
  j["path"] = e.pushed ? kPathPush : kPathOpenSm;
  if (!e.pushed) j["reason"] = e.reason;
  j["incremental"] = e.incremental;
  j["entries_changed"] = e.entries_changed;
  j["blocks_changed"] = e.blocks_changed;
  j["blocks_sent"] = e.blocks_sent;
  j["blocks_acked"] = e.blocks_acked;
  j["reposted"] = e.reposted;
  j["rounds"] = e.rounds;
  j["stage_ms"] = {{"read", ms(e.read_ms)}, {"route", ms(e.route_ms)}, {"order", ms(e.order_ms)},
                   {"push", ms(e.push_ms)}};
  j["total_ms"] = ms(e.total_ms);
  if (e.digests) j["digests"] = digests_json(*e.digests, false);
}

void fill(json& j, const RoutingPassEvent& e) {
  j["pass"] = e.pass;
  j["status"] = e.ok ? kStatusOk : kStatusRefused;
  if (!e.ok) j["reason"] = e.reason;
  j["switches"] = e.switches;
  j["ca_ports"] = e.ca_ports;
  j["lids"] = e.lids;
  j["stage_ms"] = {{"policy", ms(e.stage_ms.policy)},
                   {"snapshot", ms(e.stage_ms.snapshot)},
                   {"plan", ms(e.stage_ms.plan)},
                   {"route", ms(e.stage_ms.route)},
                   {"write", ms(e.stage_ms.write)}};
  if (e.hops_ms >= 0) j["stage_ms"]["hop_matrices"] = ms(e.hops_ms);
  j["total_ms"] = ms(e.total_ms);
  j["changed_blocks"] = e.changed_blocks;
  j["switches_changed"] = e.switches_changed;
  j["unreachable_pairs"] = e.unreachable_pairs;
  json cas = json::array();
  for (const auto& ca : e.unreachable_cas) {
    json c = {{"guid", guid_text(ca.guid)}, {"name", ca.name}, {"lid", ca.lid}, {"why", ca.why}};
    if (ca.sources) c["sources"] = ca.sources;
    cas.push_back(std::move(c));
  }
  j["unreachable_cas"] = std::move(cas);
  j["drained_pairs"] = e.drained_pairs;
  j["policy_file"] = e.policy_file.empty() ? json(nullptr) : json(e.policy_file);
  if (!e.policy.empty()) j["policy"] = e.policy;
  if (!e.policy_error.empty()) j["policy_error"] = e.policy_error;
  j["requests"] = e.requests;
  if (e.digests) j["digests"] = digests_json(*e.digests, true);
}

void fill(json& j, const FabricEvent& e) {
  j["pass"] = e.pass;
  j["topology"] = e.fabric ? routing::write_topology(*e.fabric) : std::string();
}

void fill(json& j, const FabricChangesEvent& e) {
  j["pass"] = e.pass;
  j["full"] = e.full;
  j["base"] = routing::digest_text(e.base);
  j["fingerprint"] = routing::digest_text(e.fingerprint);
  json removed = json::array();
  for (const Guid g : e.changes.nodes_removed) removed.push_back(guid_text(g.value));
  j["nodes_removed"] = std::move(removed);
  json nodes = json::array();
  for (const routing::NodeRecord& n : e.changes.nodes) {
    json node = {{"guid", guid_text(n.guid.value)},
                 {"type", routing::to_string(n.type)},
                 {"ports", n.num_ports},
                 {"system_guid", guid_text(n.system_guid.value)},
                 {"desc", n.desc},
                 {"name", n.name}};
    std::string states;
    json addresses = json::array();
    for (const routing::PortRecord& p : n.ports) {
      states += port_state_char(p.state);
      if (p.guid.valid() || p.lid.value || p.lmc) {
        addresses.push_back({{"port", p.num}, {"guid", guid_text(p.guid.value)}, {"lid", p.lid.value}, {"lmc", p.lmc}});
      }
    }
    node["states"] = std::move(states);
    node["addresses"] = std::move(addresses);
    nodes.push_back(std::move(node));
  }
  j["nodes"] = std::move(nodes);
  json links_removed = json::array();
  for (const routing::LinkEnd& end : e.changes.links_removed) {
    links_removed.push_back({{"node", guid_text(end.node.value)}, {"port", end.port}});
  }
  j["links_removed"] = std::move(links_removed);
  json links = json::array();
  for (const routing::LinkRecord& l : e.changes.links) {
    links.push_back({{"a", guid_text(l.a.node.value)},
                     {"a_port", l.a.port},
                     {"b", guid_text(l.b.node.value)},
                     {"b_port", l.b.port},
                     {"width", routing::to_string(l.width)},
                     {"speed", routing::to_string(l.speed)},
                     {"state", routing::to_string(l.state)}});
  }
  j["links"] = std::move(links);
}

void fill(json& j, const PortCountersEvent& e) {
  put_port(j, e.port);
  j["xmit_data"] = e.xmit_data;
  j["rcv_data"] = e.rcv_data;
  j["xmit_pkts"] = e.xmit_pkts;
  j["rcv_pkts"] = e.rcv_pkts;
  j["unicast_xmit_pkts"] = e.unicast_xmit_pkts;
  j["unicast_rcv_pkts"] = e.unicast_rcv_pkts;
  j["multicast_xmit_pkts"] = e.multicast_xmit_pkts;
  j["multicast_rcv_pkts"] = e.multicast_rcv_pkts;
  j["time_diff_s"] = e.time_diff_s;
}

void fill(json& j, const PortErrorsEvent& e) {
  put_port(j, e.port);
  j["symbol_err"] = e.symbol_err;
  j["link_err_recover"] = e.link_err_recover;
  j["link_downed"] = e.link_downed;
  j["rcv_err"] = e.rcv_err;
  j["rcv_rem_phys_err"] = e.rcv_rem_phys_err;
  j["rcv_switch_relay_err"] = e.rcv_switch_relay_err;
  j["xmit_discards"] = e.xmit_discards;
  j["xmit_constraint_err"] = e.xmit_constraint_err;
  j["rcv_constraint_err"] = e.rcv_constraint_err;
  j["link_integrity"] = e.link_integrity;
  j["buffer_overrun"] = e.buffer_overrun;
  j["vl15_dropped"] = e.vl15_dropped;
  j["xmit_wait"] = e.xmit_wait;
  j["time_diff_s"] = e.time_diff_s;
}

void fill(json& j, const PortSelectEvent& e) {
  put_port(j, e.port);
  j["xmit_wait"] = e.xmit_wait;
  j["time_diff_s"] = e.time_diff_s;
}

void fill(json& j, const AckEvent& e) {
  j["id"] = e.id;
  j["command"] = e.command;
}

void fill(json& j, const HelloEvent& e) {
  j["plugin"] = e.plugin;
  j["version"] = e.version;
  j["pid"] = e.pid;
  j["opensm"] = e.opensm;
  j["dropped"] = e.dropped;
  if (!e.token.empty()) j["token"] = e.token;
  if (e.sm_port_guid != 0) j["sm_port_guid"] = guid_text(e.sm_port_guid);
  if (!e.sm_state.empty()) j["sm_state"] = e.sm_state;
}

void fill(json& j, const SmStateEvent& e) {
  j["state"] = e.state;
  j["sm_port_guid"] = guid_text(e.sm_port_guid);
}

}  // namespace

std::string encode_event(const Event& event) {
  json j;
  j["type"] = event_type(event.body);
  j["seq"] = event.seq;
  j["time"] = rounded(event.time, 1e6);  // seconds to the microsecond
  std::visit([&j](const auto& body) { fill(j, body); }, event.body);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace railyard::protocol
