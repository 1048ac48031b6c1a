#include "routing/update_order.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace railyard::routing {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kNoPath = ForwardingTables::kNoPath;

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

  // One hop of a LID owned by port `owner` leaving switch x by `port`: the
  // next switch, or kNone with `delivered` saying whether the packet left
  // at its owner (a CA port, or port 0 of the owning switch).
  // Whether switch sw has a live link to another switch.
  bool linked(uint32_t sw) const { return linked_[sw]; }

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

// Bit i set where the 64 (or n < 64) bytes differ.
uint64_t diff_mask(const uint8_t* a, const uint8_t* b, uint32_t n) {
#if defined(__SSE2__)
  if (n == kLftBlockLids) {
    uint64_t equal = 0;
    for (uint32_t q = 0; q < 4; ++q) {
      const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16 * q));
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * q));
      equal |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(u, v)))) << (16 * q);
    }
    return ~equal;
  }
#endif
  uint64_t mask = 0;
  for (uint32_t i = 0; i < n; ++i) mask |= static_cast<uint64_t>(a[i] != b[i]) << i;
  return mask;
}

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
  Status plan(uint32_t block, std::span<const ChangedBlock> blocks, std::vector<StagedStep>& out, UpdateOrder& order) {
    block_ = block;
    m_ = static_cast<uint32_t>(blocks.size());
    sw_.resize(m_);
    changed_.resize(m_);
    for (uint32_t k = 0; k < m_; ++k) {
      sw_[k] = blocks[k].sw;
      changed_[k] = blocks[k].changed;
      node_of_[sw_[k]] = k;
    }
    const uint32_t base = block * kLftBlockLids;
    for (uint32_t i = 0; i < kLftBlockLids; ++i) {
      const uint32_t lid = base + i;
      const PortId o = lid < num_lids_ && lid <= Lid::kMaxUnicast ? fabric_.lid_owner(Lid{static_cast<uint16_t>(lid)})
                                                                   : PortId();
      owner_[i] = o.valid() ? o.value() : kNone;
    }
    Status st = constrain(order);
    if (st.ok()) st = schedule(out, order);
    for (uint32_t k = 0; k < m_; ++k) node_of_[sw_[k]] = kNone;
    return st;
  }

 private:
  enum : uint8_t { kPending = 0, kDelivers = 1, kLost = 2 };

  uint8_t new_entry(uint32_t sw, uint32_t lid) const { return after_.row(sw)[lid]; }
  uint8_t old_entry(uint32_t sw, uint32_t lid) const { return before_.row(sw)[lid]; }
  bool changed_at(uint32_t k, uint32_t i) const { return (changed_[k] >> i) & 1; }

  Error loop_error(uint32_t sw, uint32_t lid) const {
    return Error{"update order: the new tables loop for LID " + std::to_string(lid) + " from switch " +
                 std::string(fabric_.name(fabric_.switches()[sw]))};
  }

  // Rules (A) and (B) of the header as edges between changed blocks.
  Status constrain(UpdateOrder& order) {
    const uint32_t base = block_ * kLftBlockLids;
    dep_.assign(static_cast<size_t>(m_) * kLftBlockLids, kNone);
    state_.assign(static_cast<size_t>(m_) * kLftBlockLids, kPending);
    edges_.clear();

    // (A): follow each changed entry's new path through unchanged switches
    // to the first changed one (its dependency) or to its end. What lies
    // after an unchanged switch is memoized: new paths to one LID share
    // their ends.
    ++epoch_;
    for (uint32_t k = 0; k < m_; ++k) {
      const size_t first_edge = edges_.size();
      for (uint64_t bits = changed_[k]; bits != 0; bits &= bits - 1) {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(bits));
        const size_t e = static_cast<size_t>(k) * kLftBlockLids + i;
        const uint32_t after = new_path_end(sw_[k], i);
        if (after == kLoops || after == k) return loop_error(sw_[k], base + i);
        if (after == kReachesOwner || after == kDrops) {
          state_[e] = after == kReachesOwner ? kDelivers : kLost;
        } else {
          dep_[e] = after;
          add_edge(first_edge, after, k, i);
        }
      }
    }

    // Whether each changed entry's new route delivers: that of the end of
    // its chain of dependencies. A chain longer than the switches loops.
    uint64_t lost_lids = 0;
    for (uint32_t k = 0; k < m_; ++k) {
      for (uint64_t bits = changed_[k]; bits != 0; bits &= bits - 1) {
        const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(bits));
        size_t e = static_cast<size_t>(k) * kLftBlockLids + i;
        chain_.clear();
        while (state_[e] == kPending) {
          chain_.push_back(e);
          if (chain_.size() > m_) return loop_error(sw_[k], base + i);
          e = static_cast<size_t>(dep_[e]) * kLftBlockLids + i;
        }
        for (size_t c : chain_) state_[c] = state_[e];
        if (state_[e] == kLost) {
          if (ports_.linked(sw_[k])) lost_lids |= uint64_t{1} << i;
          ++order.entries_cut;
        }
      }
    }

    // (B): a changed entry that loses its LID goes after every changed
    // entry that delivers and whose old path (on the fabric now) crosses it
    // and still delivers.
    // Only a switch with a live switch link can be on another's path (a
    // dead switch's own row changes in every block: no walks for it).
    if (lost_lids != 0) {
      ++epoch_;
      for (uint32_t k = 0; k < m_; ++k) {
        for (uint64_t bits = changed_[k] & lost_lids; bits != 0; bits &= bits - 1) {
          const uint32_t i = static_cast<uint32_t>(__builtin_ctzll(bits));
          if (state_[static_cast<size_t>(k) * kLftBlockLids + i] != kDelivers) continue;
          if (!old_path_delivers_across_lost(sw_[k], i)) continue;
          const uint32_t lid = base + i;
          uint32_t x = sw_[k];
          // A loop in the old tables (not this order's doing) ends the walk.
          for (uint32_t hops = 0; hops <= num_switches_; ++hops) {
            bool delivered = false;
            const uint32_t next = ports_.hop(x, old_entry(x, lid), owner_[i], delivered);
            if (next == kNone) break;
            const uint32_t kn = node_of_[next];
            if (loses(kn, i)) {
              if (!edges_.empty() && edges_.back().src == k && edges_.back().dst == kn) {
                edges_.back().mask |= uint64_t{1} << i;
              } else {
                edges_.push_back({k, kn, uint64_t{1} << i});
              }
            }
            x = next;
          }
        }
      }
    }
    return {};
  }

  // Where the new path from switch x0 for LID bit i goes after x0 until a
  // switch whose entry changed: that switch's changed block, or kReachesOwner,
  // kDrops, kLoops. Memoized for the unchanged switches it crosses.
  static constexpr uint32_t kReachesOwner = UINT32_MAX - 1;
  static constexpr uint32_t kDrops = UINT32_MAX - 2;
  static constexpr uint32_t kLoops = UINT32_MAX - 3;
  uint32_t new_path_end(uint32_t x0, uint32_t i) {
    const uint32_t lid = block_ * kLftBlockLids + i;
    if (path_end_.empty()) path_end_.assign(static_cast<size_t>(num_switches_) * kLftBlockLids, Memo{});
    unchanged_.clear();
    uint32_t x = x0;
    uint32_t end = kLoops;
    for (uint32_t hops = 0; hops <= num_switches_; ++hops) {
      bool delivered = false;
      const uint32_t next = ports_.hop(x, new_entry(x, lid), owner_[i], delivered);
      if (next == kNone) {
        end = delivered ? kReachesOwner : kDrops;
        break;
      }
      const uint32_t kn = node_of_[next];
      if (kn != kNone && changed_at(kn, i)) {
        end = kn;
        break;
      }
      const size_t key = static_cast<size_t>(next) * kLftBlockLids + i;
      if (path_end_[key].epoch == epoch_) {
        end = path_end_[key].value;
        break;
      }
      unchanged_.push_back(next);
      x = next;
    }
    for (uint32_t y : unchanged_) {
      const size_t key = static_cast<size_t>(y) * kLftBlockLids + i;
      path_end_[key] = {epoch_, end};
    }
    return end;
  }

  // Changed block k (or kNone) has an entry for LID bit i that loses it.
  bool loses(uint32_t k, uint32_t i) const {
    return k != kNone && changed_at(k, i) && state_[static_cast<size_t>(k) * kLftBlockLids + i] == kLost;
  }

  // Whether the old path from switch x0 for LID bit i, on the fabric now,
  // delivers and on the way (after x0) reaches a changed entry that loses
  // the LID. A path that does not deliver is lost whatever the order (the
  // failure cut it), so (B) need not protect it. Memoized per (switch, LID
  // bit) for this block index: old paths share their ends.
  bool old_path_delivers_across_lost(uint32_t x0, uint32_t i) {
    constexpr uint8_t kCrosses = 1, kDelivers = 2;
    const uint32_t lid = block_ * kLftBlockLids + i;
    if (old_path_.empty()) old_path_.assign(static_cast<size_t>(num_switches_) * kLftBlockLids, Memo{});
    walk_.clear();
    uint8_t result = 0;
    uint32_t x = x0;
    for (uint32_t hops = 0;; ++hops) {
      const size_t key = static_cast<size_t>(x) * kLftBlockLids + i;
      if (old_path_[key].epoch == epoch_) {
        result = static_cast<uint8_t>(old_path_[key].value);
        break;
      }
      bool delivered = false;
      // A loop in the old tables (not this order's doing) counts as lost.
      const uint32_t next = hops > num_switches_ ? kNone : ports_.hop(x, old_entry(x, lid), owner_[i], delivered);
      if (next == kNone) {
        walk_.push_back({x, false});
        result = delivered ? kDelivers : 0;
        break;
      }
      walk_.push_back({x, loses(node_of_[next], i)});
      x = next;
    }
    for (size_t j = walk_.size(); j-- > 0;) {
      if (walk_[j].second) result |= kCrosses;
      const size_t key = static_cast<size_t>(walk_[j].first) * kLftBlockLids + i;
      old_path_[key] = {epoch_, result};
    }
    return result == (kCrosses | kDelivers);
  }

  // An edge src -> dst for LID bit i; dst's edges so far start at first_edge.
  void add_edge(size_t first_edge, uint32_t src, uint32_t dst, uint32_t i) {
    for (size_t e = first_edge; e < edges_.size(); ++e) {
      if (edges_[e].src == src) {
        edges_[e].mask |= uint64_t{1} << i;
        return;
      }
    }
    edges_.push_back({src, dst, uint64_t{1} << i});
  }

  // Kahn's algorithm by levels over the changed blocks; a stall (every block
  // left waits) is a cycle, broken by partial steps (break_cycles).
  Status schedule(std::vector<StagedStep>& out, UpdateOrder& order) {
    out_begin_.assign(m_ + 1, 0);
    for (const Edge& e : edges_) ++out_begin_[e.src + 1];
    for (uint32_t k = 0; k < m_; ++k) out_begin_[k + 1] += out_begin_[k];
    out_edges_.resize(edges_.size());
    fill_.assign(out_begin_.begin(), out_begin_.end() - 1);
    pending_.assign(m_, 0);
    for (uint32_t e = 0; e < edges_.size(); ++e) {
      out_edges_[fill_[edges_[e].src]++] = e;
      ++pending_[edges_[e].dst];
    }
    satisfied_.assign(edges_.size(), 0);
    done_.assign(m_, 0);
    finished_.assign(m_, 0);
    frontier_.clear();
    for (uint32_t k = 0; k < m_; ++k) {
      if (pending_[k] == 0) frontier_.push_back(k);
    }
    uint32_t left = m_;
    for (uint32_t round = 0; left > 0; ++round) {
      next_frontier_.clear();
      if (frontier_.empty()) {
        Status st = break_cycles(round, out, order);
        if (!st.ok()) return st;
      } else {
        std::sort(frontier_.begin(), frontier_.end());  // switch order within the round
        for (uint32_t k : frontier_) {
          done_[k] = changed_[k];
          finished_[k] = 1;
          --left;
          out.push_back({round, UpdateStep{sw_[k], block_, changed_[k], true}});
          release(k);
        }
      }
      frontier_.swap(next_frontier_);
    }
    return {};
  }

  // Marks the out-edges of k that its done entries now satisfy; blocks left
  // with nothing to wait for go in the next round.
  void release(uint32_t k) {
    for (uint32_t j = out_begin_[k]; j < out_begin_[k + 1]; ++j) {
      const uint32_t e = out_edges_[j];
      if (satisfied_[e] || (edges_[e].mask & ~done_[k]) != 0) continue;
      satisfied_[e] = 1;
      const uint32_t d = edges_[e].dst;
      if (--pending_[d] == 0 && !finished_[d]) next_frontier_.push_back(d);
    }
  }

  // Every block left waits for another. Each source component of the
  // waiting graph (its blocks wait only on each other) has a block with an
  // entry that waits for nothing (per LID the order is a DAG): that block
  // sends those entries, one block per source component, the fewest extra
  // sends. (Every block of the component sending what it can would take
  // fewer rounds when components are large, at the price of more partial
  // steps; with rule (B) limited to paths that still deliver, cycles are
  // rare and small: 1-3 partial steps where 10% of a small tree's links
  // went down at once, none for single failures.)
  Status break_cycles(uint32_t round, std::vector<StagedStep>& out, UpdateOrder& order) {
    strongly_connected();
    blocked_.assign(m_, 0);
    has_in_.assign(m_, 0);
    for (uint32_t e = 0; e < edges_.size(); ++e) {
      const Edge& ed = edges_[e];
      if (satisfied_[e] || finished_[ed.dst]) continue;
      blocked_[ed.dst] |= ed.mask & ~done_[ed.src];
      if (component_[ed.src] != component_[ed.dst]) has_in_[component_[ed.dst]] = 1;
    }
    picked_.assign(m_, 0);
    bool progress = false;
    for (uint32_t k = 0; k < m_; ++k) {
      if (finished_[k]) continue;
      const uint32_t c = component_[k];
      const uint64_t ready = changed_[k] & ~done_[k] & ~blocked_[k];
      if (has_in_[c] || picked_[c] || ready == 0) continue;
      picked_[c] = 1;
      progress = true;
      done_[k] |= ready;
      // A block waits on something, so some of its entries do: never all.
      assert(done_[k] != changed_[k]);
      out.push_back({round, UpdateStep{sw_[k], block_, done_[k], false}});
      ++order.partial_steps;
      release(k);
    }
    // Per LID the constraints form a DAG (dependency loops were refused as
    // loops of the new tables), so a source component always has a ready
    // entry; without one the order would never finish.
    assert(progress);
    if (!progress) return Error{"update order: internal error, no block can be sent in block " + std::to_string(block_)};
    return {};
  }

  // Tarjan's strongly connected components over the unfinished blocks and
  // the unsatisfied edges, iteratively.
  void strongly_connected() {
    index_.assign(m_, kNone);
    low_.assign(m_, 0);
    on_stack_.assign(m_, 0);
    component_.assign(m_, kNone);
    stack_.clear();
    uint32_t counter = 0;
    uint32_t components = 0;
    for (uint32_t root = 0; root < m_; ++root) {
      if (finished_[root] || index_[root] != kNone) continue;
      calls_.clear();
      calls_.push_back({root, out_begin_[root]});
      index_[root] = low_[root] = counter++;
      stack_.push_back(root);
      on_stack_[root] = 1;
      while (!calls_.empty()) {
        const uint32_t v = calls_.back().first;
        uint32_t& pos = calls_.back().second;
        if (pos < out_begin_[v + 1]) {
          const uint32_t e = out_edges_[pos++];
          const uint32_t w = edges_[e].dst;
          if (satisfied_[e] || finished_[w]) continue;
          if (index_[w] == kNone) {
            index_[w] = low_[w] = counter++;
            stack_.push_back(w);
            on_stack_[w] = 1;
            calls_.push_back({w, out_begin_[w]});
          } else if (on_stack_[w]) {
            low_[v] = std::min(low_[v], index_[w]);
          }
          continue;
        }
        calls_.pop_back();
        if (!calls_.empty()) {
          const uint32_t parent = calls_.back().first;
          low_[parent] = std::min(low_[parent], low_[v]);
        }
        if (low_[v] == index_[v]) {
          uint32_t w;
          do {
            w = stack_.back();
            stack_.pop_back();
            on_stack_[w] = 0;
            component_[w] = components;
          } while (w != v);
          ++components;
        }
      }
    }
  }

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

// Rounds: counting sort by round, stable (block index, then the order in
// which the block index's planner sent them).
UpdateOrder finish(UpdateOrder order, const std::vector<StagedStep>& staged) {
  uint32_t rounds = 0;
  for (const StagedStep& s : staged) rounds = std::max(rounds, s.round + 1);
  order.round_begin.assign(rounds + 1, 0);
  for (const StagedStep& s : staged) ++order.round_begin[s.round + 1];
  for (uint32_t r = 0; r < rounds; ++r) order.round_begin[r + 1] += order.round_begin[r];
  order.steps.resize(staged.size());
  std::vector<uint32_t> slot(order.round_begin.begin(), order.round_begin.end() - 1);
  for (const StagedStep& s : staged) order.steps[slot[s.round]++] = s.step;
  return order;
}

}  // namespace

Result<UpdateOrder> plan_update_order(const Fabric& fabric, const ForwardingTables& before,
                                      const ForwardingTables& after, const UpdateOrderOptions& options) {
  if (before.num_switches() != after.num_switches() || before.num_lids() != after.num_lids()) {
    return Error{"update order: tables of different sizes: before " + std::to_string(before.num_switches()) +
                 " switches x " + std::to_string(before.num_lids()) + " LIDs, after " +
                 std::to_string(after.num_switches()) + " x " + std::to_string(after.num_lids())};
  }
  if (before.num_switches() != fabric.switches().size()) {
    return Error{"update order: the tables have " + std::to_string(before.num_switches()) + " switches, the fabric " +
                 std::to_string(fabric.switches().size())};
  }
  const uint32_t num_lids = before.num_lids();
  const uint32_t num_blocks = (num_lids + kLftBlockLids - 1) / kLftBlockLids;

  UpdateOrder order;
  std::vector<StagedStep> staged;
  BlockPlanner planner(fabric, before, after);
  if (!options.blocks.empty()) {
    // Only the pairs given: sorted by block index, then switch, and diffed.
    std::vector<ChangedBlock> changed;
    changed.reserve(options.blocks.size());
    for (const SwitchBlock& sb : options.blocks) {
      if (sb.switch_index >= before.num_switches() || sb.block >= num_blocks) {
        return Error{"update order: block " + std::to_string(sb.block) + " of switch " +
                     std::to_string(sb.switch_index) + " is beyond the tables (" +
                     std::to_string(before.num_switches()) + " switches x " + std::to_string(num_blocks) + " blocks)"};
      }
      const uint32_t off = sb.block * kLftBlockLids;
      const uint64_t mask = diff_mask(before.row(sb.switch_index).data() + off, after.row(sb.switch_index).data() + off,
                                      std::min(kLftBlockLids, num_lids - off));
      if (mask != 0) changed.push_back({sb.switch_index, sb.block, mask});
    }
    // By block index (counting), then switch within each (small) bucket.
    std::vector<uint32_t> bucket(num_blocks + 1, 0);
    for (const ChangedBlock& c : changed) ++bucket[c.block + 1];
    for (uint32_t b = 0; b < num_blocks; ++b) bucket[b + 1] += bucket[b];
    std::vector<ChangedBlock> sorted(changed.size());
    {
      std::vector<uint32_t> next(bucket.begin(), bucket.end() - 1);
      for (const ChangedBlock& c : changed) sorted[next[c.block]++] = c;
    }
    for (uint32_t b = 0; b < num_blocks; ++b) {
      std::sort(sorted.begin() + bucket[b], sorted.begin() + bucket[b + 1],
                [](const ChangedBlock& x, const ChangedBlock& y) { return x.sw < y.sw; });
    }
    changed.clear();
    for (const ChangedBlock& c : sorted) {
      if (changed.empty() || changed.back().block != c.block || changed.back().sw != c.sw) changed.push_back(c);
    }
    for (const ChangedBlock& c : changed) {
      order.entries_changed += static_cast<uint64_t>(__builtin_popcountll(c.changed));
    }
    order.blocks_changed = changed.size();
    for (size_t g = 0; g < changed.size();) {
      size_t h = g;
      while (h < changed.size() && changed[h].block == changed[g].block) ++h;
      Status st = planner.plan(changed[g].block, std::span<const ChangedBlock>(changed.data() + g, h - g), staged, order);
      if (!st.ok()) return st.error();
      g = h;
    }
    return finish(std::move(order), staged);
  }

  // The block indices to compare.
  std::vector<uint32_t> blocks;
  if (options.lids.empty()) {
    blocks.resize(num_blocks);
    for (uint32_t b = 0; b < num_blocks; ++b) blocks[b] = b;
  } else {
    blocks.reserve(options.lids.size());
    for (Lid l : options.lids) {
      if (l.value >= num_lids) {
        return Error{"update order: LID " + std::to_string(l.value) + " is beyond the tables (" +
                     std::to_string(num_lids) + " LIDs)"};
      }
      blocks.push_back(l.value / kLftBlockLids);
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  }

  // Tiles of block indices, each diffed switch by switch and then planned
  // block index by block index while the tile's part of both tables (~8 MB)
  // is still in cache: the walks read entries of other switches in the same
  // blocks. At least 64 blocks (4 KB of a row): a narrower tile would start
  // a page (a TLB miss, no prefetch) per row for less work.
  const uint32_t num_switches = before.num_switches();
  const uint32_t tile = static_cast<uint32_t>(std::max<size_t>(
      4096 / kLftBlockLids, (size_t{8} << 20) / (2 * kLftBlockLids * std::max<size_t>(num_switches, 1))));
  constexpr uint32_t kPrefetchRows = 4;
  std::vector<ChangedBlock> changed, by_block;
  std::vector<uint32_t> tile_begin(tile + 1), fill(tile);
  for (size_t t0 = 0; t0 < blocks.size(); t0 += tile) {
    const uint32_t width = static_cast<uint32_t>(std::min<size_t>(tile, blocks.size() - t0));
    // Contiguous blocks (no hint): a row's part of the tile is first
    // compared whole, at memory speed; most rows are equal there.
    const bool contiguous = blocks[t0 + width - 1] - blocks[t0] == width - 1;
    const uint32_t span_begin = blocks[t0] * kLftBlockLids;
    const uint32_t span_bytes = std::min(num_lids, (blocks[t0 + width - 1] + 1) * kLftBlockLids) - span_begin;
    changed.clear();
    std::fill(tile_begin.begin(), tile_begin.end(), 0);
    for (uint32_t s = 0; s < num_switches; ++s) {
      const uint8_t* a = before.row(s).data();
      const uint8_t* b = after.row(s).data();
      if (contiguous && std::memcmp(a + span_begin, b + span_begin, span_bytes) == 0) continue;
      // Hinted blocks are scattered over a row and the next row is a page
      // or more away, where no hardware prefetcher goes: ask for them a few
      // rows ahead, or every block costs a trip to memory.
      if (!contiguous && s + kPrefetchRows < num_switches) {
        const uint8_t* pa = before.row(s + kPrefetchRows).data();
        const uint8_t* pb = after.row(s + kPrefetchRows).data();
        for (uint32_t j = 0; j < width; ++j) {
          const uint32_t off = blocks[t0 + j] * kLftBlockLids;
          __builtin_prefetch(pa + off);
          __builtin_prefetch(pb + off);
        }
      }
      for (uint32_t j = 0; j < width; ++j) {
        const uint32_t off = blocks[t0 + j] * kLftBlockLids;
        const uint64_t mask = diff_mask(a + off, b + off, std::min(kLftBlockLids, num_lids - off));
        if (mask == 0) continue;
        changed.push_back({s, j, mask});  // block: position in the tile, for now
        ++tile_begin[j + 1];
        order.entries_changed += static_cast<uint64_t>(__builtin_popcountll(mask));
      }
    }
    if (changed.empty()) continue;
    order.blocks_changed += changed.size();
    for (uint32_t j = 0; j < width; ++j) tile_begin[j + 1] += tile_begin[j];
    by_block.resize(changed.size());
    std::copy(tile_begin.begin(), tile_begin.begin() + width, fill.begin());
    for (const ChangedBlock& c : changed) {
      by_block[fill[c.block]++] = {c.sw, blocks[t0 + c.block], c.changed};  // stays in switch order
    }
    for (uint32_t j = 0; j < width; ++j) {
      if (tile_begin[j] == tile_begin[j + 1]) continue;
      std::span<const ChangedBlock> group(by_block.data() + tile_begin[j], tile_begin[j + 1] - tile_begin[j]);
      Status st = planner.plan(blocks[t0 + j], group, staged, order);
      if (!st.ok()) return st.error();
    }
  }

  return finish(std::move(order), staged);
}

void step_entries(const ForwardingTables& before, const ForwardingTables& after, const UpdateStep& step,
                  std::span<uint8_t, kLftBlockLids> out) {
  const uint32_t base = step.block * kLftBlockLids;
  for (uint32_t i = 0; i < kLftBlockLids; ++i) {
    const uint32_t lid = base + i;
    const ForwardingTables& t = ((step.new_lids >> i) & 1) ? after : before;
    out[i] = step.switch_index < t.num_switches() && lid < t.num_lids() ? t.row(step.switch_index)[lid] : kNoPath;
  }
}

}  // namespace railyard::routing
