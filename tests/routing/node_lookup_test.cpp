#include "routing/node_lookup.h"

#include <gtest/gtest.h>

namespace railyard::routing {
namespace {

// A leaf with a record name and a description, a CA with its own port GUID,
// and two switches sharing a (factory) description.
struct Lookup : ::testing::Test {
  NodeId leaf, ca, twin_a, twin_b, hexy;
  Fabric f;
  void SetUp() override {
    FabricBuilder b;
    leaf = b.add_node(NodeType::kSwitch, 36, Guid{0xe41d2d0300001000}, Guid{}, "leaf g000 r0", "S-e41d2d0300001000");
    ca = b.add_node(NodeType::kCa, 1, Guid{0xe41d2d0300002000}, Guid{}, "node001 mlx5_0", "H-e41d2d0300002000");
    twin_a = b.add_node(NodeType::kSwitch, 8, Guid{0xa}, Guid{}, "MF0;switch");
    twin_b = b.add_node(NodeType::kSwitch, 8, Guid{0xb}, Guid{}, "MF0;switch");
    hexy = b.add_node(NodeType::kCa, 1, Guid{0xc}, Guid{}, "0xdead");  // a description that looks like a GUID
    ASSERT_TRUE(b.set_port(ca, PortNum{1}, Guid{0xe41d2d0300002001}, Lid{7}).ok());
    ASSERT_TRUE(b.connect(ca, PortNum{1}, leaf, PortNum{1}).ok());
    Result<Fabric> r = b.build();
    ASSERT_TRUE(r.ok()) << r.error().message;
    f = std::move(*r);
  }
};

using NodeLookup = Lookup;

TEST_F(NodeLookup, ByNodeGuidPortGuidNameAndDescription) {
  EXPECT_EQ(resolve_node(f, "0xe41d2d0300001000"), leaf);
  EXPECT_EQ(resolve_node(f, "0xE41D2D0300001000"), leaf);
  EXPECT_EQ(resolve_node(f, "0xe41d2d0300002001"), ca);  // the CA's port GUID
  EXPECT_EQ(resolve_node(f, "S-e41d2d0300001000"), leaf);
  EXPECT_EQ(resolve_node(f, "leaf g000 r0"), leaf);
  EXPECT_EQ(resolve_node(f, "node001 mlx5_0"), ca);
  EXPECT_EQ(resolve_node(f, "H-e41d2d0300002000"), ca);
  EXPECT_EQ(resolve_node(f, "0xdead"), hexy);  // no such GUID: falls back to the description
  EXPECT_FALSE(resolve_node(f, "0x1234").valid());
  EXPECT_FALSE(resolve_node(f, "leaf g000").valid());
  EXPECT_FALSE(resolve_node(f, "").valid());
}

TEST_F(NodeLookup, FindNodeExplainsFailures) {
  EXPECT_EQ(*find_node(f, "leaf g000 r0"), leaf);
  EXPECT_EQ(*find_node(f, "0xa"), twin_a);  // a GUID names one node even when its description repeats
  Result<NodeId> unknown = find_node(f, "x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown node 'x'");
  Result<NodeId> twin = find_node(f, "MF0;switch");
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.error().message, "node 'MF0;switch' is ambiguous: 2 nodes have that name or description");
}

TEST_F(NodeLookup, ResolvePort) {
  Result<PortId> p = resolve_port(f, {"leaf g000 r0", 1});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(f.port(*p).node, leaf);
  EXPECT_EQ(f.port(*p).num, PortNum{1});
  EXPECT_EQ(f.remote_node(*p), ca);

  Result<PortId> by_guid = resolve_port(f, {"0xe41d2d0300002001", 1});
  ASSERT_TRUE(by_guid.ok()) << by_guid.error().message;
  EXPECT_EQ(f.port(*by_guid).node, ca);

  Result<PortId> last = resolve_port(f, {"S-e41d2d0300001000", 36});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(f.port(*last).num, PortNum{36});
}

TEST_F(NodeLookup, ResolvePortErrors) {
  Result<PortId> beyond = resolve_port(f, {"leaf g000 r0", 40});
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error().message, "port 40 is beyond 'leaf g000 r0''s 36 ports");

  Result<PortId> unknown = resolve_port(f, {"x", 1});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown node 'x'");

  Result<PortId> zero = resolve_port(f, {"leaf g000 r0", 0});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "port 0 of 'leaf g000 r0' is not a physical port");

  Result<PortId> ca_port = resolve_port(f, {"node001 mlx5_0", 2});
  ASSERT_FALSE(ca_port.ok());
  EXPECT_EQ(ca_port.error().message, "port 2 is beyond 'node001 mlx5_0''s 1 ports");

  Result<PortId> twin = resolve_port(f, {"MF0;switch", 1});
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.error().message, "node 'MF0;switch' is ambiguous: 2 nodes have that name or description");
}

}  // namespace
}  // namespace railyard::routing
