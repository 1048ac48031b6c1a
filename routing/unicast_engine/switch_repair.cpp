// Switch LIDs the turn switch could not reach, filled under a check against
// the channel dependency graph itself.
//
// The turn switch (switch_turns.cpp) is safe by a structural argument that
// needs its up-closure to be a tree; on a heavily degraded fabric (a tenth of
// the switch links gone, every leaf missing an uplink) some pairs can only be
// joined by turning elsewhere: a core of a plane the turn switch lost, toward
// a core of another plane. Here every dependency a route makes is checked
// instead. The dependency graph of every route in the tables (CA LIDs and
// switch LIDs, from every switch, as the verifier counts it) is built once;
// then, switch LID by switch LID in LID order, the switches without an entry
// join the switches that reach the destination, one at a time: a switch s
// takes a neighbour w that reaches it if the one dependency this adds (s ->
// w, then w's own channel toward the destination) closes no cycle
// (DependencyOrder). Nothing else routes through s yet (its entry was empty),
// so that is the only new dependency, and the graph stays acyclic by
// construction: one VL, no deadlock.
//
// Which neighbour first: drained links last; then a dependency that some
// route already makes, before a new one; a new one through the switch the
// repair already added the most dependencies through; then the fewest hops.
// Both keep the new dependencies few and in few places, which leaves room for
// the later LIDs (as one turn switch does). Measured on 3-level ROFTs (radix
// 16) where the turn switch alone left pairs empty:
//
//   | fabric                                   | turn switch | nearest first | + reuse | + few places |
//   | 1,024 CAs, 184 switch links cut, seed 4  | 840         | 380           | 0       | 0            |
//   | 512 CAs, every leaf missing an uplink    | 2,244       | -             | 1,116   | 0            |
//   | 1,024 CAs, every leaf missing an uplink  | 8,936       | -             | 4,440   | 0            |
//
// (Pairs left empty. Nearest first also searched the graph 800-2,200 times
// per fabric, almost every search refused; with reuse, 11-23 times.)
//
// Only empty entries are written; CA LIDs and every routed entry keep their
// bytes. The result depends on the tables, the LIDs, the GUIDs and port
// numbers, never on the order of nodes. Runs only when the turn switch left
// entries empty, so a healthy or lightly degraded fabric pays nothing.
#include <algorithm>
#include <queue>

#include "routing/unicast_engine/dependency_order.h"
#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

namespace {

constexpr uint8_t kNoPath = ForwardingTables::kNoPath;

// A switch without an entry and a neighbour that reaches the destination,
// as one key (smaller is taken first) and the channel toward the neighbour:
// drained links on the way (at most 7 told apart), whether the dependency
// it needs is new, if so the dependencies the repair added through the
// neighbour so far (more first; at most 65,535 told apart), hops (at most
// 255), then the switch's place in GUID order and its port, which make every
// key distinct.
struct Candidate {
  uint64_t key = 0;
  uint32_t entry = 0;
  // std::priority_queue keeps the largest on top: the worst compares less.
  bool operator<(const Candidate& o) const { return key > o.key; }
  bool fresh() const { return (key >> 56) & 1; }
};

Candidate make_candidate(uint32_t drained, bool fresh, uint32_t added, uint32_t hops, uint32_t guid_rank,
                         uint8_t port, uint32_t entry) {
  const uint64_t key = uint64_t{std::min(drained, 7u)} << 57 | uint64_t{fresh} << 56 |
                       uint64_t{fresh ? 0xFFFFu - std::min(added, 0xFFFFu) : 0u} << 40 |
                       uint64_t{std::min(hops, 255u)} << 32 | uint64_t{guid_rank} << 8 | port;
  return {key, entry};
}

}  // namespace

SwitchRepair repair_switch_lids(const Fabric& fabric, const SwitchGraph& g, std::span<const uint8_t> drained,
                                ForwardingTables& tables) {
  SwitchRepair out;
  const uint32_t n = g.num_switches();
  const uint32_t num_lids = tables.num_lids();

  // The channel behind each (switch, port).
  const std::vector<uint32_t> entry_at = entries_by_port(g);
  auto channel = [&](uint32_t s, uint8_t port) { return entry_at[static_cast<size_t>(s) * 256 + port]; };

  // Every dependency of every route: switch s forwards toward a LID over
  // port p, and the switch there forwards on over port q. Per switch, the
  // (p, q) pairs are first marked in a 256 x 256 bit matrix (in L1), then
  // turned into channels once.
  DependencyOrder deps(g);
  std::vector<const uint8_t*> next_row(256);
  std::vector<uint64_t> seen(256 * 256 / 64);
  for (uint32_t s = 0; s < n; ++s) {
    std::fill(next_row.begin(), next_row.end(), nullptr);
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) next_row[g.port(e)] = tables.row(g.remote(e)).data();
    std::fill(seen.begin(), seen.end(), 0);
    const uint8_t* row = tables.row(s).data();
    for (uint32_t lid = 1; lid < num_lids; ++lid) {
      const uint8_t p = row[lid];
      const uint8_t* next = next_row[p];
      if (next == nullptr) continue;  // port 0, no path, a CA
      const uint32_t pq = uint32_t{p} << 8 | next[lid];
      seen[pq / 64] |= uint64_t{1} << (pq % 64);
    }
    for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
      const uint32_t w = g.remote(e);
      for (uint32_t word = g.port(e) * 4u; word < g.port(e) * 4u + 4; ++word) {
        for (uint64_t bits = seen[word]; bits != 0; bits &= bits - 1) {
          const uint8_t q = static_cast<uint8_t>((word % 4) * 64 + static_cast<uint32_t>(__builtin_ctzll(bits)));
          if (q == 0 || q == kNoPath) continue;
          const uint32_t e2 = channel(w, q);
          if (e2 != kNone) deps.set(e, e2);
        }
      }
    }
  }

  // Switch LIDs and their owners, in LID order.
  std::vector<std::pair<uint16_t, uint32_t>> lids;
  for (uint32_t s = 0; s < n; ++s) {
    const Port& p0 = fabric.port(fabric.node(g.node(s)).first_port);
    if (!p0.lid.valid()) continue;
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
      const uint32_t lid = p0.lid.value + k;
      if (lid < num_lids) lids.emplace_back(static_cast<uint16_t>(lid), s);
    }
  }
  std::sort(lids.begin(), lids.end());

  // Pieces of the switch graph: no route crosses from one to another.
  const std::vector<uint32_t> piece = switch_pieces(g);
  if (!deps.sort()) {  // the routes made so far are not deadlock-free: add nothing
    out.cyclic = true;
    return out;
  }
  // Switches in GUID order (then index, should two share a GUID): ties
  // between candidates are broken by it, not by the order of nodes.
  std::vector<uint32_t> by_guid(n), guid_rank(n);
  for (uint32_t s = 0; s < n; ++s) by_guid[s] = s;
  std::sort(by_guid.begin(), by_guid.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(fabric.node(g.node(a)).guid, a) < std::pair(fabric.node(g.node(b)).guid, b);
  });
  for (uint32_t i = 0; i < n; ++i) guid_rank[by_guid[i]] = i;
  auto is_drained = [&](uint32_t e) { return !drained.empty() && drained[g.link(e).value()] != 0; };

  // Per switch toward the LID at hand: how it ends, and its hops and drained
  // links when it reaches the destination.
  enum : uint8_t { kUnknown, kWalking, kReaches, kEmpty, kBroken };
  std::vector<uint8_t> state(n);
  std::vector<uint32_t> hops(n), drains(n), walk, empties;
  std::priority_queue<Candidate> heap;
  std::vector<Candidate> sure(n), offered;
  std::vector<uint8_t> has_sure(n, 0);
  std::vector<uint32_t> added_at(n, 0);  // dependencies the repair added through each switch
  // The switch LIDs' columns, one after another (the tables are rows: a
  // column read from them is a cache miss per switch); fills go to both.
  std::vector<uint8_t> columns(lids.size() * static_cast<size_t>(n));
  for (uint32_t s = 0; s < n; ++s) {
    auto row = tables.row(s);
    for (size_t i = 0; i < lids.size(); ++i) columns[i * n + s] = row[lids[i].first];
  }
  for (size_t i = 0; i < lids.size(); ++i) {
    const uint16_t lid = lids[i].first;  // not a structured binding: the lambdas below capture it
    const uint32_t owner = lids[i].second;
    uint8_t* column = columns.data() + i * n;
    if (std::find(column, column + n, kNoPath) == column + n) continue;  // nothing empty
    // Resolve every switch of the owner's piece by walking its entries.
    std::fill(state.begin(), state.end(), kUnknown);
    bool any_empty = false, any_broken = false;
    for (uint32_t s0 = 0; s0 < n; ++s0) {
      if (piece[s0] != piece[owner] || state[s0] != kUnknown) continue;
      walk.clear();
      uint32_t s = s0;
      uint8_t end = kBroken;
      uint32_t end_hops = 0, end_drains = 0;
      for (;;) {
        if (state[s] == kWalking) break;  // a loop
        if (state[s] == kReaches) {
          end = kReaches;
          end_hops = hops[s];
          end_drains = drains[s];
          break;
        }
        if (state[s] != kUnknown) break;  // into an empty or broken switch
        const uint8_t p = column[s];
        if (s == owner && p == 0) {
          end = kReaches;
          state[s] = kReaches;
          hops[s] = drains[s] = 0;
          break;
        }
        if (p == kNoPath) {  // the walk before it leads into it: broken
          state[s] = kEmpty;
          any_empty = true;
          break;
        }
        const uint32_t e = channel(s, p);
        if (e == kNone) {  // a CA port, or a link not in the graph
          state[s] = kBroken;
          any_broken = true;
          break;
        }
        state[s] = kWalking;
        walk.push_back(s);
        s = g.remote(e);
      }
      for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
        const uint32_t v = *it;
        state[v] = end == kReaches ? kReaches : kBroken;
        if (end == kReaches) {
          const uint32_t e = channel(v, column[v]);
          hops[v] = ++end_hops;
          end_drains += is_drained(e);
          drains[v] = end_drains;
        } else {
          any_broken = true;
        }
      }
    }
    if (!any_empty) continue;
    empties.clear();
    for (uint32_t s = 0; s < n; ++s) {
      if (state[s] == kEmpty && piece[s] == piece[owner]) empties.push_back(s);
    }
    uint64_t empty = empties.size();
    // A set entry that leads nowhere: nothing here may route into it.
    if (any_broken || state[owner] != kReaches) {
      out.left += empty;
      continue;
    }

    // Empty switch s, over its channel e, to a neighbour that reaches.
    // A candidate whose dependency is in the graph already cannot be refused,
    // so any candidate of the same switch that comes after it is never
    // needed: those are not pushed (`sure`, the best such per switch), and
    // the dependency is not even looked up when the candidate would come
    // after it in any case.
    auto candidate = [&](uint32_t s, uint32_t e) {
      const uint32_t w = g.remote(e);
      const bool fresh = w != owner && !deps.contains(e, channel(w, column[w]));
      return make_candidate(drains[w] + is_drained(e), fresh, added_at[w], hops[w] + 1, guid_rank[s], g.port(e), e);
    };
    auto offer = [&](uint32_t s, const Candidate& c) {
      if (has_sure[s] && c < sure[s]) return;
      if (!c.fresh() && (!has_sure[s] || sure[s] < c)) {
        sure[s] = c;
        has_sure[s] = 1;
      }
      heap.push(c);
    };
    // Each empty switch's candidates, best first as if every dependency were
    // in the graph (hops and drains are at hand; whether the dependency is in
    // the graph is a look-up), up to the first whose dependency is: none
    // after it can come before it.
    for (uint32_t s : empties) {
      has_sure[s] = 0;
      offered.clear();
      for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
        const uint32_t w = g.remote(e);
        if (state[w] != kReaches) continue;
        offered.push_back(make_candidate(drains[w] + is_drained(e), false, 0, hops[w] + 1, guid_rank[s], g.port(e), e));
      }
      std::sort(offered.begin(), offered.end(), [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
      for (const Candidate& bound : offered) {
        if (has_sure[s] && bound < sure[s]) break;
        offer(s, candidate(s, bound.entry));
      }
    }
    while (!heap.empty()) {
      const Candidate c = heap.top();
      heap.pop();
      const uint32_t w = g.remote(c.entry);
      const uint32_t s = g.remote(g.rev(c.entry));
      if (state[s] != kEmpty) continue;
      if (w != owner) {
        const uint32_t next = channel(w, column[w]);
        const bool present = deps.contains(c.entry, next);
        if (!deps.add(c.entry, next)) continue;  // it would close a cycle
        added_at[w] += !present;
      }
      tables.row(s)[lid] = column[s] = g.port(c.entry);
      state[s] = kReaches;
      hops[s] = hops[w] + 1;
      drains[s] = drains[w] + is_drained(c.entry);
      ++out.entries;
      --empty;
      for (uint32_t f = g.begin(s); f < g.end(s); ++f) {  // its empty neighbours may now join through it
        if (state[g.remote(f)] == kEmpty) offer(g.remote(f), candidate(g.remote(f), g.rev(f)));
      }
    }
    out.left += empty;
  }
  return out;
}

}  // namespace railyard::routing::unicast
