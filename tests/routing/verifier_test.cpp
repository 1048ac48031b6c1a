// The verifier must catch what is wrong in tables it did not make: loops,
// blackholes and credit loops, on hand-made tables.
#include <gtest/gtest.h>

#include "routing/lid_assignment.h"
#include "routing/switch_graph.h"
#include "routing/verifier.h"

namespace railyard::routing {
namespace verifier_test {  // not anonymous: unity builds compile several test files as one

// Four switches in a ring (s0-s1-s2-s3-s0), one CA on each (port 3).
Fabric ring4() {
  FabricBuilder b;
  std::vector<NodeId> sw;
  for (int i = 0; i < 4; ++i) sw.push_back(b.add_node(NodeType::kSwitch, 4, Guid{uint64_t(0x10 + i)}, {}, "s" + std::to_string(i)));
  // Port 1 goes clockwise, port 2 counter-clockwise.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(b.connect(sw[i], PortNum{1}, sw[(i + 1) % 4], PortNum{2}).ok());
  for (int i = 0; i < 4; ++i) {
    NodeId ca = b.add_node(NodeType::kCa, 1, Guid{uint64_t(0x20 + i)}, {}, "h" + std::to_string(i) + " mlx5_0");
    EXPECT_TRUE(b.connect(ca, PortNum{1}, sw[i], PortNum{3}).ok());
  }
  return std::move(assign_lids(*b.build())).value();
}

Lid ca_lid(const Fabric& f, int i) { return f.port(f.primary_port(f.find_name("h" + std::to_string(i) + " mlx5_0"))).lid; }
Lid sw_lid(const Fabric& f, int i) { return f.port(f.node(f.find_name("s" + std::to_string(i))).first_port).lid; }

// Clockwise routing everywhere: reachable, but a credit loop (every ring link
// depends on the next one).
ForwardingTables clockwise(const Fabric& f) {
  ForwardingTables t(4, f.max_lid().value + 1u);
  for (uint32_t s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) {
      t.set(s, ca_lid(f, d), static_cast<int>(s) == d ? 3 : 1);
      t.set(s, sw_lid(f, d), static_cast<int>(s) == d ? 0 : 1);
    }
  }
  return t;
}

TEST(Verifier, FindsCreditLoopOfClockwiseRing) {
  Fabric f = ring4();
  VerifyReport v = verify_tables(f, clockwise(f));
  EXPECT_EQ(v.reachable, v.pairs);
  EXPECT_EQ(v.pairs, 12u);
  EXPECT_FALSE(v.cdg_ca.acyclic);
  EXPECT_NE(v.cdg_ca.cycle.find("s0[1]"), std::string::npos) << v.cdg_ca.cycle;
  EXPECT_EQ(v.max_stretch, 2u);  // h0 -> h3 goes three hops clockwise instead of one back
}

TEST(Verifier, FindsBlackholeAndLoopWithPaths) {
  Fabric f = ring4();
  ForwardingTables t = clockwise(f);
  t.set(1, ca_lid(f, 3), ForwardingTables::kNoPath);  // s1 drops traffic for h3
  t.set(2, ca_lid(f, 0), 2);                           // s2 sends h0's traffic back to s1 ...
  t.set(1, ca_lid(f, 0), 1);                           // ... which sends it to s2 again
  VerifyReport v = verify_tables(f, t);
  EXPECT_GT(v.blackholed, 0u);
  EXPECT_GT(v.looped, 0u);
  EXPECT_LT(v.reachable, v.pairs);
  bool saw_hole = false, saw_loop = false;
  for (const auto& e : v.examples) {
    if (e.kind == PathProblem::Kind::kBlackhole) {
      saw_hole = true;
      EXPECT_NE(e.path.find("no path (blackhole)"), std::string::npos) << e.path;
    } else {
      saw_loop = true;
      EXPECT_NE(e.path.find("(loop)"), std::string::npos) << e.path;
    }
  }
  EXPECT_TRUE(saw_hole);
  EXPECT_TRUE(saw_loop);
}

TEST(Verifier, TraceNamesEveryHop) {
  Fabric f = ring4();
  std::string path = trace_path(f, clockwise(f), f.find_name("h0 mlx5_0"), ca_lid(f, 2));
  EXPECT_EQ(path, "h0 mlx5_0[1] -> s0[1] -> s1[1] -> s2[3] -> h2 mlx5_0 (delivered)");
}

}  // namespace verifier_test
}  // namespace railyard::routing
