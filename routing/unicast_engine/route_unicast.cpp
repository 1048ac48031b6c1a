// route_unicast: input checks, the ranking, and the lanes that run the Engine.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "routing/unicast_engine.h"
#include "routing/unicast_engine/engine.h"
#include "routing/unicast_engine/shift_repair.h"
#include "routing/unicast_engine/substitute_spines.h"

namespace railyard::routing {

using unicast::Engine;

Result<RoutingResult> route_unicast(const Fabric& fabric, const RoutingOptions& options) {
  return unicast::route_lanes(fabric, options, nullptr, nullptr, nullptr);
}

namespace unicast {

Result<RoutingResult> route_lanes(const Fabric& fabric, const RoutingOptions& options, Prior* prior,
                                  RouteMemo* memo, RerouteStats* stats, const SwitchGraph* given_graph) {
  auto in_full = [&](std::string why) {
    stats->incremental = false;
    stats->full_reason = std::move(why);
    return route_lanes(fabric, options, nullptr, memo, nullptr);
  };
  if (!fabric.has_lids()) return Error{"the fabric has no LIDs; assign them first (assign_lids)"};
  if (!options.drained.empty() && options.drained.size() != fabric.num_links()) {
    return Error{"drained mask has " + std::to_string(options.drained.size()) + " entries for " +
                 std::to_string(fabric.num_links()) + " links"};
  }
  std::optional<SwitchGraph> own_graph;
  const SwitchGraph& graph = given_graph != nullptr ? *given_graph : own_graph.emplace(fabric);
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
  // An incremental route keeps the route before's ranking when its changed
  // links provably move no rank (rerank).
  std::optional<Ranking> kept_ranking;
  if (prior != nullptr && roots.empty()) {
    std::vector<RankedLinkChange> changes;
    for (const ChangedLink& c : prior->changed) {
      if (c.up_before != c.up_now) changes.push_back({c.lower, c.upper, c.up_now});
    }
    kept_ranking = rerank(prior->memo->ranking, graph, changes);
  }
  Ranking ranking = kept_ranking ? std::move(*kept_ranking) : rank_switches(graph, roots);
  if (prior != nullptr) {
    if (!options.flow_balance || ranking.kind != RankingKind::kFromCas) {
      return in_full("not balanced by flows on a tree ranked from its CAs");
    }
    if (ranking.kind != prior->memo->ranking.kind || ranking.rank != prior->memo->ranking.rank) {
      return in_full("the ranking moved");
    }
  }
  // The route before's own memo (its caller gave it up: reroute.cpp) is
  // updated in place: same switches and ranking, so the same layout; the
  // engines keep what they overwrite and still need.
  const bool memo_in_place = prior != nullptr && memo == prior->memo;
  if (memo != nullptr) memo->ranking = ranking;  // the same ranks in place, perhaps other roots
  if (memo != nullptr && !memo_in_place) {
    const uint32_t n = graph.num_switches();
    memo->switches = n;
    memo->flows = options.flow_balance;
    memo->modes_at.assign(n, RouteMemo::kNoModes);
    uint32_t targets = 0;
    for (uint32_t s = 0; s < n; ++s) memo->modes_at[s] = targets++;  // every switch is a target
    memo->modes.assign(static_cast<size_t>(targets) * n, unicast::SwitchState{});
    memo->reach.assign(targets, RouteMemo::kSomeTier2);
    // An incremental route keeps the fills of the columns it keeps, and the
    // columns.
    memo->turns = prior != nullptr ? prior->memo->turns : unicast::TurnsMemo{};
    memo->cable = prior != nullptr ? std::vector<uint32_t>(prior->cable, prior->cable + static_cast<size_t>(n) * 256)
                                   : cable_map(fabric, graph);
    if (options.flow_balance) {
      const size_t size = static_cast<size_t>(n) * (fabric.max_lid().value + 1u);
      if (prior != nullptr) {
        memo->columns = prior->memo->columns;
      } else {
        memo->columns.resize(size);
      }
    }
  }
  // Shared by both lanes, read only.
  // Only without flow balancing (flow_walk.cpp takes their place).
  RoutingOptions substitute_options;
  substitute_options.substitute_planes = false;
  const unicast::SubstituteSpines substitutes(fabric, graph, ranking,
                                              options.flow_balance ? substitute_options : options);

  RoutingResult out;
  // Incremental: the columns not re-walked keep the tables they had.
  out.tables = prior != nullptr ? std::move(*prior->tables)
                                : ForwardingTables(graph.num_switches(), fabric.max_lid().value + 1u);
  if (prior != nullptr) {
    // Back to the tables phases A and B left, but for the switch turns'
    // fills (turn_columns): the moves off the busiest links are made again
    // at the end.
    const auto& moves = prior->memo->moves;
    for (auto it = moves.rbegin(); it != moves.rend(); ++it) out.tables.set(it->sw, Lid{it->lid}, it->port);
  }
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
  // The engines' shared records (before the engines: they outlive them),
  // in the storage of the memo's when it is updated in place.
  EntryRecords records;
  if (memo_in_place) std::swap(records, memo->records);
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
  // The prior's changed links, lower switch first.
  Prior ordered;
  if (prior != nullptr) {
    ordered.memo = prior->memo;
    ordered.changed = prior->changed;
    ordered.had_drains = prior->had_drains;
    ordered.cable = prior->cable;
    ordered.tables = &out.tables;
    for (ChangedLink& c : ordered.changed) {
      if (ranking.rank[c.lower] > ranking.rank[c.upper]) {
        std::swap(c.lower, c.upper);
        std::swap(c.lower_port, c.upper_port);
      }
      if (ranking.rank[c.lower] == ranking.rank[c.upper]) return in_full("a changed link joins two switches of one rank");
    }
  }
  // What the engines work out from the cabling is the route before's when
  // every end of a changed link keeps a live link that did not change (or
  // has CAs): no switch died or came alive.
  const EngineStatics* statics = nullptr;
  if (prior != nullptr && prior->memo->statics.valid) {
    statics = &prior->memo->statics;
    std::vector<uint32_t> changed_at(graph.num_switches(), 0);  // changed links in the graph (not down)
    for (const ChangedLink& c : ordered.changed) {
      changed_at[c.lower] += c.up_now;
      changed_at[c.upper] += c.up_now;
    }
    for (const ChangedLink& c : ordered.changed) {
      for (uint32_t s : {c.lower, c.upper}) {
        if (graph.num_cas(s) == 0 && graph.end(s) - graph.begin(s) <= changed_at[s]) statics = nullptr;
      }
    }
  }
  bool slots_moved = false;
  // Each lane builds its part of the records; none reads them before both
  // are built (a lane that fails still arrives, and the other stops).
  std::barrier built(static_cast<std::ptrdiff_t>(kLanes));
  std::atomic<bool> build_failed{false};
  in_lanes([&](uint32_t lane) {
    try {
      // A memo updated in place lends its lanes' arrays to the engines.
      EngineBuffers* recycled = memo_in_place && lane < memo->lanes.size() ? &memo->lanes[lane] : nullptr;
      engines[lane] = std::make_unique<Engine>(fabric, options, graph, ranking, substitutes, out.tables,
                                               reports[lane], records, recycled, statics);
      for (uint32_t part = lane; part < 2; part += kLanes) engines[lane]->build_records(options, part);
    } catch (...) {
      build_failed = true;
      built.arrive_and_wait();
      throw;
    }
    built.arrive_and_wait();
    if (build_failed) return;
    engines[lane]->bind_records();
    if (prior != nullptr && !engines[lane]->same_slots(*prior->memo)) {
      slots_moved = true;
      return;
    }
    engines[lane]->set_incremental(prior != nullptr ? &ordered : nullptr, memo);
    engines[lane]->run(options, lane, kLanes);
  });
  if (slots_moved) return in_full("the nominal slots moved (a switch died or came back)");
  if (options.flow_balance) {
    // Phase B sees every lane's nominal flows: the lanes' phase A in one.
    for (uint32_t lane = 1; lane < kLanes; ++lane) engines[0]->absorb(*engines[lane]);
    if (prior != nullptr) {
      std::vector<const Engine*> lanes;
      for (const auto& e : engines) {
        if (!e->old_columns_ordered()) return in_full("a re-walked column had a hop that did not come nearer its leaf");
        lanes.push_back(e.get());
      }
      if (!engines[0]->take_prior_loads(lanes)) return in_full("a column that used a link now gone was not re-walked");
    }
    if (memo != nullptr) engines[0]->export_memo();
    route_phase_b(*engines[0], *engines[1], out.report);
  }
  if (memo != nullptr) engines[0]->export_slots(*memo);
  if (memo != nullptr && (statics == nullptr || !memo_in_place)) engines[0]->export_statics(memo->statics);
  if (stats != nullptr) {
    stats->incremental = prior != nullptr;
    for (const auto& e : engines) {
      stats->targets_touched += e->targets_touched();
      stats->columns_recomputed += e->columns_recomputed();
      stats->columns_patched += e->columns_patched();
      stats->targets_prepared += e->targets_prepared();
    }
  }
  // Switch LIDs up*/down* left unreachable (spine to spine, core to core of
  // a plane): through the turn switch, after every CA route is fixed. An
  // incremental route fills the columns it wrote before they are flushed,
  // if it can keep the other columns' fills.
  unicast::SwitchTurns turns;
  bool turned = !options.switch_turns;
  if (prior != nullptr && !turned) {
    std::vector<std::pair<Lid, uint8_t*>> written;
    for (const auto& e : engines) e->switch_lid_columns(memo->turns.column_of, written);
    turned = unicast::turn_columns(fabric, graph, ranking, options.drained, ordered.changed, written, memo->turns, turns);
  }
  // refill_turns rewrites every entry the walks left empty, from the bits
  // (route_switch_turns would read the tables instead).
  const bool refilled = !turned && prior != nullptr && memo != nullptr && memo->turns.valid;
  for (const auto& e : engines) e->set_turns_refilled(refilled);
  in_lanes([&](uint32_t lane) { engines[lane]->flush(); });
  if (options.flow_balance) {
    std::vector<TableMove> moves;
    engines[0]->relieve_hot_links(moves);
    out.report.hot_link_moves = static_cast<uint32_t>(moves.size());
    // Where every route is nominal the tables are D-mod-K's (where their
    // shifts exceed the bound, on rails that end in a partial leaf, no
    // table of one digit per destination does better), and a CA or a leaf
    // leaving moves no other entry: the pass over shifts repairs what the
    // displaced flows did.
    if (out.report.phase_b_waiting != 0 || !moves.empty()) {
      const unicast::ShiftRepair shifts =
          unicast::repair_shifts(fabric, graph, ranking, records, engines[0]->guid_ranks(), options, out.tables,
                                 moves, memo != nullptr ? &memo->shift_loads : nullptr);
      out.report.shift_moves = shifts.moves;
      out.report.shift_excess_before = shifts.excess_before;
      out.report.shift_excess_after = shifts.excess_after;
    }
    if (memo != nullptr) memo->moves = std::move(moves);
  }
  for (const RoutingReport& r : reports) {
    out.report.ca_ports = std::max(out.report.ca_ports, r.ca_ports);
    out.report.lids_routed += r.lids_routed;
    out.report.unreachable_pairs += r.unreachable_pairs;
    out.report.drained_pairs += r.drained_pairs;
    out.report.unreachable.insert(out.report.unreachable.end(), r.unreachable.begin(), r.unreachable.end());
    out.report.through_drained.insert(out.report.through_drained.end(), r.through_drained.begin(),
                                      r.through_drained.end());
  }
  if (!turned) {
    turns = prior != nullptr && memo->turns.valid
                ? unicast::refill_turns(fabric, graph, ranking, options.drained, out.tables, memo->turns)
                : unicast::route_switch_turns(fabric, graph, ranking, options.drained, out.tables,
                                              memo != nullptr ? &memo->turns : nullptr);
  }
  for (uint32_t t : turns.turn_switches) out.report.turn_switches.push_back(graph.node(t));
  out.report.switch_entries_turned = turns.entries;
  // What the turn switch cannot reach (heavy degradation), one entry at a
  // time under a check of the channel dependency graph.
  if (turns.left != 0) {
    unicast::SwitchRepair repair = unicast::repair_switch_lids(fabric, graph, options.drained, out.tables);
    out.report.switch_entries_repaired = repair.entries;
    out.report.switch_entries_empty = repair.cyclic ? turns.left : repair.left;
  }
  if (memo != nullptr) {  // for the next incremental route, and one that updates this memo in place
    memo->lanes.resize(kLanes);
    for (uint32_t lane = 0; lane < kLanes; ++lane) engines[lane]->give_back(memo->lanes[lane]);
    std::swap(memo->records, records);  // the engines read them no more
  }
  auto by_lid = [](const DestinationIssue& a, const DestinationIssue& b) { return a.lid < b.lid; };
  std::sort(out.report.unreachable.begin(), out.report.unreachable.end(), by_lid);
  std::sort(out.report.through_drained.begin(), out.report.through_drained.end(), by_lid);
  return out;
}

}  // namespace unicast
}  // namespace railyard::routing
