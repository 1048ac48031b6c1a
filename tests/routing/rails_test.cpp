#include "routing/rails.h"

#include "routing/generator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace railyard::routing {
namespace rails_test {  // not anonymous: unity builds compile several test files as one

// Small fabrics built by hand: a node per call, GUIDs counting up from `guid`.
class Net {
 public:
  NodeId sw(std::string_view desc, uint8_t ports = 8) {
    return b_.add_node(NodeType::kSwitch, ports, Guid{++guid_}, Guid{}, desc);
  }
  NodeId ca(std::string_view desc, uint64_t guid = 0, uint8_t ports = 1) {
    return b_.add_node(NodeType::kCa, ports, Guid{guid ? guid : ++guid_}, Guid{}, desc);
  }
  void cable(NodeId a, uint8_t pa, NodeId b, uint8_t pb) {
    Result<LinkId> r = b_.connect(a, PortNum{pa}, b, PortNum{pb});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  Fabric build() {
    Result<Fabric> f = b_.build();
    EXPECT_TRUE(f.ok()) << f.error().message;
    return f.ok() ? std::move(*f) : Fabric();
  }

 private:
  FabricBuilder b_;
  uint64_t guid_ = 0x1000;
};

// A 2x2 rail-optimized fat tree: hosts node001 and node002 with two rails,
// leaf r0 and leaf r1 (one per rail), one spine joined to both leaves.
struct Roft {
  Net net;
  NodeId leaf0, leaf1, spine;
  NodeId h1r0, h1r1, h2r0, h2r1;
  explicit Roft(const char* fmt = "node00%d mlx5_%d") {
    leaf0 = net.sw("leaf r0");
    leaf1 = net.sw("leaf r1");
    spine = net.sw("spine 0");
    char buf[64];
    auto ca = [&](int host, int rail) {
      std::snprintf(buf, sizeof buf, fmt, host, rail);
      return net.ca(buf);
    };
    h1r0 = ca(1, 0);
    h1r1 = ca(1, 1);
    h2r0 = ca(2, 0);
    h2r1 = ca(2, 1);
    net.cable(h1r0, 1, leaf0, 1);
    net.cable(h2r0, 1, leaf0, 2);
    net.cable(h1r1, 1, leaf1, 1);
    net.cable(h2r1, 1, leaf1, 2);
    net.cable(leaf0, 5, spine, 1);
    net.cable(leaf1, 5, spine, 2);
  }
};

std::vector<std::string> details(const RailMap& m) {
  std::vector<std::string> out;
  for (const Misfit& x : m.misfits) out.push_back(x.detail);
  return out;
}

TEST(Rails, HealthyRoft) {
  Roft t;
  Fabric f = t.net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"node001", "node002"}));
  EXPECT_EQ(m.num_rails, 2u);
  EXPECT_EQ(m.rail[t.h1r0.value()], 0);
  EXPECT_EQ(m.rail[t.h1r1.value()], 1);
  EXPECT_EQ(m.rail[t.h2r1.value()], 1);
  EXPECT_EQ(m.host[t.h1r1.value()], 0u);
  EXPECT_EQ(m.host[t.h2r0.value()], 1u);
  EXPECT_EQ(m.rail[t.leaf0.value()], 0);
  EXPECT_EQ(m.rail[t.leaf1.value()], 1);
  EXPECT_EQ(m.rail[t.spine.value()], kNoRail);
  EXPECT_EQ(m.level[t.leaf0.value()], 0);
  EXPECT_EQ(m.level[t.leaf1.value()], 0);
  EXPECT_EQ(m.level[t.spine.value()], 1);
  EXPECT_EQ(m.level[t.h1r0.value()], kNoLevel);
  EXPECT_EQ(m.max_level, 1);
  EXPECT_EQ(m.leaf[t.h2r1.value()], t.leaf1);
  EXPECT_FALSE(m.leaf[t.leaf0.value()].valid());
  EXPECT_EQ(m.host[t.spine.value()], kNoHost);
  EXPECT_TRUE(m.misfits.empty()) << ::testing::PrintToString(details(m));
}

TEST(Rails, DashSeparatorAndLeadingZeros) {
  Roft t("host-%d-mlx5_0%d");
  Fabric f = t.net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"host-1", "host-2"}));
  EXPECT_EQ(m.rail[t.h2r1.value()], 1);
  EXPECT_TRUE(m.misfits.empty());
}

TEST(Rails, RailFromRankWhenDescriptionHasNone) {
  Net net;
  NodeId leaf = net.sw("leaf");
  // GUIDs out of node order: the rank follows the GUID.
  NodeId a = net.ca("gpu01 HCA-2", 0x30);
  NodeId b = net.ca("gpu01 HCA-1", 0x10);
  NodeId c = net.ca("gpu01 HCA-3", 0x20);
  NodeId lone = net.ca("gpu02", 0x40);  // no space: the whole description is the host
  net.cable(a, 1, leaf, 1);
  net.cable(b, 1, leaf, 2);
  net.cable(c, 1, leaf, 3);
  net.cable(lone, 1, leaf, 4);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.rail[b.value()], 0);
  EXPECT_EQ(m.rail[c.value()], 1);
  EXPECT_EQ(m.rail[a.value()], 2);
  EXPECT_EQ(m.rail[lone.value()], 0);
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(m.num_rails, 3u);
  // The leaf has rails 0 (2 CAs), 1, 2: rail 0, and misfits for the rest.
  EXPECT_EQ(m.rail[leaf.value()], 0);
  EXPECT_EQ(details(m), (std::vector<std::string>{
                            "CA 'gpu01 HCA-2' (rail 2) is on leaf 'leaf' of rail 0",
                            "CA 'gpu01 HCA-3' (rail 1) is on leaf 'leaf' of rail 0",
                            "leaf 'leaf' serves rails 0 (2 CAs), 1 (1 CA), 2 (1 CA); its rail is 0",
                        }));
}

TEST(Rails, RankCountsEveryCaOfTheHost) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId named = net.ca("n1 mlx5_0", 0x10);
  NodeId bare = net.ca("n1 HCA", 0x20);
  net.cable(named, 1, leaf, 1);
  net.cable(bare, 1, leaf, 2);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.rail[named.value()], 0);
  EXPECT_EQ(m.rail[bare.value()], 1);
  EXPECT_EQ(m.host[named.value()], m.host[bare.value()]);
}

TEST(Rails, NoInferenceLeavesCasWithoutRail) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId a = net.ca("gpu01 HCA-1");
  NodeId b = net.ca("");
  NodeId c = net.ca("gpu01 mlx5_3");
  net.cable(a, 1, leaf, 1);
  net.cable(b, 1, leaf, 2);
  net.cable(c, 1, leaf, 3);
  Fabric f = net.build();
  policies::RailNaming naming;
  naming.infer_from_structure = false;
  RailMap m = map_rails(f, naming);
  EXPECT_EQ(m.rail[a.value()], kNoRail);
  EXPECT_EQ(m.hosts, std::vector<std::string>{"gpu01"});  // first word still names the host
  EXPECT_EQ(m.host[a.value()], 0u);
  EXPECT_EQ(m.host[b.value()], kNoHost);
  EXPECT_EQ(m.rail[c.value()], 3);
  EXPECT_EQ(m.rail[leaf.value()], 3);
  EXPECT_EQ(m.num_rails, 4u);
  ASSERT_EQ(m.misfits.size(), 2u);
  EXPECT_EQ(m.misfits[0].kind, Misfit::Kind::kCaWithoutRail);
  EXPECT_EQ(m.misfits[0].node, a);
  EXPECT_EQ(m.misfits[0].detail,
            "CA 'gpu01 HCA-1' has no rail: its description matches no rail pattern and rail inference is off");
  EXPECT_EQ(m.misfits[1].detail, "CA 0x0000000000001003 has no rail: its description matches no rail pattern and is empty");
}

TEST(Rails, EmptyDescriptionHasNoHostEvenWithInference) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId b = net.ca("");
  net.cable(b, 1, leaf, 1);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.rail[b.value()], kNoRail);
  EXPECT_EQ(m.host[b.value()], kNoHost);
  EXPECT_EQ(m.rail[leaf.value()], kNoRail);
  EXPECT_EQ(m.num_rails, 0u);
  ASSERT_EQ(m.misfits.size(), 1u);
  EXPECT_EQ(m.misfits[0].kind, Misfit::Kind::kCaWithoutRail);
  EXPECT_EQ(m.misfits[0].detail, "CA 0x0000000000001002 has no rail: its description matches no rail pattern and is empty");
}

TEST(Rails, MiscabledCa) {
  Roft t;
  // node003's rail-1 CA lands on the rail-0 leaf.
  NodeId stray = t.net.ca("node003 mlx5_1");
  t.net.cable(stray, 1, t.leaf0, 3);
  Fabric f = t.net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.rail[t.leaf0.value()], 0);
  ASSERT_EQ(m.misfits.size(), 2u);
  EXPECT_EQ(m.misfits[0].kind, Misfit::Kind::kCaRailDiffersFromLeaf);
  EXPECT_EQ(m.misfits[0].node, stray);
  EXPECT_EQ(m.misfits[0].detail, "CA 'node003 mlx5_1' (rail 1) is on leaf 'leaf r0' of rail 0");
  EXPECT_EQ(m.misfits[1].kind, Misfit::Kind::kLeafServesSeveralRails);
  EXPECT_EQ(m.misfits[1].node, t.leaf0);
  EXPECT_EQ(m.misfits[1].detail, "leaf 'leaf r0' serves rails 0 (2 CAs), 1 (1 CA); its rail is 0");
}

TEST(Rails, LeafWithTwoRailsTiesToLowest) {
  Net net;
  NodeId leaf = net.sw("mixed leaf");
  NodeId a = net.ca("h1 mlx5_3");
  NodeId b = net.ca("h2 mlx5_1");
  net.cable(a, 1, leaf, 1);
  net.cable(b, 1, leaf, 2);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.rail[leaf.value()], 1);
  EXPECT_EQ(details(m), (std::vector<std::string>{
                            "CA 'h1 mlx5_3' (rail 3) is on leaf 'mixed leaf' of rail 1",
                            "leaf 'mixed leaf' serves rails 1 (1 CA), 3 (1 CA); its rail is 1",
                        }));
}

TEST(Rails, CasWithoutLeaf) {
  Roft t;
  NodeId loose = t.net.ca("node009 mlx5_0");
  NodeId x = t.net.ca("node010 mlx5_0");
  NodeId y = t.net.ca("node011 mlx5_0");
  t.net.cable(x, 1, y, 1);  // back-to-back CAs: no switch
  Fabric f = t.net.build();
  RailMap m = map_rails(f, {});
  EXPECT_FALSE(m.leaf[loose.value()].valid());
  EXPECT_EQ(m.rail[loose.value()], 0);  // the rail is still known from the name
  EXPECT_EQ(details(m), (std::vector<std::string>{
                            "CA 'node009 mlx5_0' is not cabled to a switch",
                            "CA 'node010 mlx5_0' is not cabled to a switch",
                            "CA 'node011 mlx5_0' is not cabled to a switch",
                        }));
  for (const Misfit& x : m.misfits) EXPECT_EQ(x.kind, Misfit::Kind::kCaWithoutLeaf);
}

TEST(Rails, DualPortCaCountsOnEachLeafOnce) {
  Net net;
  NodeId l0 = net.sw("l0");
  NodeId l1 = net.sw("l1");
  NodeId ca = net.ca("h mlx5_0", 0, 3);
  net.cable(ca, 2, l1, 1);
  net.cable(ca, 3, l1, 2);
  net.cable(ca, 1, l0, 1);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.leaf[ca.value()], l0);  // lowest cabled port
  EXPECT_EQ(m.rail[l0.value()], 0);
  EXPECT_EQ(m.rail[l1.value()], 0);
  EXPECT_EQ(m.level[l1.value()], 0);
  EXPECT_TRUE(m.misfits.empty());
}

TEST(Rails, LevelsByBreadthFirstSearch) {
  Net net;
  NodeId leaf_a = net.sw("leaf a");
  NodeId leaf_b = net.sw("leaf b");
  NodeId spine = net.sw("spine");
  NodeId core = net.sw("core");
  NodeId island = net.sw("island");   // no cable at all
  NodeId orphan1 = net.sw("orphan 1");  // switches cabled only to each other
  NodeId orphan2 = net.sw("orphan 2");
  NodeId a = net.ca("h1 mlx5_0");
  NodeId b = net.ca("h2 mlx5_0");
  net.cable(a, 1, leaf_a, 1);
  net.cable(b, 1, leaf_b, 1);
  net.cable(leaf_a, 2, spine, 1);
  net.cable(spine, 2, core, 1);
  net.cable(core, 2, leaf_b, 2);  // leaf_b reaches core directly: core is level 1
  net.cable(orphan1, 1, orphan2, 1);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.level[leaf_a.value()], 0);
  EXPECT_EQ(m.level[leaf_b.value()], 0);
  EXPECT_EQ(m.level[spine.value()], 1);
  EXPECT_EQ(m.level[core.value()], 1);
  EXPECT_EQ(m.level[island.value()], kNoLevel);
  EXPECT_EQ(m.level[orphan1.value()], kNoLevel);
  EXPECT_EQ(m.level[orphan2.value()], kNoLevel);
  EXPECT_EQ(m.max_level, 1);
}

TEST(Rails, ThreeLevels) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId spine = net.sw("spine");
  NodeId core = net.sw("core");
  NodeId a = net.ca("h1 mlx5_0");
  net.cable(a, 1, leaf, 1);
  net.cable(leaf, 2, spine, 1);
  net.cable(spine, 2, core, 1);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.level[core.value()], 2);
  EXPECT_EQ(m.max_level, 2);
}

TEST(Rails, NoCasNoLevels) {
  Net net;
  NodeId s = net.sw("s");
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_EQ(m.level[s.value()], kNoLevel);
  EXPECT_EQ(m.max_level, kNoLevel);
  EXPECT_EQ(m.num_rails, 0u);
  EXPECT_TRUE(m.hosts.empty());
}

TEST(Rails, CustomPatternsInOrder) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId a = net.ca("srv7 HCA-2");
  NodeId b = net.ca("srv7_ib5");
  NodeId c = net.ca("srv8 mlx5_1");  // matched by no custom pattern: inferred
  net.cable(a, 1, leaf, 1);
  net.cable(b, 1, leaf, 2);
  net.cable(c, 1, leaf, 3);
  Fabric f = net.build();
  policies::RailNaming naming;
  naming.patterns = {R"(^(\S+) HCA-([0-9]+)$)", R"(^(srv[0-9]+)_ib([0-9])$)"};
  RailMap m = map_rails(f, naming);
  EXPECT_EQ(m.rail[a.value()], 2);
  EXPECT_EQ(m.rail[b.value()], 5);
  EXPECT_EQ(m.rail[c.value()], 0);
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"srv7", "srv8"}));
}

TEST(Rails, HugeRailNumberIsNotBelieved) {
  Net net;
  NodeId leaf = net.sw("leaf");
  NodeId a = net.ca("h1 mlx5_99999999999999999999");
  NodeId b = net.ca("h1 mlx5_1024");
  NodeId c = net.ca("h1 mlx5_1023");
  net.cable(a, 1, leaf, 1);
  net.cable(b, 1, leaf, 2);
  net.cable(c, 1, leaf, 3);
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  // a and b fall back to rank among h1's CAs (a, b, c by GUID).
  EXPECT_EQ(m.rail[a.value()], 0);
  EXPECT_EQ(m.rail[b.value()], 1);
  EXPECT_EQ(m.rail[c.value()], kMaxRail);
  EXPECT_EQ(m.num_rails, static_cast<uint32_t>(kMaxRail) + 1);
}

TEST(Rails, FactoryDescriptionsAreNotHosts) {
  Net net;
  NodeId leaf = net.sw("leaf", 80);
  std::vector<NodeId> cas;
  for (int i = 0; i < 70; ++i) {
    cas.push_back(net.ca("MT4129 ConnectX7   Mellanox Technologies"));
    net.cable(cas.back(), 1, leaf, static_cast<uint8_t>(i + 1));
  }
  Fabric f = net.build();
  RailMap m = map_rails(f, {});
  EXPECT_TRUE(m.hosts.empty());
  EXPECT_EQ(m.num_rails, 0u);
  ASSERT_EQ(m.misfits.size(), 70u);
  EXPECT_EQ(m.misfits[0].detail,
            "CA 'MT4129 ConnectX7   Mellanox Technologies' has no rail: its description matches no rail pattern "
            "and 'MT4129' starts 70 descriptions, too many to be a host");
}

// Generated rail-optimized fat trees: every CA's rail is its mlx5 index, every
// leaf "leaf gG rR" has rail R, levels follow the tree, no misfits — also
// after seeded removal of switch links, which must not change leaf rails.
TEST(Rails, GeneratedRoftsHaveNoMisfits) {
  for (uint32_t levels : {2u, 3u}) {
    for (uint32_t removed : {0u, 5u}) {
      GeneratorSpec spec;
      spec.servers = levels == 2 ? 32 : 128;
      spec.rails = 4;
      spec.levels = levels;
      spec.radix = levels == 2 ? 32 : 16;
      spec.remove_switch_links = removed;
      spec.seed = 3;
      Result<GeneratedFabric> g = generate_fabric(spec);
      ASSERT_TRUE(g.ok()) << g.error().message;
      const Fabric& f = g->fabric;
      RailMap m = map_rails(f, {});
      EXPECT_TRUE(m.misfits.empty()) << ::testing::PrintToString(details(m));
      EXPECT_EQ(m.num_rails, spec.rails);
      EXPECT_EQ(m.hosts.size(), spec.servers);
      EXPECT_EQ(m.max_level, static_cast<int32_t>(levels) - 1);
      for (NodeId sw : f.switches()) {
        std::string_view d = f.desc(sw);
        if (d.rfind("leaf", 0) != 0) {
          EXPECT_GT(m.level[sw.value()], 0) << d;
          continue;
        }
        EXPECT_EQ(m.level[sw.value()], 0) << d;
        int32_t rail = d.back() - '0';  // "leaf gGGG rR", R < 10 here
        EXPECT_EQ(m.rail[sw.value()], rail) << d;
      }
    }
  }
}

// The hand-written matcher for the default pattern family must agree with
// std::regex on every description. The non-capturing wrapper keeps the regex
// identical in meaning while forcing map_rails onto the std::regex path.
TEST(Rails, FastPathMatchesStdRegex) {
  const std::vector<std::string> pieces = {"a", "node01", " ", "-", "mlx5_", "mlx5", "_", "0", "7", "12",
                                           "\n", "\r", "\t", "\xc3\xa9", "mlx4_", "x", "--", "  "};
  std::mt19937 rng(7);
  Net net;
  std::vector<NodeId> cas;
  for (int i = 0; i < 3000; ++i) {
    std::string d;
    int n = static_cast<int>(rng() % 7);
    for (int k = 0; k < n; ++k) d += pieces[rng() % pieces.size()];
    if (rng() % 2) d += std::string(rng() % 2 ? " " : "-") + "mlx5_" + std::to_string(rng() % 2000);
    cas.push_back(net.ca(d));
  }
  Fabric f = net.build();
  for (const char* fast : {R"(^(.+?)[ -]mlx5_([0-9]+)$)", R"(^(.+?) mlx5_([0-9]+)$)", R"(^(.+?)-mlx5_([0-9]+)$)"}) {
    policies::RailNaming fast_naming{{fast}, false};
    policies::RailNaming slow_naming{{"(?:" + std::string(fast) + ")"}, false};
    RailMap a = map_rails(f, fast_naming);
    RailMap b = map_rails(f, slow_naming);
    int matched = 0;
    for (NodeId ca : cas) {
      ASSERT_EQ(a.rail[ca.value()], b.rail[ca.value()]) << fast << " on '" << f.desc(ca) << "'";
      std::string_view ha = a.host[ca.value()] == kNoHost ? std::string_view() : std::string_view(a.hosts[a.host[ca.value()]]);
      std::string_view hb = b.host[ca.value()] == kNoHost ? std::string_view() : std::string_view(b.hosts[b.host[ca.value()]]);
      ASSERT_EQ(ha, hb) << fast << " on '" << f.desc(ca) << "'";
      matched += a.rail[ca.value()] != kNoRail;
    }
    EXPECT_GT(matched, 150) << fast;  // both branches are exercised
  }
}

// 16k CAs (2,048 hosts x 8 rails, 16 leaves per rail): correctness at size,
// and the time, reported as a test property rather than asserted.
TEST(Rails, SixteenThousandCas) {
  Net net;
  constexpr int kHosts = 2048, kRails = 8, kPerLeaf = 128;
  std::vector<NodeId> leaves;
  for (int r = 0; r < kRails; ++r) {
    for (int g = 0; g < kHosts / kPerLeaf; ++g) leaves.push_back(net.sw("leaf g" + std::to_string(g) + " r" + std::to_string(r), 254));
  }
  for (int h = 0; h < kHosts; ++h) {
    for (int r = 0; r < kRails; ++r) {
      NodeId ca = net.ca("node" + std::to_string(10000 + h) + " mlx5_" + std::to_string(r));
      net.cable(ca, 1, leaves[r * (kHosts / kPerLeaf) + h / kPerLeaf], static_cast<uint8_t>(h % kPerLeaf + 1));
    }
  }
  Fabric f = net.build();
  auto t0 = std::chrono::steady_clock::now();
  RailMap m = map_rails(f, {});
  auto fast_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(m.hosts.size(), static_cast<size_t>(kHosts));
  EXPECT_EQ(m.num_rails, static_cast<uint32_t>(kRails));
  EXPECT_TRUE(m.misfits.empty());
  for (size_t i = 0; i < leaves.size(); ++i) EXPECT_EQ(m.rail[leaves[i].value()], static_cast<int32_t>(i / (kHosts / kPerLeaf)));

  t0 = std::chrono::steady_clock::now();
  RailMap slow = map_rails(f, policies::RailNaming{{R"((?:^(.+?)[ -]mlx5_([0-9]+)$))"}, true});
  auto regex_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(slow.rail, m.rail);
  RecordProperty("map_rails_16k_default_us", static_cast<int>(fast_us));
  RecordProperty("map_rails_16k_std_regex_us", static_cast<int>(regex_us));
}

}  // namespace rails_test
}  // namespace railyard::routing
