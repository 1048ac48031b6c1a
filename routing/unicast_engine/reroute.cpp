// Incremental reroute, the driver (routing/reroute.h): checks that the two
// fabrics differ only in switch links, lists the links that changed, and
// runs the route with the memo (incremental.cpp has the engine's side).
#include "routing/reroute.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>

#include "routing/switch_graph.h"
#include "routing/unicast_engine/engine.h"
#include "routing/unicast_engine/incremental.h"

namespace railyard::routing {

namespace {

using unicast::ChangedLink;
using unicast::Prior;

// `reuse`: the memo to write (the prior's, in place), else a new one.
// `graph`: the fabric's, if the caller built it; the memo keeps it, for
// the next reroute to derive its own from.
Result<TrackedRouting> tracked(const Fabric& fabric, const RoutingOptions& options, Prior* prior,
                               RerouteStats stats, std::shared_ptr<RouteMemo> reuse = nullptr,
                               std::shared_ptr<const SwitchGraph> graph = nullptr) {
  auto memo = reuse != nullptr ? std::move(reuse) : std::make_shared<RouteMemo>();
  if (graph == nullptr) graph = std::make_shared<const SwitchGraph>(fabric);
  auto routed = unicast::route_lanes(fabric, options, prior, memo.get(), &stats, graph.get());
  if (!routed.ok()) return routed.error();
  // The graph before, if nothing else holds it, is the next reroute's
  // storage for its graph (SwitchGraph::derive).
  std::shared_ptr<const SwitchGraph> before = std::move(memo->graph);
  memo->graph = std::move(graph);
  if (before != nullptr && before.use_count() == 1) memo->spare_graph = std::const_pointer_cast<SwitchGraph>(before);
  // A full route maps that storage now, off the path of the reroute that
  // follows it (a graph derived with nothing changed: its scratch too).
  if (memo->spare_graph == nullptr) memo->spare_graph = std::make_shared<SwitchGraph>(*memo->graph, fabric, std::span<const LinkId>{});
  TrackedRouting out;
  out.result = std::move(routed).value();
  // The leaves and the CA LIDs: counted once per memo (the CAs and their
  // cables are the same in every reroute of it).
  if (memo->ca_count.first != 0 || memo->ca_count.second != 0) {
    stats.targets = memo->ca_count.first;
    stats.columns = memo->ca_count.second;
    out.memo = std::move(memo);
    out.stats = std::move(stats);
    return out;
  }
  std::vector<uint8_t> leaf(fabric.num_nodes(), 0);  // switches with a CA cabled
  for (NodeId ca : fabric.cas()) {
    const Node& node = fabric.node(ca);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const Port& port = fabric.port(PortId(node.first_port.value() + p));
      const NodeId far = fabric.remote_node(PortId(node.first_port.value() + p));
      if (far.valid() && fabric.is_switch(far) && !leaf[far.value()]) {
        leaf[far.value()] = 1;
        ++stats.targets;
      }
      for (uint32_t k = 0; port.lid.valid() && k < (1u << port.lmc); ++k) {
        stats.columns += Lid{static_cast<uint16_t>(port.lid.value + k)}.valid() ? 1 : 0;
      }
    }
  }
  memo->ca_count = {stats.targets, stats.columns};
  out.memo = std::move(memo);
  out.stats = std::move(stats);
  return out;
}

bool drained(const RoutingOptions& o, size_t link) { return !o.drained.empty() && o.drained[link] != 0; }

// Why `before` and `after` are more than a change of switch links, or empty;
// else the switch links whose state or drain changed (`changed`, by link
// index) and those whose state did (`changed_state`).
std::string beyond_links(const Fabric& before, const RoutingOptions& bo, const Fabric& after, const RoutingOptions& ao,
                         std::vector<size_t>& changed, std::vector<LinkId>& changed_state) {
  if (before.num_nodes() != after.num_nodes() || before.num_ports() != after.num_ports() ||
      before.num_links() != after.num_links()) {
    return "nodes, ports or links were added or removed";
  }
  if (!before.same_cabling(after)) {
    for (size_t i = 0; i < before.num_nodes(); ++i) {
      const Node &a = before.nodes()[i], &b = after.nodes()[i];
      if (a.type != b.type || a.guid != b.guid || a.num_ports != b.num_ports) return "a node changed";
    }
    for (size_t i = 0; i < before.num_ports(); ++i) {
      const Port &a = before.ports()[i], &b = after.ports()[i];
      if (a.lid != b.lid || a.lmc != b.lmc || a.remote != b.remote || a.link != b.link) {
        return "a LID or a cable changed";
      }
    }
  }
  if (bo.roots != ao.roots || bo.leaf_order_key != ao.leaf_order_key || bo.leaf_ring != ao.leaf_ring ||
      bo.switch_turns != ao.switch_turns || bo.flow_balance != ao.flow_balance ||
      bo.substitute_planes != ao.substitute_planes || bo.shift_grid != ao.shift_grid ||
      bo.shift_rails != ao.shift_rails) {
    return "the options changed beyond the drained links";
  }
  // The cables are the same: a link joins the same two ports in both.
  const std::span<const Link> la = before.links(), lb = after.links();
  const bool drains = !bo.drained.empty() || !ao.drained.empty();
  for (size_t i = 0; i < la.size(); ++i) {
    const bool state = la[i].state != lb[i].state;
    if (!state && (!drains || drained(bo, i) == drained(ao, i))) continue;
    if (!after.is_switch(after.port(lb[i].a).node) || !after.is_switch(after.port(lb[i].b).node)) {
      return "a CA link changed";
    }
    changed.push_back(i);
    if (state) changed_state.push_back(LinkId(static_cast<uint32_t>(i)));
  }
  return {};
}

}  // namespace

Result<TrackedRouting> route_unicast_tracked(const Fabric& fabric, const RoutingOptions& options) {
  return tracked(fabric, options, nullptr, RerouteStats{});
}

Result<TrackedRouting> reroute_unicast(const Fabric& before, const RoutingOptions& before_options,
                                       TrackedRouting routed, const Fabric& after,
                                       const RoutingOptions& after_options) {
  RerouteStats stats;
  // The switch links whose state changed (the graph's entries) or whose
  // drain did (the route's): the graph is the memo's, those entries taken
  // out or put in.
  std::vector<size_t> changed;
  std::vector<LinkId> changed_state;
  stats.full_reason = routed.memo == nullptr
                          ? "no memo"
                          : beyond_links(before, before_options, after, after_options, changed, changed_state);
  if (!stats.full_reason.empty()) return tracked(after, after_options, nullptr, std::move(stats));
  std::shared_ptr<SwitchGraph> derived;
  if (routed.memo->graph != nullptr) {
    // A memo the caller gave up (written in place below) lends the graph
    // of two routes ago as storage.
    auto* own = routed.memo.use_count() == 1 ? const_cast<RouteMemo*>(routed.memo.get()) : nullptr;
    if (own != nullptr && own->spare_graph != nullptr && own->spare_graph.use_count() == 1) {
      derived = std::move(own->spare_graph);
      derived->derive(*routed.memo->graph, after, changed_state);
    } else {
      derived = std::make_shared<SwitchGraph>(*routed.memo->graph, after, changed_state);
    }
  } else {
    derived = std::make_shared<SwitchGraph>(after);
  }
  const std::shared_ptr<const SwitchGraph> shared_graph = derived;
  const SwitchGraph& graph = *shared_graph;
  Prior prior;
  prior.memo = routed.memo.get();
  prior.tables = &routed.result.tables;
  const uint32_t n = graph.num_switches();
  if (routed.memo->switches != n || routed.result.tables.num_switches() != n ||
      routed.result.tables.num_lids() != after.max_lid().value + 1u ||
      routed.memo->cable.size() != static_cast<size_t>(n) * 256) {
    stats.full_reason = "the route before is not of this fabric";
    return tracked(after, after_options, nullptr, std::move(stats));
  }
  // Cables as cabled, any state, by switch and port: the memo's (the same
  // cables: beyond_links).
  prior.cable = routed.memo->cable.data();
  for (size_t i : changed) {
    const Link &a = before.links()[i], &b = after.links()[i];
    const Port &pa = after.port(b.a), &pb = after.port(b.b);
    ChangedLink c;
    c.lower = graph.switch_index(pa.node);
    c.upper = graph.switch_index(pb.node);
    c.lower_port = static_cast<uint8_t>(pa.num.value);
    c.upper_port = static_cast<uint8_t>(pb.num.value);
    c.up_before = a.state != PortState::kDown;
    c.up_now = b.state != PortState::kDown;
    c.drained_before = drained(before_options, i);
    c.drained_now = drained(after_options, i);
    prior.changed.push_back(c);
  }
  prior.had_drains = std::any_of(before_options.drained.begin(), before_options.drained.end(), [](auto d) { return d != 0; });
  stats.changed_links = static_cast<uint32_t>(prior.changed.size());
  // The caller's memo, if it gave up every other reference: written in
  // place (route_lanes). It was made mutable by tracked(), so the cast is
  // sound.
  std::shared_ptr<RouteMemo> in_place;
  if (routed.memo.use_count() == 1) in_place = std::const_pointer_cast<RouteMemo>(routed.memo);
  stats.memo_in_place = in_place != nullptr;
  return tracked(after, after_options, &prior, std::move(stats), std::move(in_place), shared_graph);
}

}  // namespace railyard::routing
