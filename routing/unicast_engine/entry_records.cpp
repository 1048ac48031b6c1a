// The records of the switch graph the lanes share (EntryRecords,
// incremental.h): built once per route, part 0 (the entries' records and
// lists) by one lane and part 1 (hops, rings, orders, pods) by the other at
// the same time, then bound by each engine as views (bind_records).
#include <algorithm>
#include <vector>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

void Engine::build_records(const RoutingOptions& options, uint32_t part) {
  if (part == 0) build_entries(options);
  if (part == 1) build_hops(options);
}

void Engine::bind_records() {
  has_drains_ = rec_.has_drains;
  drained_entries_ = rec_.drained_entries;
  ent_ = rec_.ent;
  down_begin_ = rec_.down_begin;
  down_entries_ = rec_.down_entries;
  up_begin_ = rec_.up_begin;
  up_entries_ = rec_.up_entries;
  down_rec_ = rec_.down_rec;
  up_rec_ = rec_.up_rec;
  up_clean_ = rec_.up_clean;
  leaf_children_ = rec_.leaf_children;
  feeds_climber_ = rec_.feeds_climber;
  up_slot_entry_ = rec_.up_slot_entry;
  up_hop_ = rec_.up_hop;
  slot_stride_ = rec_.slot_stride;
  port_entry_ = rec_.port_entry;
  port_stride_ = rec_.port_stride;
  order_ = rec_.order;
  pod_ = rec_.pod;
  pods_ = rec_.pods;
  ranks_ = rec_.ranks;
  seq_ = rec_.seq;
  capacity_ = rec_.capacity;
  num_leaves_ = rec_.num_leaves;
  ring_leaves_ = rec_.ring_leaves;
  leaf_id_ = rec_.leaf_id;
  ring_prev_ = rec_.ring_prev;
  ring_next_ = rec_.ring_next;
  ring_id_ = rec_.ring_id;
  rings_ = rec_.rings;
}

// Part 0 of the records: the entries' records and lists, written in place.
void Engine::build_entries(const RoutingOptions& options) {
  const uint32_t n = g_.num_switches();
  const uint32_t m = g_.num_entries();
  EntryRecords& r = rec_;
  r.ent.resize(m);
  r.has_drains = false;
  r.drained_entries = 0;
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      Entry& x = r.ent[e];
      x.remote = g_.remote(e);
      x.rev = g_.rev(e);
      x.port = g_.port(e);
      x.rport = g_.port(x.rev);
      x.up = rk_.up(s, x.remote) ? 1 : 0;
      x.drained = !options.drained.empty() && options.drained[g_.link(e).value()] ? 1 : 0;
      r.has_drains = r.has_drains || x.drained;
      r.drained_entries += x.drained;
    }
  }
  // Up and down entries of every switch, each contiguous: counted, then
  // written in place.
  r.down_begin.assign(n + 1, 0);
  r.up_begin.assign(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t ups = 0;
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) ups += r.ent[e].up;
    r.up_begin[s + 1] = r.up_begin[s] + ups;
    r.down_begin[s + 1] = r.down_begin[s] + (g_.end(s) - g_.begin(s) - ups);
  }
  r.up_entries.resize(r.up_begin[n]);
  r.up_rec.resize(r.up_begin[n]);
  r.down_entries.resize(r.down_begin[n]);
  r.down_rec.resize(r.down_begin[n]);
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t u = r.up_begin[s], d = r.down_begin[s];
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      const uint32_t i = r.ent[e].up ? u++ : d++;
      (r.ent[e].up ? r.up_entries : r.down_entries)[i] = e;
      (r.ent[e].up ? r.up_rec : r.down_rec)[i] = r.ent[e];
    }
  }
  r.up_clean.resize(r.up_rec.size());
  for (size_t i = 0; i < r.up_rec.size(); ++i) r.up_clean[i] = r.up_rec[i].drained ? n : r.up_rec[i].remote;
  r.feeds_climber.assign(n, 0);
  for (uint32_t x = 0; x < n; ++x) {
    for (uint32_t i = r.up_begin[x]; i < r.up_begin[x + 1] && !r.feeds_climber[x]; ++i) {
      const uint32_t p = r.up_rec[i].remote;
      r.feeds_climber[x] = r.up_begin[p] != r.up_begin[p + 1];
    }
  }
  // Balanced by flows: ranked from the CAs, the switches with leaves below
  // them (fed()); the leaf cut bound of all-to-all, the flows a leaf sends
  // (and receives) over its up links.
  r.leaf_children.clear();
  r.capacity = 0;
  if (!options.flow_balance) return;
  if (rk_.kind == RankingKind::kFromCas) {
    r.leaf_children.assign(n, 0);
    for (uint32_t y = 0; y < n; ++y) {
      for (uint32_t i = r.down_begin[y]; i < r.down_begin[y + 1] && !r.leaf_children[y]; ++i) {
        r.leaf_children[y] = rk_.rank[r.down_rec[i].remote] == 0;
      }
    }
  }
  const uint64_t total = ca_ports_.size();
  for (uint32_t s = 0; s < n; ++s) {
    const uint64_t c = ca_begin_[s + 1] - ca_begin_[s];
    uint64_t u = 0;
    for (uint32_t i = r.up_begin[s]; i < r.up_begin[s + 1]; ++i) u += r.up_rec[i].drained ? 0 : 1;
    if (c == 0 || u == 0) continue;
    r.capacity = std::max(r.capacity, (c * (total - c) + u - 1) / u);
  }
}

// Part 1 of the records (balanced by flows): the hops by slot and by port,
// the leaves' rings, the top-down order and the pods. From the graph, the
// ranking and this lane's statics alone (part 0 is being built meanwhile).
void Engine::build_hops(const RoutingOptions& options) {
  EntryRecords& r = rec_;
  r.order = rk_.order;
  if (!options.flow_balance) return;
  const uint32_t n = g_.num_switches();
  const uint32_t m = g_.num_entries();
  r.slot_stride = 1;
  for (uint32_t k : slots_up_) r.slot_stride = std::max(r.slot_stride, k);
  r.up_slot_entry.assign(static_cast<size_t>(n) * r.slot_stride, kNone);
  r.port_stride = 1;
  for (uint32_t e = 0; e < m; ++e) r.port_stride = std::max<uint32_t>(r.port_stride, g_.port(e) + 1u);
  r.port_entry.assign(static_cast<size_t>(n) * r.port_stride, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
      r.port_entry[static_cast<size_t>(s) * r.port_stride + g_.port(e)] = e;
      if (!rk_.up(s, g_.remote(e))) continue;
      uint32_t& at = r.up_slot_entry[static_cast<size_t>(s) * r.slot_stride + g_.port(e) - base_up_[rk_.rank[s]]];
      if (at == kNone) at = e;  // the first up entry of the slot, in entry order
    }
  }
  auto drained = [&](uint32_t e) { return !options.drained.empty() && options.drained[g_.link(e).value()] ? 1 : 0; };
  r.up_hop.resize(r.up_slot_entry.size());
  for (size_t i = 0; i < r.up_slot_entry.size(); ++i) {
    const uint32_t e = r.up_slot_entry[i];
    if (e == kNone) {
      r.up_hop[i] = UpHop{};
      continue;
    }
    const uint32_t parent = g_.remote(e), back = g_.rev(e);
    const uint32_t x = static_cast<uint32_t>(i / r.slot_stride);
    r.up_hop[i] = UpHop{parent, back, static_cast<uint16_t>(g_.port(back) - base_down_[rk_.rank[parent]]),
                        static_cast<uint8_t>(rk_.up(parent, x) ? 1 : 0), static_cast<uint8_t>(drained(back))};
  }
  // Leaves in ring order (rail, then leaf order; ties by GUID) and their
  // ring neighbours: a rail-aligned shift sends from a leaf to one leaf of
  // its ring and the next, and a leaf receives from one and the previous.
  std::vector<uint32_t>& leaves = r.ring_leaves;
  leaves.clear();
  for (uint32_t s = 0; s < n; ++s) {
    if (rk_.rank[s] == 0 && ca_begin_[s] != ca_begin_[s + 1]) leaves.push_back(s);
  }
  sort_into_rings(options, leaves);
  r.num_leaves = static_cast<uint32_t>(leaves.size());
  r.leaf_id.assign(n, kNone);
  r.ring_prev.assign(r.num_leaves, 0);
  r.ring_next.assign(r.num_leaves, 0);
  r.ring_id.assign(r.num_leaves, 0);
  r.rings = 0;
  for (uint32_t i = 0; i < r.num_leaves; ++i) r.leaf_id[leaves[i]] = i;
  for (uint32_t i = 0, ring = 0; i < r.num_leaves; ++ring) {
    uint32_t j = i;
    while (j < r.num_leaves && ring_of(options, leaves[j]) == ring_of(options, leaves[i])) ++j;
    for (uint32_t a = i; a < j; ++a) {
      r.ring_id[a] = ring;
      r.ring_next[a] = a + 1 < j ? a + 1 : i;
      r.ring_prev[a] = a > i ? a - 1 : j - 1;
    }
    i = j;
    r.rings = ring + 1;
  }
  // Ranked from the CAs no link joins two switches of one rank, so any
  // order by rank is top-down: by GUID within a rank, the flows are taken
  // in an order that does not depend on the fabric's node order.
  if (rk_.kind == RankingKind::kFromCas) {  // rank down, then GUID down: by_guid_ backwards, rank by rank
    const uint32_t top = n == 0 ? 0 : *std::max_element(rk_.rank.begin(), rk_.rank.end());
    r.order.clear();
    for (uint32_t k = top + 1; k-- > 0;) {
      for (uint32_t i = n; i-- > 0;) {
        if (rk_.rank[by_guid_[i]] == k) r.order.push_back(by_guid_[i]);
      }
    }
  }
  // Pods (three levels and more, ranked from the CAs): the leaves and the
  // spines joined through leaf-spine links; the switches above get the
  // last number (pods counts it).
  r.pod.clear();
  r.pods = r.ranks = 0;
  if (rk_.kind == RankingKind::kFromCas && rk_.levels >= 3) {
    std::vector<uint32_t> root(n);
    for (uint32_t s = 0; s < n; ++s) root[s] = s;
    auto find = [&](uint32_t x) {
      while (root[x] != x) x = root[x] = root[root[x]];
      return x;
    };
    for (uint32_t s = 0; s < n; ++s) {
      if (rk_.rank[s] != 0) continue;
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
        const uint32_t y = g_.remote(e);
        if (rk_.up(s, y) && rk_.rank[y] == 1) root[find(y)] = find(s);
      }
    }
    r.pod.assign(n, kNone);
    std::vector<uint32_t> id(n, kNone);
    uint32_t pods = 0;
    for (uint32_t s : by_guid_) {
      if (rk_.rank[s] > 1) continue;
      uint32_t& i = id[find(s)];
      if (i == kNone) i = pods++;
      r.pod[s] = i;
    }
    for (uint32_t& p : r.pod) p = p == kNone ? pods : p;
    r.pods = pods + 1;
    r.ranks = 1 + *std::max_element(rk_.rank.begin(), rk_.rank.end());
  }
  r.seq.assign(n, 0);
  std::vector<uint32_t> next(slots_up_.size() + 1, 0);
  for (uint32_t s : by_guid_) r.seq[s] = next[rk_.rank[s]]++;
}

}  // namespace railyard::routing::unicast
