#include "routing/topology_writer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "routing/topology_reader.h"

namespace railyard::routing {
namespace topology_writer_test {  // not anonymous: unity builds compile several test files as one

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RAILYARD_SOURCE_DIR) + "/tests/data/topology/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Fabric build_ok(FabricBuilder& b) {
  auto f = b.build();
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? std::move(f).value() : Fabric();
}

Fabric reread(const Fabric& f) {
  std::string text = write_topology(f);
  auto g = read_topology(text, "written");
  EXPECT_TRUE(g.ok()) << g.error().message << "\n" << text;
  return g.ok() ? std::move(g).value() : Fabric();
}

// The round-trip property: same nodes (type, ports, GUIDs, descriptions),
// links, widths/speeds and LIDs. The writer keeps node order, so nodes are
// compared by index. Uncabled CA ports are not written (as ibnetdiscover), so
// their GUIDs and LIDs are not compared.
void expect_same_fabric(const Fabric& a, const Fabric& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  ASSERT_EQ(a.num_links(), b.num_links());
  EXPECT_EQ(a.has_lids(), b.has_lids());
  for (uint32_t i = 0; i < a.num_nodes(); ++i) {
    const NodeId n(i);
    const Node& x = a.node(n);
    const Node& y = b.node(n);
    SCOPED_TRACE(std::string(a.desc(n)));
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.num_ports, y.num_ports);
    EXPECT_EQ(x.guid, y.guid);
    EXPECT_EQ(x.system_guid, y.system_guid);
    EXPECT_EQ(a.desc(n), b.desc(n));
    for (uint8_t p = 0; p <= x.num_ports; ++p) {
      const Port& px = a.port(a.port_id(n, PortNum{p}));
      const Port& py = b.port(b.port_id(n, PortNum{p}));
      EXPECT_EQ(px.remote.valid(), py.remote.valid()) << "port " << int(p);
      bool written = x.type == NodeType::kSwitch ? p == 0 : px.remote.valid();
      if (written) {
        EXPECT_EQ(px.guid, py.guid) << "port " << int(p);
        EXPECT_EQ(px.lid, py.lid) << "port " << int(p);
        EXPECT_EQ(px.lmc, py.lmc) << "port " << int(p);
      }
      if (px.remote.valid() && py.remote.valid()) {
        EXPECT_EQ(a.port(px.remote).node, b.port(py.remote).node);
        EXPECT_EQ(a.port(px.remote).num, b.port(py.remote).num);
        EXPECT_EQ(a.link(px.link).width, b.link(py.link).width);
        EXPECT_EQ(a.link(px.link).speed, b.link(py.link).speed);
      }
    }
  }
}

// A small fabric with every feature the format carries.
Fabric small_fabric(bool lids, std::string_view router_desc = "gw \"edge\"") {
  FabricBuilder b;
  NodeId leaf = b.add_node(NodeType::kSwitch, 8, Guid{0x200000}, Guid{}, "leaf r0 0");
  NodeId spine = b.add_node(NodeType::kSwitch, 8, Guid{0x200001}, Guid{0x2000ff}, "spine 0", "Spine-Zero");
  NodeId ca = b.add_node(NodeType::kCa, 2, Guid{0x100000}, Guid{}, "node001 mlx5_0", "H-0000000000100000");
  NodeId rt = b.add_node(NodeType::kRouter, 1, Guid{0x300000}, Guid{}, router_desc);
  EXPECT_TRUE(b.set_port(ca, PortNum{1}, Guid{0x100001}, Lid{lids ? uint16_t{4} : uint16_t{0}}, lids ? 2 : 0).ok());
  EXPECT_TRUE(b.set_port(ca, PortNum{2}, Guid{0x100002}, Lid{}).ok());
  EXPECT_TRUE(b.set_port(rt, PortNum{1}, Guid{0x300001}, Lid{lids ? uint16_t{9} : uint16_t{0}}).ok());
  if (lids) {
    EXPECT_TRUE(b.set_port(leaf, PortNum{0}, Guid{}, Lid{1}).ok());
    EXPECT_TRUE(b.set_port(spine, PortNum{0}, Guid{}, Lid{2}).ok());
  }
  EXPECT_TRUE(b.connect(leaf, PortNum{1}, ca, PortNum{1}, LinkWidth::k4x, LinkSpeed::kHdr).ok());
  EXPECT_TRUE(b.connect(leaf, PortNum{5}, spine, PortNum{1}, LinkWidth::k4x, LinkSpeed::kNdr).ok());
  EXPECT_TRUE(b.connect(leaf, PortNum{6}, spine, PortNum{2}, LinkWidth::k2x, LinkSpeed::kFdr10).ok());
  EXPECT_TRUE(b.connect(spine, PortNum{8}, rt, PortNum{1}, LinkWidth::k1x, LinkSpeed::kSdr).ok());
  // Half-known links use ibnetdiscover's "??" / "???" placeholders.
  EXPECT_TRUE(b.connect(leaf, PortNum{7}, spine, PortNum{3}, LinkWidth::k4x, LinkSpeed::kUnknown).ok());
  EXPECT_TRUE(b.connect(leaf, PortNum{8}, spine, PortNum{4}, LinkWidth::kUnknown, LinkSpeed::kXdr).ok());
  EXPECT_TRUE(b.connect(spine, PortNum{5}, spine, PortNum{6}).ok());  // a loopback cable, nothing known
  return build_ok(b);
}

TEST(TopologyWriter, WritesIbnetdiscoverFormat) {
  Fabric f = small_fabric(true);
  TopologyWriteOptions options;
  options.header_comment = "written by railyard\n\nsecond line";
  const std::string expected =
      "# written by railyard\n"
      "#\n"
      "# second line\n"
      "\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x200000\nswitchguid=0x200000(200000)\n"
      "Switch\t8 \"S-0000000000200000\"\t\t# \"leaf r0 0\" enhanced port 0 lid 1 lmc 0\n"
      "[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"node001 mlx5_0\" lid 4 4xHDR\n"
      "[5]\t\"S-0000000000200001\"[1]\t\t# \"spine 0\" lid 2 4xNDR\n"
      "[6]\t\"S-0000000000200001\"[2]\t\t# \"spine 0\" lid 2 2xFDR10\n"
      "[7]\t\"S-0000000000200001\"[3]\t\t# \"spine 0\" lid 2 4x???\n"
      "[8]\t\"S-0000000000200001\"[4]\t\t# \"spine 0\" lid 2 ??XDR\n"
      "\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x2000ff\nswitchguid=0x200001(200001)\n"
      "Switch\t8 \"S-0000000000200001\"\t\t# \"spine 0\" enhanced port 0 lid 2 lmc 0\n"
      "[1]\t\"S-0000000000200000\"[5]\t\t# \"leaf r0 0\" lid 1 4xNDR\n"
      "[2]\t\"S-0000000000200000\"[6]\t\t# \"leaf r0 0\" lid 1 2xFDR10\n"
      "[3]\t\"S-0000000000200000\"[7]\t\t# \"leaf r0 0\" lid 1 4x???\n"
      "[4]\t\"S-0000000000200000\"[8]\t\t# \"leaf r0 0\" lid 1 ??XDR\n"
      "[5]\t\"S-0000000000200001\"[6]\t\t# \"spine 0\" lid 2\n"
      "[6]\t\"S-0000000000200001\"[5]\t\t# \"spine 0\" lid 2\n"
      "[8]\t\"R-0000000000300000\"[1](300001) \t\t# \"gw  edge \" lid 9 1xSDR\n"
      "\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x100000\ncaguid=0x100000\n"
      "Ca\t2 \"H-0000000000100000\"\t\t# \"node001 mlx5_0\"\n"
      "[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 4 lmc 2 \"leaf r0 0\" lid 1 4xHDR\n"
      "\n"
      "vendid=0x0\ndevid=0x0\nsysimgguid=0x300000\nrtguid=0x300000\n"
      "Rt\t1 \"R-0000000000300000\"\t\t# \"gw  edge \"\n"
      "[1](300001) \t\"S-0000000000200001\"[8]\t\t# lid 9 lmc 0 \"spine 0\" lid 2 1xSDR\n";
  EXPECT_EQ(write_topology(f, options), expected);
}

TEST(TopologyWriter, WritesZeroLidsWhenUnassigned) {
  Fabric f = small_fabric(false);
  std::string text = write_topology(f);
  EXPECT_NE(text.find("# \"leaf r0 0\" enhanced port 0 lid 0 lmc 0\n"), std::string::npos);
  EXPECT_NE(text.find("[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 0 lmc 0 \"leaf r0 0\" lid 0 4xHDR\n"),
            std::string::npos);
  Fabric g = reread(f);
  EXPECT_FALSE(g.has_lids());
}

TEST(TopologyRoundTrip, BuiltFabric) {
  for (bool lids : {true, false}) {
    SCOPED_TRACE(lids ? "with LIDs" : "without LIDs");
    Fabric f = small_fabric(lids, "gateway edge");
    Fabric g = reread(f);
    expect_same_fabric(f, g);
    EXPECT_EQ(g.name(NodeId(0)), "S-0000000000200000");
    EXPECT_EQ(g.name(NodeId(1)), "S-0000000000200001");  // a non-canonical name is replaced
  }
}

TEST(TopologyRoundTrip, QuotesInDescriptionsBecomeSpaces) {
  Fabric g = reread(small_fabric(true));
  EXPECT_EQ(g.desc(NodeId(3)), "gw  edge ");
}

TEST(TopologyRoundTrip, Fixtures) {
  for (const char* file : {"ibnetdiscover_net_lids.topo", "ibnetdiscover_features.topo",
                           "ibnetdiscover_2sw2path4hca.topo", "ibsim_net.net", "ibsim_net_1.net",
                           "ibsim_net_2sw2path.net", "ibsim_net_2sw2path4hca.net",
                           "ibsim_net_2sw2path4hca2port.net"}) {
    SCOPED_TRACE(file);
    auto f = read_topology(fixture(file), file);
    ASSERT_TRUE(f.ok()) << f.error().message;
    Fabric g = reread(*f);
    expect_same_fabric(*f, g);
    // Written once, the text is a fixed point.
    EXPECT_EQ(write_topology(g), write_topology(*f));
  }
}

TEST(TopologyRoundTrip, NodesWithoutGuids) {
  FabricBuilder b;
  NodeId s = b.add_node(NodeType::kSwitch, 4, Guid{}, Guid{}, "sw");
  NodeId c = b.add_node(NodeType::kCa, 1, Guid{}, Guid{}, "ca");
  ASSERT_TRUE(b.connect(s, PortNum{1}, c, PortNum{1}).ok());
  Fabric f = build_ok(b);
  std::string text = write_topology(f);
  EXPECT_EQ(text.find("guid="), std::string::npos);
  EXPECT_NE(text.find("Switch\t4 \"S-node0\"\t\t# \"sw\""), std::string::npos);
  Fabric g = reread(f);
  ASSERT_EQ(g.num_links(), 1u);
  // The reader gives them ibsim's GUIDs.
  EXPECT_EQ(g.node(NodeId(0)).guid, Guid{0x200000});
  EXPECT_EQ(g.node(NodeId(1)).guid, Guid{0x100000});
  EXPECT_EQ(g.desc(NodeId(1)), "ca");
}

// A two-level fat tree with 16,384 single-port CAs: 512 leaves of 32 down and
// 32 up ports, 256 spines of 64 ports, LIDs assigned.
Fabric large_fabric() {
  constexpr uint32_t kLeaves = 512, kSpines = 256, kDown = 32;
  FabricBuilder b;
  b.reserve(kLeaves + kSpines + kLeaves * kDown, (kLeaves + kSpines) * 65 + kLeaves * kDown * 2,
            kLeaves * kDown * 2);
  uint16_t lid = 1;
  char desc[64];
  std::vector<NodeId> leaves, spines;
  for (uint32_t l = 0; l < kLeaves; ++l) {
    std::snprintf(desc, sizeof desc, "leaf g%03u r%u", l / 8, l % 8);
    leaves.push_back(b.add_node(NodeType::kSwitch, 64, Guid{0xa00000 + l}, Guid{}, desc));
    EXPECT_TRUE(b.set_port(leaves.back(), PortNum{0}, Guid{}, Lid{lid++}).ok());
  }
  for (uint32_t s = 0; s < kSpines; ++s) {
    std::snprintf(desc, sizeof desc, "spine s%03u", s);
    spines.push_back(b.add_node(NodeType::kSwitch, 64, Guid{0xb00000 + s}, Guid{}, desc));
    EXPECT_TRUE(b.set_port(spines.back(), PortNum{0}, Guid{}, Lid{lid++}).ok());
  }
  // Leaves in 8 groups of 64; each group has 32 spines; spine port = leaf in group.
  for (uint32_t l = 0; l < kLeaves; ++l) {
    for (uint32_t k = 0; k < 32; ++k) {
      NodeId s = spines[(l / 64) * 32 + k];
      EXPECT_TRUE(b.connect(leaves[l], PortNum{uint8_t(33 + k)}, s, PortNum{uint8_t(l % 64 + 1)},
                            LinkWidth::k4x, LinkSpeed::kNdr).ok());
    }
  }
  for (uint32_t l = 0; l < kLeaves; ++l) {
    for (uint32_t i = 0; i < kDown; ++i) {
      uint32_t id = l * kDown + i;
      std::snprintf(desc, sizeof desc, "node%05u mlx5_%u", id / 8 + 1, id % 8);
      NodeId c = b.add_node(NodeType::kCa, 1, Guid{0xc000000 + 2 * id}, Guid{}, desc);
      EXPECT_TRUE(b.set_port(c, PortNum{1}, Guid{0xc000000 + 2 * id + 1}, Lid{lid++}).ok());
      EXPECT_TRUE(b.connect(leaves[l], PortNum{uint8_t(i + 1)}, c, PortNum{1}, LinkWidth::k4x, LinkSpeed::kNdr).ok());
    }
  }
  return build_ok(b);
}

TEST(TopologyRoundTrip, LargeFabric) {
  Fabric f = large_fabric();
  auto t0 = std::chrono::steady_clock::now();
  std::string text = write_topology(f);
  auto t1 = std::chrono::steady_clock::now();
  auto g = read_topology(text, "large");
  auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(g.ok()) << g.error().message;
  expect_same_fabric(f, *g);
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  // Reported, not asserted: timings depend on the machine and sanitizers.
  std::printf("[ timing ] %zu nodes, %zu lines, %zu bytes: write %.1f ms, read %.1f ms\n", f.num_nodes(), lines,
              text.size(), ms(t1 - t0), ms(t2 - t1));
  RecordProperty("read_ms", std::to_string(ms(t2 - t1)));
}

}  // namespace topology_writer_test
}  // namespace railyard::routing
