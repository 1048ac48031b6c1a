#include "routing/unicast_engine/dependency_order.h"

#include <algorithm>

namespace railyard::routing::unicast {

DependencyOrder::DependencyOrder(const SwitchGraph& g) : g_(g) {
  const uint32_t m = g.num_entries();
  offset_.resize(m + 1, 0);
  for (uint32_t e = 0; e < m; ++e) {
    const uint32_t r = g.remote(e);
    offset_[e + 1] = offset_[e] + (g.end(r) - g.begin(r));
  }
  bits_.assign((offset_.back() + 63) / 64, 0);
  refused_bits_.assign(bits_.size(), 0);
  mark_.assign(m, 0);
}

bool DependencyOrder::sort() {
  // Kahn's algorithm, channels in index order among the ready ones.
  const uint32_t m = g_.num_entries();
  std::vector<uint32_t> indegree(m, 0);
  for (uint32_t e = 0; e < m; ++e) {
    const uint32_t r = g_.remote(e);
    for (uint32_t k = 0; k < g_.end(r) - g_.begin(r); ++k) indegree[g_.begin(r) + k] += has(offset_[e] + k);
  }
  std::vector<uint32_t> ready;
  for (uint32_t e = 0; e < m; ++e) {
    if (indegree[e] == 0) ready.push_back(e);
  }
  ord_.assign(m, 0);
  uint32_t placed = 0;
  for (size_t h = 0; h < ready.size(); ++h) {
    const uint32_t e = ready[h];
    ord_[e] = placed++;
    const uint32_t r = g_.remote(e);
    for (uint32_t k = 0; k < g_.end(r) - g_.begin(r); ++k) {
      if (has(offset_[e] + k) && --indegree[g_.begin(r) + k] == 0) ready.push_back(g_.begin(r) + k);
    }
  }
  sorted_ = placed == m;
  return sorted_;
}

bool DependencyOrder::add(uint32_t e1, uint32_t e2) {
  if (!sorted_ || e1 == e2) return false;
  const uint64_t b = bit(e1, e2);
  if (has(b)) return true;
  if ((refused_bits_[b / 64] >> (b % 64)) & 1) return false;  // the graph only grows: still a cycle
  const uint32_t lb = ord_[e2], ub = ord_[e1];
  if (ub < lb) {  // already in order: no path from e2 back to e1 can exist
    bits_[b / 64] |= uint64_t{1} << (b % 64);
    return true;
  }
  ++searches_;
  if (++stamp_ == 0) {
    std::fill(mark_.begin(), mark_.end(), 0);
    stamp_ = 1;
  }
  // Forward from e2 over channels placed before e1: reaching e1 is a cycle.
  forward_.clear();
  stack_.assign(1, e2);
  mark_[e2] = stamp_;
  while (!stack_.empty()) {
    const uint32_t v = stack_.back();
    stack_.pop_back();
    forward_.push_back(v);
    const uint32_t r = g_.remote(v);
    for (uint32_t k = 0; k < g_.end(r) - g_.begin(r); ++k) {
      if (!has(offset_[v] + k)) continue;
      const uint32_t w = g_.begin(r) + k;
      if (w == e1) {
        refused_bits_[b / 64] |= uint64_t{1} << (b % 64);
        return false;
      }
      if (mark_[w] != stamp_ && ord_[w] < ub) {
        mark_[w] = stamp_;
        stack_.push_back(w);
      }
    }
  }
  // Backward from e1 over channels placed after e2 (none of them was reached
  // forward: that would be a path e2 -> ... -> e1).
  backward_.clear();
  stack_.assign(1, e1);
  mark_[e1] = stamp_;
  while (!stack_.empty()) {
    const uint32_t v = stack_.back();
    stack_.pop_back();
    backward_.push_back(v);
    const uint32_t s = source(v);
    const uint32_t k = v - g_.begin(s);
    for (uint32_t f = g_.begin(s); f < g_.end(s); ++f) {
      const uint32_t u = g_.rev(f);  // enters s
      if (has(offset_[u] + k) && mark_[u] != stamp_ && ord_[u] > lb) {
        mark_[u] = stamp_;
        stack_.push_back(u);
      }
    }
  }
  // The backward region (e1 and what leads to it) moves before the forward
  // one (e2 and what it leads to), into the positions both held.
  auto by_ord = [&](uint32_t a, uint32_t c) { return ord_[a] < ord_[c]; };
  std::sort(forward_.begin(), forward_.end(), by_ord);
  std::sort(backward_.begin(), backward_.end(), by_ord);
  pool_.clear();
  for (uint32_t v : backward_) pool_.push_back(ord_[v]);
  for (uint32_t v : forward_) pool_.push_back(ord_[v]);
  std::sort(pool_.begin(), pool_.end());
  size_t i = 0;
  for (uint32_t v : backward_) ord_[v] = pool_[i++];
  for (uint32_t v : forward_) ord_[v] = pool_[i++];
  bits_[b / 64] |= uint64_t{1} << (b % 64);
  return true;
}

}  // namespace railyard::routing::unicast
