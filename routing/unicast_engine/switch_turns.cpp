// Switch LIDs that up*/down* cannot reach: one designated turn switch.
//
// Under up*/down* a spine of a two-level tree cannot reach another spine (that
// is down then up), nor a core of a three-level tree another core of its
// plane. Management traffic (ibroute, perfquery, ibtracert by LID) needs those
// pairs, and so do the pairs a degraded tree leaves without a route to a
// leaf's LID (a spine or core that lost its link into the leaf; a leaf's LID
// follows the route of one of its CAs). After every lane has routed, each
// switch-LID entry that is still empty is filled with the same switch's
// next hop toward one designated switch T, along an up*/down* way to T (the
// turn tree, turn_trees): the packet climbs and descends toward T, and the
// first switch on the way that has an up*/down* route of its own to the
// destination takes over; T itself must reach the destination by
// up*/down*. Routed entries are never changed,
// so CA LIDs and every entry up*/down* already had (a leaf LID's too) keep
// their tables.
//
// Why the channel dependency graph stays acyclic (Dally & Seitz 1987). Let
// Anc(T) be T and every switch above it (reachable from T going only up). A
// down-then-up dependency (a turn) now appears only where a packet heading for
// T, on the way down, reaches a switch that climbs to the destination; every
// switch on the way down to T is in Anc(T), so every turn is at a switch of
// Anc(T). Any cycle needs a turn (up*/down* alone is acyclic), and between two
// turns it goes up, then down into a turn switch: every switch on that stretch
// is above a switch of Anc(T), hence in Anc(T). So the whole cycle runs over
// links inside Anc(T). T is chosen so that Anc(T) is a tree (every switch of it
// but T has exactly one lower neighbour in it; parallel links are fine), and a
// cycle is then a closed walk in a tree that never steps straight back (no
// route visits a switch twice), which does not exist. In a fat tree (2 or 3
// levels, ROFT, rail-only, healthy or with links missing) every leaf
// qualifies: its spines, and above each spine that spine's own core plane.
// Switch graphs in several pieces (rail-only: one per rail) get one turn
// switch per piece; no route crosses pieces. With no qualifying switch a
// piece's empty entries stay empty (the verifier counts them).
//
// An incremental route keeps the fills of the switch-LID columns it keeps
// (turn_columns): the memo says, per column, which rows reached it before
// the fills, so the scores and the turn switches follow from the columns
// the route wrote, and a fill depends only on its row's way toward the
// turn switch and on the turn switch's entry for the column. When those
// stay, only the written columns are filled (before the flush, where each
// is contiguous); else every entry of a row that did not reach its column
// is filled again (refill_turns), without reading the other entries.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

namespace {

// Whether the up-closure of c is a tree: no switch above c is reached from
// two different lower switches.
bool up_closure_is_tree(const SwitchGraph& g, const Ranking& rk, uint32_t c, std::vector<uint32_t>& parent,
                        std::vector<uint32_t>& seen, uint32_t stamp, std::vector<uint32_t>& queue) {
  queue.assign(1, c);
  seen[c] = stamp;
  parent[c] = kNone;
  for (size_t h = 0; h < queue.size(); ++h) {
    const uint32_t v = queue[h];
    for (uint32_t e = g.begin(v); e < g.end(v); ++e) {
      const uint32_t w = g.remote(e);
      if (!rk.up(v, w)) continue;
      if (seen[w] == stamp) {
        if (parent[w] != v) return false;
        continue;
      }
      seen[w] = stamp;
      parent[w] = v;
      queue.push_back(w);
    }
  }
  return true;
}

// Every switch's LIDs (the columns), in LID order: rows are read at these
// LIDs, scattered over each row (OpenSM gives LIDs in the order it discovers
// ports). Spine and core LIDs are scored and filled; a leaf's LID follows
// the route of one of its CAs (engine.cpp) and keeps it, so it is only
// filled.
void list_switch_lids(const Fabric& fabric, const SwitchGraph& g, uint32_t num_lids, TurnsMemo& m) {
  const uint32_t n = g.num_switches();
  m.lids.clear();
  m.owner.clear();
  m.leaf.clear();
  m.base.clear();
  m.column_of.assign(num_lids, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    const Port& p0 = fabric.port(fabric.node(g.node(s)).first_port);
    if (!p0.lid.valid()) continue;
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
      const Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
      if (!lid.valid() || lid.value >= num_lids) continue;
      m.column_of[lid.value] = s;  // for the sort below
    }
  }
  for (uint32_t lid = 0; lid < num_lids; ++lid) {
    const uint32_t s = m.column_of[lid];
    if (s == kNone) continue;
    m.column_of[lid] = static_cast<uint32_t>(m.lids.size());
    m.lids.push_back(static_cast<uint16_t>(lid));
    m.owner.push_back(s);
    m.leaf.push_back(g.num_cas(s) != 0 ? 1 : 0);
    m.base.push_back(lid == fabric.port(fabric.node(g.node(s)).first_port).lid.value ? 1 : 0);
  }
  m.words = (n + 63) / 64;
  const size_t columns = m.lids.size();
  m.row_words = (columns + 63) / 64;
  m.run8.assign((columns + 7) / 8, 0);
  for (size_t g = 0; g + 8 <= columns; g += 8) {
    m.run8[g / 8] = m.lids[g + 7] - m.lids[g] == 7 ? 1 : 0;  // LIDs ascend, so 8 apart is 8 in a row
  }
}

// The pieces of the switch graph (a rail-only fabric has one per rail: no
// route crosses from one to another, so each gets its own turn switch) and
// the turn switch of each: among switches with a LID whose up-closure is a
// tree, the one that reaches the most spine and core LIDs plus is reached
// from the most switches (m.score; then lowest rank, then lowest GUID, so the
// choice does not depend on node order).
void choose_turns(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk, const TurnsMemo& m,
                  const std::vector<uint32_t>& component, std::vector<uint32_t>& turn) {
  const uint32_t n = g.num_switches();
  const uint32_t components = n == 0 ? 0 : *std::max_element(component.begin(), component.end()) + 1;
  turn.assign(components, kNone);
  std::vector<uint32_t> parent(n, kNone), seen(n, 0), queue;
  uint32_t stamp = 0;
  for (size_t i = 0; i < m.lids.size(); ++i) {
    if (!m.base[i]) continue;
    const uint32_t c = m.owner[i];
    const uint32_t best = turn[component[c]];
    if (best != kNone) {
      if (m.score[c] < m.score[best]) continue;
      if (m.score[c] == m.score[best]) {
        if (rk.rank[c] > rk.rank[best]) continue;
        if (rk.rank[c] == rk.rank[best] && fabric.node(g.node(c)).guid > fabric.node(g.node(best)).guid) continue;
      }
    }
    if (!up_closure_is_tree(g, rk, c, parent, seen, ++stamp, queue)) continue;
    turn[component[c]] = c;
  }
}

}  // namespace

namespace {

bool reached(const TurnsMemo& m, size_t column, uint32_t s) {
  return (m.reached[column * m.words + s / 64] >> (s % 64) & 1) != 0;
}

// The rows of a column (its `reached` bits) in its piece (`piece`) that did
// not reach it, its owner's aside: how many, and how many of those have a
// way toward the turn switch (`toward`; null: none is filled).
[[gnu::always_inline]] inline std::pair<uint32_t, uint32_t> count_empty_rows(const uint64_t* bits,
                                                                            const uint64_t* piece,
                                                                            const uint64_t* toward, size_t words,
                                                                            uint32_t owner) {
  uint32_t empty_rows = 0, filled = 0;
  for (size_t w = 0; w < words; ++w) {
    uint64_t empty = ~bits[w] & piece[w];
    if (w == owner / 64) empty &= ~(uint64_t{1} << (owner % 64));
    empty_rows += static_cast<uint32_t>(std::popcount(empty));
    if (toward != nullptr) filled += static_cast<uint32_t>(std::popcount(empty & toward[w]));
  }
  return {empty_rows, filled};
}

// The same compiled for the CPU's popcount instruction (the baseline x86-64
// has none: a call per word). Chosen at run time, without an ifunc (whose
// resolver runs before ThreadSanitizer is set up).
[[gnu::target("popcnt")]] std::pair<uint32_t, uint32_t> count_empty_popcnt(const uint64_t* bits,
                                                                          const uint64_t* piece,
                                                                          const uint64_t* toward, size_t words,
                                                                          uint32_t owner) {
  return count_empty_rows(bits, piece, toward, words, owner);
}

std::pair<uint32_t, uint32_t> count_empty(const uint64_t* bits, const uint64_t* piece, const uint64_t* toward,
                                          size_t words, uint32_t owner) {
  static const bool popcnt = __builtin_cpu_supports("popcnt");
  return popcnt ? count_empty_popcnt(bits, piece, toward, words, owner)
                : count_empty_rows(bits, piece, toward, words, owner);
}

// Every switch's next hop toward its piece's turn switch t (m.turn), into
// `toward`: the turn tree the fills follow (kNoPath: no way, and t's own).
// Any up*/down* way toward t keeps the argument above; this one goes down
// whenever the switch can reach t going only down (as the engine's modes
// do), else up, along a shortest way, and takes the lowest port among its
// choices, a link not drained first. So a switch's next hop depends on t
// only where the ways come down to t: when the turn switch is replaced by
// another below the same switches (its own up link failed), only those
// switches' next hops move, and with them their rows' fills; the rest of
// the fabric keeps its tables.
void turn_trees(const SwitchGraph& g, const Ranking& rk, std::span<const uint8_t> drained, const TurnsMemo& m,
                std::vector<uint8_t>& toward) {
  const uint32_t n = g.num_switches();
  toward.assign(n, ForwardingTables::kNoPath);
  std::vector<uint16_t> down(n), dist(n);
  std::vector<uint32_t> queue;
  auto key = [&](uint32_t e) {
    const bool d = !drained.empty() && drained[g.link(e).value()];
    return (d ? 256u : 0u) + g.port(e);
  };
  for (const uint32_t t : m.turn) {
    if (t == kNone) continue;
    std::fill(down.begin(), down.end(), kInf);
    std::fill(dist.begin(), dist.end(), kInf);
    down[t] = 0;
    queue.assign(1, t);
    for (size_t h = 0; h < queue.size(); ++h) {  // going only down to t: t's up-closure
      const uint32_t x = queue[h];
      for (uint32_t e = g.begin(x); e < g.end(x); ++e) {
        const uint32_t p = g.remote(e);
        if (!rk.up(x, p) || down[p] != kInf) continue;
        down[p] = static_cast<uint16_t>(down[x] + 1);
        queue.push_back(p);
      }
    }
    for (const uint32_t s : rk.order) {  // top down: a switch's parents first
      if (down[s] != kInf) {
        dist[s] = down[s];
        continue;
      }
      for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
        const uint32_t p = g.remote(e);
        if (rk.up(s, p) && dist[p] != kInf) dist[s] = std::min<uint16_t>(dist[s], static_cast<uint16_t>(dist[p] + 1));
      }
    }
    for (uint32_t s = 0; s < n; ++s) {
      if (s == t || dist[s] == kInf || m.component[s] != m.component[t]) continue;
      const bool going_down = down[s] != kInf;
      uint32_t best = kNone;
      for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
        const uint32_t r = g.remote(e);
        const bool ok = going_down ? !rk.up(s, r) && down[r] != kInf && down[r] + 1u == down[s]
                                   : rk.up(s, r) && dist[r] != kInf && dist[r] + 1u == dist[s];
        if (ok && (best == kNone || key(e) < key(best))) best = e;
      }
      if (best != kNone) toward[s] = g.port(best);
    }
  }
}

// Every entry of a row that did not reach its column before the fills:
// through the row's turn switch (m.turn), or empty. Overwrites what such an
// entry holds (an incremental route's tables keep the fills of the route
// before); the others are left as they are. The counts come from the bits
// column by column; the writes go row by row (a row's switch-LID entries
// stay in cache), from `by_row`; eight columns whose LIDs are eight in a
// row are written as one word.
SwitchTurns fill_all(ForwardingTables& tables, TurnsMemo& m) {
  const uint32_t n = tables.num_switches();
  const size_t columns = m.lids.size();
  SwitchTurns out;
  std::vector<uint32_t> base_column(n, kNone);
  for (uint32_t i = 0; i < columns; ++i) {
    if (m.base[i]) base_column[m.owner[i]] = i;
  }
  // Each row's way toward its turn switch (m.toward: turn_trees; t's own
  // row is never filled, its entry for its LID is port 0).
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t t = m.turn[m.component[s]];
    if (t != kNone && s != t) out.turn_switches.push_back(t);
  }
  // Per piece of the fabric: its rows, and those of them with a way toward
  // the turn switch.
  const size_t pieces = m.turn.size();
  const size_t words = m.words;
  std::vector<uint64_t> in_piece(pieces * words, 0), toward_piece(pieces * words, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const uint64_t bit = uint64_t{1} << (s % 64);
    in_piece[m.component[s] * words + s / 64] |= bit;
    if (m.toward[s] != ForwardingTables::kNoPath) toward_piece[m.component[s] * words + s / 64] |= bit;
  }
  // Per column: filled only through a turn switch that reaches the
  // destination by up*/down* (its row is never filled), in the column's
  // piece; the rows that did not reach it are filled or left empty.
  const size_t cwords = (columns + 63) / 64;
  std::vector<uint64_t> fillable(pieces * cwords, 0);  // per piece: the columns it fills
  m.fills.resize(columns);
  m.left.resize(columns);
  for (uint32_t i = 0; i < columns; ++i) {
    const uint32_t owner = m.owner[i];
    const uint32_t c = m.component[owner];
    const uint32_t t = m.turn[c];
    const bool through = t != kNone && reached(m, i, t) &&
                         tables.get(t, Lid{m.lids[i]}) != ForwardingTables::kNoPath;
    if (through) fillable[c * cwords + i / 64] |= uint64_t{1} << (i % 64);
    const auto [empty, filled] = count_empty(m.reached.data() + i * words, in_piece.data() + c * words,
                                             through ? toward_piece.data() + c * words : nullptr, words, owner);
    m.fills[i] = filled;
    m.left[i] = empty - filled;
  }
  // A refill that may leave a row whose way did not move as it is, but for
  // the columns the route wrote, when the turn switches fill the same
  // columns as before (else every row is written again).
  const bool partial = m.partial && m.toward_before.size() == n && m.fillable == fillable;
  std::vector<uint64_t> dirty;
  if (partial) {
    dirty.assign(cwords, 0);
    for (const uint32_t i : m.written) dirty[i / 64] |= uint64_t{1} << (i % 64);
  }
  // Per 8 bits of a mask: those 8 bytes set (0xFF) or clear.
  static constexpr auto kBytes = [] {
    std::array<uint64_t, 256> t{};
    for (uint32_t b = 0; b < 256; ++b) {
      for (uint32_t k = 0; k < 8; ++k) t[b] |= (b >> k & 1) != 0 ? uint64_t{0xFF} << (8 * k) : 0;
    }
    return t;
  }();
  constexpr uint64_t kNoPaths = ~uint64_t{0};
  static_assert(ForwardingTables::kNoPath == 0xFF);
  // Plain pointers: the byte stores below may alias any vector's members.
  const uint16_t* lids = m.lids.data();
  const uint8_t* run8 = m.run8.data();
  const size_t row_words = m.row_words;
  const uint64_t last_word = columns % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (columns % 64)) - 1;
  for (uint32_t s = 0; s < n; ++s) {
    const uint8_t toward = m.toward[s];
    const uint64_t towards = toward * 0x0101010101010101ull;
    uint8_t* row = tables.row(s).data();
    const uint64_t* reached_row = m.by_row.data() + static_cast<size_t>(s) * row_words;
    // Filled: the piece's columns with a way through its turn switch (its
    // columns only), when the row has a way toward it; the rest left empty.
    // A switch's own columns (its entry is port 0) are neither.
    const uint64_t* fills = fillable.data() + static_cast<size_t>(m.component[s]) * cwords;
    const bool ways = toward != ForwardingTables::kNoPath;
    const uint64_t* only = partial && toward == m.toward_before[s] ? dirty.data() : nullptr;
    uint32_t own = base_column[s] == kNone ? 0 : base_column[s], own_end = own;
    while (own_end < columns && m.owner[own_end] == s) ++own_end;
    for (size_t cw = 0; cw < cwords; ++cw) {
      uint64_t empty = ~reached_row[cw] & (cw + 1 == cwords ? last_word : ~uint64_t{0});
      if (only != nullptr) empty &= only[cw];
      for (; own < own_end && own / 64 == cw; ++own) empty &= ~(uint64_t{1} << (own % 64));
      if (empty == 0) continue;
      const uint64_t filled = ways ? empty & fills[cw] : 0;
      for (uint32_t k = 0; k < 8; ++k) {
        const uint32_t e = static_cast<uint32_t>(empty >> (8 * k) & 0xFF);
        if (e == 0) continue;
        const size_t g = cw * 8 + k;
        const uint32_t f = static_cast<uint32_t>(filled >> (8 * k) & 0xFF);
        if (run8[g]) {
          uint8_t* at = row + lids[g * 8];
          uint64_t word;
          std::memcpy(&word, at, 8);
          word = (word & ~kBytes[e]) | (towards & kBytes[f]) | (kNoPaths & kBytes[e & ~f]);
          std::memcpy(at, &word, 8);
          continue;
        }
        for (uint32_t b = e; b != 0; b &= b - 1) {
          const uint32_t j = static_cast<uint32_t>(std::countr_zero(b));
          row[lids[g * 8 + j]] = (f >> j & 1) != 0 ? toward : ForwardingTables::kNoPath;
        }
      }
    }
  }
  m.fillable.swap(fillable);
  m.partial = false;
  m.written.clear();
  for (size_t i = 0; i < columns; ++i) {
    out.entries += m.fills[i];
    out.left += m.left[i];
  }
  m.any_left = out.left != 0;
  std::sort(out.turn_switches.begin(), out.turn_switches.end());
  out.turn_switches.erase(std::unique(out.turn_switches.begin(), out.turn_switches.end()), out.turn_switches.end());
  m.turn_switches = out.turn_switches;
  return out;
}

}  // namespace

SwitchTurns route_switch_turns(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                               std::span<const uint8_t> drained, ForwardingTables& tables, TurnsMemo* memo) {
  const uint32_t n = g.num_switches();
  TurnsMemo own;
  TurnsMemo& m = memo != nullptr ? *memo : own;
  list_switch_lids(fabric, g, tables.num_lids(), m);
  const size_t columns = m.lids.size();
  m.valid = memo != nullptr;
  m.reached.assign(columns * m.words, 0);
  m.by_row.resize(n * m.row_words);  // every word written below
  m.score.assign(n, 0);
  m.missing = 0;
  m.fills.assign(columns, 0);
  m.left.assign(columns, 0);
  m.turn.clear();
  m.turn_switches.clear();
  // One pass over the rows: per switch, the spine and core LIDs it reaches
  // plus the switches reaching its LID; the entries missing.
  for (uint32_t s = 0; s < n; ++s) {
    auto row = tables.row(s);
    const size_t word = s / 64;
    const uint64_t bit = uint64_t{1} << (s % 64);
    for (size_t cw = 0; cw < m.row_words; ++cw) {
      uint64_t reached_row = 0;  // this row's bits of columns 64 cw on
      for (size_t i = cw * 64; i < std::min(columns, cw * 64 + 64); ++i) {
        if (row[m.lids[i]] == ForwardingTables::kNoPath) {
          m.missing += m.owner[i] != s;
          continue;
        }
        m.reached[i * m.words + word] |= bit;
        reached_row |= uint64_t{1} << (i % 64);
        m.score[s] += !m.leaf[i];
        m.score[m.owner[i]] += m.base[i];
      }
      m.by_row[s * m.row_words + cw] = reached_row;
    }
  }
  if (m.missing == 0) return SwitchTurns{};
  m.component = switch_pieces(g);
  choose_turns(fabric, g, rk, m, m.component, m.turn);
  turn_trees(g, rk, drained, m, m.toward);
  m.partial = false;
  return fill_all(tables, m);
}

SwitchTurns refill_turns(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk,
                         std::span<const uint8_t> drained, ForwardingTables& tables, TurnsMemo& m) {
  if (m.missing == 0) {  // nothing to fill, so nothing was filled before either
    m.turn.clear();
    m.turn_switches.clear();
    return SwitchTurns{};
  }
  if (!m.pieces_now) m.component = switch_pieces(g);
  m.pieces_now = false;
  const std::vector<uint32_t> turn_before = m.turn;
  choose_turns(fabric, g, rk, m, m.component, m.turn);
  if (!m.tree_now || m.turn != turn_before) {
    m.toward_before.swap(m.toward);  // read only if m.partial (turn_columns)
    turn_trees(g, rk, drained, m, m.toward);
  }
  m.tree_now = false;
  return fill_all(tables, m);
}

bool turn_columns(const Fabric& fabric, const SwitchGraph& g, const Ranking& rk, std::span<const uint8_t> drained,
                  std::span<const ChangedLink> changed, std::span<const std::pair<Lid, uint8_t*>> written,
                  TurnsMemo& m, SwitchTurns& out) {
  const uint32_t n = g.num_switches();
  const size_t columns = m.lids.size();
  m.pieces_now = false;
  m.tree_now = false;
  m.partial = false;
  m.written.clear();
  // The written columns' rows before the fills, into the memo first:
  // refill_turns rewrites the entries of the others.
  std::vector<uint8_t*> column_at(columns, nullptr);
  for (const auto& [lid, column] : written) {
    const uint32_t i = lid.value < m.column_of.size() ? m.column_of[lid.value] : kNone;
    if (i == kNone) continue;
    column_at[i] = column;
    m.written.push_back(i);
    uint64_t* bits = m.reached.data() + i * m.words;
    const uint32_t owner = m.owner[i];
    for (size_t w = 0; w < m.words; ++w) {
      uint64_t now = 0;
      for (uint32_t s = static_cast<uint32_t>(w * 64); s < std::min<uint32_t>(n, static_cast<uint32_t>(w * 64 + 64)); ++s) {
        now |= static_cast<uint64_t>(column[s] != ForwardingTables::kNoPath) << (s % 64);
      }
      for (uint64_t diff = now ^ bits[w]; diff != 0; diff &= diff - 1) {
        const uint32_t s = static_cast<uint32_t>(w * 64 + std::countr_zero(diff));
        const bool reached = (now >> (s % 64) & 1) != 0;
        m.by_row[s * m.row_words + i / 64] ^= uint64_t{1} << (i % 64);
        auto count = [reached](uint64_t& x, bool counts) {
          if (counts) x = reached ? x + 1 : x - 1;
        };
        count(m.score[s], !m.leaf[i]);
        count(m.score[owner], m.base[i] != 0);
        if (owner != s) m.missing = reached ? m.missing - 1 : m.missing + 1;
      }
      bits[w] = now;
    }
  }
  if (!m.valid) return false;
  if (m.missing == 0) {  // nothing to fill, so nothing was filled before either
    m.turn.clear();
    m.turn_switches.clear();
    out = SwitchTurns{};
    return true;
  }
  // The pieces of this graph, for refill_turns too.
  std::vector<uint32_t> component = switch_pieces(g), turn;
  choose_turns(fabric, g, rk, m, component, turn);
  const bool same_pieces = component == m.component;
  m.component = std::move(component);
  m.pieces_now = true;
  // refill_turns may then write only what moved, unless the repair may have
  // filled entries the last time (it reads every route: the full pass's
  // tables, every fill made again).
  m.partial = same_pieces && !m.any_left;
  if (turn != m.turn || !same_pieces) return false;
  const std::vector<uint32_t>& pieces = m.component;
  // Every row's way toward its turn switch, as it was: the fills kept in
  // the columns not written are then the full pass's. A link gone (or newly
  // drained) that no switch at its ends took toward the turn switch moves
  // no next hop of the tree (every distance is still reached through the
  // hops it keeps, and a way lost is never a better choice): the tree is
  // worked out again only when a link came up, was undrained, or was taken.
  const bool kept = m.toward.size() == n && std::all_of(changed.begin(), changed.end(), [&](const ChangedLink& c) {
    const bool out_of_the_way = !c.up_now || (c.drained_now && !c.drained_before);
    return out_of_the_way && m.toward[c.lower] != c.lower_port && m.toward[c.upper] != c.upper_port;
  });
  if (!kept) {
    std::vector<uint8_t> toward;
    turn_trees(g, rk, drained, m, toward);
    if (toward != m.toward) {  // refill_turns takes this tree (same turn switches)
      m.toward_before.swap(m.toward);
      m.toward.swap(toward);
      m.tree_now = true;
      return false;
    }
  }
  // The written columns' fills, as the full pass makes them.
  for (uint32_t i = 0; i < columns; ++i) {
    uint8_t* column = column_at[i];
    if (column == nullptr) continue;
    const uint32_t owner = m.owner[i];
    m.fills[i] = m.left[i] = 0;
    const uint32_t c = pieces[owner], t = turn[c];
    const size_t cwords = (columns + 63) / 64;
    if (m.fillable.size() == turn.size() * cwords) {  // whether t fills column i, as fill_all keeps it
      uint64_t& word = m.fillable[c * cwords + i / 64];
      const uint64_t bit = uint64_t{1} << (i % 64);
      word = t != kNone && column[t] != ForwardingTables::kNoPath ? word | bit : word & ~bit;
    }
    for (uint32_t s = 0; s < n; ++s) {
      if (column[s] != ForwardingTables::kNoPath || owner == s || pieces[owner] != pieces[s]) continue;
      const uint32_t t = turn[pieces[s]];
      if (m.toward[s] == ForwardingTables::kNoPath || column[t] == ForwardingTables::kNoPath) {
        ++m.left[i];
        continue;
      }
      column[s] = m.toward[s];
      ++m.fills[i];
    }
  }
  out = SwitchTurns{};
  for (size_t i = 0; i < columns; ++i) {
    out.entries += m.fills[i];
    out.left += m.left[i];
  }
  // Entries left empty, here or in a column kept (where the repair may have
  // filled them: it reads every route, so it runs on the full pass's tables).
  m.any_left = out.left != 0;
  if (out.left != 0) return false;
  out.turn_switches = m.turn_switches;
  return true;
}

}  // namespace railyard::routing::unicast
