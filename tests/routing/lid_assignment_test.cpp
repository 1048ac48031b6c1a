#include "routing/lid_assignment.h"

#include <gtest/gtest.h>

#include <set>

namespace railyard::routing {
namespace {

struct Net {
  Fabric fabric;
  NodeId s1, s2, h1, h2, h3;
};

// Two switches, three CAs; h2 has two connected ports, h3 one of two.
// partial_lids pre-assigns s2 -> 1 and h2 port 2 -> 3 with LMC 1; all_lids all.
Net make_net(bool partial_lids, bool all_lids = false) {
  FabricBuilder b;
  Net n;
  n.h1 = b.add_node(NodeType::kCa, 1, Guid{0x100}, {}, "h1");
  n.s1 = b.add_node(NodeType::kSwitch, 8, Guid{0x200}, {}, "s1");
  n.h2 = b.add_node(NodeType::kCa, 2, Guid{0x300}, {}, "h2");
  n.s2 = b.add_node(NodeType::kSwitch, 8, Guid{0x400}, {}, "s2");
  n.h3 = b.add_node(NodeType::kCa, 2, Guid{0x500}, {}, "h3");
  EXPECT_TRUE(b.connect(n.s1, PortNum{1}, n.h1, PortNum{1}).ok());
  EXPECT_TRUE(b.connect(n.s1, PortNum{2}, n.h2, PortNum{1}).ok());
  EXPECT_TRUE(b.connect(n.s2, PortNum{2}, n.h2, PortNum{2}).ok());
  EXPECT_TRUE(b.connect(n.s2, PortNum{1}, n.h3, PortNum{2}).ok());
  EXPECT_TRUE(b.connect(n.s1, PortNum{8}, n.s2, PortNum{8}).ok());
  if (partial_lids || all_lids) {
    EXPECT_TRUE(b.set_port(n.s2, PortNum{0}, {}, Lid{1}).ok());
    EXPECT_TRUE(b.set_port(n.h2, PortNum{2}, {}, Lid{3}, 1).ok());
  }
  if (all_lids) {
    EXPECT_TRUE(b.set_port(n.s1, PortNum{0}, {}, Lid{10}).ok());
    EXPECT_TRUE(b.set_port(n.h1, PortNum{1}, {}, Lid{11}).ok());
    EXPECT_TRUE(b.set_port(n.h2, PortNum{1}, {}, Lid{12}).ok());
    EXPECT_TRUE(b.set_port(n.h3, PortNum{2}, {}, Lid{13}).ok());
  }
  Result<Fabric> f = b.build();
  EXPECT_TRUE(f.ok()) << f.error().message;
  n.fabric = std::move(f).value();
  return n;
}

uint16_t lid_of(const Fabric& f, NodeId n, uint8_t port) { return f.port(f.port_id(n, PortNum{port})).lid.value; }

TEST(LidAssignment, SwitchesFirstThenCaPortsInNodeOrder) {
  Net n = make_net(false);
  Result<Fabric> f = assign_lids(n.fabric);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(lid_of(*f, n.s1, 0), 1);
  EXPECT_EQ(lid_of(*f, n.s2, 0), 2);
  EXPECT_EQ(lid_of(*f, n.h1, 1), 3);
  EXPECT_EQ(lid_of(*f, n.h2, 1), 4);
  EXPECT_EQ(lid_of(*f, n.h2, 2), 5);
  EXPECT_EQ(lid_of(*f, n.h3, 2), 6);
  EXPECT_EQ(lid_of(*f, n.h3, 1), 0);  // unconnected: an SM never sees it
  EXPECT_EQ(f->max_lid().value, 6);
  // Everything else is the same fabric.
  EXPECT_EQ(f->num_nodes(), n.fabric.num_nodes());
  EXPECT_EQ(f->num_links(), n.fabric.num_links());
  EXPECT_EQ(f->desc(n.h2), "h2");
  EXPECT_EQ(f->find_node_guid(Guid{0x400}), n.s2);
}

TEST(LidAssignment, DeterministicUniqueAndCoversEveryAddressablePort) {
  Net n = make_net(false);
  Result<Fabric> a = assign_lids(n.fabric);
  Result<Fabric> b = assign_lids(n.fabric);
  ASSERT_TRUE(a.ok() && b.ok());
  std::set<uint16_t> seen;
  for (uint32_t i = 0; i < a->num_ports(); ++i) {
    const Port& p = a->port(PortId(i));
    EXPECT_EQ(p.lid, b->port(PortId(i)).lid);
    bool addressable = a->is_switch(p.node) ? p.num.value == 0 : (p.num.value != 0 && p.remote.valid());
    EXPECT_EQ(p.lid.valid(), addressable) << i;
    if (p.lid.valid()) {
      EXPECT_TRUE(seen.insert(p.lid.value).second) << "LID " << p.lid.value << " twice";
      EXPECT_EQ(a->lid_owner(p.lid), PortId(i));
    }
  }
  EXPECT_EQ(seen.size(), 6u);
}

TEST(LidAssignment, KeepsExistingLidsAndSkipsTheirLmcRanges) {
  Net n = make_net(true);
  Result<Fabric> f = assign_lids(n.fabric);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(lid_of(*f, n.s2, 0), 1);  // kept
  EXPECT_EQ(lid_of(*f, n.h2, 2), 3);  // kept, with LMC 1: 3 and 4
  EXPECT_EQ(f->port(f->port_id(n.h2, PortNum{2})).lmc, 1);
  EXPECT_EQ(lid_of(*f, n.s1, 0), 2);
  EXPECT_EQ(lid_of(*f, n.h1, 1), 5);
  EXPECT_EQ(lid_of(*f, n.h2, 1), 6);
  EXPECT_EQ(lid_of(*f, n.h3, 2), 7);
}

TEST(LidAssignment, FabricWithAllLidsIsUnchanged) {
  Net n = make_net(false, true);
  Result<Fabric> f = assign_lids(n.fabric);
  ASSERT_TRUE(f.ok());
  for (uint32_t i = 0; i < f->num_ports(); ++i) {
    EXPECT_EQ(f->port(PortId(i)).lid, n.fabric.port(PortId(i)).lid);
    EXPECT_EQ(f->port(PortId(i)).lmc, n.fabric.port(PortId(i)).lmc);
  }
  EXPECT_EQ(f->max_lid(), n.fabric.max_lid());
}

TEST(LidAssignment, RefusesWhenTheLidSpaceRunsOut) {
  // 200 CAs x 250 connected ports = 50,000 ports > 49,151 unicast LIDs.
  FabricBuilder b;
  std::vector<NodeId> cas;
  for (uint64_t i = 0; i < 200; ++i) cas.push_back(b.add_node(NodeType::kCa, 250, Guid{0x1000 + i}, {}, "ca"));
  for (size_t i = 0; i < cas.size(); i += 2) {
    for (uint8_t p = 1; p <= 250; ++p) ASSERT_TRUE(b.connect(cas[i], PortNum{p}, cas[i + 1], PortNum{p}).ok());
  }
  Result<Fabric> f = b.build();
  ASSERT_TRUE(f.ok());
  Result<Fabric> r = assign_lids(*f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "the unicast LID space (1..0xBFFF) is exhausted: 50000 ports need a LID");
}

}  // namespace
}  // namespace railyard::routing
