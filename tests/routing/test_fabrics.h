// Generated fabrics for the routing tests: a spec of a ROFT by its shape, and
// the fabric it gives (a failed generation fails the test that asked).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "routing/generator.h"
#include "routing/lft.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"

namespace railyard::routing::test {

// The planned routing options of f (rails mapped, no policy) with `drained`.
inline RoutingOptions options_for(const Fabric& f, const std::vector<uint8_t>& drained) {
  auto planned = plan_routing(f, {}, map_rails(f, {}));
  EXPECT_TRUE(planned.ok());
  RoutingOptions o = std::move(planned).value();
  o.drained = drained;
  return o;
}

// With LIDs assigned unless `lids` is false.
inline Fabric generate(GeneratorSpec spec, bool lids = true) {
  spec.assign_lids = lids;
  auto g = generate_fabric(spec);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value().fabric;
}

inline GeneratorSpec roft(uint32_t servers, uint32_t rails, uint32_t levels, uint32_t radix) {
  GeneratorSpec spec;
  spec.servers = servers;
  spec.rails = rails;
  spec.levels = levels;
  spec.radix = radix;
  return spec;
}

// The first switch-to-switch link of f in link order (invalid: none).
inline LinkId first_switch_link(const Fabric& f) {
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    const Link& l = f.link(LinkId(i));
    if (f.is_switch(f.port(l.a).node) && f.is_switch(f.port(l.b).node)) return LinkId(i);
  }
  return LinkId();
}

// f with its first switch-to-switch link down (a failure fails the test
// that asked, and gives f unchanged).
inline Fabric with_first_switch_link_down(const Fabric& f) {
  const LinkId l = first_switch_link(f);
  EXPECT_TRUE(l.valid()) << "no switch-to-switch link";
  if (!l.valid()) return f;
  FabricBuilder b(f);
  EXPECT_TRUE(b.set_link_state(l, PortState::kDown).ok());
  Result<Fabric> built = b.build();
  EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
  return built.ok() ? std::move(*built) : f;
}

// The same fabric with its nodes and links listed again, in reverse order
// when `reverse`, links in the same state, and each LID l given as
// lid_of[l] (empty: kept).
inline Fabric relisted(const Fabric& f, bool reverse, const std::vector<uint16_t>& lid_of = {}) {
  FabricBuilder b;
  std::vector<NodeId> map(f.num_nodes());
  for (uint32_t k = 0; k < f.num_nodes(); ++k) {
    const uint32_t i = reverse ? f.num_nodes() - 1 - k : k;
    const Node& nd = f.node(NodeId(i));
    map[i] = b.add_node(nd.type, nd.num_ports, nd.guid, nd.system_guid, f.desc(NodeId(i)), f.name(NodeId(i)));
    for (uint32_t p = 0; p <= nd.num_ports; ++p) {
      const Port& port = f.port(PortId(nd.first_port.value() + p));
      const Lid lid = lid_of.empty() || !port.lid.valid() ? port.lid : Lid{lid_of[port.lid.value]};
      if (port.lid.valid() || port.guid.valid()) {
        EXPECT_TRUE(b.set_port(map[i], port.num, port.guid, lid, port.lmc).ok());
      }
    }
  }
  for (uint32_t k = 0; k < f.num_links(); ++k) {
    const Link& link = f.link(LinkId(reverse ? f.num_links() - 1 - k : k));
    const Port& a = f.port(link.a);
    const Port& c = f.port(link.b);
    EXPECT_TRUE(b.connect(map[a.node.value()], a.num, map[c.node.value()], c.num, link.width, link.speed, link.state).ok());
  }
  return std::move(b.build()).value();
}

// The same fabric with its nodes and links listed in reverse order (as
// OpenSM's subnet and ibnetdiscover's file list them differently), links in
// the same state.
inline Fabric reversed(const Fabric& f) { return relisted(f, true); }

// The same fabric with its LIDs (LMC 0) dealt out again in a seeded order, so
// that switch LIDs lie among CA LIDs, few of them next to each other (as
// OpenSM gives LIDs in the order it discovers ports).
inline Fabric with_lids_scattered(const Fabric& f, uint64_t seed) {
  std::vector<uint16_t> lids;
  for (uint32_t l = 1; l <= f.max_lid().value; ++l) {
    if (f.lid_owner(Lid{static_cast<uint16_t>(l)}).valid()) lids.push_back(static_cast<uint16_t>(l));
  }
  std::vector<uint16_t> dealt = lids;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = dealt.size(); i > 1; --i) {  // Fisher-Yates, xorshift
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::swap(dealt[i - 1], dealt[x % i]);
  }
  std::vector<uint16_t> lid_of(f.max_lid().value + 1u, 0);
  for (size_t i = 0; i < lids.size(); ++i) lid_of[lids[i]] = dealt[i];
  return relisted(f, false, lid_of);
}

// Where two fabrics' tables differ, switches matched by GUID (the fabrics
// list the same nodes, in any order): entries compared and entries differing.
inline std::pair<uint64_t, uint64_t> compare_by_guid(const Fabric& f, const ForwardingTables& a, const Fabric& g,
                                                     const ForwardingTables& b) {
  uint64_t compared = 0, differ = 0;
  for (uint32_t i = 0; i < f.switches().size(); ++i) {
    const Guid guid = f.node(f.switches()[i]).guid;
    uint32_t j = 0;
    while (j < g.switches().size() && g.node(g.switches()[j]).guid != guid) ++j;
    if (j == g.switches().size()) return {compared, differ + 1};
    for (uint32_t lid = 1; lid <= f.max_lid().value; ++lid) {
      ++compared;
      differ += a.get(i, Lid{uint16_t(lid)}) != b.get(j, Lid{uint16_t(lid)});
    }
  }
  return {compared, differ};
}

}  // namespace railyard::routing::test
