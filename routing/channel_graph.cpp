#include "routing/channel_graph.h"

namespace railyard::routing {

ChannelDependencyGraph::ChannelDependencyGraph(const SwitchGraph& g) : g_(g) {
  offset_.resize(g.num_entries() + 1, 0);
  for (uint32_t e = 0; e < g.num_entries(); ++e) {
    uint32_t r = g.remote(e);
    offset_[e + 1] = offset_[e] + (g.end(r) - g.begin(r));
  }
  bits_.assign((offset_.back() + 63) / 64, 0);
  used_.assign(g.num_entries(), 0);
}

CreditLoopCheck ChannelDependencyGraph::check(const Fabric& f) const {
  CreditLoopCheck out;
  for (uint8_t u : used_) out.channels += u;
  for (uint64_t w : bits_) out.dependencies += static_cast<uint64_t>(__builtin_popcountll(w));
  // Iterative DFS, colours 0 white, 1 on the stack, 2 done.
  const uint32_t m = g_.num_entries();
  std::vector<uint8_t> colour(m, 0);
  std::vector<std::pair<uint32_t, uint64_t>> stack;  // channel, next bit to look at
  for (uint32_t root = 0; root < m; ++root) {
    if (colour[root] || !used_[root]) continue;
    stack.emplace_back(root, offset_[root]);
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [e, pos] = stack.back();
      bool pushed = false;
      while (pos < offset_[e + 1]) {
        uint64_t bit = pos++;
        if (!(bits_[bit / 64] >> (bit % 64) & 1)) continue;
        uint32_t e2 = g_.begin(g_.remote(e)) + static_cast<uint32_t>(bit - offset_[e]);
        if (colour[e2] == 1) {
          // The cycle is the stack from e2 to the top.
          out.acyclic = false;
          size_t i = 0;
          while (stack[i].first != e2) ++i;
          for (; i < stack.size(); ++i) out.cycle += describe(f, stack[i].first) + " -> ";
          out.cycle += describe(f, e2);
          return out;
        }
        if (colour[e2] == 0) {
          colour[e2] = 1;
          stack.emplace_back(e2, offset_[e2]);
          pushed = true;
          break;
        }
      }
      if (!pushed) {
        colour[stack.back().first] = 2;
        stack.pop_back();
      }
    }
  }
  return out;
}

std::string ChannelDependencyGraph::describe(const Fabric& f, uint32_t e) const {
  uint32_t s = g_.remote(g_.rev(e));
  return std::string(f.desc(g_.node(s))) + "[" + std::to_string(g_.port(e)) + "]";
}

}  // namespace railyard::routing
