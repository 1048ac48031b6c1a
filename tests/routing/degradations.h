// Degradations: seeded, named variants of a fabric with links down or drained,
// for measuring routing quality on degraded fat trees (issue 10).
//
// A variant is a copy of the base fabric (FabricBuilder(base)) with some
// links set kDown (SwitchGraph, hence the engine, skips them) and/or a drain
// mask (one byte per LinkId, for RoutingOptions::drained). Tiers come from the
// structural levels of cut_oracle.h (leaf 1, spine 2, core 3): leaf-spine
// links join levels 1 and 2, spine-core links 2 and 3. Picks are seeded
// (std::mt19937_64, whose sequence the standard fixes; indices by modulo, so
// the same seed gives the same variant everywhere) and taken among links that
// are not already down. Names read "3L r16 1024CA: 5% cut seed 7".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "routing/fabric.h"
#include "tests/routing/cut_oracle.h"

namespace railyard::routing::test {

enum class Tier : uint8_t { kAny, kLeafSpine, kSpineCore };

inline const char* to_string(Tier t) {
  switch (t) {
    case Tier::kLeafSpine: return "leaf-spine";
    case Tier::kSpineCore: return "spine-core";
    case Tier::kAny: break;
  }
  return "any";
}

struct Degraded {
  Fabric fabric;
  std::vector<uint8_t> drained;      // per LinkId, or empty when nothing is drained
  std::vector<LinkId> down;          // links this variant took down
  std::vector<LinkId> drained_links; // links it drained
  std::string name;
};

// "3L r16 1024CA": structural levels, largest switch port count, CA ports.
inline std::string fabric_label(const Fabric& f) {
  std::vector<int32_t> level = switch_levels(f);
  int32_t top = 0;
  uint32_t radix = 0;
  for (NodeId s : f.switches()) {
    top = std::max(top, level[s.value()]);
    radix = std::max<uint32_t>(radix, f.node(s).num_ports);
  }
  uint64_t cas = 0;
  for (NodeId c : f.cas()) cas += f.node(c).num_ports;
  return std::to_string(top) + "L r" + std::to_string(radix) + " " + std::to_string(cas) + "CA";
}

class Degrader {
 public:
  // `base` must outlive the Degrader. `label` names the fabric in variant
  // names (default fabric_label(base)).
  explicit Degrader(const Fabric& base, std::string label = {})
      : base_(base), label_(label.empty() ? fabric_label(base) : std::move(label)), level_(switch_levels(base)) {}

  const Fabric& base() const { return base_; }
  const std::string& label() const { return label_; }
  int32_t level(NodeId n) const { return level_[n.value()]; }

  // Switch-switch links of a tier that are not down in the base.
  std::vector<LinkId> links(Tier tier) const {
    std::vector<LinkId> out;
    for (uint32_t l = 0; l < base_.num_links(); ++l) {
      const Link& link = base_.link(LinkId(l));
      if (link.state == PortState::kDown) continue;
      NodeId a = base_.port(link.a).node, b = base_.port(link.b).node;
      if (!base_.is_switch(a) || !base_.is_switch(b) || a == b) continue;
      int32_t lo = std::min(level_[a.value()], level_[b.value()]);
      int32_t hi = std::max(level_[a.value()], level_[b.value()]);
      bool keep = tier == Tier::kAny || (tier == Tier::kLeafSpine && lo == 1 && hi == 2) ||
                  (tier == Tier::kSpineCore && lo == 2 && hi == 3);
      if (keep) out.push_back(LinkId(l));
    }
    return out;
  }

  // Switches at a structural level (1 leaf, 2 spine, 3 core).
  std::vector<NodeId> switches_at(int32_t level) const {
    std::vector<NodeId> out;
    for (NodeId s : base_.switches()) {
      if (level_[s.value()] == level) out.push_back(s);
    }
    return out;
  }

  Degraded healthy() const { return apply({}, {}, "healthy"); }

  // One link of the tier down.
  Degraded link_down(Tier tier, uint64_t seed) const {
    std::vector<LinkId> pick = sample(links(tier), 1, seed);
    return apply(pick, {}, std::string(to_string(tier)) + " link down seed " + std::to_string(seed));
  }

  // One switch of the level down: every link of it, CA links included.
  Degraded switch_down(int32_t level, uint64_t seed) const {
    std::vector<NodeId> candidates = switches_at(level);
    std::vector<LinkId> down;
    if (!candidates.empty()) {
      std::mt19937_64 rng(seed);
      NodeId s = candidates[rng() % candidates.size()];
      const Node& nd = base_.node(s);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        LinkId l = base_.port(base_.port_id(s, PortNum{static_cast<uint8_t>(p)})).link;
        if (l.valid() && base_.link(l).state != PortState::kDown) down.push_back(l);
      }
    }
    return apply(down, {}, std::string(level_name(level)) + " down seed " + std::to_string(seed));
  }

  // pct % of the tier's switch-switch links down (at least one when pct > 0).
  Degraded cut(double pct, Tier tier, uint64_t seed) const {
    std::vector<LinkId> c = links(tier);
    return apply(sample(c, count(c.size(), pct), seed), {}, percent(pct) + tier_word(tier) + "cut seed " + std::to_string(seed));
  }

  // pct % of the tier's switch-switch links drained.
  Degraded drain(double pct, Tier tier, uint64_t seed) const {
    std::vector<LinkId> c = links(tier);
    return apply({}, sample(c, count(c.size(), pct), seed),
                 percent(pct) + tier_word(tier) + "drained seed " + std::to_string(seed));
  }

  // cut_pct % down and drain_pct % drained, among the tier's links, disjoint.
  Degraded cut_and_drain(double cut_pct, double drain_pct, Tier tier, uint64_t seed) const {
    std::vector<LinkId> c = links(tier);
    size_t nc = count(c.size(), cut_pct), nd = count(c.size(), drain_pct);
    std::vector<LinkId> both = sample(c, std::min(c.size(), nc + nd), seed);
    std::vector<LinkId> down(both.begin(), both.begin() + static_cast<ptrdiff_t>(std::min(nc, both.size())));
    std::vector<LinkId> drained(both.begin() + static_cast<ptrdiff_t>(down.size()), both.end());
    return apply(down, drained,
                 percent(cut_pct) + tier_word(tier) + "cut + " + percent(drain_pct) + "drained seed " +
                     std::to_string(seed));
  }

  // The general case: these links down, these drained.
  Degraded apply(std::vector<LinkId> down, std::vector<LinkId> drained, const std::string& what) const {
    Degraded out;
    out.name = label_ + ": " + what;
    if (down.empty()) {
      out.fabric = base_;
    } else {
      FabricBuilder b(base_);
      for (LinkId l : down) {
        Status st = b.set_link_state(l, PortState::kDown);
        (void)st;  // ids come from the base's own links
      }
      auto built = b.build();
      // A copy of a valid fabric with link states changed stays valid.
      if (built.ok()) out.fabric = std::move(built).value();
    }
    if (!drained.empty()) {
      out.drained.assign(base_.num_links(), 0);
      for (LinkId l : drained) out.drained[l.value()] = 1;
    }
    std::sort(down.begin(), down.end());
    std::sort(drained.begin(), drained.end());
    out.down = std::move(down);
    out.drained_links = std::move(drained);
    return out;
  }

  // Per LinkId, nonzero when the variant took the link down or drained it.
  static std::vector<uint8_t> failed_mask(const Degraded& d, size_t num_links) {
    std::vector<uint8_t> m(num_links, 0);
    for (LinkId l : d.down) m[l.value()] = 1;
    for (LinkId l : d.drained_links) m[l.value()] = 1;
    return m;
  }

 private:
  static size_t count(size_t n, double pct) {
    if (pct <= 0 || n == 0) return 0;
    auto c = static_cast<size_t>(std::llround(static_cast<double>(n) * pct / 100.0));
    return std::clamp<size_t>(c, 1, n);
  }
  // The first k of a seeded Fisher-Yates shuffle.
  static std::vector<LinkId> sample(std::vector<LinkId> c, size_t k, uint64_t seed) {
    std::mt19937_64 rng(seed);
    k = std::min(k, c.size());
    for (size_t i = 0; i < k; ++i) std::swap(c[i], c[i + rng() % (c.size() - i)]);
    c.resize(k);
    return c;
  }
  static std::string percent(double pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%% ", pct);
    return buf;
  }
  static std::string tier_word(Tier t) { return t == Tier::kAny ? "" : std::string(to_string(t)) + " "; }
  static const char* level_name(int32_t level) {
    switch (level) {
      case 1: return "leaf";
      case 2: return "spine";
      case 3: return "core";
      default: return "switch";
    }
  }

  const Fabric& base_;
  std::string label_;
  std::vector<int32_t> level_;
};

}  // namespace railyard::routing::test
