// Path stability for the degraded-routing tests: how many forwarding-table
// entries a failure changed, against how many entries' routes crossed the
// failed links (issue 10: changed <= 2 x crossed). Judged by CutOracle's walk
// of the healthy tables (cut_oracle.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "tests/routing/cut_oracle.h"

namespace railyard::routing::test {

struct PathStability {
  uint64_t entries = 0;  // (switch, CA LID) entries compared
  uint64_t changed = 0;  // entries whose port differs
  uint64_t crossed = 0;  // entries whose healthy route crossed a failed link
};

// Path stability of `after` (tables of `degraded`: a copy of `healthy` with
// links down and/or drained, same nodes, ports, links and LIDs) against
// `before` (tables of `healthy`). Compared: every (switch, CA LID) pair where
// the switch still has a live link and the CA port is live in both. Crossed:
// those entries whose route over `before` on `healthy` delivered through a
// link that is down or drained in `degraded`.
inline PathStability path_stability(const Fabric& healthy, const ForwardingTables& before, const Fabric& degraded,
                                    std::span<const uint8_t> degraded_drained, const ForwardingTables& after,
                                    std::span<const uint8_t> healthy_drained = {}) {
  PathStability out;
  CutOracle h(healthy, healthy_drained);
  CutOracle d(degraded, degraded_drained);
  const uint32_t num_sw = static_cast<uint32_t>(healthy.switches().size());
  if (degraded.num_links() != healthy.num_links() || degraded.switches().size() != num_sw) return out;
  std::vector<uint8_t> alive(num_sw, 0);
  for (uint32_t s = 0; s < num_sw; ++s) {
    const Node& nd = degraded.node(degraded.switches()[s]);
    for (uint32_t p = 1; p <= nd.num_ports && !alive[s]; ++p) {
      LinkId l = degraded.port(degraded.port_id(degraded.switches()[s], PortNum{static_cast<uint8_t>(p)})).link;
      alive[s] = l.valid() && degraded.link(l).state != PortState::kDown;
    }
  }
  std::vector<uint8_t> failed(healthy.num_links(), 0);
  for (uint32_t l = 0; l < healthy.num_links(); ++l) {
    bool was = healthy.link(LinkId(l)).state != PortState::kDown &&
               !(l < healthy_drained.size() && healthy_drained[l]);
    bool is = degraded.link(LinkId(l)).state != PortState::kDown &&
              !(l < degraded_drained.size() && degraded_drained[l]);
    failed[l] = was && !is;
  }
  std::vector<uint8_t> compared_lid(std::max(before.num_lids(), after.num_lids()), 0);
  h.for_each_live_ca([&](PortId p, Lid lid, uint32_t) {
    if (!d.is_live_ca(p) || degraded.port(p).lid != lid) return;
    if (lid.value >= before.num_lids() || lid.value >= after.num_lids()) return;
    compared_lid[lid.value] = 1;
    for (uint32_t s = 0; s < num_sw; ++s) {
      if (!alive[s]) continue;
      ++out.entries;
      if (before.get(s, lid) != after.get(s, lid)) ++out.changed;
    }
  });
  h.routes_crossing(before, failed, [&](Lid lid, uint32_t s) {
    if (compared_lid[lid.value] && alive[s]) ++out.crossed;
  });
  return out;
}

}  // namespace railyard::routing::test
