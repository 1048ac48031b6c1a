// Property tests of the AR groups on generated fabrics: every member one hop
// closer and no credit loop with all members in use (verify_ar_groups), the
// static port always a member, full up-port groups on a healthy ROFT, drains
// honoured, the group limit; and the verifier against hand-broken tables.
#include <gtest/gtest.h>

#include <algorithm>

#include "routing/ar_groups.h"
#include "routing/generator.h"
#include "tests/routing/test_fabrics.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"

namespace railyard::routing {
namespace {

using test::generate;
using test::roft;

struct Computed {
  ForwardingTables tables;
  ArTables ar;
  ArCheck check;
};

Computed compute(const Fabric& f, const RoutingOptions& options = {}, uint32_t max_groups = 64) {
  auto r = route_unicast(f, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  auto ar = compute_ar_groups(f, r->tables, options, max_groups);
  EXPECT_TRUE(ar.ok()) << (ar.ok() ? "" : ar.error().message);
  Computed out{std::move(r->tables), std::move(ar).value(), {}};
  out.check = verify_ar_groups(f, out.ar);
  return out;
}

std::string problems(const ArCheck& c) {
  std::string out;
  for (const auto& p : c.problems) out += p + "\n";
  return out + c.cycle;
}

void expect_valid(const Computed& c) {
  EXPECT_TRUE(c.check.valid) << problems(c.check);
  EXPECT_TRUE(c.check.acyclic) << c.check.cycle;
  EXPECT_GT(c.check.members, 0u);
  EXPECT_GT(c.check.dependencies, 0u);
}

// Every static LFT port is a member of its AR group; no group where the LFT drops.
void expect_static_member(const Fabric& f, const Computed& c) {
  uint64_t checked = 0;
  for (uint32_t s = 0; s < c.tables.num_switches(); ++s) {
    for (uint32_t l = 1; l < c.tables.num_lids(); ++l) {
      Lid lid{static_cast<uint16_t>(l)};
      if (!f.lid_owner(lid).valid()) continue;
      uint8_t sp = c.tables.get(s, lid);
      auto ports = c.ar.ports(s, lid);
      if (sp == ForwardingTables::kNoPath) {
        EXPECT_TRUE(ports.empty()) << "switch " << s << " LID " << l;
        continue;
      }
      ++checked;
      ASSERT_NE(std::find(ports.begin(), ports.end(), sp), ports.end()) << "switch " << s << " LID " << l;
    }
  }
  EXPECT_GT(checked, 0u);
}

uint32_t sw(const Fabric& f, const char* name) {
  SwitchGraph g(f);
  NodeId n = f.find_name(name);
  EXPECT_TRUE(n.valid()) << name;
  return g.switch_index(n);
}

Lid ca_lid(const Fabric& f, const char* name) {
  NodeId n = f.find_name(name);
  EXPECT_TRUE(n.valid()) << name;
  return f.port(f.primary_port(n)).lid;
}

TEST(ArGroups, HealthyTwoLevelLeafGroupHasAllUpPorts) {
  Fabric f = generate(roft(16, 8, 2, 16));
  Computed c = compute(f);
  expect_valid(c);
  expect_static_member(f, c);
  // leaf g000 r0: CAs on ports 1..8, spines on 9..16; node009 is in group 1.
  uint32_t leaf = sw(f, "leaf g000 r0");
  auto ports = c.ar.ports(leaf, ca_lid(f, "node009 mlx5_0"));
  EXPECT_EQ(std::vector<uint8_t>(ports.begin(), ports.end()),
            (std::vector<uint8_t>{9, 10, 11, 12, 13, 14, 15, 16}));
  // Its own CA: the CA port alone.
  auto own = c.ar.ports(leaf, ca_lid(f, "node001 mlx5_0"));
  EXPECT_EQ(std::vector<uint8_t>(own.begin(), own.end()), (std::vector<uint8_t>{1}));
  EXPECT_TRUE(c.ar.over_limit.empty());
  EXPECT_EQ(c.ar.trimmed, 0u);
}

TEST(ArGroups, HealthyThreeLevel) {
  Fabric f = generate(roft(64, 8, 3, 16));
  Computed c = compute(f);
  expect_valid(c);
  expect_static_member(f, c);
  // A leaf reaching another pod may use all 8 spines of its pod.
  uint32_t leaf = sw(f, "leaf g000 r0");
  EXPECT_EQ(c.ar.ports(leaf, ca_lid(f, "node064 mlx5_7")).size(), 8u);
}

TEST(ArGroups, FivePercentSwitchLinksRemoved) {
  for (uint64_t seed : {1, 2}) {
    GeneratorSpec spec = roft(64, 8, 3, 16);
    spec.seed = seed;
    spec.remove_switch_links = 51;  // ~5% of 1,024 switch-switch links
    Fabric f = generate(spec);
    Computed c = compute(f);
    expect_valid(c);
    expect_static_member(f, c);
  }
}

TEST(ArGroups, DrainedLinksAreNotAdaptiveMembers) {
  Fabric f = generate(roft(64, 8, 3, 16));
  RoutingOptions options;
  options.drained.assign(f.num_links(), 0);
  SwitchGraph g(f);
  uint32_t k = 0;
  for (uint32_t e = 0; e < g.num_entries(); ++e) {
    if (++k % 23 == 0) options.drained[g.link(e).value()] = 1;
  }
  Computed c = compute(f, options);
  expect_valid(c);
  expect_static_member(f, c);
  // A drained link is a member only where it is the static port.
  for (uint32_t s = 0; s < g.num_switches(); ++s) {
    const Node& nd = f.node(g.node(s));
    for (uint32_t l = 1; l < c.ar.num_lids; ++l) {
      Lid lid{static_cast<uint16_t>(l)};
      for (uint8_t p : c.ar.ports(s, lid)) {
        if (p == 0) continue;
        LinkId link = f.port(PortId(nd.first_port.value() + p)).link;
        if (!options.drained[link.value()]) continue;
        EXPECT_EQ(p, c.tables.get(s, lid)) << "switch " << s << " LID " << l;
      }
    }
  }
}

TEST(ArGroups, RailOnly) {
  GeneratorSpec spec = roft(32, 4, 2, 16);
  spec.kind = TopologyKind::kRailOnly;
  Fabric f = generate(spec);
  Computed c = compute(f);
  expect_valid(c);
  expect_static_member(f, c);
}

TEST(ArGroups, GroupLimitHoldsAndTrimmedAreReported) {
  GeneratorSpec spec = roft(64, 8, 3, 16);
  spec.remove_switch_links = 51;
  Fabric f = generate(spec);
  for (uint32_t limit : {1u, 2u}) {
    Computed c = compute(f, {}, limit);
    expect_valid(c);
    expect_static_member(f, c);
    EXPECT_FALSE(c.ar.over_limit.empty()) << limit;
    uint64_t trimmed = 0;
    for (const auto& s : c.ar.switches) {
      EXPECT_LE(s.adaptive_groups, limit);
      trimmed += s.trimmed;
    }
    EXPECT_GT(c.ar.trimmed, 0u);
    EXPECT_EQ(trimmed, c.ar.trimmed);
    for (uint32_t s : c.ar.over_limit) EXPECT_GT(c.ar.switches[s].trimmed, 0u);
  }
}

TEST(ArGroups, RejectsBadInput) {
  Fabric f = generate(roft(16, 8, 2, 16));
  auto r = route_unicast(f);
  ASSERT_TRUE(r.ok());
  auto zero = compute_ar_groups(f, r->tables, {}, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "max groups per switch must be at least 1");
  RoutingOptions bad;
  bad.drained.assign(3, 0);
  auto mask = compute_ar_groups(f, r->tables, bad, 4);
  ASSERT_FALSE(mask.ok());
  EXPECT_NE(mask.error().message.find("drained mask has 3 entries"), std::string::npos);
}

// Gives switch s toward lid the group `ports` (a new group id).
void force_group(ArTables& t, uint32_t s, Lid lid, std::vector<uint8_t> ports) {
  t.switches[s].groups.push_back(std::move(ports));
  t.set_group(s, lid, static_cast<uint16_t>(t.switches[s].groups.size() - 1));
}

// The port of switch `from` cabled to switch `to`.
uint8_t port_to(const Fabric& f, const char* from, const char* to) {
  NodeId a = f.find_name(from), b = f.find_name(to);
  const Node& nd = f.node(a);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    if (f.remote_node(PortId(nd.first_port.value() + p)) == b) return static_cast<uint8_t>(p);
  }
  ADD_FAILURE() << from << " is not cabled to " << to;
  return 0;
}

TEST(ArGroups, VerifierCatchesWrongWayMember) {
  Fabric f = generate(roft(16, 8, 2, 16));
  Computed c = compute(f);
  expect_valid(c);
  // spine s00 toward node001 (under leaf g000 r0) also offers the port down
  // to leaf g001 r0, which climbs back through spine s00: a loop.
  uint32_t spine = sw(f, "spine s00");
  Lid lid = ca_lid(f, "node001 mlx5_0");
  auto ports = c.ar.ports(spine, lid);
  std::vector<uint8_t> bad(ports.begin(), ports.end());
  uint8_t wrong = port_to(f, "spine s00", "leaf g001 r0");
  ASSERT_EQ(bad, (std::vector<uint8_t>{port_to(f, "spine s00", "leaf g000 r0")}));
  bad.push_back(wrong);
  force_group(c.ar, spine, lid, bad);
  ArCheck check = verify_ar_groups(f, c.ar);
  EXPECT_FALSE(check.valid);
  ASSERT_FALSE(check.problems.empty());
  EXPECT_EQ(check.problems.front(), "switch 'spine s00' LID " + std::to_string(lid.value) + " port " +
                                        std::to_string(wrong) + ": loop: leads back to 'leaf g001 r0'");
  // Down then up again: a credit loop as well.
  EXPECT_FALSE(check.acyclic);
}

TEST(ArGroups, VerifierCatchesMemberNotOneHopCloser) {
  Fabric f = generate(roft(16, 8, 2, 16));
  Computed c = compute(f);
  Lid lid = ca_lid(f, "node001 mlx5_0");
  // spine s07 detours through leaf g001 r1, which goes up to spine s00 only:
  // from leaf g001 r0, spine s07 is now 4 hops away, the other spines 1.
  force_group(c.ar, sw(f, "spine s07"), lid, {port_to(f, "spine s07", "leaf g001 r1")});
  force_group(c.ar, sw(f, "leaf g001 r1"), lid, {port_to(f, "leaf g001 r1", "spine s00")});
  ArCheck check = verify_ar_groups(f, c.ar);
  EXPECT_FALSE(check.valid);
  std::string all = problems(check);
  uint8_t p = port_to(f, "leaf g001 r0", "spine s07");
  uint8_t first = port_to(f, "leaf g001 r0", "spine s00");
  EXPECT_NE(all.find("switch 'leaf g001 r0' LID " + std::to_string(lid.value) + " port " + std::to_string(p) +
                     ": leads 5 hops from the destination, port " + std::to_string(first) +
                     " 3: not one hop closer on every member"),
            std::string::npos)
      << all;
}

TEST(ArGroups, VerifierCatchesTwoSwitchesPointingAtEachOther) {
  Fabric f = generate(roft(16, 8, 2, 16));
  Computed c = compute(f);
  Lid lid = ca_lid(f, "node001 mlx5_0");
  uint8_t down = port_to(f, "spine s00", "leaf g001 r0");
  force_group(c.ar, sw(f, "spine s00"), lid, {down});
  force_group(c.ar, sw(f, "leaf g001 r0"), lid, {port_to(f, "leaf g001 r0", "spine s00")});
  ArCheck check = verify_ar_groups(f, c.ar);
  EXPECT_FALSE(check.valid);
  ASSERT_FALSE(check.problems.empty());
  EXPECT_EQ(check.problems.front(), "switch 'spine s00' LID " + std::to_string(lid.value) + " port " +
                                        std::to_string(down) + ": loop: leads back to 'leaf g001 r0'");
  // Both directions of the cable now depend on each other.
  EXPECT_FALSE(check.acyclic);
  EXPECT_NE(check.cycle.find("spine s00["), std::string::npos) << check.cycle;
}

}  // namespace
}  // namespace railyard::routing
