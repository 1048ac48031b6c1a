// Internal to the update order (routing/update_order.h), split by concept
// over this folder:
//   planner.h         what the files share: where ports lead, the changed
//                     blocks, and the planner of one block index
//   constraints.cpp   rules (A) and (B) as edges between the changed blocks
//                     of a block index: walks of new and old paths
//   schedule.cpp      Kahn's rounds over those edges; partial steps where
//                     they make a cycle
//   update_order.cpp  the public entry points: checks, the diff in tiles,
//                     the rounds of all block indices together
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/result.h"
#include "routing/update_order.h"

namespace railyard::routing::ordering {

inline constexpr uint32_t kNone = UINT32_MAX;
inline constexpr uint8_t kNoPath = ForwardingTables::kNoPath;

// Where each port of each switch leads on the fabric as it is now, flat:
// entry first(sw) + p is port p (0 = the switch itself).
class PortMap {
 public:
  explicit PortMap(const Fabric& f) {
    const auto switches = f.switches();
    const uint32_t n = static_cast<uint32_t>(switches.size());
    std::vector<uint32_t> sw_of_node(f.num_nodes(), kNone);
    begin_.resize(n + 1);
    begin_[0] = 0;
    for (uint32_t s = 0; s < n; ++s) {
      sw_of_node[switches[s].value()] = s;
      begin_[s + 1] = begin_[s] + f.node(switches[s]).num_ports + 1u;
    }
    next_.assign(begin_[n], kNone);
    far_.assign(begin_[n], kNone);
    linked_.assign(n, 0);
    for (uint32_t s = 0; s < n; ++s) {
      const Node& nd = f.node(switches[s]);
      far_[begin_[s]] = nd.first_port.value();  // port 0 delivers to the switch's own LIDs
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        const Port& port = f.port(PortId(nd.first_port.value() + p));
        if (!port.remote.valid() || !port.link.valid() || f.link(port.link).state == PortState::kDown) continue;
        const NodeId r = f.port(port.remote).node;
        if (f.is_switch(r)) {
          next_[begin_[s] + p] = sw_of_node[r.value()];
          linked_[s] = 1;
        } else {
          far_[begin_[s] + p] = port.remote.value();
        }
      }
    }
  }

  // Whether switch sw has a live link to another switch.
  bool linked(uint32_t sw) const { return linked_[sw]; }

  // One hop of a LID owned by port `owner` leaving switch x by `port`: the
  // next switch, or kNone with `delivered` saying whether the packet left
  // at its owner (a CA port, or port 0 of the owning switch).
  uint32_t hop(uint32_t x, uint8_t port, uint32_t owner, bool& delivered) const {
    if (port == kNoPath || port >= begin_[x + 1] - begin_[x]) {
      delivered = false;
      return kNone;
    }
    const uint32_t at = begin_[x] + port;
    if (next_[at] != kNone) return next_[at];
    delivered = owner != kNone && far_[at] == owner;
    return kNone;
  }

 private:
  std::vector<uint32_t> begin_;
  std::vector<uint32_t> next_;  // switch across the port, kNone for a CA, port 0 or a dead port
  std::vector<uint32_t> far_;   // PortId across the port (own port 0 for p = 0), kNone when dead
  std::vector<uint8_t> linked_;  // per switch: a live link to another switch
};

struct ChangedBlock {
  uint32_t sw;
  uint32_t block;
  uint64_t changed;
};

// A constraint between two changed blocks of one block index: for every LID
// bit in `mask`, dst's entry goes after src's.
struct Edge {
  uint32_t src;
  uint32_t dst;
  uint64_t mask;
};

struct StagedStep {
  uint32_t round;
  UpdateStep step;
};

// Orders the changed switches of one block index; its arrays are reused
// from one block index to the next.
class BlockPlanner {
 public:
  BlockPlanner(const Fabric& fabric, const ForwardingTables& before, const ForwardingTables& after)
      : fabric_(fabric), ports_(fabric), before_(before), after_(after), num_switches_(before.num_switches()),
        num_lids_(before.num_lids()), node_of_(num_switches_, kNone) {}

  // `blocks`: the changed switches of block index `block`, in switch order.
  Status plan(uint32_t block, std::span<const ChangedBlock> blocks, std::vector<StagedStep>& out,
              UpdateOrder& order);

 private:
  enum : uint8_t { kPending = 0, kDelivers = 1, kLost = 2 };

  uint8_t new_entry(uint32_t sw, uint32_t lid) const { return after_.row(sw)[lid]; }
  uint8_t old_entry(uint32_t sw, uint32_t lid) const { return before_.row(sw)[lid]; }
  bool changed_at(uint32_t k, uint32_t i) const { return (changed_[k] >> i) & 1; }

  Error loop_error(uint32_t sw, uint32_t lid) const;

  // Rules (A) and (B) of the header as edges between changed blocks.
  Status constrain(UpdateOrder& order);

  // Where the new path from switch x0 for LID bit i goes after x0 until a
  // switch whose entry changed: that switch's changed block, or kReachesOwner,
  // kDrops, kLoops. Memoized for the unchanged switches it crosses.
  static constexpr uint32_t kReachesOwner = UINT32_MAX - 1;
  static constexpr uint32_t kDrops = UINT32_MAX - 2;
  static constexpr uint32_t kLoops = UINT32_MAX - 3;
  uint32_t new_path_end(uint32_t x0, uint32_t i);

  // Changed block k (or kNone) has an entry for LID bit i that loses it.
  bool loses(uint32_t k, uint32_t i) const {
    return k != kNone && changed_at(k, i) && state_[static_cast<size_t>(k) * kLftBlockLids + i] == kLost;
  }

  // Whether the old path from switch x0 for LID bit i, on the fabric now,
  // delivers and on the way (after x0) reaches a changed entry that loses
  // the LID. A path that does not deliver is lost whatever the order (the
  // failure cut it), so (B) need not protect it. Memoized per (switch, LID
  // bit) for this block index: old paths share their ends.
  bool old_path_delivers_across_lost(uint32_t x0, uint32_t i);

  // An edge src -> dst for LID bit i; dst's edges so far start at first_edge.
  void add_edge(size_t first_edge, uint32_t src, uint32_t dst, uint32_t i);

  // Kahn's algorithm by levels over the changed blocks; a stall (every block
  // left waits) is a cycle, broken by partial steps (break_cycles).
  Status schedule(std::vector<StagedStep>& out, UpdateOrder& order);

  // Marks the out-edges of k that its done entries now satisfy; blocks left
  // with nothing to wait for go in the next round.
  void release(uint32_t k);

  // Every block left waits for another. Each source component of the
  // waiting graph (its blocks wait only on each other) has a block with an
  // entry that waits for nothing (per LID the order is a DAG): that block
  // sends those entries, one block per source component, the fewest extra
  // sends. (Every block of the component sending what it can would take
  // fewer rounds when components are large, at the price of more partial
  // steps; with rule (B) limited to paths that still deliver, cycles are
  // rare and small: 1-3 partial steps where 10% of a small tree's links
  // went down at once, none for single failures.)
  Status break_cycles(uint32_t round, std::vector<StagedStep>& out, UpdateOrder& order);

  // Tarjan's strongly connected components over the unfinished blocks and
  // the unsatisfied edges, iteratively.
  void strongly_connected();

  const Fabric& fabric_;
  const PortMap ports_;
  const ForwardingTables& before_;
  const ForwardingTables& after_;
  const uint32_t num_switches_;
  const uint32_t num_lids_;
  std::vector<uint32_t> node_of_;  // switch -> its changed block of this block index, or kNone

  uint32_t block_ = 0;
  uint32_t m_ = 0;
  uint32_t owner_[kLftBlockLids] = {};
  std::vector<uint32_t> sw_;
  std::vector<uint64_t> changed_;
  std::vector<uint32_t> dep_;   // per (block, LID bit): the changed block it waits for (A)
  std::vector<uint8_t> state_;  // per (block, LID bit): kDelivers / kLost
  std::vector<size_t> chain_;
  uint32_t epoch_ = 0;                  // one per block index that walks old paths
  // A memoized walk result and the epoch (pass over a block index) it is
  // from, side by side: one cache miss for both.
  struct Memo {
    uint32_t epoch = 0;
    uint32_t value = 0;
  };
  std::vector<Memo> old_path_;  // per (switch, LID bit): old_path_delivers_across_lost
  std::vector<std::pair<uint32_t, bool>> walk_;
  std::vector<Memo> path_end_;  // per (switch, LID bit): new_path_end
  std::vector<uint32_t> unchanged_;
  std::vector<Edge> edges_;
  std::vector<uint32_t> out_begin_, out_edges_, fill_, pending_;
  std::vector<uint8_t> satisfied_, finished_;
  std::vector<uint64_t> done_;  // entries already sent with their new value
  std::vector<uint32_t> frontier_, next_frontier_;
  std::vector<uint64_t> blocked_;
  std::vector<uint8_t> has_in_, on_stack_, picked_;
  std::vector<uint32_t> index_, low_, component_, stack_;
  std::vector<std::pair<uint32_t, uint32_t>> calls_;
};

}  // namespace railyard::routing::ordering
