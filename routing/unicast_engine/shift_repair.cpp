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
// shift_grid) against a lower bound of its own, the largest of
//  - the cuts: the flows leaving or entering a leaf, or a pod (a piece of
//    the switch graph below the top rank), over its usable links;
//  - the spines': a leaf L sends at least C - b (u - m) of its C flows that
//    leave the leaves below spine s through s when no link carries more
//    than b (u its up links, m of them to s), and those must climb over
//    s's up links: b is too low when they do not fit in b x s's up links
//    (a spine that lost its links to a core cannot take a flow of every
//    leaf of its pod); the same for flows entering.
// and moves single (switch, CA LID) entries to another next hop of the same
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

#include <algorithm>
#include <numeric>

namespace railyard::routing::unicast {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kMaxHops = 16;
constexpr uint64_t kMaxCells = uint64_t{1} << 24;
constexpr uint64_t kMaxSteps = uint64_t{1} << 25;
// A spine's bound is searched this far above the cuts' at most.
constexpr uint32_t kMaxRaise = 8;

class Repair {
 public:
  Repair(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking, const RoutingOptions& options,
         ForwardingTables& tables)
      : f_(fabric), g_(graph), rk_(ranking), o_(options), t_(tables) {}

  ShiftRepair run(std::vector<TableMove>& moves);

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
  bool walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out);
  uint32_t entry_at(uint32_t s, uint8_t port) const {
    return port < ports_[s + 1] - ports_[s] ? port_entry_[ports_[s] + port] : kNone;
  }
  // The bounds' structure (leaves, pods, spines above leaves), then one
  // shift's flows counted (count) and its bound (bound_of).
  void prepare_bounds();
  void count(uint32_t a, uint32_t t);
  uint32_t bound_of();
  void all_to_all_loads();
  const std::vector<uint32_t>& flows_through(uint32_t lid, uint32_t t);
  void add(uint32_t p, uint32_t e, int d);
  bool improve(uint32_t p, uint32_t src, std::vector<TableMove>& moves);

  const Fabric& f_;
  const SwitchGraph& g_;
  const Ranking& rk_;
  const RoutingOptions& o_;
  ForwardingTables& t_;

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
  // Bounds: per switch its leaf index and pod (kNone: none); per leaf its
  // usable links and its parents (switch, links to it); per parent its
  // usable up links and the leaves below it (bits by leaf index).
  std::vector<uint32_t> leaf_of_, pod_of_, leaf_cap_, pod_cap_, up_cap_;
  std::vector<uint32_t> parent_begin_, parent_, parent_links_, parent_ups_;
  std::vector<uint64_t> below_;
  uint32_t words_ = 0;
  bool below(uint32_t parent_index, uint32_t leaf) const {
    return (below_[static_cast<size_t>(parent_index) * words_ + leaf / 64] >> (leaf % 64)) & 1;
  }
  std::vector<uint32_t> out_leaf_, in_leaf_, out_pod_, in_pod_, out_up_, in_up_, parent_index_;
  std::vector<uint64_t> need_;
  std::vector<uint32_t> through_;  // flows_through's counts
  uint32_t through_lid_ = 0;
  uint64_t steps_ = 0;
  std::vector<uint32_t> path_, hop_, alt_, new_, paths_, path_begin_, path_src_, via_;
  void shifts_via(uint32_t x, uint32_t t);
};

void Repair::build_graph() {
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
bool Repair::walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out) {
  out.clear();
  for (uint32_t h = 0; h < kMaxHops; ++h) {
    ++steps_;
    if (x == t) return true;
    const uint32_t e = entry_at(x, t_.get(x, Lid{static_cast<uint16_t>(lid)}));
    if (e == kNone) return false;
    out.push_back(e);
    x = g_.remote(e);
  }
  return false;
}

void Repair::add(uint32_t p, uint32_t e, int d) {
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
const std::vector<uint32_t>& Repair::flows_through(uint32_t lid, uint32_t t) {
  if (through_lid_ == lid) return through_;
  through_lid_ = lid;
  through_.assign(n_, 0);
  for (uint32_t s = 0; s < n_; ++s) {
    const uint32_t cas = g_.num_cas(s);
    if (cas == 0 || s == t || !walk(s, lid, t, path_)) continue;
    through_[s] += cas;
    for (uint32_t e : path_) through_[g_.remote(e)] += cas;
  }
  return through_;
}

void Repair::all_to_all_loads() {
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


// Links a group may use: those not drained, or its drained ones when it has
// nothing else (the engine then takes them).
void Repair::prepare_bounds() {
  auto usable = [&](uint32_t s, bool up_only, auto&& keep) {
    uint32_t clean = 0, all = 0;
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      if ((up_only && !up_[e]) || !keep(g_.remote(e))) continue;
      ++all;
      clean += drained_[e] ? 0 : 1;
    }
    return clean ? clean : all;
  };
  auto any = [](uint32_t) { return true; };
  // Leaves: switches with a CA, or a grid cell's CA cabled to them.
  leaf_of_.assign(n_, kNone);
  std::vector<uint8_t> has_cas(n_, 0);
  for (uint32_t s = 0; s < n_; ++s) has_cas[s] = g_.num_cas(s) != 0 ? 1 : 0;
  for (uint32_t a : at_) {
    if (a != kNone) has_cas[a] = 1;
  }
  std::vector<uint32_t> leaves;
  for (uint32_t s = 0; s < n_; ++s) {
    if (!has_cas[s]) continue;
    leaf_of_[s] = static_cast<uint32_t>(leaves.size());
    leaves.push_back(s);
  }
  const uint32_t nl = static_cast<uint32_t>(leaves.size());
  leaf_cap_.resize(nl);
  up_cap_.resize(nl);
  for (uint32_t i = 0; i < nl; ++i) {
    leaf_cap_[i] = usable(leaves[i], false, any);
    up_cap_[i] = usable(leaves[i], true, any);
  }
  // Pods: pieces of the switch graph below the top rank (three ranks or more).
  pod_of_.assign(n_, kNone);
  pod_cap_.clear();
  if (rk_.levels >= 3) {
    uint32_t top = 0;
    for (uint32_t s = 0; s < n_; ++s) top = std::max(top, rk_.rank[s]);
    std::vector<uint32_t> queue;
    for (uint32_t s0 = 0; s0 < n_; ++s0) {
      if (pod_of_[s0] != kNone || rk_.rank[s0] == top) continue;
      const uint32_t pod = static_cast<uint32_t>(pod_cap_.size());
      pod_cap_.push_back(0);
      queue.assign(1, s0);
      pod_of_[s0] = pod;
      for (size_t i = 0; i < queue.size(); ++i) {
        for (uint32_t e = g_.begin(queue[i]); e < g_.end(queue[i]); ++e) {
          const uint32_t r = g_.remote(e);
          if (rk_.rank[r] == top || pod_of_[r] != kNone) continue;
          pod_of_[r] = pod;
          queue.push_back(r);
        }
      }
      uint32_t clean = 0, all = 0;
      for (uint32_t x : queue) {
        for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
          if (pod_of_[g_.remote(e)] == pod) continue;
          ++all;
          clean += drained_[e] ? 0 : 1;
        }
      }
      pod_cap_[pod] = clean ? clean : all;
    }
  }
  // Every leaf's parents, and the leaves below each (going down only).
  std::vector<uint32_t> index_of(n_, kNone), parents;
  parent_begin_.assign(nl + 1, 0);
  parent_.clear();
  parent_links_.clear();
  for (uint32_t i = 0; i < nl; ++i) {
    const uint32_t s = leaves[i];
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      if (!up_[e]) continue;
      const uint32_t q = g_.remote(e);
      if (index_of[q] == kNone) {
        index_of[q] = static_cast<uint32_t>(parents.size());
        parents.push_back(q);
      }
      const uint32_t j = index_of[q];
      auto it = std::find(parent_.begin() + parent_begin_[i], parent_.end(), j);
      if (it == parent_.end()) {
        parent_.push_back(j);
        parent_links_.push_back(0);
        it = parent_.end() - 1;
      }
      parent_links_[static_cast<size_t>(it - parent_.begin())] += 1;
    }
    parent_begin_[i + 1] = static_cast<uint32_t>(parent_.size());
  }
  words_ = (nl + 63) / 64;
  below_.assign(parents.size() * words_, 0);
  parent_ups_.resize(parents.size());
  std::vector<uint32_t> seen(n_, kNone), stack;
  for (uint32_t j = 0; j < parents.size(); ++j) {
    parent_ups_[j] = usable(parents[j], true, any);
    stack.assign(1, parents[j]);
    seen[parents[j]] = j;
    while (!stack.empty()) {
      const uint32_t x = stack.back();
      stack.pop_back();
      if (leaf_of_[x] != kNone) below_[static_cast<size_t>(j) * words_ + leaf_of_[x] / 64] |= uint64_t{1} << (leaf_of_[x] % 64);
      for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
        if (up_[e] || seen[g_.remote(e)] == j) continue;
        seen[g_.remote(e)] = j;
        stack.push_back(g_.remote(e));
      }
    }
  }
  out_leaf_.assign(nl, 0);
  in_leaf_.assign(nl, 0);
  out_pod_.assign(pod_cap_.size(), 0);
  in_pod_.assign(pod_cap_.size(), 0);
  out_up_.assign(parent_.size(), 0);
  in_up_.assign(parent_.size(), 0);
  need_.assign(2 * parents.size(), 0);
}

// One flow of the shift at hand, from switch a to switch t (a != t).
void Repair::count(uint32_t a, uint32_t t) {
  const uint32_t la = leaf_of_[a], lt = leaf_of_[t];
  ++out_leaf_[la];
  ++in_leaf_[lt];
  if (pod_of_[a] != pod_of_[t] && pod_of_[a] != kNone && pod_of_[t] != kNone) {
    ++out_pod_[pod_of_[a]];
    ++in_pod_[pod_of_[t]];
  }
  for (uint32_t j = parent_begin_[la]; j < parent_begin_[la + 1]; ++j) out_up_[j] += below(parent_[j], lt) ? 0 : 1;
  for (uint32_t j = parent_begin_[lt]; j < parent_begin_[lt + 1]; ++j) in_up_[j] += below(parent_[j], la) ? 0 : 1;
}

// The bound of the shift whose flows were counted; clears the counts.
uint32_t Repair::bound_of() {
  auto over = [](uint32_t flows, uint32_t cap) -> uint32_t { return cap ? (flows + cap - 1) / cap : 0; };
  uint32_t b = 1;
  for (size_t i = 0; i < out_leaf_.size(); ++i) b = std::max({b, over(out_leaf_[i], leaf_cap_[i]), over(in_leaf_[i], leaf_cap_[i])});
  for (size_t i = 0; i < out_pod_.size(); ++i) b = std::max({b, over(out_pod_[i], pod_cap_[i]), over(in_pod_[i], pod_cap_[i])});
  // The spines': raise b while some parent cannot take what its leaves must send it.
  const uint32_t parents = static_cast<uint32_t>(parent_ups_.size());
  for (const uint32_t b0 = b; b < b0 + kMaxRaise; ++b) {
    std::fill(need_.begin(), need_.end(), 0);
    for (uint32_t i = 0; i < out_leaf_.size(); ++i) {
      for (uint32_t j = parent_begin_[i]; j < parent_begin_[i + 1]; ++j) {
        const uint64_t elsewhere = uint64_t{b} * (up_cap_[i] - std::min(up_cap_[i], parent_links_[j]));
        need_[parent_[j]] += out_up_[j] > elsewhere ? out_up_[j] - elsewhere : 0;
        need_[parents + parent_[j]] += in_up_[j] > elsewhere ? in_up_[j] - elsewhere : 0;
      }
    }
    bool fits = true;
    for (uint32_t q = 0; q < parents && fits; ++q) {
      fits = need_[q] <= uint64_t{b} * parent_ups_[q] && need_[parents + q] <= uint64_t{b} * parent_ups_[q];
    }
    if (fits) break;
  }
  std::fill(out_leaf_.begin(), out_leaf_.end(), 0);
  std::fill(in_leaf_.begin(), in_leaf_.end(), 0);
  std::fill(out_pod_.begin(), out_pod_.end(), 0);
  std::fill(in_pod_.begin(), in_pod_.end(), 0);
  std::fill(out_up_.begin(), out_up_.end(), 0);
  std::fill(in_up_.begin(), in_up_.end(), 0);
  return b;
}

// The shifts whose flow toward the destination of paths_ crosses switch x.
void Repair::shifts_via(uint32_t x, uint32_t t) {
  via_.clear();
  for (uint32_t q = 0; q < patterns_.size(); ++q) {
    if (path_src_[q] == kNone) continue;
    bool through = path_src_[q] == x;
    for (uint32_t i = path_begin_[q]; i < path_begin_[q + 1] && !through; ++i) {
      const uint32_t r = g_.remote(paths_[i]);
      through = r == x && r != t;
    }
    if (through) via_.push_back(q);
  }
}

// The flow of shift p from grid cell src: if its path crosses a link above
// the shift's bound, the best move among the entries of its path up to the
// last such link, made when it lowers the excess.
bool Repair::improve(uint32_t p, uint32_t src, std::vector<TableMove>& moves) {
  const uint32_t dst = dst_of(src, patterns_[p]);
  uint32_t a = 0, t = 0;
  if (!ends(src, dst, a, t) || a == t) return false;
  const uint32_t lid = lid_[dst];
  if (!walk(a, lid, t, hop_)) return false;
  const uint16_t* lp = &load_[static_cast<size_t>(p) * entries_];
  size_t last = hop_.size();
  for (size_t i = 0; i < hop_.size(); ++i) {
    if (lp[hop_[i]] > bound_[p]) last = i;
  }
  if (last == hop_.size()) return false;
  // Every shift's flow toward this destination.
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  paths_.clear();
  path_begin_.assign(np + 1, 0);
  path_src_.assign(np, kNone);
  for (uint32_t q = 0; q < np; ++q) {
    path_begin_[q] = static_cast<uint32_t>(paths_.size());
    uint32_t aq = 0, tq = 0;
    if (ends(src_of(dst, patterns_[q]), dst, aq, tq) && aq != tq && walk(aq, lid, t, path_)) {
      path_src_[q] = aq;
      paths_.insert(paths_.end(), path_.begin(), path_.end());
    }
  }
  path_begin_[np] = static_cast<uint32_t>(paths_.size());
  auto has = [](const std::vector<uint32_t>& v, size_t from, uint32_t e) {
    return std::find(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), e) != v.end();
  };
  int64_t best = 0;
  uint32_t best_i = 0, best_c = kNone;
  for (uint32_t i = 0; i <= last; ++i) {
    const uint32_t x = i == 0 ? a : g_.remote(hop_[i - 1]);
    bool old_drained = false;
    for (size_t j = i; j < hop_.size(); ++j) old_drained = old_drained || drained_[hop_[j]];
    if (old_drained) continue;  // tier 2: left to the phases that chose it
    shifts_via(x, t);
    const uint64_t flows = flows_through(lid, t)[x];
    const bool up = up_[hop_[i]] != 0;
    for (uint32_t c = g_.begin(x); c < g_.end(x); ++c) {
      if (c == hop_[i] || (up_[c] != 0) != up || drained_[c]) continue;
      if (!walk(g_.remote(c), lid, t, alt_) || alt_.size() + 1 + i != hop_.size()) continue;
      bool bad = false;
      for (uint32_t e : alt_) bad = bad || drained_[e] || (!up && up_[e]);
      if (bad) continue;
      new_.assign(1, c);
      new_.insert(new_.end(), alt_.begin(), alt_.end());
      for (uint32_t e : new_) bad = bad || (!has(hop_, i, e) && a2a_[e] + flows > a2a_limit_);
      if (bad) continue;
      int64_t delta = 0;
      for (uint32_t q : via_) {
        const uint16_t* lq = &load_[static_cast<size_t>(q) * entries_];
        for (size_t j = i; j < hop_.size(); ++j) delta -= !has(new_, 0, hop_[j]) && lq[hop_[j]] > bound_[q] ? 1 : 0;
        for (uint32_t e : new_) delta += !has(hop_, i, e) && lq[e] >= bound_[q] ? 1 : 0;
      }
      const bool better = delta < best || (delta == best && best_c != kNone &&
                                           (guid_rank_[x] < guid_rank_[owner_[best_c]] ||
                                            (owner_[best_c] == x && g_.port(c) < g_.port(best_c))));
      if (delta < 0 && better) {
        best = delta;
        best_i = i;
        best_c = c;
      }
    }
  }
  if (best_c == kNone) return false;
  const uint32_t x = owner_[best_c];
  shifts_via(x, t);
  const uint64_t flows = flows_through(lid, t)[x];
  walk(g_.remote(best_c), lid, t, alt_);
  new_.assign(1, best_c);
  new_.insert(new_.end(), alt_.begin(), alt_.end());
  for (uint32_t q : via_) {
    for (size_t j = best_i; j < hop_.size(); ++j) {
      if (!has(new_, 0, hop_[j])) add(q, hop_[j], -1);
    }
    for (uint32_t e : new_) {
      if (!has(hop_, best_i, e)) add(q, e, +1);
    }
  }
  for (size_t j = best_i; j < hop_.size(); ++j) a2a_[hop_[j]] -= flows;
  for (uint32_t e : new_) a2a_[e] += flows;
  const Lid l{static_cast<uint16_t>(lid)};
  moves.push_back(TableMove{x, l.value, t_.get(x, l)});
  t_.set(x, l, g_.port(best_c));
  through_lid_ = 0;
  return true;
}

ShiftRepair Repair::run(std::vector<TableMove>& moves) {
  ShiftRepair out;
  rails_ = o_.shift_rails;
  if (rails_ == 0 || o_.shift_grid.size() % rails_ != 0) return out;
  hosts_ = static_cast<uint32_t>(o_.shift_grid.size() / rails_);
  if (hosts_ < 2) return out;
  for (uint32_t k = 1; k < hosts_; ++k) patterns_.push_back({k, false});
  if (rails_ > 1) {
    for (uint32_t k = 0; k < hosts_; ++k) patterns_.push_back({k, true});
  }
  build_graph();
  const uint32_t np = static_cast<uint32_t>(patterns_.size());
  if (uint64_t{np} * entries_ > kMaxCells || entries_ == 0) return out;
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
  prepare_bounds();
  load_.assign(static_cast<size_t>(np) * entries_, 0);
  bound_.assign(np, 1);
  hot_.assign(np, 0);
  for (uint32_t p = 0; p < np; ++p) {
    uint16_t* l = &load_[static_cast<size_t>(p) * entries_];
    for (uint32_t src = 0; src < cells; ++src) {
      const uint32_t dst = dst_of(src, patterns_[p]);
      uint32_t a = 0, t = 0;
      if (!ends(src, dst, a, t, true) || a == t) continue;
      count(a, t);
      if (ends(src, dst, a, t) && walk(a, lid_[dst], t, path_)) {
        for (uint32_t e : path_) ++l[e];
      }
    }
    bound_[p] = bound_of();
    for (uint32_t e = 0; e < entries_; ++e) {
      if (l[e] <= bound_[p]) continue;
      excess_ += l[e] - bound_[p];
      ++hot_[p];
    }
  }
  out.ran = true;
  out.patterns = np;
  out.excess_before = excess_;
  if (excess_ != 0) {
    all_to_all_loads();
    const size_t before = moves.size();
    for (bool moved = true; moved && steps_ < kMaxSteps;) {
      moved = false;
      for (uint32_t p = 0; p < np && steps_ < kMaxSteps; ++p) {
        for (uint32_t src = 0; src < cells && hot_[p] != 0 && steps_ < kMaxSteps; ++src) moved |= improve(p, src, moves);
      }
    }
    out.moves = static_cast<uint32_t>(moves.size() - before);
  }
  out.excess_after = excess_;
  return out;
}

}  // namespace

ShiftRepair repair_shifts(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking,
                          const RoutingOptions& options, ForwardingTables& tables, std::vector<TableMove>& moves) {
  Repair r(fabric, graph, ranking, options, tables);
  return r.run(moves);
}

}  // namespace railyard::routing::unicast
