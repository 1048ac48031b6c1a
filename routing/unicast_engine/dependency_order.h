// DependencyOrder: a channel dependency graph that refuses any dependency
// which would close a cycle, kept with a topological order of its channels
// so that most additions cost nothing (Pearce & Kelly, "A dynamic
// topological sort algorithm for directed acyclic graphs", JEA 2006).
//
// Channels are SwitchGraph entries (the directed link s -> remote); a
// dependency e1 -> e2 (a route goes over e1 and then over e2, which leaves the
// switch e1 enters) is one bit, as in ChannelDependencyGraph, so the graph is
// O(links x radix) bits. The order is only a device for speed: whether a
// dependency is taken depends on the graph alone (is e1 reachable from e2?),
// never on the order the channels happen to have.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/switch_graph.h"

namespace railyard::routing::unicast {

class DependencyOrder {
 public:
  explicit DependencyOrder(const SwitchGraph& g);

  // A dependency of routes already made (no check); call sort() after the last.
  void set(uint32_t e1, uint32_t e2) {
    const uint64_t b = bit(e1, e2);
    bits_[b / 64] |= uint64_t{1} << (b % 64);
  }
  // Orders the channels; false when the dependencies set so far have a cycle
  // (then nothing can be added).
  bool sort();
  // Adds e1 -> e2 unless it would close a cycle (e1 reachable from e2, or
  // e1 == e2); says whether the dependency is now in the graph.
  bool add(uint32_t e1, uint32_t e2);
  // Whether e1 -> e2 is in the graph already.
  bool contains(uint32_t e1, uint32_t e2) const { return has(bit(e1, e2)); }

  uint64_t searches() const { return searches_; }  // additions that needed a search

 private:
  uint64_t bit(uint32_t e1, uint32_t e2) const { return offset_[e1] + (e2 - g_.begin(g_.remote(e1))); }
  bool has(uint64_t b) const { return (bits_[b / 64] >> (b % 64)) & 1; }
  // Switch a channel leaves.
  uint32_t source(uint32_t e) const { return g_.remote(g_.rev(e)); }

  const SwitchGraph& g_;
  std::vector<uint64_t> offset_;  // first bit of each channel's successors
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> refused_bits_;  // dependencies found to close a cycle
  std::vector<uint32_t> ord_;     // position of each channel in the order
  bool sorted_ = false;
  uint64_t searches_ = 0;
  // Scratch of add(): marks, the two searched regions, a stack, positions.
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> forward_, backward_, stack_, pool_;
};

}  // namespace railyard::routing::unicast
