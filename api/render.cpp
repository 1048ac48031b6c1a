#include "api/render.h"

#include "api/api.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>

#include "routing/node_lookup.h"

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;
using routing::Fabric;

NodeId find_node_or_lid(const Fabric& f, const std::string& ref, Lid* lid) {
  *lid = Lid{};
  // A plain number (or 0x with <= 4 hex digits) is a LID.
  uint32_t v = 0;
  const bool hex = ref.size() > 2 && ref.size() <= 6 && ref[0] == '0' && (ref[1] == 'x' || ref[1] == 'X');
  const char* b = ref.data() + (hex ? 2 : 0);
  auto [end, ec] = std::from_chars(b, ref.data() + ref.size(), v, hex ? 16 : 10);
  if (!ref.empty() && ec == std::errc() && end == ref.data() + ref.size() && v > 0 && v <= 0xBFFF) {
    const PortId owner = f.lid_owner(Lid{static_cast<uint16_t>(v)});
    if (!owner.valid()) return NodeId();
    *lid = Lid{static_cast<uint16_t>(v)};
    return f.port(owner).node;
  }
  Result<NodeId> n = routing::find_node(f, ref);
  return n ? *n : NodeId();
}

namespace {

int32_t level_of(const ctl::FabricView& v, NodeId n) {
  return n.value() < v.rails.level.size() ? v.rails.level[n.value()] : routing::kNoLevel;
}

}  // namespace

LinkCounts count_links(const std::vector<ctl::LinkStatus>& links) {
  LinkCounts c;
  for (const ctl::LinkStatus& l : links) {
    (l.state == ctl::LinkState::kDown ? c.down : c.up)++;
    if (!l.drains.empty()) ++c.drained;
  }
  return c;
}

json render_fabric_summary(const ctl::FabricView& v, const std::vector<ctl::LinkStatus>& links, size_t drains) {
  const Fabric& f = v.fabric;
  const LinkCounts lc = count_links(links);
  const routing::RoutingReport& r = v.routing.report;
  std::map<int32_t, uint32_t> per_level;
  for (NodeId s : f.switches()) per_level[level_of(v, s)]++;
  json levels = json::object();
  for (auto [lvl, n] : per_level) levels[lvl < 0 ? "unranked" : std::to_string(lvl)] = n;
  return {{"version", v.version},
          {"origin", v.origin},
          {"built_at", v.built_at},
          {"switches", f.switches().size()},
          {"cas", f.cas().size()},
          {"hosts", v.rails.hosts.size()},
          {"rails", v.rails.num_rails},
          {"levels", v.rails.max_level + 1},
          {"switches_per_level", levels},
          {"links", {{"up", lc.up}, {"down", lc.down}, {"drained", lc.drained}}},
          {"drains", drains},
          {"misfits", v.rails.misfits.size()},
          {"routing",
           {{"engine", "railyard"},
            {"ca_ports", r.ca_ports},
            {"lids_routed", r.lids_routed},
            {"unreachable_pairs", r.unreachable_pairs},
            {"pairs_through_drains", r.drained_pairs},
            {"route_ms", v.route_ms}}}};
}

json render_switches(const ctl::FabricView& v, const std::vector<ctl::DrainRecord>& drains) {
  const Fabric& f = v.fabric;
  std::map<std::string, int64_t> drained;
  for (const ctl::DrainRecord& d : drains) {
    if (d.kind == ctl::DrainKind::kSwitch) drained[d.target] = d.id;
  }
  json list = json::array();
  for (NodeId s : f.switches()) {
    const routing::Node& nd = f.node(s);
    uint32_t up = 0, to_cas = 0, to_switches = 0;
    for (uint8_t p = 1; p <= nd.num_ports; ++p) {
      const routing::Port& port = f.port(f.port_id(s, PortNum{p}));
      if (!port.remote.valid() || f.link(port.link).state == routing::PortState::kDown) continue;
      ++up;
      (f.is_switch(f.port(port.remote).node) ? to_switches : to_cas)++;
    }
    const std::string guid = routing::to_string(nd.guid);
    json sw = {{"name", f.desc(s)},
               {"guid", guid},
               {"lid", f.port(nd.first_port).lid.value},
               {"level", level_of(v, s)},
               {"ports", nd.num_ports},
               {"ports_up", up},
               {"links_to_switches", to_switches},
               {"links_to_cas", to_cas}};
    const int32_t rail = s.value() < v.rails.rail.size() ? v.rails.rail[s.value()] : routing::kNoRail;
    if (rail != routing::kNoRail) sw["rail"] = rail;
    if (auto it = drained.find(guid); it != drained.end()) sw["drain"] = it->second;
    list.push_back(sw);
  }
  return {{"switches", list}};
}

json render_rail(const ctl::FabricView& v, const ctl::RailState& r) {
  const Fabric& f = v.fabric;
  json c = {{"name", f.desc(r.ca)},
            {"guid", routing::to_string(f.node(r.ca).guid)},
            {"lid", f.port(f.primary_port(r.ca)).lid.value},
            {"rail", r.rail},
            {"health", ctl::to_string(r.health)}};
  if (r.leaf.valid()) {
    c["leaf"] = f.desc(r.leaf);
    c["leaf_guid"] = routing::to_string(f.node(r.leaf).guid);
    c["leaf_port"] = r.leaf_port;
    c["leaf_uplinks"] = {{"healthy", r.uplinks_healthy}, {"total", r.uplinks_total}};
  }
  return c;
}

json render_host_rails(const ctl::FabricView& v, const ctl::HostRails& h) {
  json cas = json::array();
  for (const ctl::RailState& r : h.rails) cas.push_back(render_rail(v, r));
  return {{"host", h.host}, {"rails", h.rails.size()}, {"rails_healthy", h.healthy}, {"cas", cas}};
}

json render_hosts(const ctl::FabricView& v, const ctl::RailHealthMap& health) {
  json list = json::array();
  for (const ctl::HostRails& h : health.hosts) list.push_back(render_host_rails(v, h));
  json out = {{"hosts", list}};
  if (!health.without_host.empty()) {
    json without = json::array();
    for (const ctl::RailState& r : health.without_host) without.push_back(render_rail(v, r));
    out["cas_without_host"] = without;
  }
  return out;
}

std::optional<LinkFilter> parse_link_filter(std::string_view text) {
  if (text == "drained") return LinkFilter::kDrained;
  if (const std::optional<ctl::LinkState> state = ctl::parse_link_state(text)) {
    return *state == ctl::LinkState::kUp ? LinkFilter::kUp : LinkFilter::kDown;
  }
  return std::nullopt;
}

json render_links(const ctl::FabricView* v, const std::vector<ctl::LinkStatus>& links, LinkFilter filter) {
  json list = json::array();
  for (const ctl::LinkStatus& l : links) {
    const bool drained = !l.drains.empty();
    if (filter == LinkFilter::kDrained && !drained) continue;
    if (filter == LinkFilter::kUp && l.state != ctl::LinkState::kUp) continue;
    if (filter == LinkFilter::kDown && l.state != ctl::LinkState::kDown) continue;
    json item = {{"link", l.key}, {"state", ctl::to_string(l.state)}, {"drained", drained}};
    if (drained) item["drains"] = l.drains;
    if (v && l.link.valid()) {
      const Fabric& f = v->fabric;
      const routing::Link& k = f.link(l.link);
      item["a"] = {{"node", f.desc(f.port(k.a).node)}, {"port", f.port(k.a).num.value},
                   {"guid", routing::to_string(f.node(f.port(k.a).node).guid)}};
      item["b"] = {{"node", f.desc(f.port(k.b).node)}, {"port", f.port(k.b).num.value},
                   {"guid", routing::to_string(f.node(f.port(k.b).node).guid)}};
    }
    list.push_back(item);
  }
  return {{"links", list}, {"count", list.size()}};
}

json render_drain(const ctl::DrainRecord& d) {
  json j = {{"id", d.id},
            {"target", ctl::to_string(d.kind)},
            {"key", d.target},
            {"name", d.target_name},
            {"reason", d.reason},
            {"created_by", d.created_by},
            {"created_at", d.created_at},
            {"expires_at", d.expires_at ? json(*d.expires_at) : json(nullptr)},
            {"active", !d.removed_at.has_value()}};
  if (d.removed_at) {
    j["removed_at"] = *d.removed_at;
    j["removed_by"] = d.removed_by;
  }
  return j;
}

json render_reroute(const ctl::RerouteRecord& r) {
  return {{"id", r.id},
          {"status", ctl::to_string(r.status)},
          {"requested_at", r.requested_at},
          {"requested_by", r.requested_by},
          {"reason", r.reason},
          {"finished_at", r.finished_at ? json(*r.finished_at) : json(nullptr)},
          {"latency_ms", r.latency_ms ? json(*r.latency_ms) : json(nullptr)},
          {"detail", r.detail}};
}

json render_event(const ctl::EventRecord& e) {
  json body = json::parse(e.body, nullptr, false);
  json j = {{"id", e.id}, {"time", e.time}, {"source", ctl::to_string(e.source)}, {"type", e.type},
            {"data", body.is_discarded() ? json(e.body) : body}};
  if (!e.external_id.empty()) j["external_id"] = e.external_id;
  return j;
}

json render_job(const ctl::JobRecord& j) {
  json request = json::parse(j.request, nullptr, false);
  json trees = json::parse(j.trees, nullptr, false);
  return {{"id", j.id},
          {"status", ctl::to_string(j.status)},
          {"detail", j.detail},
          {"version", j.version},
          {"created_by", j.created_by},
          {"created_at", j.created_at},
          {"updated_at", j.updated_at},
          {"request", request.is_discarded() ? json(nullptr) : request},
          {"trees", trees.is_discarded() ? json::array() : trees}};
}

json render_impact(const ctl::DrainImpact& i) {
  json cut = json::array();
  for (const ctl::CutPair& p : i.cut) {
    cut.push_back({{"example_source", p.source}, {"destination", p.destination}, {"sources", p.sources}});
  }
  return {{"pairs_cut", i.pairs_cut},
          {"cut", cut},
          {"pairs_rerouted", i.diff.pairs_rerouted},
          {"lft_entries_changed", i.diff.entries_changed},
          {"lft_blocks_changed", i.diff.blocks_changed},
          {"switches_touched", i.diff.switches_touched},
          {"route_ms", i.route_ms}};
}

json render_ar_summary(const ctl::FabricView& v, const routing::ArTables& ar) {
  const Fabric& f = v.fabric;
  json per = json::array();
  size_t max_groups = 0;
  for (uint32_t s = 0; s < ar.switches.size(); ++s) {
    const routing::ArSwitchGroups& g = ar.switches[s];
    max_groups = std::max(max_groups, g.groups.size());
    per.push_back({{"switch", f.desc(f.switches()[s])},
                   {"guid", routing::to_string(f.node(f.switches()[s]).guid)},
                   {"groups", g.groups.size()},
                   {"adaptive_groups", g.adaptive_groups},
                   {"trimmed", g.trimmed}});
  }
  json over = json::array();
  for (uint32_t s : ar.over_limit) over.push_back(f.desc(f.switches()[s]));
  return {{"max_groups_per_switch", ar.max_groups_per_switch},
          {"max_groups", max_groups},
          {"over_limit", over},
          {"trimmed_destinations", ar.trimmed},
          {"switches", per}};
}

json render_ar_switch(const ctl::FabricView& v, const routing::ArTables& ar, uint32_t sw, int lid) {
  const Fabric& f = v.fabric;
  const routing::ArSwitchGroups& g = ar.switches[sw];
  json groups = json::array();
  for (const auto& ports : g.groups) groups.push_back(ports);
  json lft = json::object();
  for (uint32_t l = 1; l < ar.num_lids; ++l) {
    if (lid > 0 && static_cast<uint32_t>(lid) != l) continue;
    const uint16_t grp = ar.group(sw, Lid{static_cast<uint16_t>(l)});
    if (grp != routing::ArTables::kNoGroup) lft[std::to_string(l)] = grp;
  }
  return {{"switch", f.desc(f.switches()[sw])},
          {"guid", routing::to_string(f.node(f.switches()[sw]).guid)},
          {"groups", groups},
          {"adaptive_groups", g.adaptive_groups},
          {"trimmed", g.trimmed},
          {"lid_to_group", lft}};
}


}  // namespace railyard::api
