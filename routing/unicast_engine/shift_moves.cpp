// The pass over shifts (shift_repair.cpp): the moves. A flow above its
// shift's bound tries, at each switch of its path up to the link above the
// bound, every other next hop of the same direction and length; the best
// single move that lowers the load above the bounds is made, else the first
// swap of two entries of that switch that does.
#include "routing/unicast_engine/shift_repair_pass.h"

namespace railyard::routing::unicast {

// Every shift's flow toward grid cell dst: its path from its source switch.
void ShiftRepairPass::load_column(uint32_t dst, Column& col) {
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  col.dst = dst;
  col.lid = lid_[dst];
  col.t = at_[dst];
  col.paths.clear();
  col.begin.assign(np + 1, 0);
  col.src.assign(np, kNone);
  for (uint32_t q = 0; q < np; ++q) {
    col.begin[q] = static_cast<uint32_t>(col.paths.size());
    uint32_t aq = 0, tq = 0;
    if (ends(src_of(dst, patterns_[q]), dst, aq, tq) && aq != tq && walk(aq, col.lid, col.t, path_)) {
      col.src[q] = aq;
      col.paths.insert(col.paths.end(), path_.begin(), path_.end());
    }
  }
  col.begin[np] = static_cast<uint32_t>(col.paths.size());
  steps_ += np + col.paths.size();
}

// The shifts whose flow toward grid cell dst leaves from x's own cells, in
// pattern order: shifts_via's answer where x has only up links.
void ShiftRepairPass::shifts_from(uint32_t x, uint32_t dst, std::vector<uint32_t>& out) {
  out.clear();
  const uint32_t h2 = dst / rails_, r2 = dst % rails_;
  for (uint32_t i = cells_begin_[x]; i < cells_begin_[x + 1]; ++i) {
    const uint32_t src = cells_[i];
    uint32_t a = 0, t = 0;
    ++steps_;
    if (!ends(src, dst, a, t) || a == t) continue;
    const uint32_t h = src / rails_, r = src % rails_;
    const uint32_t k = (h2 + hosts_ - h) % hosts_;
    if (r2 == r && k != 0) {
      out.push_back(k - 1);
    } else if (rails_ > 1 && r2 == (r + 1) % rails_) {
      out.push_back(hosts_ - 1 + k);
    }
  }
  std::sort(out.begin(), out.end());
}

// The shifts whose flow of `col` crosses switch x.
void ShiftRepairPass::shifts_via(const Column& col, uint32_t x, std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t q = 0; q < patterns_.size(); ++q) {
    if (col.src[q] == kNone) continue;
    bool through = col.src[q] == x;
    for (uint32_t i = col.begin[q]; i < col.begin[q + 1] && !through; ++i) {
      const uint32_t r = g_.remote(col.paths[i]);
      through = r == x && r != col.t;
    }
    if (through) out.push_back(q);
  }
}

// x's entry toward col's LID moved from the path `old` (x's own, to the
// target) to entry c: false unless c is another next hop of the same
// direction, undrained, whose path is as long, undrained, and all down when
// x went down. Fills m.
bool ShiftRepairPass::make_move(const Column& col, uint32_t x, const std::vector<uint32_t>& old, uint32_t c, Move& m) {
  if (old.empty() || c == old[0] || rec_.ent[c].up != rec_.ent[old[0]].up || rec_.ent[c].drained) return false;
  for (uint32_t e : old) {
    if (rec_.ent[e].drained) return false;  // tier 2: left to the phases that chose it
  }
  steps_ += old.size();
  if (!walk(g_.remote(c), col.lid, col.t, alt_) || alt_.size() + 1 != old.size()) return false;
  for (uint32_t e : alt_) {
    if (rec_.ent[e].drained || (!rec_.ent[old[0]].up && rec_.ent[e].up)) return false;
  }
  m.x = x;
  m.lid = col.lid;
  m.old = old;
  m.now.assign(1, c);
  m.now.insert(m.now.end(), alt_.begin(), alt_.end());
  // A switch with only up links (a leaf) carries its own CAs' flows and
  // no others: those need no walk of every switch's path.
  m.flows = up_only_[x] ? g_.num_cas(x) : flows_through(col.lid, col.t)[x];
  return true;
}

bool ShiftRepairPass::a2a_fits(const Move& m) const {
  for (uint32_t e : m.now) {
    if (!on_path(m.old, e) && a2a_[e] + m.flows > a2a_limit_) return false;
  }
  return true;
}

// The change of the excess over the shifts `via` (those whose flow crosses
// m.x) if m were made.
int64_t ShiftRepairPass::delta(const std::vector<uint32_t>& via, const Move& m) const {
  int64_t d = 0;
  for (uint32_t q : via) {
    const uint16_t* lq = &load_[static_cast<size_t>(q) * entries_];
    for (uint32_t e : m.old) d -= !on_path(m.now, e) && lq[e] > bound_[q] ? 1 : 0;
    for (uint32_t e : m.now) d += !on_path(m.old, e) && lq[e] >= bound_[q] ? 1 : 0;
  }
  return d;
}

// Makes m (forward) or takes it back: loads, all-to-all loads, the table.
void ShiftRepairPass::apply(const std::vector<uint32_t>& via, const Move& m, bool forward) {
  const std::vector<uint32_t>& from = forward ? m.old : m.now;
  const std::vector<uint32_t>& to = forward ? m.now : m.old;
  for (uint32_t q : via) {
    for (uint32_t e : from) {
      if (!on_path(to, e)) add(q, e, -1);
    }
    for (uint32_t e : to) {
      if (!on_path(from, e)) add(q, e, +1);
    }
  }
  for (uint32_t e : from) a2a_[e] -= m.flows;
  for (uint32_t e : to) a2a_[e] += m.flows;
  const Lid l{static_cast<uint16_t>(m.lid)};
  t_.set(m.x, l, g_.port(to[0]));
  next_[static_cast<size_t>(m.lid) * n_ + m.x] = to[0];
  through_lid_ = 0;
}

void ShiftRepairPass::record(const Move& m, std::vector<TableMove>& moves) const {
  moves.push_back(TableMove{m.x, static_cast<uint16_t>(m.lid), g_.port(m.old[0])});
}

// The flow of shift p from grid cell src: if its path crosses a link above
// the shift's bound, the best move among the entries of its path up to the
// last such link, made when it lowers the excess; else the first swap of
// two entries of one switch on that path (this flow's and one of another
// flow of the shift through it) that lowers it.
bool ShiftRepairPass::improve(uint32_t p, uint32_t src, std::vector<TableMove>& moves) {
  const uint32_t dst = dst_of(src, patterns_[p]);
  uint32_t a = 0, t = 0;
  if (!ends(src, dst, a, t) || a == t) return false;
  if (!walk(a, lid_[dst], t, hop_)) return false;
  const uint16_t* lp = &load_[static_cast<size_t>(p) * entries_];
  size_t last = hop_.size();
  for (size_t i = 0; i < hop_.size(); ++i) {
    if (lp[hop_[i]] > bound_[p]) last = i;
  }
  if (last == hop_.size()) return false;
  load_column(dst, col_);
  int64_t best = 0;
  bool found = false;
  Move m;
  for (uint32_t i = 0; i <= last; ++i) {
    const uint32_t x = i == 0 ? a : g_.remote(hop_[i - 1]);
    old_.assign(hop_.begin() + i, hop_.end());
    shifts_via(col_, x, via_);
    for (uint32_t c = g_.begin(x); c < g_.end(x); ++c) {
      if (!make_move(col_, x, old_, c, m) || !a2a_fits(m)) continue;
      const int64_t d = delta(via_, m);
      // Ties: the switch's GUID rank, then the port (entries are in port order).
      if (d < best || (d == best && found && guid_rank_[x] < guid_rank_[best_move_.x])) {
        best = d;
        found = d < 0;
        best_move_ = m;
      }
    }
  }
  if (found) {
    shifts_via(col_, best_move_.x, via_);
    apply(via_, best_move_, true);
    record(best_move_, moves);
    return true;
  }
  return swap(p, a, last, moves);
}

// The wide rounds' swap partners at the flow's source switch x: the
// destination cells, in grid order, of the flows from x's own cells in the
// shifts via_ (those whose flow toward col_'s destination leaves from x).
// (Only there: at a switch further up the flows through it come from many
// switches, and listing them cost more than the moves they found.)
void ShiftRepairPass::wide_partners(uint32_t x) {
  partners_.clear();
  if (++stamp_ == 0) {
    std::fill(partner_stamp_.begin(), partner_stamp_.end(), 0);
    stamp_ = 1;
  }
  for (uint32_t i = cells_begin_[x]; i < cells_begin_[x + 1]; ++i) {
    const uint32_t src = cells_[i];
    for (uint32_t q : via_) {
      const uint32_t dst = dst_of(src, patterns_[q]);
      uint32_t a2 = 0, t2 = 0;
      ++steps_;
      if (dst == col_.dst || partner_stamp_[dst] == stamp_ || !ends(src, dst, a2, t2) || a2 == t2) continue;
      partner_stamp_[dst] = stamp_;
      partners_.push_back(dst);
    }
  }
  std::sort(partners_.begin(), partners_.end());
}

// swap()'s partners outside the wide rounds: the destination cells of shift
// p's other flows through x.
void ShiftRepairPass::shift_partners(const Pattern& pattern, uint32_t x) {
  partners_.clear();
  for (uint32_t src = 0; src < hosts_ * rails_; ++src) {
    const uint32_t dst = dst_of(src, pattern);
    uint32_t a2 = 0, t2 = 0;
    if (dst == col_.dst || !ends(src, dst, a2, t2) || a2 == t2 || !walk(a2, lid_[dst], t2, path_)) continue;
    steps_ += path_.size() + 1;
    bool through = a2 == x;
    for (size_t j = 0; j + 1 < path_.size() && !through; ++j) through = g_.remote(path_[j]) == x;
    if (through) partners_.push_back(dst);
  }
}

// A swap partner dst2 at x into col2_: at a switch with only up links the
// flows that cross it are its own CAs', so its LID and target are enough
// (partner_shifts takes its shifts from the grid); else its whole column.
void ShiftRepairPass::partner_column(uint32_t dst2, uint32_t x) {
  if (up_only_[x]) {
    col2_.dst = dst2;
    col2_.lid = lid_[dst2];
    col2_.t = at_[dst2];
  } else {
    load_column(dst2, col2_);
  }
}

void ShiftRepairPass::partner_shifts(uint32_t x) {
  if (up_only_[x]) {
    shifts_from(x, col2_.dst, via2_);
  } else {
    shifts_via(col2_, x, via2_);
  }
}

// improve()'s second try: at a switch x of the path (hop_, up to `last`),
// this flow's entry to another port c, and the entry of another flow of
// shift p through x that takes c to this flow's port; in the wide rounds,
// at the flow's source switch only, the entry of any destination of
// wide_partners (the swaps within a shift were tried before those rounds).
bool ShiftRepairPass::swap(uint32_t p, uint32_t a, size_t last, std::vector<TableMove>& moves) {
  hot_path_ = hop_;
  for (uint32_t i = 0; i <= (wide_ ? 0 : last); ++i) {
    const uint32_t x = i == 0 ? a : g_.remote(hot_path_[i - 1]);
    const std::vector<uint32_t> old(hot_path_.begin() + i, hot_path_.end());
    shifts_via(col_, x, via_);  // each m1 below is taken back before the next
    if (wide_) {
      wide_partners(x);
    } else {
      shift_partners(patterns_[p], x);
    }
    for (uint32_t c = g_.begin(x); c < g_.end(x) && steps_ < budget_; ++c) {
      Move m1;
      if (!make_move(col_, x, old, c, m1)) continue;
      const int64_t d1 = delta(via_, m1);
      for (uint32_t dst2 : partners_) {
        if (next_[static_cast<size_t>(lid_[dst2]) * n_ + x] != c) continue;
        partner_column(dst2, x);
        if (!walk(x, col2_.lid, col2_.t, old2_) || old2_.empty()) continue;
        Move m2;
        if (!make_move(col2_, x, old2_, old[0], m2)) continue;
        apply(via_, m1, true);
        partner_shifts(x);
        // m1's links as they will be once m2 has taken its flows off.
        bool fits = a2a_fits(m2);
        for (uint32_t e : m1.now) {
          const uint64_t off = on_path(m2.old, e) && !on_path(m2.now, e) ? m2.flows : 0;
          fits = fits && a2a_[e] - off <= a2a_limit_;
        }
        const int64_t d2 = delta(via2_, m2);
        // m1 made and taken back, m2 judged: loads read per shift and link.
        steps_ += 2 * via_.size() * (m1.old.size() + m1.now.size()) + via2_.size() * (m2.old.size() + m2.now.size());
        if (fits && d1 + d2 < 0) {
          apply(via2_, m2, true);
          record(m1, moves);
          record(m2, moves);
          return true;
        }
        apply(via_, m1, false);
      }
    }
  }
  return false;
}

}  // namespace railyard::routing::unicast
