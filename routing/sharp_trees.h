// SHARP aggregation trees: for a job (CAs or hosts, optionally a rail subset),
// one tree of switches per rail that adds up the job's data in the network.
//
// Guarantees
//  - Rail-aligned: the job's CAs are grouped by rail (RailMap) and each rail
//    gets its own tree, whose leaves are the switches those CAs hang off; CAs
//    without a rail share one tree with rail kNoRail.
//  - A tree: every switch but the root has exactly one parent, one hop closer
//    to the root, so there is no cycle; every job CA of the rail appears in
//    exactly one leaf's CA list (the switch on its first usable port).
//  - Healthy links only: parent links and CA links are neither down (state
//    kDown or uncabled) nor drained; the same rule as SwitchGraph.
//  - Shallowest root: the root minimises the height (the largest number of
//    switch hops from the root to one of the tree's leaves) over the switches
//    that still have a free tree slot, and paths use only such switches. Among
//    equal heights the least-loaded switch wins, then the lowest GUID.
//  - Capacity: a tree takes one slot on every switch it uses (root, inner
//    switches, leaves), and never uses a switch whose load has reached the
//    capacity. Trees of one job are built rail by rail, each seeing the load of
//    the previous ones.
// Degraded plan, documented: when the shallowest roots (or the switches on
// their paths) are full, a deeper root with capacity is taken and the tree is
// marked `degraded` with `min_height` the height a capacity-free fabric would
// allow. When no switch with capacity reaches all leaves, or a leaf itself is
// full, the job is refused with an Error naming the rail and the full switches.
//
// Method: the root search is a multi-source BFS from all the rail's leaves at
// once with one bit per leaf (reach[v] after d rounds = the leaves within d
// hops of v), so the shallowest roots are the switches whose bitset fills
// first; cost O(height * links * ceil(leaves / 64)). The tree is then a BFS
// from the root; each leaf climbs to a neighbour one hop closer, preferring
// one already in the tree (fewer switches), then the least-loaded, then the
// lowest GUID, and the lowest port among parallel cables. Deterministic.
// Limits: single-port CA attachment (a multi-port CA uses its first usable
// port); capacity is one number for every switch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "routing/fabric.h"
#include "routing/rails.h"
#include "routing/result.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

// What a scheduler asks for. CAs and hosts add up (duplicates count once).
struct SharpJob {
  std::string id;
  std::vector<NodeId> cas;         // CA (or router) nodes
  std::vector<std::string> hosts;  // host names as in RailMap::hosts: all their CAs
  std::vector<int32_t> rails;      // only these rails; empty = every rail of the job's CAs
};

// One switch of a tree.
struct SharpTreeSwitch {
  NodeId node;
  NodeId parent;                 // invalid at the root
  LinkId uplink;                 // the cable to parent; invalid at the root
  uint32_t depth = 0;            // hops from the root
  std::vector<NodeId> children;  // child switches, by GUID
  std::vector<NodeId> cas;       // job CAs aggregated directly (leaves), by NodeId
  uint32_t fan_in() const { return static_cast<uint32_t>(children.size() + cas.size()); }
};

struct SharpTree {
  int32_t rail = kNoRail;
  NodeId root;
  uint32_t height = 0;      // max depth of a switch holding job CAs
  uint32_t min_height = 0;  // height without capacity limits (== height unless degraded)
  uint32_t max_fan_in = 0;  // max over switches of children + CAs
  bool degraded = false;    // a deeper root was taken because shallower ones were full
  std::vector<SharpTreeSwitch> switches;  // root first, then by depth, then GUID
  uint32_t num_cas() const;
};

// A job checked against a fabric: its CAs, deduplicated and sorted, with
// their rails; the rails of its trees.
struct ResolvedSharpJob {
  std::string id;
  std::vector<NodeId> cas;
  std::vector<int32_t> rails;  // ascending; kNoRail first when present
};

// Builds trees over one fabric snapshot. Keeps references to the fabric, rail
// map and drained mask (one byte per LinkId, nonzero = drained; empty = none),
// which must outlive it. Holds scratch buffers: one builder per thread.
class SharpTreeBuilder {
 public:
  SharpTreeBuilder(const Fabric& fabric, const RailMap& rails, std::span<const uint8_t> drained);

  // Fails on input the caller got wrong: a drained mask or rail map sized for
  // another fabric. Every other call then returns this error.
  Status status() const { return status_; }
  const Fabric& fabric() const { return *fabric_; }
  const SwitchGraph& graph() const { return graph_; }
  uint32_t num_switches() const { return graph_.num_switches(); }

  // Errors name the offending entry: empty job id, unknown host, a node that
  // is not a CA, a rail no CA of the job carries, no CAs at all.
  Result<ResolvedSharpJob> resolve(const SharpJob& job) const;

  // The switch index (fabric.switches() order) a CA attaches to over a usable
  // link, or SwitchGraph::kNone.
  uint32_t attach(NodeId ca) const;

  // One tree over `cas` (all of rail `rail`). `load` has one entry per switch
  // index; switches with load >= capacity are not used. Does not change load.
  // Errors (refusals) name the job, rail and full switches.
  Result<SharpTree> build_tree(std::string_view job_id, int32_t rail, std::span<const NodeId> cas,
                               std::span<const uint32_t> load, uint32_t capacity);

  // Every tree of a resolved job, rail by rail, adding each tree's slots to
  // `load` as it goes. On error `load` is left as it was.
  Result<std::vector<SharpTree>> build_job(const ResolvedSharpJob& job, std::span<uint32_t> load,
                                           uint32_t capacity);

  // "'leaf g000 r0'": a node's description (or record name) in quotes.
  std::string label(NodeId n) const;

 private:
  struct RootSearch {
    uint32_t height = 0;
    std::vector<uint32_t> roots;  // switch indices whose bitset filled at `height`
    bool found = false;
  };
  RootSearch search_roots(std::span<const uint32_t> leaves, std::span<const uint32_t> load, uint32_t capacity,
                          bool constrained);
  Error refusal(std::string_view job_id, int32_t rail, size_t num_leaves, const RootSearch& shallowest,
                std::span<const uint32_t> load, uint32_t capacity) const;

  const Fabric* fabric_;
  const RailMap* rails_;
  std::span<const uint8_t> drained_;
  Status status_;
  SwitchGraph graph_;
  std::vector<std::pair<std::string_view, uint32_t>> host_index_;  // sorted by name
  std::vector<uint32_t> host_begin_;  // CSR: host -> CAs
  std::vector<NodeId> host_cas_;
  // Scratch, reused across calls.
  std::vector<uint64_t> reach_, next_;
  std::vector<uint32_t> dist_, touched_, queue_, tree_slot_;
};

// One-shot: the trees of `job` on an empty fabric (no other job's load).
// Errors as resolve() and build_tree().
Result<std::vector<SharpTree>> plan_sharp_trees(const Fabric& fabric, const RailMap& rails, const SharpJob& job,
                                                std::span<const uint8_t> drained, uint32_t trees_per_switch);

}  // namespace railyard::routing
