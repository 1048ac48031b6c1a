#include "routing/ar_groups.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "routing/ranking.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

namespace {

constexpr uint16_t kFar = 0xFFFF;  // unreachable, in 16-bit hop counts

// A set of port numbers 0..255.
using PortSet = std::array<uint64_t, 4>;

void add_port(PortSet& s, uint8_t p) { s[p / 64] |= uint64_t{1} << (p % 64); }
bool has_port(const PortSet& s, uint8_t p) { return s[p / 64] >> (p % 64) & 1; }
uint32_t count_ports(const PortSet& s) {
  uint32_t c = 0;
  for (uint64_t w : s) c += static_cast<uint32_t>(__builtin_popcountll(w));
  return c;
}

struct PortSetHash {
  size_t operator()(const PortSet& s) const noexcept {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint64_t w : s) h = (h ^ w) * 0xBF58476D1CE4E5B9ull + (h >> 29);
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

// Per switch: distinct port sets in order of first use, with their use counts.
struct SwitchSets {
  std::unordered_map<PortSet, uint32_t, PortSetHash> index;
  std::vector<PortSet> sets;
  std::vector<uint32_t> uses;

  uint32_t intern(const PortSet& s) {
    auto [it, fresh] = index.try_emplace(s, static_cast<uint32_t>(sets.size()));
    if (fresh) {
      sets.push_back(s);
      uses.push_back(0);
    }
    return it->second;
  }
};

// Legal shortest next hops toward one target switch, the engine's tier-1
// rules (unicast_engine.cpp, prepare_target) without its balancing.
class TargetSets {
 public:
  TargetSets(const SwitchGraph& g, const Ranking& rk, std::span<const uint8_t> drained) : g_(g), rk_(rk) {
    const uint32_t m = g.num_entries();
    up_.assign(m, 0);
    usable_.assign(m, 1);
    for (uint32_t s = 0; s < g.num_switches(); ++s) {
      for (uint32_t e = g.begin(s); e < g.end(s); ++e) {
        up_[e] = rk.up(s, g.remote(e)) ? 1 : 0;
        if (!drained.empty() && drained[g.link(e).value()]) usable_[e] = 0;
      }
    }
    dd_.assign(g.num_switches(), kFar);
    dist_.assign(g.num_switches(), kFar);
    sets_.assign(g.num_switches(), PortSet{});
  }

  // Fills set(s) for every switch s != t; set(t) is empty.
  void prepare(uint32_t t) {
    std::fill(dd_.begin(), dd_.end(), kFar);
    // Pure-down distance: BFS from t against the direction of down links.
    queue_.clear();
    dd_[t] = 0;
    queue_.push_back(t);
    for (size_t h = 0; h < queue_.size(); ++h) {
      uint32_t x = queue_[h];
      for (uint32_t e = g_.begin(x); e < g_.end(x); ++e) {
        uint32_t p = g_.remote(e);
        if (!up_[e] || !usable_[e] || dd_[p] != kFar) continue;
        dd_[p] = static_cast<uint16_t>(dd_[x] + 1);
        queue_.push_back(p);
      }
    }
    // Full distance, top-down: parents come first in rk_.order.
    for (uint32_t s : rk_.order) {
      uint16_t d = dd_[s];
      if (d == kFar) {
        for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
          if (!up_[e] || !usable_[e]) continue;
          uint16_t du = dist_[g_.remote(e)];
          if (du != kFar && du + 1 < d) d = static_cast<uint16_t>(du + 1);
        }
      }
      dist_[s] = d;
    }
    for (uint32_t s = 0; s < g_.num_switches(); ++s) {
      PortSet& set = sets_[s];
      set = PortSet{};
      if (s == t || dist_[s] == kFar) continue;
      const bool down = dd_[s] != kFar;  // can go down: must go down
      for (uint32_t e = g_.begin(s); e < g_.end(s); ++e) {
        if (!usable_[e] || up_[e] == down) continue;
        uint32_t r = g_.remote(e);
        if ((down ? dd_[r] : dist_[r]) + 1 == (down ? dd_[s] : dist_[s])) add_port(set, g_.port(e));
      }
    }
  }

  const PortSet& set(uint32_t s) const { return sets_[s]; }

 private:
  const SwitchGraph& g_;
  const Ranking& rk_;
  std::vector<uint8_t> up_, usable_;
  std::vector<uint16_t> dd_, dist_;
  std::vector<uint32_t> queue_;
  std::vector<PortSet> sets_;
};

// Keeps the `limit` most used adaptive sets of one switch (ties by port set);
// the destinations of the others fall back to their static port alone. Then
// numbers the sets in use in order of first use and writes the group table.
void finish_switch(uint32_t s, const ForwardingTables& st, uint32_t limit, SwitchSets& ss,
                   std::vector<uint32_t>& row, ArTables& out) {
  const uint32_t k = static_cast<uint32_t>(ss.sets.size());
  std::vector<uint8_t> keep(k, 1);
  std::vector<uint32_t> adaptive;
  for (uint32_t i = 0; i < k; ++i) {
    if (count_ports(ss.sets[i]) >= 2 && ss.uses[i] > 0) adaptive.push_back(i);
  }
  ArSwitchGroups& sw = out.switches[s];
  if (adaptive.size() > limit) {
    std::sort(adaptive.begin(), adaptive.end(), [&](uint32_t a, uint32_t b) {
      if (ss.uses[a] != ss.uses[b]) return ss.uses[a] > ss.uses[b];
      return ss.sets[a] < ss.sets[b];
    });
    for (size_t i = limit; i < adaptive.size(); ++i) keep[adaptive[i]] = 0;
    out.over_limit.push_back(s);
    for (uint32_t lid = 1; lid < row.size(); ++lid) {
      if (row[lid] == kNone || keep[row[lid]]) continue;
      PortSet single{};
      add_port(single, st.get(s, Lid{static_cast<uint16_t>(lid)}));
      uint32_t g = ss.intern(single);
      if (g >= keep.size()) keep.resize(g + 1, 1);
      row[lid] = g;
      ++sw.trimmed;
    }
    out.trimmed += sw.trimmed;
  }
  std::vector<uint32_t> id(ss.sets.size(), kNone);
  for (uint32_t lid = 1; lid < row.size(); ++lid) {
    uint32_t g = row[lid];
    if (g == kNone) continue;
    if (id[g] == kNone) {
      id[g] = static_cast<uint32_t>(sw.groups.size());
      std::vector<uint8_t> ports;
      for (uint32_t p = 0; p < 256; ++p) {
        if (has_port(ss.sets[g], static_cast<uint8_t>(p))) ports.push_back(static_cast<uint8_t>(p));
      }
      if (ports.size() >= 2) ++sw.adaptive_groups;
      sw.groups.push_back(std::move(ports));
    }
    out.set_group(s, Lid{static_cast<uint16_t>(lid)}, static_cast<uint16_t>(id[g]));
  }
}

}  // namespace

Result<ArTables> compute_ar_groups(const Fabric& fabric, const ForwardingTables& static_tables,
                                   const RoutingOptions& options, uint32_t max_groups_per_switch) {
  if (!fabric.has_lids()) return Error{"the fabric has no LIDs; assign them first (assign_lids)"};
  if (max_groups_per_switch == 0) return Error{"max groups per switch must be at least 1"};
  if (!options.drained.empty() && options.drained.size() != fabric.num_links()) {
    return Error{"drained mask has " + std::to_string(options.drained.size()) + " entries for " +
                 std::to_string(fabric.num_links()) + " links"};
  }
  SwitchGraph g(fabric);
  const uint32_t n = g.num_switches();
  const uint32_t num_lids = fabric.max_lid().value + 1u;
  if (static_tables.num_switches() != n || static_tables.num_lids() != num_lids) {
    return Error{"static tables are " + std::to_string(static_tables.num_switches()) + " switches x " +
                 std::to_string(static_tables.num_lids()) + " LIDs, the fabric " + std::to_string(n) + " x " +
                 std::to_string(num_lids)};
  }
  std::vector<uint32_t> roots;
  for (NodeId r : options.roots) {
    uint32_t s = g.switch_index(r);
    if (s == kNone) return Error{"root '" + std::string(fabric.name(r)) + "' is not a switch"};
    roots.push_back(s);
  }
  Ranking ranking = rank_switches(g, roots);

  // Destination LIDs by target switch (the switch itself, or the one a CA
  // port hangs off); LIDs of detached CA ports get no group anywhere.
  std::vector<uint32_t> lid_begin(n + 1, 0);
  std::vector<uint32_t> target_of(num_lids, kNone);
  for (uint32_t l = 1; l < num_lids; ++l) {
    PortId p = fabric.lid_owner(Lid{static_cast<uint16_t>(l)});
    if (!p.valid()) continue;
    NodeId nd = fabric.port(p).node;
    uint32_t t = fabric.is_switch(nd) ? g.switch_index(nd) : g.attach_switch(p);
    if (t == kNone) continue;
    target_of[l] = t;
    ++lid_begin[t + 1];
  }
  for (uint32_t s = 0; s < n; ++s) lid_begin[s + 1] += lid_begin[s];
  std::vector<uint16_t> lids(lid_begin[n]);
  {
    std::vector<uint32_t> fill(lid_begin.begin(), lid_begin.end() - 1);
    for (uint32_t l = 1; l < num_lids; ++l) {
      if (target_of[l] != kNone) lids[fill[target_of[l]]++] = static_cast<uint16_t>(l);
    }
  }

  // Pass 1: per switch, the set of every LID (pre-limit), interned.
  std::vector<SwitchSets> sets(n);
  std::vector<std::vector<uint32_t>> rows(n, std::vector<uint32_t>(num_lids, kNone));
  TargetSets ts(g, ranking, options.drained);
  for (uint32_t t = 0; t < n; ++t) {
    if (lid_begin[t] == lid_begin[t + 1]) continue;
    ts.prepare(t);
    for (uint32_t s = 0; s < n; ++s) {
      const PortSet& base = ts.set(s);
      uint32_t base_id = kNone;  // interned lazily: most LIDs share it
      auto st_row = static_tables.row(s);
      for (uint32_t i = lid_begin[t]; i < lid_begin[t + 1]; ++i) {
        uint16_t lid = lids[i];
        uint8_t sp = st_row[lid];
        if (sp == ForwardingTables::kNoPath) continue;  // the static LFT drops: so does AR
        uint32_t gid;
        if (has_port(base, sp)) {
          if (base_id == kNone) base_id = sets[s].intern(base);
          gid = base_id;
        } else {
          PortSet with = base;
          add_port(with, sp);
          gid = sets[s].intern(with);
        }
        ++sets[s].uses[gid];
        rows[s][lid] = gid;
      }
    }
  }

  // Pass 2: limit, number and write.
  ArTables out;
  out.num_lids = num_lids;
  out.max_groups_per_switch = max_groups_per_switch;
  out.switches.resize(n);
  out.lft.assign(static_cast<size_t>(n) * num_lids, ArTables::kNoGroup);
  for (uint32_t s = 0; s < n; ++s) {
    finish_switch(s, static_tables, max_groups_per_switch, sets[s], rows[s], out);
    std::vector<uint32_t>().swap(rows[s]);
  }
  return out;
}

}  // namespace railyard::routing
