// Ranking: which way is "up" on every switch-to-switch link.
//
// Every route railyard computes goes up zero or more hops, then down zero or
// more hops, never down then up (up*/down*, Schroeder et al., Autonet 1991).
// "Up" follows a strict total order on switches — (rank, index), larger is
// higher — so the channel dependency graph of any set of up*/down* routes is
// acyclic (Dally & Seitz 1987): no credit loops on a single VL.
//
// How ranks are chosen:
//  - kFromCas: rank = distance in switch hops from the nearest switch with CAs
//    (leaves 0, spines 1, cores 2). Used when no link joins two switches of the
//    same rank, which holds for fat trees, rail-optimized fat trees and
//    rail-only fabrics, healthy or degraded.
//  - kBipartite: the switch graph is two-colourable (BiGraph/ZCube-like two
//    layers): the side with fewer CAs becomes the roots.
//  - kRoots: roots named by policy; rank = (max depth - BFS depth from roots).
//  - kCenter: otherwise one root per component near its centre (double sweep),
//    ranked by BFS depth.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "routing/switch_graph.h"

namespace railyard::routing {

enum class RankingKind : uint8_t { kFromCas, kBipartite, kRoots, kCenter };
std::string_view to_string(RankingKind k);

struct Ranking {
  RankingKind kind = RankingKind::kFromCas;
  std::vector<uint32_t> rank;   // per switch index
  std::vector<uint32_t> order;  // switches from the top down: decreasing (rank, index)
  std::vector<uint32_t> roots;  // switches with no up link
  uint32_t levels = 0;          // distinct ranks in use
  bool all_from_cas = false;    // kFromCas and every switch reached from a CA
  bool operator==(const Ranking&) const = default;

  bool up(uint32_t from, uint32_t to) const {
    return rank[to] > rank[from] || (rank[to] == rank[from] && to > from);
  }
};

// `roots` (switch indices) forces kRoots when not empty.
Ranking rank_switches(const SwitchGraph& graph, std::span<const uint32_t> roots = {});

// A switch link that went down or came up (switch indices).
struct RankedLinkChange {
  uint32_t a = 0, b = 0;
  bool up_now = false;
};

// rank_switches(graph) without ranking afresh, when `graph` is the graph
// `before` was ranked on (without roots) but for `changed`, and the change
// provably moves no rank: ranked from the CAs, every switch reached, every
// link now up joining neighbouring ranks, and every end of a link gone
// keeping a neighbour one rank below it (so every rank is still the
// distance from the leaves). Only the roots (switches with no up link) are
// looked at again, at the ends of the links. Else nothing: rank afresh.
std::optional<Ranking> rerank(const Ranking& before, const SwitchGraph& graph,
                              std::span<const RankedLinkChange> changed);

}  // namespace railyard::routing
