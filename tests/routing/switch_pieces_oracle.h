// The tests' own count of (switch, switch LID) pairs that no route can join:
// the two switches lie in different pieces of the switch graph (its links as
// cabled and up), found by a search written here, not the engine's.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/fabric.h"
#include "routing/switch_graph.h"

namespace railyard::routing::test {

// Over the LIDs of every switch (with `leaves` false, only of switches
// without CAs: spines and cores), counting each LID of an LMC range.
inline uint64_t switch_pairs_apart(const Fabric& f, bool leaves = true) {
  SwitchGraph g(f);
  const uint32_t n = g.num_switches();
  std::vector<uint32_t> piece(n, SwitchGraph::kNone), size, queue;
  for (uint32_t s0 = 0; s0 < n; ++s0) {
    if (piece[s0] != SwitchGraph::kNone) continue;
    const uint32_t id = static_cast<uint32_t>(size.size());
    piece[s0] = id;
    queue.assign(1, s0);
    for (size_t h = 0; h < queue.size(); ++h) {
      for (uint32_t e = g.begin(queue[h]); e < g.end(queue[h]); ++e) {
        if (piece[g.remote(e)] == SwitchGraph::kNone) {
          piece[g.remote(e)] = id;
          queue.push_back(g.remote(e));
        }
      }
    }
    size.push_back(static_cast<uint32_t>(queue.size()));
  }
  uint64_t apart = 0;
  for (uint32_t d = 0; d < n; ++d) {
    const Port& p0 = f.port(f.node(g.node(d)).first_port);
    if ((leaves || g.num_cas(d) == 0) && p0.lid.valid()) apart += uint64_t{n - size[piece[d]]} << p0.lmc;
  }
  return apart;
}

}  // namespace railyard::routing::test
