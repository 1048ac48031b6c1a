// After the busiest links: the shifts NCCL runs over rails.
//
// Phases A and B and the pass over the busiest links balance all-to-all.
// After a failure a rail-aligned shift (host h, rail r -> host h + k, rail
// r) or a cross-rail one (-> rail r + 1) can still meet several of its
// flows on one link: the displaced flows of a destination leaf took the
// slots that were free for all-to-all, and a shift's window of consecutive
// destinations meets them together (a core down on a plain fat tree: five
// flows of shift 2 on one up link, over a bound of one).
//
// This pass judges every shift of the host grid (RoutingOptions::
// shift_grid) against a lower bound of its own (shift_bounds.h: the cuts of
// leaves and pods, and the spines'), counting the flows of the grid as
// cabled so that a CA leaving lowers no bound, and moves single (switch, CA LID) entries to another next hop of the same
// direction and the same length (so routes stay minimal and up*/down*,
// never through a drained link) while a move lowers the sum over shifts and
// links of the load above the shift's bound, and leaves every link's
// all-to-all load within the pass's limit (what the links carry already, or
// 1/32 above the all-to-all bound of a CA's own link). A flow whose path
// crosses a link above its shift's bound tries the entries of its path up
// to that link; the move that lowers the sum most wins (ties: the switch's
// GUID rank, then the port). Flows are taken shift by shift in grid order,
// so the result does not depend on the node order; an incremental route
// undoes the moves (RouteMemo::moves) and makes them again.
//
// The pass costs loads per (shift, directed link): it runs where those are
// at most 2^24 (2,048 CAs on 3 levels) and within 2^25 hops walked.
#include "routing/unicast_engine/shift_repair.h"

#include "routing/unicast_engine/shift_bounds.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <thread>

namespace railyard::routing::unicast {

namespace {

constexpr uint32_t kShiftMaxHops = 16;
constexpr uint64_t kShiftMaxCells = uint64_t{1} << 24;
constexpr uint64_t kShiftMaxSteps = uint64_t{1} << 23;

bool on_path(const std::vector<uint32_t>& v, uint32_t e) { return std::find(v.begin(), v.end(), e) != v.end(); }

class ShiftRepairPass {
 public:
  ShiftRepairPass(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking, const RoutingOptions& options,
                  ForwardingTables& tables, std::vector<uint16_t>* storage)
      : f_(fabric), g_(graph), rk_(ranking), o_(options), t_(tables), storage_(storage) {}

  ShiftRepair run(std::vector<TableMove>& moves);
  // The loads' storage back to the caller's, for the next route.
  void keep_storage() {
    if (storage_ != nullptr && load_.capacity() > storage_->capacity()) storage_->swap(load_);
  }

 private:
  // The grid and its shifts.
  struct Pattern {
    uint32_t k = 0;
    bool cross = false;
  };
  uint32_t dst_of(uint32_t src, const Pattern& p) const {
    const uint32_t h = src / rails_, r = src % rails_;
    return ((h + p.k) % hosts_) * rails_ + (p.cross ? (r + 1) % rails_ : r);
  }
  uint32_t src_of(uint32_t dst, const Pattern& p) const {
    const uint32_t h = dst / rails_, r = dst % rails_;
    return ((h + hosts_ - p.k % hosts_) % hosts_) * rails_ + (p.cross ? (r + rails_ - 1) % rails_ : r);
  }
  // visit(src, dst) for every cell of the grid and its destination in the
  // shift (no division per flow: this is the pass's inner loop).
  template <class Visit>
  void for_each_flow(const Pattern& p, Visit&& visit) const {
    uint32_t hd = p.k % hosts_;
    for (uint32_t h = 0; h < hosts_; ++h) {
      for (uint32_t r = 0; r < rails_; ++r) {
        const uint32_t rd = p.cross ? (r + 1 == rails_ ? 0 : r + 1) : r;
        visit(h * rails_ + r, hd * rails_ + rd);
      }
      hd = hd + 1 == hosts_ ? 0 : hd + 1;
    }
  }
  // The flow's ends (switches), or false when it is not a flow: a cell
  // absent, or (`cabled` false) a CA whose cable is down. The bounds count
  // the flows of the grid as cabled, so that a CA leaving lowers no bound
  // (and moves no entry); the loads, the flows that run.
  bool ends(uint32_t src, uint32_t dst, uint32_t& a, uint32_t& t, bool cabled = false) const {
    if (src == dst || lid_[src] == 0 || lid_[dst] == 0 || (!cabled && !(live_[src] && live_[dst]))) return false;
    a = at_[src];
    t = at_[dst];
    return a != kNone && t != kNone;
  }

  void build_graph();
  bool walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out) const;
  uint32_t entry_at(uint32_t s, uint8_t port) const {
    return port < ports_[s + 1] - ports_[s] ? port_entry_[ports_[s] + port] : kNone;
  }
  void cache_paths();
  void load_shifts(uint32_t from, uint32_t to, ShiftBounds::Counts* counts, bool store, uint64_t& excess);
  void all_to_all_loads();
  const std::vector<uint32_t>& flows_through(uint32_t lid, uint32_t t);
  void add(uint32_t p, uint32_t e, int d);
  // One destination's flows over every shift: per shift, the path from its
  // source switch (src kNone: none).
  struct Column {
    uint32_t dst = 0, lid = 0, t = 0;
    std::vector<uint32_t> paths, begin, src;
  };
  void load_column(uint32_t dst, Column& col);
  void shifts_via(const Column& col, uint32_t x, std::vector<uint32_t>& out) const;
  // x's entry toward `lid` from the path `old` to the path `now` (x's own,
  // to the target), which `flows` all-to-all flows take.
  struct Move {
    uint32_t x = 0, lid = 0;
    std::vector<uint32_t> old, now;
    uint64_t flows = 0;
  };
  bool make_move(const Column& col, uint32_t x, const std::vector<uint32_t>& old, uint32_t c, Move& m);
  bool a2a_fits(const Move& m) const;
  bool a2a_within(const Move& m) const;
  int64_t delta(const std::vector<uint32_t>& via, const Move& m) const;
  void apply(const std::vector<uint32_t>& via, const Move& m, bool forward);
  void record(const Move& m, std::vector<TableMove>& moves) const;
  bool improve(uint32_t p, uint32_t src, std::vector<TableMove>& moves);
  bool swap(uint32_t p, uint32_t a, size_t last, std::vector<TableMove>& moves);

  const Fabric& f_;
  const SwitchGraph& g_;
  const Ranking& rk_;
  const RoutingOptions& o_;
  ForwardingTables& t_;
  std::vector<uint16_t>* storage_;

  uint32_t n_ = 0, entries_ = 0;
  std::vector<uint32_t> ports_, port_entry_, owner_, guid_rank_;
  std::vector<uint8_t> up_, drained_;
  uint32_t hosts_ = 0, rails_ = 0;
  std::vector<uint32_t> lid_, at_;  // per grid cell: CA LID (0 absent), the switch it is cabled to
  std::vector<uint8_t> live_;       // per grid cell: its cable is up
  std::vector<uint32_t> cell_of_lid_;
  std::vector<Pattern> patterns_;
  std::vector<uint16_t> load_;  // [pattern * entries + entry]
  std::vector<uint32_t> bound_, hot_;
  uint64_t excess_ = 0;
  std::vector<uint64_t> a2a_;
  uint64_t a2a_limit_ = 0;
  std::optional<ShiftBounds> bounds_;
  // cache_paths': per switch its index among the flows' sources; per
  // (source, destination cell) the first of its path's entries in cached_.
  std::vector<uint32_t> source_of_, cache_at_, cached_;
  // The tables as entries, by LID: [LID * switches + switch] (a walk toward
  // one LID reads one column; a shift's flows go to consecutive LIDs),
  // kNone where no switch link.
  std::vector<uint32_t> next_;
  uint32_t lids_ = 0;
  std::vector<uint32_t> through_;  // flows_through's counts
  uint32_t through_lid_ = 0;
  uint64_t steps_ = 0;
  std::vector<uint32_t> path_, hop_, alt_, old_, old2_, hot_path_, via_, via2_;
  std::vector<std::pair<uint32_t, uint32_t>> partners_;  // swap's: (destination cell, position of x on its path)
  Column col_, col2_;
  Move best_move_;
};

void ShiftRepairPass::build_graph() {
  n_ = g_.num_switches();
  entries_ = g_.num_entries();
  ports_.assign(n_ + 1, 0);
  for (uint32_t s = 0; s < n_; ++s) ports_[s + 1] = ports_[s] + f_.node(g_.node(s)).num_ports + 1u;
  port_entry_.assign(ports_[n_], kNone);
  owner_.assign(entries_, 0);
  up_.assign(entries_, 0);
  drained_.assign(entries_, 0);
  for (uint32_t s = 0; s < n_; ++s) {
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      port_entry_[ports_[s] + g_.port(e)] = e;
      owner_[e] = s;
      up_[e] = rk_.up(s, g_.remote(e)) ? 1 : 0;
      const LinkId l = g_.link(e);
      drained_[e] = l.value() < o_.drained.size() && o_.drained[l.value()] != 0 ? 1 : 0;
    }
  }
  std::vector<uint32_t> by_guid(n_);
  std::iota(by_guid.begin(), by_guid.end(), 0u);
  std::sort(by_guid.begin(), by_guid.end(),
            [&](uint32_t a, uint32_t b) { return f_.node(g_.node(a)).guid < f_.node(g_.node(b)).guid; });
  guid_rank_.assign(n_, 0);
  for (uint32_t i = 0; i < n_; ++i) guid_rank_[by_guid[i]] = i;
}

// The entries from switch x to the target switch t of `lid`, as the tables
// have them; false if they do not arrive.
bool ShiftRepairPass::walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t h = 0; h < kShiftMaxHops; ++h) {
    if (x == t) return true;
    const uint32_t e = next_[static_cast<size_t>(lid) * n_ + x];
    if (e == kNone) return false;
    out.push_back(e);
    x = g_.remote(e);
  }
  return false;
}

void ShiftRepairPass::add(uint32_t p, uint32_t e, int d) {
  uint16_t& l = load_[static_cast<size_t>(p) * entries_ + e];
  const uint32_t b = bound_[p];
  if (d > 0) {
    if (l >= b) {
      ++excess_;
      if (l == b) ++hot_[p];
    }
    ++l;
  } else {
    --l;
    if (l >= b) {
      --excess_;
      if (l == b) --hot_[p];
    }
  }
}

// Per switch: the CA ports whose all-to-all flows toward `lid` cross it
// (the switch's own included), for the LID last asked.
const std::vector<uint32_t>& ShiftRepairPass::flows_through(uint32_t lid, uint32_t t) {
  if (through_lid_ == lid) return through_;
  through_lid_ = lid;
  through_.assign(n_, 0);
  steps_ += n_;
  for (uint32_t s = 0; s < n_; ++s) {
    const uint32_t cas = g_.num_cas(s);
    if (cas == 0 || s == t || !walk(s, lid, t, path_)) continue;
    through_[s] += cas;
    for (uint32_t e : path_) through_[g_.remote(e)] += cas;
  }
  return through_;
}

void ShiftRepairPass::all_to_all_loads() {
  a2a_.assign(entries_, 0);
  uint64_t cas = 0;
  for (uint32_t s = 0; s < n_; ++s) cas += g_.num_cas(s);
  for (NodeId ca : f_.cas()) {
    const Node& node = f_.node(ca);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const PortId port(node.first_port.value() + p);
      const Lid lid = f_.port(port).lid;
      const uint32_t t = g_.attach_switch(port);
      if (!lid.valid() || lid.value >= t_.num_lids() || t == kNone) continue;
      for (uint32_t s = 0; s < n_; ++s) {
        const uint32_t k = g_.num_cas(s);
        if (k == 0 || s == t || !walk(s, lid.value, t, path_)) continue;
        for (uint32_t e : path_) a2a_[e] += k;
      }
    }
  }
  uint64_t most = 0;
  for (uint32_t e = 0; e < entries_; ++e) most = std::max(most, a2a_[e]);
  const uint64_t own = cas > 0 ? cas - 1 : 0;  // a CA's own link: every other CA's flow
  a2a_limit_ = std::max(most, own + own / 32);
}



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
  if (old.empty() || c == old[0] || up_[c] != up_[old[0]] || drained_[c]) return false;
  for (uint32_t e : old) {
    if (drained_[e]) return false;  // tier 2: left to the phases that chose it
  }
  steps_ += old.size();
  if (!walk(g_.remote(c), col.lid, col.t, alt_) || alt_.size() + 1 != old.size()) return false;
  for (uint32_t e : alt_) {
    if (drained_[e] || (!up_[old[0]] && up_[e])) return false;
  }
  m.x = x;
  m.lid = col.lid;
  m.old = old;
  m.now.assign(1, c);
  m.now.insert(m.now.end(), alt_.begin(), alt_.end());
  m.flows = flows_through(col.lid, col.t)[x];
  return true;
}

// After m (made): the links it loaded within the limit.
bool ShiftRepairPass::a2a_within(const Move& m) const {
  for (uint32_t e : m.now) {
    if (a2a_[e] > a2a_limit_) return false;
  }
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

// improve()'s second try: at a switch x of the path (hop_, up to `last`),
// this flow's entry to another port c, and the entry of another flow of
// shift p through x that takes c to this flow's port.
bool ShiftRepairPass::swap(uint32_t p, uint32_t a, size_t last, std::vector<TableMove>& moves) {
  const Pattern& pattern = patterns_[p];
  const uint32_t cells = hosts_ * rails_;
  hot_path_ = hop_;
  for (uint32_t i = 0; i <= last; ++i) {
    const uint32_t x = i == 0 ? a : g_.remote(hot_path_[i - 1]);
    const std::vector<uint32_t> old(hot_path_.begin() + i, hot_path_.end());
    partners_.clear();
    for (uint32_t src = 0; src < cells; ++src) {
      const uint32_t dst = dst_of(src, pattern);
      uint32_t a2 = 0, t2 = 0;
      if (dst == col_.dst || !ends(src, dst, a2, t2) || a2 == t2 || !walk(a2, lid_[dst], t2, path_)) continue;
      steps_ += path_.size() + 1;
      for (size_t j = 0; j < path_.size(); ++j) {
        if ((j == 0 ? a2 : g_.remote(path_[j - 1])) == x) partners_.push_back({dst, static_cast<uint32_t>(j)});
      }
    }
    for (uint32_t c = g_.begin(x); c < g_.end(x) && steps_ < kShiftMaxSteps; ++c) {
      Move m1;
      if (!make_move(col_, x, old, c, m1)) continue;
      shifts_via(col_, x, via_);
      const int64_t d1 = delta(via_, m1);
      for (auto [dst2, j] : partners_) {
        if (next_[static_cast<size_t>(lid_[dst2]) * n_ + x] != c) continue;
        load_column(dst2, col2_);
        if (!walk(x, col2_.lid, col2_.t, old2_) || old2_.empty()) continue;
        Move m2;
        if (!make_move(col2_, x, old2_, old[0], m2)) continue;
        apply(via_, m1, true);
        shifts_via(col2_, x, via2_);
        const bool fits = a2a_fits(m2) && a2a_within(m1);
        const int64_t d2 = delta(via2_, m2);
        if (fits && d1 + d2 < 0) {
          apply(via2_, m2, true);
          record(m1, moves);
          record(m2, moves);
          return true;
        }
        apply(via_, m1, false);
        (void)j;
      }
    }
  }
  return false;
}

// The loads of shifts [from, to), their bounds, the cells above them.
// The path of every flow the shifts have, by (source switch, destination
// cell): a destination's sources are the cells of its own rail and of the
// rail before it, on a few leaves, so each path is walked once, not once
// per shift. (Read by both threads of load_shifts; the search walks the
// tables as they change.)
void ShiftRepairPass::cache_paths() {
  const uint32_t cells = hosts_ * rails_;
  source_of_.assign(n_, kNone);
  std::vector<uint32_t> sources;
  std::vector<std::vector<uint32_t>> rail_sources(rails_);
  for (uint32_t c = 0; c < cells; ++c) {
    const uint32_t a = at_[c];
    if (a == kNone || !live_[c]) continue;
    if (source_of_[a] == kNone) {
      source_of_[a] = static_cast<uint32_t>(sources.size());
      sources.push_back(a);
    }
    auto& r = rail_sources[c % rails_];
    if (std::find(r.begin(), r.end(), a) == r.end()) r.push_back(a);
  }
  cache_at_.assign(sources.size() * cells + 1, 0);
  cached_.clear();
  for (uint32_t i = 0; i < sources.size(); ++i) {
    for (uint32_t dst = 0; dst < cells; ++dst) {
      const size_t key = static_cast<size_t>(i) * cells + dst;
      cache_at_[key] = static_cast<uint32_t>(cached_.size());
      const uint32_t a = sources[i], t = at_[dst], r = dst % rails_;
      if (lid_[dst] == 0 || !live_[dst] || t == kNone || a == t) continue;
      const auto& own = rail_sources[r];
      const auto& before = rail_sources[(r + rails_ - 1) % rails_];
      const bool needed = std::find(own.begin(), own.end(), a) != own.end() ||
                          (rails_ > 1 && std::find(before.begin(), before.end(), a) != before.end());
      if (needed && walk(a, lid_[dst], t, path_)) cached_.insert(cached_.end(), path_.begin(), path_.end());
    }
  }
  cache_at_.back() = static_cast<uint32_t>(cached_.size());
}

// Shifts [from, to): their loads, the load above their bounds (into
// excess) and the cells above them (hot_); with `counts`, their bounds
// first. `store`: the loads into load_; else counted in one row reused from
// shift to shift (the loads of every shift, 8 MB at 2,048 CAs, cost ~10 ms
// of page faults where their storage is fresh: they are written then only
// when the search needs them).
void ShiftRepairPass::load_shifts(uint32_t from, uint32_t to, ShiftBounds::Counts* counts, bool store,
                                  uint64_t& excess) {
  const uint32_t cells = hosts_ * rails_;
  std::vector<uint16_t> row(store ? 0 : entries_);
  for (uint32_t p = from; p < to; ++p) {
    const Pattern& pattern = patterns_[p];
    uint16_t* l = store ? &load_[static_cast<size_t>(p) * entries_] : row.data();
    uint32_t most = 0;
    for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
      uint32_t a = 0, t = 0;
      if (!ends(src, dst, a, t) || a == t) return;
      const size_t key = static_cast<size_t>(source_of_[a]) * cells + dst;
      const uint32_t* e = &cached_[cache_at_[key]];
      for (const uint32_t* end = &cached_[cache_at_[key + 1]]; e != end; ++e) {
        most = std::max<uint32_t>(most, ++l[*e]);
      }
    });
    // A shift whose busiest link carries one flow is at its bound (every
    // bound is at least 1): its flows are counted for the bound only above.
    if (counts != nullptr && most > 1) {
      for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
        uint32_t a = 0, t = 0;
        if (ends(src, dst, a, t, true) && a != t) bounds_->count(*counts, a, t);
      });
      bound_[p] = bounds_->bound(*counts, most, [&](auto&& visit) {
        for_each_flow(pattern, [&](uint32_t src, uint32_t dst) {
          uint32_t a = 0, t = 0;
          if (ends(src, dst, a, t, true) && a != t) visit(a, t);
        });
      });
    }
    for (uint32_t e = 0; e < entries_ && most > bound_[p]; ++e) {
      if (l[e] <= bound_[p]) continue;
      excess += l[e] - bound_[p];
      ++hot_[p];
    }
    if (!store) std::fill(row.begin(), row.end(), 0);
  }
}

ShiftRepair ShiftRepairPass::run(std::vector<TableMove>& moves) {
  ShiftRepair out;
  rails_ = o_.shift_rails;
  if (rails_ == 0 || o_.shift_grid.size() % rails_ != 0) return out;
  hosts_ = static_cast<uint32_t>(o_.shift_grid.size() / rails_);
  if (hosts_ < 2) return out;
  for (uint32_t k = 1; k < hosts_; ++k) patterns_.push_back({k, false});
  if (rails_ > 1) {
    for (uint32_t k = 0; k < hosts_; ++k) patterns_.push_back({k, true});
  }
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  if (uint64_t{np} * g_.num_entries() > kShiftMaxCells || g_.num_entries() == 0) return out;
  build_graph();
  const uint32_t cells = hosts_ * rails_;
  lid_.assign(cells, 0);
  at_.assign(cells, kNone);
  live_.assign(cells, 0);
  cell_of_lid_.assign(t_.num_lids(), kNone);
  for (uint32_t c = 0; c < cells; ++c) {
    const Lid l = o_.shift_grid[c];
    if (!l.valid() || l.value >= t_.num_lids()) continue;
    const PortId owner = f_.lid_owner(l);
    if (!owner.valid() || f_.is_switch(f_.port(owner).node)) continue;
    const PortId leaf_port = f_.port(owner).remote;
    if (!leaf_port.valid()) continue;
    lid_[c] = l.value;
    at_[c] = g_.switch_index(f_.port(leaf_port).node);
    live_[c] = g_.attach_switch(owner) != kNone ? 1 : 0;
    cell_of_lid_[l.value] = c;
  }
  lids_ = t_.num_lids();
  next_.resize(static_cast<size_t>(n_) * lids_);
  for (uint32_t s = 0; s < n_; ++s) {
    const auto row = t_.row(s);
    for (uint32_t l = 0; l < lids_; ++l) next_[static_cast<size_t>(l) * n_ + s] = entry_at(s, row[l]);
  }
  std::vector<uint8_t> leaf(n_, 0);
  for (uint32_t s = 0; s < n_; ++s) leaf[s] = g_.num_cas(s) != 0 ? 1 : 0;
  for (uint32_t a : at_) {
    if (a != kNone) leaf[a] = 1;
  }
  bounds_.emplace(g_, rk_, up_, drained_, leaf);
  bound_.assign(np, 1);
  hot_.assign(np, 0);
  // The shifts' bounds and loads in two threads (each its own shifts), as
  // the lanes; the loads kept only when some shift is above its bound.
  cache_paths();
  const uint32_t half = np / 2;
  uint64_t excess[2] = {0, 0};
  auto both = [&](bool bounds, bool store) {
    std::thread other([&] {
      ShiftBounds::Counts counts = bounds_->counts();
      load_shifts(half, np, bounds ? &counts : nullptr, store, excess[1]);
    });
    ShiftBounds::Counts counts = bounds_->counts();
    load_shifts(0, half, bounds ? &counts : nullptr, store, excess[0]);
    other.join();
  };
  // Storage of an earlier route (its pages mapped): loads kept at once.
  const size_t size = static_cast<size_t>(np) * entries_;
  const bool warm = storage_ != nullptr && storage_->capacity() >= size;
  if (warm) {
    load_.swap(*storage_);
    load_.assign(size, 0);
  }
  both(true, warm);
  excess_ = excess[0] + excess[1];
  if (excess_ != 0 && !warm) {
    load_.assign(size, 0);
    std::fill(hot_.begin(), hot_.end(), 0);
    excess[0] = excess[1] = 0;
    both(false, true);
  }
  out.ran = true;
  out.patterns = np;
  out.excess_before = excess_;
  if (excess_ != 0) {
    all_to_all_loads();
    const size_t before = moves.size();
    // Rounds over the shifts above their bound, the worst first (then by
    // shift), while a round moves something and the budget lasts: what the
    // budget cuts short is the mildest.
    std::vector<std::pair<int64_t, uint32_t>> order;
    for (bool moved = true; moved && steps_ < kShiftMaxSteps;) {
      moved = false;
      order.clear();
      for (uint32_t p = 0; p < np; ++p) {
        if (hot_[p] == 0) continue;
        const uint16_t* l = &load_[static_cast<size_t>(p) * entries_];
        order.push_back({-static_cast<int64_t>(*std::max_element(l, l + entries_)) + bound_[p], p});
      }
      std::sort(order.begin(), order.end());
      steps_ += order.size() * (entries_ / 64 + 1);
      for (auto [unused, p] : order) {
        for (uint32_t src = 0; src < cells && hot_[p] != 0 && steps_ < kShiftMaxSteps; ++src) moved |= improve(p, src, moves);
      }
    }
    out.moves = static_cast<uint32_t>(moves.size() - before);
  }
  out.excess_after = excess_;
  return out;
}

}  // namespace

ShiftRepair repair_shifts(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                          const RoutingOptions& options, ForwardingTables& tables, std::vector<TableMove>& moves,
                          std::vector<uint16_t>* storage) {
  ShiftRepairPass r(fabric, graph, ranking, options, tables, storage);
  ShiftRepair out = r.run(moves);
  r.keep_storage();
  return out;
}

}  // namespace railyard::routing::unicast
