// The tests' own up*/down* distances from every switch to every leaf over
// the live links (by the structural levels of tests/routing/cut_oracle.h),
// to tell whether a next hop is still a shortest legal one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "routing/fabric.h"
#include "tests/routing/cut_oracle.h"

namespace railyard::routing::test {

// Up*/down* distances over the live links, from every switch to every leaf
// (by the structural levels): at(s, leaf), kFar when there is no such route.
class LeafDistances {
 public:
  static constexpr uint32_t kFar = UINT32_MAX / 2;
  explicit LeafDistances(const Fabric& f) : f_(f), level_(switch_levels(f)), index_(f.num_nodes(), kFar) {
    std::vector<NodeId> by_level(f.switches().begin(), f.switches().end());
    std::sort(by_level.begin(), by_level.end(), [&](NodeId a, NodeId b) { return level_[a.value()] < level_[b.value()]; });
    for (NodeId s : f.switches()) {
      if (level_[s.value()] == 1) index_[s.value()] = leaves_++;
    }
    dist_.assign(static_cast<size_t>(f.num_nodes()) * leaves_, kFar);
    for (NodeId s : by_level) {  // going down only, lowest first
      if (level_[s.value()] == 1) at(s, index_[s.value()]) = 0;
      for_each_live(s, level_[s.value()] - 1, [&](NodeId v) {
        for (uint32_t i = 0; i < leaves_; ++i) at(s, i) = std::min(at(s, i), at(v, i) + 1);
      });
    }
    for (auto it = by_level.rbegin(); it != by_level.rend(); ++it) {  // or climbing first, highest first
      for_each_live(*it, level_[it->value()] + 1, [&](NodeId a) {
        for (uint32_t i = 0; i < leaves_; ++i) at(*it, i) = std::min(at(*it, i), at(a, i) + 1);
      });
    }
  }
  uint32_t& at(NodeId s, uint32_t leaf) { return dist_[static_cast<size_t>(s.value()) * leaves_ + leaf]; }
  uint32_t leaf(NodeId s) const { return index_[s.value()]; }

 private:
  template <class F>
  void for_each_live(NodeId s, int32_t level, F&& f) {
    const Node& node = f_.node(s);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const PortId port(node.first_port.value() + p);
      const NodeId far = f_.remote_node(port);
      const LinkId l = f_.port(port).link;
      if (far.valid() && f_.is_switch(far) && level_[far.value()] == level && l.valid() &&
          f_.link(l).state != PortState::kDown) {
        f(far);
      }
    }
  }
  const Fabric& f_;
  std::vector<int32_t> level_;
  std::vector<uint32_t> index_;
  uint32_t leaves_ = 0;
  std::vector<uint32_t> dist_;
};

}  // namespace railyard::routing::test
