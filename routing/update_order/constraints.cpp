// Rules (A) and (B) of routing/update_order.h as edges between the changed
// blocks of one block index.
#include <string>

#include "routing/update_order/planner.h"

namespace railyard::routing::ordering {

Status BlockPlanner::plan(uint32_t block, std::span<const ChangedBlock> blocks, std::vector<StagedStep>& out,
                          UpdateOrder& order) {
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

Error BlockPlanner::loop_error(uint32_t sw, uint32_t lid) const {
  return Error{"update order: the new tables loop for LID " + std::to_string(lid) + " from switch " +
               std::string(fabric_.name(fabric_.switches()[sw]))};
}

Status BlockPlanner::constrain(UpdateOrder& order) {
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

uint32_t BlockPlanner::new_path_end(uint32_t x0, uint32_t i) {
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

bool BlockPlanner::old_path_delivers_across_lost(uint32_t x0, uint32_t i) {
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

void BlockPlanner::add_edge(size_t first_edge, uint32_t src, uint32_t dst, uint32_t i) {
  for (size_t e = first_edge; e < edges_.size(); ++e) {
    if (edges_[e].src == src) {
      edges_[e].mask |= uint64_t{1} << i;
      return;
    }
  }
  edges_.push_back({src, dst, uint64_t{1} << i});
}

}  // namespace railyard::routing::ordering
