#include "routing/ranking.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace railyard::routing {

std::string_view to_string(RankingKind k) {
  switch (k) {
    case RankingKind::kFromCas: return "levels from CAs";
    case RankingKind::kBipartite: return "bipartite, roots on the side with fewer CAs";
    case RankingKind::kRoots: return "roots from policy";
    case RankingKind::kCenter: return "centre root per component";
  }
  return "?";
}

namespace {


// Multi-source BFS depth over the switch graph.
std::vector<uint32_t> bfs(const SwitchGraph& g, std::span<const uint32_t> sources) {
  std::vector<uint32_t> depth(g.num_switches(), kInf);
  std::vector<uint32_t> queue;
  queue.reserve(g.num_switches());
  for (uint32_t s : sources) {
    if (depth[s] == kInf) {
      depth[s] = 0;
      queue.push_back(s);
    }
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    uint32_t s = queue[head];
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      uint32_t r = g.remote(e);
      if (depth[r] == kInf) {
        depth[r] = depth[s] + 1;
        queue.push_back(r);
      }
    }
  }
  return depth;
}

// Ranks from BFS depth below roots: rank = max depth - depth. Switches not
// reached (other components) are ranked from their own centre.
void rank_from_depth(const SwitchGraph& g, std::vector<uint32_t> depth, Ranking& out);

uint32_t farthest(const std::vector<uint32_t>& depth, std::span<const uint32_t> members) {
  uint32_t best = members[0];
  for (uint32_t s : members) {
    if (depth[s] != kInf && depth[s] > depth[best]) best = s;
  }
  return best;
}

// Components of the switch graph, each as a list of switch indices.
std::vector<std::vector<uint32_t>> components(const SwitchGraph& g) {
  std::vector<uint32_t> comp(g.num_switches(), kInf);
  std::vector<std::vector<uint32_t>> out;
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    if (comp[s] != kInf) continue;
    uint32_t id = static_cast<uint32_t>(out.size());
    out.emplace_back();
    auto& list = out.back();
    comp[s] = id;
    list.push_back(s);
    for (size_t head = 0; head < list.size(); ++head) {
      uint32_t x = list[head];
      for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
        uint32_t r = g.remote(e);
        if (comp[r] == kInf) {
          comp[r] = id;
          list.push_back(r);
        }
      }
    }
  }
  return out;
}

// Approximate centre by double sweep: farthest a from any node, farthest b
// from a, then the node on an a-b shortest path halfway along.
uint32_t centre(const SwitchGraph& g, std::span<const uint32_t> members) {
  uint32_t start = members[0];
  auto d0 = bfs(g, std::span<const uint32_t>(&start, 1));
  uint32_t a = farthest(d0, members);
  auto da = bfs(g, std::span<const uint32_t>(&a, 1));
  uint32_t b = farthest(da, members);
  auto db = bfs(g, std::span<const uint32_t>(&b, 1));
  uint32_t len = da[b];
  uint32_t best = a;
  uint32_t best_ecc = kInf;
  for (uint32_t s : members) {
    if (da[s] + db[s] != len) continue;  // on a shortest a-b path
    uint32_t ecc = std::max(da[s], db[s]);
    if (ecc < best_ecc || (ecc == best_ecc && s < best)) {
      best_ecc = ecc;
      best = s;
    }
  }
  return best;
}

void rank_from_depth(const SwitchGraph& g, std::vector<uint32_t> depth, Ranking& out) {
  // Other components: BFS from their centre.
  for (const auto& comp : components(g)) {
    if (depth[comp[0]] != kInf) continue;
    uint32_t c = centre(g, comp);
    auto d = bfs(g, std::span<const uint32_t>(&c, 1));
    for (uint32_t s : comp) depth[s] = d[s];
  }
  uint32_t max_depth = 0;
  for (uint32_t d : depth) max_depth = std::max(max_depth, d);
  out.rank.resize(g.num_switches());
  for (uint32_t s = 0; s < g.num_switches(); ++s) out.rank[s] = max_depth - depth[s];
}

// Two-colouring; empty when the graph has an odd cycle.
std::vector<uint8_t> two_colour(const SwitchGraph& g) {
  std::vector<uint8_t> colour(g.num_switches(), 2);
  std::vector<uint32_t> queue;
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    if (colour[s] != 2) continue;
    colour[s] = 0;
    queue.assign(1, s);
    for (size_t head = 0; head < queue.size(); ++head) {
      uint32_t x = queue[head];
      for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
        uint32_t r = g.remote(e);
        if (colour[r] == 2) {
          colour[r] = colour[x] ^ 1;
          queue.push_back(r);
        } else if (colour[r] == colour[x]) {
          return {};
        }
      }
    }
  }
  return colour;
}

bool has_up_link(const SwitchGraph& g, const Ranking& r, uint32_t s) {
  for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
    if (r.up(s, g.remote(e))) return true;
  }
  return false;
}

}  // namespace

Ranking rank_switches(const SwitchGraph& g, std::span<const uint32_t> roots) {
  Ranking out;
  const uint32_t n = g.num_switches();
  if (!roots.empty()) {
    out.kind = RankingKind::kRoots;
    rank_from_depth(g, bfs(g, roots), out);
  } else {
    std::vector<uint32_t> leaves;
    for (uint32_t s = 0; s < n; ++s) {
      if (g.num_cas(s) > 0) leaves.push_back(s);
    }
    std::vector<uint32_t> level = bfs(g, leaves);
    // Switches with no CA in their component have no level; they rank from
    // their own centre below, which is harmless: nothing but their own LIDs
    // is routed there.
    bool tree_like = true;
    for (uint32_t s = 0; s < n && tree_like; ++s) {
      for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
        uint32_t r = g.remote(e);
        if (level[s] != kInf && level[r] == level[s]) {
          tree_like = false;
          break;
        }
      }
    }
    if (tree_like) {
      out.kind = RankingKind::kFromCas;
      uint32_t max_level = 0;
      for (uint32_t l : level) {
        if (l != kInf) max_level = std::max(max_level, l);
      }
      // Unreached switches: rank them by their own component centre, above
      // nothing else (they are in components without CAs).
      std::vector<uint32_t> depth(n, kInf);
      for (uint32_t s = 0; s < n; ++s) {
        if (level[s] != kInf) depth[s] = max_level - level[s];
      }
      rank_from_depth(g, depth, out);
      out.all_from_cas = std::find(level.begin(), level.end(), kInf) == level.end();
    } else {
      std::vector<uint8_t> colour = two_colour(g);
      if (!colour.empty()) {
        out.kind = RankingKind::kBipartite;
        // Per component, roots are the colour class with fewer CAs (ties: the
        // class holding the lower switch index).
        std::vector<uint32_t> root_set;
        for (const auto& comp : components(g)) {
          uint64_t cas[2] = {0, 0};
          for (uint32_t s : comp) cas[colour[s]] += g.num_cas(s);
          uint8_t root_colour = cas[0] == cas[1] ? colour[comp[0]] : (cas[0] < cas[1] ? 0 : 1);
          if (comp.size() == 1) root_colour = colour[comp[0]];
          for (uint32_t s : comp) {
            if (colour[s] == root_colour) root_set.push_back(s);
          }
        }
        // Pairs of CAs both on the root side would need down-then-up; one
        // switch of the other side placed above every root (the apex) gives
        // them a legal peak, while everything else keeps the two layers.
        std::vector<uint32_t> depth(n, kInf);
        std::vector<uint8_t> is_root(n, 0);
        for (uint32_t s : root_set) is_root[s] = 1;
        for (const auto& comp : components(g)) {
          uint32_t apex = kInf;
          for (uint32_t s : comp) {
            if (is_root[s]) continue;
            if (apex == kInf || g.end(s) - g.begin(s) > g.end(apex) - g.begin(apex)) apex = s;
          }
          for (uint32_t s : comp) depth[s] = is_root[s] ? 1 : 2;
          if (apex != kInf) depth[apex] = 0;
        }
        rank_from_depth(g, depth, out);
      } else {
        out.kind = RankingKind::kCenter;
        rank_from_depth(g, std::vector<uint32_t>(n, kInf), out);
      }
    }
  }

  out.order.resize(n);
  for (uint32_t s = 0; s < n; ++s) out.order[s] = s;
  std::sort(out.order.begin(), out.order.end(), [&](uint32_t a, uint32_t b) {
    return out.rank[a] != out.rank[b] ? out.rank[a] > out.rank[b] : a > b;
  });
  std::vector<uint32_t> distinct = out.rank;
  std::sort(distinct.begin(), distinct.end());
  out.levels = static_cast<uint32_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  for (uint32_t s = 0; s < n; ++s) {
    if (!has_up_link(g, out, s)) out.roots.push_back(s);
  }
  return out;
}

std::optional<Ranking> rerank(const Ranking& before, const SwitchGraph& g, std::span<const RankedLinkChange> changed) {
  const uint32_t n = g.num_switches();
  if (!before.all_from_cas || before.kind != RankingKind::kFromCas || before.rank.size() != n) return std::nullopt;
  const std::vector<uint32_t>& rank = before.rank;
  // A switch above the leaves keeps its rank if a neighbour is one below.
  auto kept = [&](uint32_t s) {
    if (rank[s] == 0) return g.num_cas(s) > 0;
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      if (rank[g.remote(e)] + 1 == rank[s]) return true;
    }
    return false;
  };
  for (const RankedLinkChange& c : changed) {
    if (c.a >= n || c.b >= n) return std::nullopt;
    if (c.up_now) {
      if (rank[c.a] + 1 != rank[c.b] && rank[c.b] + 1 != rank[c.a]) return std::nullopt;
    } else if (!kept(c.a) || !kept(c.b)) {
      return std::nullopt;
    }
  }
  Ranking out = before;
  for (const RankedLinkChange& c : changed) {
    for (uint32_t s : {c.a, c.b}) {
      const bool root = !has_up_link(g, out, s);
      const auto at = std::lower_bound(out.roots.begin(), out.roots.end(), s);
      const bool was = at != out.roots.end() && *at == s;
      if (root == was) continue;
      if (root) {
        out.roots.insert(at, s);
      } else {
        out.roots.erase(at);
      }
    }
  }
  return out;
}

}  // namespace railyard::routing
