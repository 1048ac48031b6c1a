#include "routing/unicast_engine.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <numeric>
#include <span>
#include <thread>

#include "routing/switch_graph.h"

namespace railyard::routing {

namespace {

constexpr uint16_t kInf = 0xFFFF;
constexpr uint32_t kNone = SwitchGraph::kNone;

// How a switch forwards toward the current target switch.
enum class Mode : uint8_t {
  kUnreachable,
  kDown,       // tier 1: can reach the target going only down, without drained links
  kUp,         // tier 1: climbs first, without drained links
  kDownDrain,  // tier 2: only through drained links, going down
  kUpDrain,    // tier 2: only through drained links, climbing first
};

bool is_down(Mode m) { return m == Mode::kDown || m == Mode::kDownDrain; }
bool is_tier1(Mode m) { return m == Mode::kDown || m == Mode::kUp; }

class Engine {
 public:
  Engine(const Fabric& fabric, const RoutingOptions& options, const SwitchGraph& graph, const Ranking& ranking,
         ForwardingTables& tables, RoutingReport& report)
      : fabric_(fabric), g_(graph), rk_(ranking), tables_(tables), report_(report) {
    const uint32_t n = g_.num_switches();
    const uint32_t m = g_.num_entries();
    drained_entry_.assign(m, 0);
    if (!options.drained.empty()) {
      for (uint32_t e = 0; e < m; ++e) {
        if (options.drained[g_.link(e).value()]) {
          drained_entry_[e] = 1;
          has_drains_ = true;
        }
      }
    }
    drained_links_ = options.drained;
    cnt_.assign(m, 0);
    cnt2_.assign(m, 0);
    sec_.assign(m, 0);
    up_dir_.assign(m, 0);
    for (uint32_t s = 0; s < n; ++s) {
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) up_dir_[e] = rk_.up(s, g_.remote(e)) ? 1 : 0;
    }
    clean_only_.assign(n, 0);
    cand_stamp_.assign(n, 0);
    cand_first_.assign(n, 0);
    cand_count_.assign(n, 0);
    cursor_.assign(n, 0);
    dd1_.assign(n, kInf);
    dist1_.assign(n, kInf);
    ddx_.assign(n, kInf);
    mode_.assign(n, Mode::kUnreachable);
    val_.assign(n, kInf);
    set_stamp_.assign(n, 0);
    mark_stamp_.assign(n, 0);
    best_.assign(n, 0);
    queue_.reserve(n);
    batch_.assign(static_cast<size_t>(kBatch) * n, ForwardingTables::kNoPath);
    build_ca_lists();
    compute_slots();
    by_guid_.resize(n);
    for (uint32_t s = 0; s < n; ++s) by_guid_[s] = s;
    std::sort(by_guid_.begin(), by_guid_.end(), [&](uint32_t a, uint32_t b) {
      return fabric_.node(g_.node(a)).guid < fabric_.node(g_.node(b)).guid;
    });
    guid_rank_.resize(n);
    for (uint32_t i = 0; i < n; ++i) guid_rank_[by_guid_[i]] = i;
    // Up and down entries of every switch, each contiguous.
    down_begin_.assign(n + 1, 0);
    up_begin_.assign(n + 1, 0);
    for (uint32_t s = 0; s < n; ++s) {
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
        (up_dir_[e] ? up_entries_ : down_entries_).push_back(e);
      }
      down_begin_[s + 1] = static_cast<uint32_t>(down_entries_.size());
      up_begin_[s + 1] = static_cast<uint32_t>(up_entries_.size());
    }
  }

  // Routes the leaves of one lane (a contiguous share of the leaf order) and
  // every lanes-th switch LID. Lanes share nothing but the table, where they
  // write disjoint LIDs.
  void run(const RoutingOptions& options, uint32_t lane, uint32_t lanes) {
    const uint32_t n = g_.num_switches();
    // Targets with CAs, in leaf order (rail, then leaf); their CAs in port order.
    std::vector<uint32_t> leaves;
    for (uint32_t s = 0; s < n; ++s) {
      if (ca_begin_[s] != ca_begin_[s + 1]) leaves.push_back(s);
    }
    if (!options.leaf_order_key.empty()) {
      std::stable_sort(leaves.begin(), leaves.end(), [&](uint32_t a, uint32_t b) {
        return options.leaf_order_key[a] < options.leaf_order_key[b];
      });
    }
    const size_t first = leaves.size() * lane / lanes, last = leaves.size() * (lane + 1) / lanes;
    target_seq_ = static_cast<uint32_t>(first);
    for (size_t li = first; li < last; ++li) {
      uint32_t t = leaves[li];
      prepare_target(t);
      ++target_seq_;
      for (uint32_t i = ca_begin_[t]; i < ca_begin_[t + 1]; ++i) {
        const Port& p = fabric_.port(ca_ports_[i]);
        uint8_t leaf_port = g_.attach_port(ca_ports_[i]);
        bool last_hop_drained = !drained_links_.empty() && drained_links_[p.link.value()];
        for (uint32_t k = 0; k < (1u << p.lmc); ++k) {
          Lid lid{static_cast<uint16_t>(p.lid.value + k)};
          if (!lid.valid()) continue;
          route_destination(lid, t, leaf_port, (leaf_port - base_down_[rk_.rank[t]]) * (1u << p.lmc) + k);
          account_ca_destination(lid, ca_ports_[i], last_hop_drained);
        }
      }
    }
    // CA ports hanging off nothing: every other CA port misses them.
    for (PortId p : lane == 0 ? std::span<const PortId>(detached_) : std::span<const PortId>()) {
      const Port& port = fabric_.port(p);
      for (uint32_t k = 0; k < (1u << port.lmc); ++k) {
        Lid lid{static_cast<uint16_t>(port.lid.value + k)};
        if (!lid.valid()) continue;
        uint32_t sources = total_ca_ports_ - 1;
        if (sources == 0) continue;
        report_.unreachable_pairs += sources;
        report_.unreachable.push_back({lid, port.node, sources, first_other_ca(p)});
      }
    }
    // Switch LIDs (management traffic) after all CAs, so they do not disturb
    // the CA balance; taken in GUID order, every lanes-th to this lane, so the
    // result does not depend on the order the fabric lists its nodes in.
    for (uint32_t r = lane; r < n; r += lanes) {
      const uint32_t t = by_guid_[r];
      const Port& p0 = fabric_.port(fabric_.node(g_.node(t)).first_port);
      if (!p0.lid.valid()) continue;
      prepare_target(t);
      for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
        Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
        // Slot from the switch's GUID rank, not its index: the same fabric read
        // in another node order (OpenSM's subnet vs ibnetdiscover's file) must
        // get the same tables.
        if (lid.valid()) route_destination(lid, t, 0, guid_rank_[t] + k);
      }
    }
  }

 private:
  void build_ca_lists() {
    const uint32_t n = g_.num_switches();
    ca_begin_.assign(n + 1, 0);
    std::vector<std::pair<uint32_t, PortId>> attached;
    for (NodeId ca : fabric_.cas()) {
      const Node& nd = fabric_.node(ca);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        PortId pid(nd.first_port.value() + p);
        const Port& port = fabric_.port(pid);
        if (!port.lid.valid()) continue;  // a port the SM never addressed
        ++total_ca_ports_;
        uint32_t sw = port.remote.valid() ? g_.attach_switch(pid) : kNone;
        if (sw == kNone) {
          detached_.push_back(pid);
        } else {
          attached.emplace_back(sw, pid);
        }
      }
    }
    // By switch, then by the switch's port number.
    std::stable_sort(attached.begin(), attached.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return g_.attach_port(a.second) < g_.attach_port(b.second);
    });
    ca_ports_.reserve(attached.size());
    for (auto& [sw, pid] : attached) {
      ++ca_begin_[sw + 1];
      ca_ports_.push_back(pid);
    }
    for (uint32_t s = 0; s < n; ++s) ca_begin_[s + 1] += ca_begin_[s];
    report_.ca_ports = total_ca_ports_;
  }

  // Lowest up and down port numbers per rank, and the number of up slots.
  void compute_slots() {
    uint32_t ranks = 0;
    for (uint32_t r : rk_.rank) ranks = std::max(ranks, r + 1);
    base_up_.assign(ranks, 255);
    base_down_.assign(ranks, 255);
    slots_up_.assign(ranks, 0);
    for (uint32_t s = 0; s < g_.num_switches(); ++s) {
      uint32_t r = rk_.rank[s];
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
        auto& base = rk_.up(s, g_.remote(e)) ? base_up_ : base_down_;
        base[r] = std::min<uint32_t>(base[r], g_.port(e));
      }
      for (uint32_t i = ca_begin_[s]; i < ca_begin_[s + 1]; ++i) {
        base_down_[r] = std::min<uint32_t>(base_down_[r], g_.attach_port(ca_ports_[i]));
      }
    }
    for (uint32_t s = 0; s < g_.num_switches(); ++s) {
      uint32_t r = rk_.rank[s];
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
        if (rk_.up(s, g_.remote(e))) slots_up_[r] = std::max<uint32_t>(slots_up_[r], g_.port(e) - base_up_[r] + 1);
      }
    }
  }

  NodeId first_other_ca(PortId not_this) const {
    for (PortId p : ca_ports_) {
      if (p != not_this) return fabric_.port(p).node;
    }
    return NodeId();
  }

  // Modes and distances of every switch toward target t. Candidate next hops
  // are derived on demand (cand_ok) and listed lazily (candidates()): most
  // switches follow a chain or cone and never need their list.
  void prepare_target(uint32_t t) {
    ++target_stamp_;
    cand_.clear();
    std::fill(dd1_.begin(), dd1_.end(), kInf);

    // Tier 1, pure-down distance: BFS from t over parent links (reversed down links).
    queue_.clear();
    dd1_[t] = 0;
    queue_.push_back(t);
    for (size_t h = 0; h < queue_.size(); ++h) {
      uint32_t x = queue_[h];
      for (uint32_t i = up_begin_[x]; i < up_begin_[x + 1]; ++i) {
        uint32_t e = up_entries_[i];
        uint32_t p = g_.remote(e);
        if (drained_entry_[e] || dd1_[p] != kInf) continue;
        dd1_[p] = static_cast<uint16_t>(dd1_[x] + 1);
        queue_.push_back(p);
      }
    }
    // Tier 1, full distance, top-down (parents come first in rk_.order).
    bool any_missing = false;
    down_list_.clear();
    up_list_.clear();
    for (uint32_t s : rk_.order) {
      uint16_t d = dd1_[s];
      if (d == kInf) {
        for (uint32_t i = up_begin_[s]; i < up_begin_[s + 1]; ++i) {
          uint32_t e = up_entries_[i];
          uint16_t du = dist1_[g_.remote(e)];
          if (du < d - 1 && !drained_entry_[e]) d = static_cast<uint16_t>(du + 1);
        }
      }
      dist1_[s] = d;
      if (d != kInf) {
        mode_[s] = dd1_[s] != kInf ? Mode::kDown : Mode::kUp;
        val_[s] = d;
        if (s != t) (dd1_[s] != kInf ? down_list_ : up_list_).push_back(s);
      } else {
        any_missing = true;
        mode_[s] = Mode::kUnreachable;
        val_[s] = kInf;
      }
    }
    if (has_drains_ && any_missing) prepare_tier2();
    target_ = t;
  }

  // Tier 2 (drained links allowed) for switches tier 1 cannot serve. Entering
  // a tier-1 switch going down is legal only if it goes down itself.
  void prepare_tier2() {
    for (auto it = rk_.order.rbegin(); it != rk_.order.rend(); ++it) {  // bottom-up
      uint32_t s = *it;
      if (dist1_[s] != kInf) {
        ddx_[s] = dd1_[s];
        continue;
      }
      uint16_t d = kInf;
      for (uint32_t i = down_begin_[s]; i < down_begin_[s + 1]; ++i) {
        uint32_t c = g_.remote(down_entries_[i]);
        if (ddx_[c] != kInf) d = std::min<uint16_t>(d, static_cast<uint16_t>(ddx_[c] + 1));
      }
      ddx_[s] = d;
    }
    for (uint32_t s : rk_.order) {  // top-down
      if (dist1_[s] != kInf) continue;
      if (ddx_[s] != kInf) {
        mode_[s] = Mode::kDownDrain;
        val_[s] = ddx_[s];
      } else {
        uint16_t d = kInf;
        for (uint32_t i = up_begin_[s]; i < up_begin_[s + 1]; ++i) {
          uint32_t u = g_.remote(up_entries_[i]);
          if (val_[u] != kInf) d = std::min<uint16_t>(d, static_cast<uint16_t>(val_[u] + 1));
        }
        mode_[s] = d == kInf ? Mode::kUnreachable : Mode::kUpDrain;
        val_[s] = d;
      }
      if (mode_[s] == Mode::kUnreachable) continue;
      (is_down(mode_[s]) ? down_list_ : up_list_).push_back(s);
      // Prefer undrained links when the switch has any usable one.
      clean_only_[s] = 0;
      bool down = is_down(mode_[s]);
      uint32_t b = down ? down_begin_[s] : up_begin_[s], end = down ? down_begin_[s + 1] : up_begin_[s + 1];
      for (uint32_t i = b; i < end; ++i) {
        uint32_t e = down ? down_entries_[i] : up_entries_[i];
        if (!drained_entry_[e] && cand_ok(s, e)) {
          clean_only_[s] = 1;
          break;
        }
      }
    }
  }

  // Whether entry e of switch s is a legal shortest next hop toward the target.
  bool cand_ok(uint32_t s, uint32_t e) const {
    Mode ms = mode_[s];
    if (ms == Mode::kUnreachable) return false;
    bool down = is_down(ms);
    if (up_dir_[e] == down) return false;  // wrong direction
    uint32_t r = g_.remote(e);
    bool tier1 = is_tier1(ms);
    if (tier1 && (drained_entry_[e] || !is_tier1(mode_[r]))) return false;  // tier 1 stays clean
    if (val_[r] == kInf || val_[r] + 1 != val_[s]) return false;
    if (down && !is_down(mode_[r])) return false;  // entering going down: it must go down too
    if (!tier1 && clean_only_[s] && drained_entry_[e]) return false;
    return true;
  }

  // The candidate list of s for the current target: [first, first + count) of cand_.
  std::pair<uint32_t, uint32_t> candidates(uint32_t s) {
    if (cand_stamp_[s] != target_stamp_) {
      cand_stamp_[s] = target_stamp_;
      cand_first_[s] = static_cast<uint32_t>(cand_.size());
      bool down = is_down(mode_[s]);
      uint32_t b = down ? down_begin_[s] : up_begin_[s], end = down ? down_begin_[s + 1] : up_begin_[s + 1];
      for (uint32_t i = b; i < end; ++i) {
        uint32_t e = down ? down_entries_[i] : up_entries_[i];
        if (cand_ok(s, e)) cand_.push_back(e);
      }
      cand_count_[s] = static_cast<uint32_t>(cand_.size()) - cand_first_[s];
    }
    return {cand_first_[s], cand_count_[s]};
  }

  // Slot of an entry of switch x: its port number counted from the lowest up
  // (or down) port of x's rank, so a missing cable leaves a gap instead of
  // shifting every later port (the nominal D-mod-K position).
  uint32_t up_slot(uint32_t x, uint32_t e) const { return g_.port(e) - base_up_[rk_.rank[x]]; }
  uint32_t down_slot(uint32_t x, uint32_t e) const { return g_.port(e) - base_down_[rk_.rank[x]]; }

  // Climbs from x0 choosing at each level the parent link that carries the
  // fewest destinations down, preferring the nominal slot `pref` (D-mod-K)
  // unless it already carries more than one above the least loaded. The
  // secondary chain counts its own load on top and avoids parents already set.
  void climb(uint32_t x0, uint32_t pref, bool primary, std::vector<uint32_t>& chain) {
    chain.clear();
    chain.push_back(x0);
    for (uint32_t x = x0;;) {
      const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
      const uint32_t want = pref % k;
      uint32_t best = kNone, best_count = 0, best_dist = 0;
      uint32_t preferred = kNone, min_count = UINT32_MAX;
      for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
        uint32_t er = g_.rev(e);
        if (!up_dir_[e] || !cand_ok(g_.remote(e), er)) continue;
        if (set_stamp_[g_.remote(e)] == stamp_) continue;  // already routed (primary chain)
        // A clean switch's traffic never comes down through a drained link.
        if (is_tier1(mode_[x]) && !is_tier1(mode_[g_.remote(e)])) continue;
        uint32_t count = primary ? cnt_[er] : cnt_[er] + sec_[er];
        uint32_t slot = up_slot(x, e);
        uint32_t dist = (slot + k - want) % k;
        if (slot == want && preferred == kNone) preferred = er;
        min_count = std::min(min_count, count);
        if (best == kNone || count < best_count || (count == best_count && dist < best_dist)) {
          best = er;
          best_count = count;
          best_dist = dist;
        }
      }
      if (best == kNone) break;
      if (preferred != kNone) {
        uint32_t pc = primary ? cnt_[preferred] : cnt_[preferred] + sec_[preferred];
        if (pc <= min_count + 1) best = preferred;
      }
      uint32_t parent = owner(best);  // best is the parent's entry toward x
      put(parent, g_.port(best));
      ++(primary ? cnt_ : sec_)[best];
      set_stamp_[parent] = stamp_;
      chain.push_back(parent);
      pref = down_slot(parent, best);
      x = parent;
    }
  }

  // Whether the up link in nominal slot `pref` of x is a usable parent link
  // (true when x has no parent at all).
  bool preferred_present(uint32_t x, uint32_t pref) const {
    const uint32_t k = std::max<uint32_t>(1, slots_up_[rk_.rank[x]]);
    bool any = false;
    for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
      if (!up_dir_[e] || !cand_ok(g_.remote(e), g_.rev(e))) continue;
      any = true;
      if (up_slot(x, e) == pref % k) return true;
    }
    return !any;
  }

  // Cone of a chain: from its top down, every switch not yet routed that can
  // climb to an aligned switch does, over the least-loaded parallel link
  // (`load`: the primary and secondary cones keep separate counts so that the
  // secondary never shifts the primary's rotation).
  void push_cone(const std::vector<uint32_t>& chain, std::vector<uint32_t>& load) {
    queue_.assign(chain.rbegin(), chain.rend());
    for (size_t h = 0; h < queue_.size(); ++h) {
      uint32_t a = queue_[h];
      fresh_.clear();
      for (uint32_t i = down_begin_[a]; i < down_begin_[a + 1]; ++i) {
        uint32_t e = down_entries_[i];
        uint32_t c = g_.remote(e);
        if (set_stamp_[c] == stamp_) continue;
        uint32_t er = g_.rev(e);
        if (!cand_ok(c, er)) continue;  // c must climb to a
        if (mark_stamp_[c] != stamp_) {
          mark_stamp_[c] = stamp_;
          best_[c] = er;
          fresh_.push_back(c);
        } else if (load[er] < load[best_[c]]) {
          best_[c] = er;
        }
      }
      for (uint32_t c : fresh_) {
        put(c, g_.port(best_[c]));
        ++load[best_[c]];
        set_stamp_[c] = stamp_;
        queue_.push_back(c);
      }
    }
  }

  void route_destination(Lid lid, uint32_t t, uint8_t port_at_target, uint32_t slot) {
    ++stamp_;
    lid_ = lid;
    begin_column(lid);
    put(t, port_at_target);
    set_stamp_[t] = stamp_;
    ++report_.lids_routed;

    // Primary chain: where this destination's traffic comes down. Secondary
    // chain: where it comes down for switches that cannot reach the primary
    // (a missing or drained link), so displaced traffic for one destination
    // lands on one link, not wherever a counter happens to point.
    if (!preferred_present(t, slot)) {
      // The destination's nominal link into its leaf is missing: no chain, so
      // that every source spreads its traffic over the remaining links
      // (round-robin below) instead of piling it onto one substitute.
      chain_.assign(1, t);
      chain2_.assign(1, t);
    } else {
    climb(t, slot, true, chain_);
    // The secondary's nominal slot is offset by the leaf's sequence number, so
    // that a source missing one up link spreads the destinations it cannot
    // send through it over all its other links, not onto the next one.
    const uint32_t k = std::max<uint32_t>(2, slots_up_[rk_.rank[t]]);
    climb(t, slot + 1 + target_seq_ % (k - 1), false, chain2_);
    }

    // Other switches that go down: least-loaded of their down links, on a
    // separate counter so that these backup routes do not steer the chain.
    for (uint32_t s : down_list_) {
      if (set_stamp_[s] == stamp_) continue;
      auto [first, count] = candidates(s);
      if (count == 0) continue;
      uint32_t best = cand_[first];
      for (uint32_t i = first + 1; i < first + count; ++i) {
        if (cnt2_[cand_[i]] < cnt2_[best]) best = cand_[i];
      }
      put(s, g_.port(best));
      ++cnt2_[best];
      set_stamp_[s] = stamp_;
    }

    push_cone(chain_, cnt_);
    push_cone(chain2_, sec_);

    // Switches outside the cone (missing or drained links): any shortest up
    // link, round-robin.
    for (uint32_t s : up_list_) {
      if (set_stamp_[s] == stamp_) continue;
      auto [first, k] = candidates(s);
      if (k == 0) continue;
      // Offset by the switch index: cursors of like switches advance in step,
      // and the sources of one destination must not all pick the same slot.
      uint32_t e = cand_[first + ((cursor_[s]++ + guid_rank_[s]) % k)];
      put(s, g_.port(e));
    }
  }

  // Entries of one destination are produced switch by switch, i.e. one byte
  // in every row of the table: written directly that is a cache (and TLB)
  // miss per entry. They go to a destination-major batch instead, flushed
  // row by row.
  static constexpr uint32_t kBatch = 64;
  void begin_column(Lid lid) {
    if (batch_lids_.size() == kBatch) flush();
    batch_lids_.push_back(lid);
    column_ = batch_.data() + (batch_lids_.size() - 1) * g_.num_switches();
    std::fill(column_, column_ + g_.num_switches(), ForwardingTables::kNoPath);
  }
  void put(uint32_t s, uint8_t port) { column_[s] = port; }

 public:
  void flush() {
    const uint32_t n = g_.num_switches();
    for (uint32_t s = 0; s < n; ++s) {
      auto row = tables_.row(s);
      for (size_t b = 0; b < batch_lids_.size(); ++b) row[batch_lids_[b].value] = batch_[b * n + s];
    }
    batch_lids_.clear();
  }

 private:
  // Switch owning entry e.
  uint32_t owner(uint32_t e) const { return g_.remote(g_.rev(e)); }

  void account_ca_destination(Lid lid, PortId dest_port, bool last_hop_drained) {
    uint32_t unreachable = static_cast<uint32_t>(detached_.size());
    NodeId example_unreach = detached_.empty() ? NodeId() : fabric_.port(detached_.front()).node;
    uint32_t drained = 0;
    NodeId example_drained;
    const uint32_t n = g_.num_switches();
    for (uint32_t s = 0; s < n; ++s) {
      uint32_t k = ca_begin_[s + 1] - ca_begin_[s];
      if (k == 0) continue;
      Mode m = mode_[s];
      if (m == Mode::kUnreachable) {
        unreachable += k;
        if (!example_unreach.valid()) example_unreach = fabric_.port(ca_ports_[ca_begin_[s]]).node;
      } else if (!is_tier1(m) || last_hop_drained) {
        drained += k;
        if (!example_drained.valid()) example_drained = fabric_.port(ca_ports_[ca_begin_[s]]).node;
      }
    }
    NodeId dest = fabric_.port(dest_port).node;
    if (last_hop_drained && drained > 0) --drained;  // the destination itself
    if (unreachable > 0) {
      report_.unreachable_pairs += unreachable;
      report_.unreachable.push_back({lid, dest, unreachable, example_unreach});
    }
    if (drained > 0) {
      report_.drained_pairs += drained;
      report_.through_drained.push_back({lid, dest, drained, example_drained});
    }
  }

  const Fabric& fabric_;
  const SwitchGraph& g_;
  const Ranking& rk_;
  ForwardingTables& tables_;
  RoutingReport& report_;

  bool has_drains_ = false;
  std::vector<uint8_t> drained_links_;
  std::vector<uint8_t> drained_entry_;
  std::vector<uint32_t> cnt_;   // per entry: destinations routed out of it by chain and cone
  std::vector<uint32_t> cnt2_;  // per entry: backup down routes
  std::vector<uint32_t> sec_;   // per entry: secondary-chain destinations
  std::vector<uint32_t> base_up_, base_down_, slots_up_;  // per rank
  std::vector<uint32_t> down_begin_, down_entries_;       // per switch, CSR
  std::vector<uint32_t> up_begin_, up_entries_;
  Lid lid_;
  uint32_t target_seq_ = 0;
  std::vector<uint32_t> guid_rank_;  // per switch: rank of its GUID
  std::vector<uint32_t> by_guid_;    // switches in GUID order
  std::vector<uint8_t> batch_;
  std::vector<Lid> batch_lids_;
  uint8_t* column_ = nullptr;
  std::vector<uint32_t> cursor_;
  std::vector<uint8_t> up_dir_;      // per entry: 1 = toward a higher switch
  std::vector<uint8_t> clean_only_;  // per switch, tier 2: skip drained candidates

  // Per target.
  uint32_t target_ = kNone;
  std::vector<uint16_t> dd1_, dist1_, ddx_, val_;
  std::vector<Mode> mode_;
  uint32_t target_stamp_ = 0;
  std::vector<uint32_t> cand_stamp_, cand_first_, cand_count_, cand_;
  std::vector<uint32_t> down_list_, up_list_;

  // Per destination.
  uint32_t stamp_ = 0;
  std::vector<uint32_t> set_stamp_, mark_stamp_, best_;
  std::vector<uint32_t> queue_, chain_, chain2_, fresh_;

  // CA ports by switch.
  std::vector<uint32_t> ca_begin_;
  std::vector<PortId> ca_ports_;
  std::vector<PortId> detached_;
  uint32_t total_ca_ports_ = 0;
};

}  // namespace

Result<RoutingResult> route_unicast(const Fabric& fabric, const RoutingOptions& options) {
  if (!fabric.has_lids()) return Error{"the fabric has no LIDs; assign them first (assign_lids)"};
  if (!options.drained.empty() && options.drained.size() != fabric.num_links()) {
    return Error{"drained mask has " + std::to_string(options.drained.size()) + " entries for " +
                 std::to_string(fabric.num_links()) + " links"};
  }
  SwitchGraph graph(fabric);
  if (!options.leaf_order_key.empty() && options.leaf_order_key.size() != graph.num_switches()) {
    return Error{"leaf order has " + std::to_string(options.leaf_order_key.size()) + " keys for " +
                 std::to_string(graph.num_switches()) + " switches"};
  }
  std::vector<uint32_t> roots;
  for (NodeId r : options.roots) {
    uint32_t s = graph.switch_index(r);
    if (s == SwitchGraph::kNone) return Error{"root '" + std::string(fabric.name(r)) + "' is not a switch"};
    roots.push_back(s);
  }
  Ranking ranking = rank_switches(graph, roots);

  RoutingResult out;
  out.tables = ForwardingTables(graph.num_switches(), fabric.max_lid().value + 1u);
  out.report.ranking = ranking.kind;
  out.report.levels = ranking.levels;
  out.report.roots = static_cast<uint32_t>(ranking.roots.size());
  out.report.switches = graph.num_switches();
  // Two lanes, always, so the tables do not depend on the machine; each runs
  // on its own thread. Within a lane destinations are balanced by the lane's
  // counters; on a healthy tree the nominal slots decide and the lanes agree
  // with a single pass exactly.
  constexpr uint32_t kLanes = 2;
  std::vector<RoutingReport> reports(kLanes);
  std::vector<std::thread> threads;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  for (uint32_t lane = 0; lane < kLanes; ++lane) {
    threads.emplace_back([&, lane] {
      try {
        Engine engine(fabric, options, graph, ranking, out.tables, reports[lane]);
        engine.run(options, lane, kLanes);
        engine.flush();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        failure = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  for (const RoutingReport& r : reports) {
    out.report.ca_ports = std::max(out.report.ca_ports, r.ca_ports);
    out.report.lids_routed += r.lids_routed;
    out.report.unreachable_pairs += r.unreachable_pairs;
    out.report.drained_pairs += r.drained_pairs;
    out.report.unreachable.insert(out.report.unreachable.end(), r.unreachable.begin(), r.unreachable.end());
    out.report.through_drained.insert(out.report.through_drained.end(), r.through_drained.begin(),
                                      r.through_drained.end());
  }
  auto by_lid = [](const DestinationIssue& a, const DestinationIssue& b) { return a.lid < b.lid; };
  std::sort(out.report.unreachable.begin(), out.report.unreachable.end(), by_lid);
  std::sort(out.report.through_drained.begin(), out.report.through_drained.end(), by_lid);
  return out;
}

}  // namespace railyard::routing
