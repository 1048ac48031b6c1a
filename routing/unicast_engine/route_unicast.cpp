// route_unicast: input checks, the ranking, and the lanes that run the Engine.
#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "routing/unicast_engine.h"
#include "routing/unicast_engine/engine.h"
#include "routing/unicast_engine/substitute_spines.h"

namespace railyard::routing {

using unicast::Engine;

Result<RoutingResult> route_unicast(const Fabric& fabric, const RoutingOptions& options) {
  if (!fabric.has_lids()) return Error{"the fabric has no LIDs; assign them first (assign_lids)"};
  if (!options.drained.empty() && options.drained.size() != fabric.num_links()) {
    return Error{"drained mask has " + std::to_string(options.drained.size()) + " entries for " +
                 std::to_string(fabric.num_links()) + " links"};
  }
  SwitchGraph graph(fabric);
  if (!options.leaf_order_key.empty() && options.leaf_order_key.size() != graph.num_switches()) {
    return Error{"leaf order has " + std::to_string(options.leaf_order_key.size()) + " keys for " +
                 std::to_string(graph.num_switches()) + " switches"};
  }
  if (!options.leaf_ring.empty() && options.leaf_ring.size() != graph.num_switches()) {
    return Error{"leaf rings have " + std::to_string(options.leaf_ring.size()) + " entries for " +
                 std::to_string(graph.num_switches()) + " switches"};
  }
  std::vector<uint32_t> roots;
  for (NodeId r : options.roots) {
    uint32_t s = graph.switch_index(r);
    if (s == SwitchGraph::kNone) return Error{"root '" + std::string(fabric.name(r)) + "' is not a switch"};
    roots.push_back(s);
  }
  Ranking ranking = rank_switches(graph, roots);
  // Shared by both lanes, read only.
  const unicast::SubstituteSpines substitutes(fabric, graph, ranking, options);

  RoutingResult out;
  out.tables = ForwardingTables(graph.num_switches(), fabric.max_lid().value + 1u);
  out.report.ranking = ranking.kind;
  out.report.levels = ranking.levels;
  out.report.roots = static_cast<uint32_t>(ranking.roots.size());
  out.report.switches = graph.num_switches();
  // Two lanes, always, so the tables do not depend on the machine; each runs
  // on its own thread. Within a lane destinations are balanced by the lane's
  // counters; on a healthy tree the nominal slots decide and the lanes agree
  // with a single pass exactly.
  constexpr uint32_t kLanes = 2;
  std::vector<RoutingReport> reports(kLanes);
  std::vector<std::thread> threads;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::unique_ptr<Engine>> engines(kLanes);
  auto in_lanes = [&](auto&& work) {
    threads.clear();
    for (uint32_t lane = 0; lane < kLanes; ++lane) {
      threads.emplace_back([&, lane] {
        try {
          work(lane);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          failure = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
  };
  in_lanes([&](uint32_t lane) {
    engines[lane] = std::make_unique<Engine>(fabric, options, graph, ranking, substitutes, out.tables, reports[lane]);
    engines[lane]->run(options, lane, kLanes);
  });
  if (options.flow_balance) {
    // The displaced flows see every lane's nominal ones: one pass, in order.
    for (uint32_t lane = 1; lane < kLanes; ++lane) engines[0]->absorb(*engines[lane]);
    engines[0]->route_deferred();
  }
  in_lanes([&](uint32_t lane) { engines[lane]->flush(); });
  for (const RoutingReport& r : reports) {
    out.report.ca_ports = std::max(out.report.ca_ports, r.ca_ports);
    out.report.lids_routed += r.lids_routed;
    out.report.unreachable_pairs += r.unreachable_pairs;
    out.report.drained_pairs += r.drained_pairs;
    out.report.unreachable.insert(out.report.unreachable.end(), r.unreachable.begin(), r.unreachable.end());
    out.report.through_drained.insert(out.report.through_drained.end(), r.through_drained.begin(),
                                      r.through_drained.end());
  }
  // Switch LIDs up*/down* left unreachable (spine to spine, core to core of
  // a plane): through the turn switch, after every CA route is fixed.
  const unicast::SwitchTurns turns = options.switch_turns
                                         ? unicast::route_switch_turns(fabric, graph, ranking, out.tables)
                                         : unicast::SwitchTurns{};
  for (uint32_t t : turns.turn_switches) out.report.turn_switches.push_back(graph.node(t));
  out.report.switch_entries_turned = turns.entries;
  auto by_lid = [](const DestinationIssue& a, const DestinationIssue& b) { return a.lid < b.lid; };
  std::sort(out.report.unreachable.begin(), out.report.unreachable.end(), by_lid);
  std::sort(out.report.through_drained.begin(), out.report.through_drained.end(), by_lid);
  return out;
}

}  // namespace railyard::routing
