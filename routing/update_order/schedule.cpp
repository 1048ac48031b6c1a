// The rounds of one block index: Kahn's algorithm over the changed blocks,
// partial steps where the edges make a cycle.
#include <algorithm>
#include <cassert>
#include <string>

#include "routing/update_order/planner.h"

namespace railyard::routing::ordering {

Status BlockPlanner::schedule(std::vector<StagedStep>& out, UpdateOrder& order) {
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

void BlockPlanner::release(uint32_t k) {
  for (uint32_t j = out_begin_[k]; j < out_begin_[k + 1]; ++j) {
    const uint32_t e = out_edges_[j];
    if (satisfied_[e] || (edges_[e].mask & ~done_[k]) != 0) continue;
    satisfied_[e] = 1;
    const uint32_t d = edges_[e].dst;
    if (--pending_[d] == 0 && !finished_[d]) next_frontier_.push_back(d);
  }
}

Status BlockPlanner::break_cycles(uint32_t round, std::vector<StagedStep>& out, UpdateOrder& order) {
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

void BlockPlanner::strongly_connected() {
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

}  // namespace railyard::routing::ordering
