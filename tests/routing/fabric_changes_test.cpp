// Fabric changes: a fabric sent once and then as changes comes back the same
// as reading it whole (equal fingerprint, equal records, equal routes).
#include "routing/fabric_changes.h"

#include <gtest/gtest.h>

#include "routing/fabric_fingerprint.h"
#include "routing/lft_digest.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/topology_writer.h"
#include "routing/unicast_engine.h"
#include "test_fabrics.h"

namespace railyard::routing {
namespace {

// The fabric in snapshot order (switches, then CAs, each by GUID), as OpenSM's
// snapshot gives it: what the plugin sends.
Fabric snapshot_order(const Fabric& f) {
  auto out = apply_changes(Fabric{}, full_changes(f));
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return std::move(out).value();
}

Fabric base() { return snapshot_order(test::generate(test::roft(16, 2, 2, 8))); }

// The first switch-to-switch link of `f`.
LinkId uplink(const Fabric& f) {
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    const Link& l = f.link(LinkId(i));
    if (f.is_switch(f.port(l.a).node) && f.is_switch(f.port(l.b).node)) return LinkId(i);
  }
  ADD_FAILURE() << "no switch link";
  return LinkId(0);
}

Fabric with_link_down(const Fabric& f, LinkId link) {
  FabricBuilder b(f);
  EXPECT_TRUE(b.set_link_state(link, PortState::kDown).ok());
  auto out = b.build();
  EXPECT_TRUE(out.ok());
  return std::move(out).value();
}

// `f` without the node `gone` (and its links), rebuilt the snapshot's way.
Fabric without_node(const Fabric& f, NodeId gone) {
  FabricChanges c;
  c.nodes_removed.push_back(f.node(gone).guid);
  auto out = apply_changes(f, c);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return std::move(out).value();
}

TEST(FabricChanges, AWholeFabricComesBackTheSame) {
  const Fabric f = base();
  const Fabric again = snapshot_order(f);
  EXPECT_EQ(fabric_fingerprint(again), fabric_fingerprint(f));
  EXPECT_EQ(write_topology(again), write_topology(f));
  EXPECT_TRUE(fabric_changes(f, again).empty());
  // Whatever the order it came in (the generator's), the records are equal.
  const Fabric generated = test::generate(test::roft(16, 2, 2, 8));
  EXPECT_TRUE(fabric_changes(generated, f).empty());
  EXPECT_EQ(full_changes(f).nodes.size(), f.num_nodes());
  EXPECT_EQ(full_changes(f).links.size(), f.num_links());
}

TEST(FabricChanges, ALinkDownIsOneLinkRecordAndAppliesToTheSameFabric) {
  const Fabric before = base();
  const Fabric after = with_link_down(before, uplink(before));
  const FabricChanges c = fabric_changes(before, after);
  EXPECT_TRUE(c.nodes.empty());
  EXPECT_TRUE(c.nodes_removed.empty());
  EXPECT_TRUE(c.links_removed.empty());
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].state, PortState::kDown);
  auto applied = apply_changes(before, c);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(fabric_fingerprint(*applied), fabric_fingerprint(after));
  EXPECT_NE(fabric_fingerprint(*applied), fabric_fingerprint(before));
  // And back up.
  auto back = apply_changes(*applied, fabric_changes(after, before));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(fabric_fingerprint(*back), fabric_fingerprint(before));
}

TEST(FabricChanges, ANodeThatLeavesTakesItsLinksAndComesBack) {
  const Fabric before = base();
  const NodeId ca = before.cas()[3];
  const Fabric after = without_node(before, ca);
  ASSERT_EQ(after.num_nodes(), before.num_nodes() - 1);
  ASSERT_LT(after.num_links(), before.num_links());
  const FabricChanges c = fabric_changes(before, after);
  ASSERT_EQ(c.nodes_removed.size(), 1u);
  EXPECT_EQ(c.nodes_removed[0], before.node(ca).guid);
  EXPECT_EQ(c.links_removed.size(), before.num_links() - after.num_links());
  auto applied = apply_changes(before, c);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(fabric_fingerprint(*applied), fabric_fingerprint(after));
  // The node comes back: one node record, its links.
  const FabricChanges back = fabric_changes(after, before);
  EXPECT_EQ(back.nodes.size(), 1u);
  auto again = apply_changes(after, back);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(fabric_fingerprint(*again), fabric_fingerprint(before));
}

TEST(FabricChanges, TheRebuiltFabricRoutesToTheSameTables) {
  const Fabric before = base();
  const Fabric after = with_link_down(before, uplink(before));
  auto applied = apply_changes(before, fabric_changes(before, after));
  ASSERT_TRUE(applied.ok());
  auto tables = [](const Fabric& f) {
    auto options = plan_routing(f, {}, map_rails(f, {}));
    EXPECT_TRUE(options.ok());
    auto routed = route_unicast(f, *options);
    EXPECT_TRUE(routed.ok());
    return lft_digests(f, routed->tables).total;
  };
  EXPECT_EQ(tables(*applied), tables(after));
  EXPECT_NE(tables(after), tables(before)) << "the change must matter for this to show anything";
}

TEST(FabricChanges, ChangesThatDoNotFitAreErrorsNamingThem) {
  const Fabric f = base();
  FabricChanges c;
  LinkRecord l = link_record(f, uplink(f));
  l.b.node = Guid{0xdead};
  c.links.push_back(l);
  auto bad = apply_changes(f, c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no node 0x000000000000dead"), std::string::npos) << bad.error().message;

  FabricChanges ports;
  NodeRecord n = node_record(f, f.cas()[0]);
  n.ports.pop_back();
  ports.nodes.push_back(n);
  auto short_ports = apply_changes(f, ports);
  ASSERT_FALSE(short_ports.ok());
  EXPECT_NE(short_ports.error().message.find("port records for"), std::string::npos);

  // A second cable on a port that has one.
  FabricChanges twice;
  LinkRecord dup = link_record(f, uplink(f));
  dup.b.port = static_cast<uint8_t>(dup.b.port == 1 ? 2 : 1);
  dup.a.port = static_cast<uint8_t>(dup.a.port);
  twice.links.push_back(dup);
  EXPECT_FALSE(apply_changes(f, twice).ok());
}

}  // namespace
}  // namespace railyard::routing
