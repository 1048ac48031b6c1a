#include "routing/topology_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "routing/topology_writer.h"

namespace railyard::routing {
namespace topology_reader_test {  // not anonymous: unity builds compile several test files as one

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RAILYARD_SOURCE_DIR) + "/tests/data/topology/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Fabric read_ok(std::string_view text, std::string_view source = "t.topo") {
  auto f = read_topology(text, source);
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? std::move(f).value() : Fabric();
}

std::string read_error(std::string_view text) {
  auto f = read_topology(text, "t.topo");
  EXPECT_FALSE(f.ok()) << "expected an error for:\n" << text;
  return f.ok() ? std::string() : f.error().message;
}

NodeId by_name(const Fabric& f, std::string_view name) {
  NodeId n = f.find_name(name);
  EXPECT_TRUE(n.valid()) << name;
  return n;
}

const Port& port_of(const Fabric& f, std::string_view node, uint8_t p) {
  return f.port(f.port_id(by_name(f, node), PortNum{p}));
}

// Links as (desc a, port a, desc b, port b) with the smaller end first, so two
// fabrics can be compared regardless of which end listed the link first.
using LinkKey = std::tuple<std::string, int, std::string, int>;
std::set<LinkKey> link_set(const Fabric& f) {
  std::set<LinkKey> out;
  for (const Link& l : f.links()) {
    const Port& a = f.port(l.a);
    const Port& b = f.port(l.b);
    LinkKey x{std::string(f.desc(a.node)), a.num.value, std::string(f.desc(b.node)), b.num.value};
    LinkKey y{std::string(f.desc(b.node)), b.num.value, std::string(f.desc(a.node)), a.num.value};
    out.insert(std::min(x, y));
  }
  return out;
}

// --- ibnetdiscover dialect -------------------------------------------------

TEST(TopologyReader, ReadsIbnetdiscoverOutputWithLids) {
  Fabric f = read_ok(fixture("ibnetdiscover_net_lids.topo"));
  ASSERT_EQ(f.num_nodes(), 4u);
  EXPECT_EQ(f.switches().size(), 2u);
  EXPECT_EQ(f.cas().size(), 2u);
  EXPECT_EQ(f.num_links(), 4u);

  NodeId sw2 = by_name(f, "S-0000000000200001");
  EXPECT_EQ(f.desc(sw2), "Switch2");
  EXPECT_EQ(f.name(sw2), "S-0000000000200001");
  EXPECT_EQ(f.find_name("Switch2"), sw2);  // descriptions are searchable too
  EXPECT_EQ(f.node(sw2).guid, Guid{0x200001});
  EXPECT_EQ(f.node(sw2).system_guid, Guid{0x200001});
  EXPECT_EQ(f.node(sw2).num_ports, 8);
  EXPECT_EQ(f.port(f.node(sw2).first_port).lid, Lid{3});
  EXPECT_EQ(port_of(f, "Switch1", 0).lid, Lid{1});

  NodeId hca2 = by_name(f, "Hca2");
  EXPECT_EQ(f.node(hca2).type, NodeType::kCa);
  EXPECT_EQ(f.node(hca2).guid, Guid{0x100003});
  EXPECT_EQ(port_of(f, "Hca2", 2).guid, Guid{0x100005});
  EXPECT_EQ(port_of(f, "Hca2", 2).lid, Lid{4});
  EXPECT_EQ(f.find_port_guid(Guid{0x100005}), f.port_id(hca2, PortNum{2}));
  EXPECT_EQ(f.lid_owner(Lid{2}), f.port_id(by_name(f, "Hca1"), PortNum{1}));
  EXPECT_FALSE(port_of(f, "Hca2", 1).remote.valid());

  const Port& p = port_of(f, "Switch1", 2);
  ASSERT_TRUE(p.remote.valid());
  EXPECT_EQ(p.remote, f.port_id(hca2, PortNum{2}));
  EXPECT_EQ(f.link(p.link).width, LinkWidth::k4x);
  EXPECT_EQ(f.link(p.link).speed, LinkSpeed::kSdr);
}

TEST(TopologyReader, ReadsRealFeatures) {
  Fabric f = read_ok(fixture("ibnetdiscover_features.topo"));
  ASSERT_EQ(f.num_nodes(), 5u);
  EXPECT_EQ(f.num_links(), 5u);

  NodeId leaf = by_name(f, "leaf r0 0");
  EXPECT_EQ(f.node(leaf).guid, Guid{0xb8cef60300a0b0c0});
  EXPECT_EQ(f.node(leaf).num_ports, 40);
  EXPECT_EQ(port_of(f, "leaf r0 0", 0).lid, Lid{5});

  // Extended port numbers label the front panel; the link uses the IB port.
  const Port& up1 = port_of(f, "leaf r0 0", 33);
  EXPECT_EQ(up1.remote, f.port_id(by_name(f, "spine 0"), PortNum{1}));
  EXPECT_EQ(f.link(up1.link).speed, LinkSpeed::kHdr);
  const Port& up2 = port_of(f, "leaf r0 0", 34);
  EXPECT_EQ(up2.remote, f.port_id(by_name(f, "spine 0"), PortNum{2}));
  EXPECT_EQ(f.link(up2.link).speed, LinkSpeed::kFdr10);

  const Port& n2 = port_of(f, "node002 mlx5_0", 1);
  EXPECT_EQ(f.link(n2.link).width, LinkWidth::k2x);
  EXPECT_EQ(f.link(n2.link).speed, LinkSpeed::kNdr);

  // A CA whose port GUID equals its node GUID (as mlx5 reports) is fine.
  NodeId n1 = by_name(f, "node001 mlx5_0");
  EXPECT_EQ(f.node(n1).system_guid, Guid{0xb8cef60300112238});
  EXPECT_EQ(port_of(f, "node001 mlx5_0", 1).guid, Guid{0xb8cef60300112230});
  EXPECT_EQ(port_of(f, "node001 mlx5_0", 1).lmc, 2);
  EXPECT_EQ(f.lid_owner(Lid{11}), f.port_id(n1, PortNum{1}));  // LMC 2: LIDs 8..11

  NodeId rt = by_name(f, "gateway rtr");
  EXPECT_EQ(f.node(rt).type, NodeType::kRouter);
  EXPECT_EQ(port_of(f, "gateway rtr", 1).guid, Guid{0x2c90300000101});
  EXPECT_EQ(port_of(f, "gateway rtr", 1).lid, Lid{20});
  EXPECT_EQ(f.link(port_of(f, "gateway rtr", 1).link).speed, LinkSpeed::kEdr);
}

// --- ibsim's hand-written dialect ------------------------------------------

TEST(TopologyReader, ReadsEveryIbsimExample) {
  struct Case {
    const char* file;
    size_t nodes, switches, links;
  };
  for (const Case& c : {Case{"ibsim_net.net", 4, 2, 4}, Case{"ibsim_net_1.net", 3, 1, 2},
                        Case{"ibsim_net_2sw2path.net", 4, 2, 4}, Case{"ibsim_net_2sw2path4hca.net", 6, 2, 6},
                        Case{"ibsim_net_2sw2path4hca2port.net", 4, 2, 6}}) {
    SCOPED_TRACE(c.file);
    Fabric f = read_ok(fixture(c.file), c.file);
    EXPECT_EQ(f.num_nodes(), c.nodes);
    EXPECT_EQ(f.switches().size(), c.switches);
    EXPECT_EQ(f.num_links(), c.links);
    EXPECT_FALSE(f.has_lids());
    // Without a header comment the record id is also the description.
    NodeId sw = by_name(f, "Switch1");
    EXPECT_EQ(f.desc(sw), "Switch1");
    EXPECT_EQ(f.name(sw), "Switch1");
  }
}

// ibsim loaded the hand-written file and ibnetdiscover printed what it saw:
// both must describe the same fabric, GUIDs included.
TEST(TopologyReader, AssignsTheGuidsIbsimAssigns) {
  Fabric hand = read_ok(fixture("ibsim_net_2sw2path4hca.net"));
  Fabric disc = read_ok(fixture("ibnetdiscover_2sw2path4hca.topo"));
  ASSERT_EQ(hand.num_nodes(), disc.num_nodes());
  for (const char* name : {"Switch1", "Switch2", "Hca1", "Hca2", "Hca3", "Hca4"}) {
    SCOPED_TRACE(name);
    NodeId a = by_name(hand, name), b = by_name(disc, name);
    EXPECT_EQ(hand.node(a).guid, disc.node(b).guid);
    EXPECT_EQ(hand.node(a).type, disc.node(b).type);
    EXPECT_EQ(hand.node(a).num_ports, disc.node(b).num_ports);
    if (!hand.is_switch(a)) {
      EXPECT_EQ(hand.port(hand.port_id(a, PortNum{1})).guid, disc.port(disc.port_id(b, PortNum{1})).guid);
    }
  }
  EXPECT_EQ(hand.node(by_name(hand, "Hca3")).guid, Guid{0x100006});
  EXPECT_EQ(link_set(hand), link_set(disc));
}

TEST(TopologyReader, ReadsIbsimExtensions) {
  Fabric f = read_ok(
      "# widths and speeds the ibsim way\r\n"
      "do echo hello\r\n"
      "Switch 4 \"A\"\r\n"
      "[1] \"B\"[1] w=12\r\n"
      "[2]\t\"B\"[2]\tw=4 s=4   # trailing comment\r\n"
      "[3] \"B\"[3] s=HDR\r\n"
      "\r\n"
      "Hca 3 \"B\"\r\n");
  ASSERT_EQ(f.num_links(), 3u);
  const Port& p1 = port_of(f, "A", 1);
  EXPECT_EQ(f.link(p1.link).width, LinkWidth::k12x);
  const Port& p2 = port_of(f, "A", 2);
  EXPECT_EQ(f.link(p2.link).width, LinkWidth::k4x);
  EXPECT_EQ(f.link(p2.link).speed, LinkSpeed::kQdr);
  EXPECT_EQ(f.link(port_of(f, "A", 3).link).speed, LinkSpeed::kHdr);
  // CA GUIDs count from 0x100000; port GUIDs are the node GUID + port.
  EXPECT_EQ(f.node(by_name(f, "B")).guid, Guid{0x100000});
  EXPECT_EQ(port_of(f, "B", 3).guid, Guid{0x100003});
}

TEST(TopologyReader, AcceptsUnnamedWidthsAndSpeeds) {
  // What ibnetdiscover prints for values it cannot name.
  Fabric f = read_ok(
      "Switch 4 \"A\"\n"
      "[1] \"B\"[1] # \"b\" lid 0 4x???\n"
      "[2] \"B\"[2] # \"b\" lid 0 ??HDR\n"
      "[3] \"B\"[3] # \"b\" lid 0 ?????\n"
      "\n"
      "Hca 3 \"B\"\n");
  const Link& l1 = f.link(port_of(f, "A", 1).link);
  EXPECT_EQ(l1.width, LinkWidth::k4x);
  EXPECT_EQ(l1.speed, LinkSpeed::kUnknown);
  const Link& l2 = f.link(port_of(f, "A", 2).link);
  EXPECT_EQ(l2.width, LinkWidth::kUnknown);
  EXPECT_EQ(l2.speed, LinkSpeed::kHdr);
  const Link& l3 = f.link(port_of(f, "A", 3).link);
  EXPECT_EQ(l3.width, LinkWidth::kUnknown);
  EXPECT_EQ(l3.speed, LinkSpeed::kUnknown);
}

TEST(TopologyReader, AcceptsLinkListedFromOneSide) {
  Fabric f = read_ok(
      "Switch 2 \"A\"\n"
      "[1] \"B\"[1](abc) # \"B\" lid 9 4xEDR\n"
      "\n"
      "Hca 1 \"B\"\n");
  ASSERT_EQ(f.num_links(), 1u);
  // The remote end's GUID and LID fill in the port B does not list itself.
  EXPECT_EQ(port_of(f, "B", 1).guid, Guid{0xabc});
  EXPECT_EQ(port_of(f, "B", 1).lid, Lid{9});
  EXPECT_EQ(f.link(LinkId(0)).speed, LinkSpeed::kEdr);
}

TEST(TopologyReader, EmptyInputIsAnEmptyFabric) {
  Fabric f = read_ok("");
  EXPECT_EQ(f.num_nodes(), 0u);
  Fabric g = read_ok("# only a comment\n\n   \n");
  EXPECT_EQ(g.num_nodes(), 0u);
}

// --- errors: "<source>:<line>: <reason>" -----------------------------------

TEST(TopologyReaderErrors, UnknownNodeType) {
  EXPECT_EQ(read_error("Switch 2 \"A\"\n\nBridge 4 \"X\"\n"), "t.topo:3: unknown node type \"Bridge\"");
}

TEST(TopologyReaderErrors, UnrecognizedLine) {
  EXPECT_EQ(read_error("Switch 2 \"A\"\nhello world\n"), "t.topo:2: unrecognized line \"hello world\"");
  EXPECT_EQ(read_error("@@@\n"), "t.topo:1: unrecognized line \"@@@\"");
}

TEST(TopologyReaderErrors, PortBeyondNodePortCount) {
  EXPECT_EQ(read_error("Switch 2 \"A\"\n[3] \"B\"[1]\n\nHca 1 \"B\"\n"),
            "t.topo:2: port 3 is beyond \"A\"'s 2 ports");
  EXPECT_EQ(read_error("Switch 2 \"A\"\n[1] \"B\"[2]\n\nHca 1 \"B\"\n"),
            "t.topo:2: remote port 2 is beyond \"B\"'s 1 ports");
}

TEST(TopologyReaderErrors, LinkEndsDisagree) {
  // A[1] says B[2], but B[2] says C[5].
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[2]\n\n"
                       "Switch 4 \"B\"\n[2] \"C\"[5]\n\n"
                       "Switch 8 \"C\"\n"),
            "t.topo:2: \"A\"[1] is cabled to \"B\"[2], but line 5 cables \"B\"[2] to \"C\"[5]");
  // B lists its port 2 toward A's port 3 instead of port 1.
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[2]\n\nSwitch 4 \"B\"\n[2] \"A\"[3]\n"),
            "t.topo:2: \"A\"[1] is cabled to \"B\"[2], but line 5 cables \"B\"[2] to \"A\"[3]");
}

TEST(TopologyReaderErrors, TwoOneSidedLinksToOnePort) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"C\"[1]\n\nSwitch 4 \"B\"\n[1] \"C\"[1]\n\nHca 1 \"C\"\n"),
            "t.topo:5: port 1 of \"C\" is already cabled to \"A\"[1]");
}

TEST(TopologyReaderErrors, PortCabledToItself) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[2] \"A\"[2]\n"), "t.topo:2: port \"A\"[2] is cabled to itself");
}

TEST(TopologyReaderErrors, PortListedTwice) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1]\n[1] \"B\"[2]\n\nSwitch 4 \"B\"\n"),
            "t.topo:3: port 1 of \"A\" is listed twice (also on line 2)");
}

TEST(TopologyReaderErrors, UndefinedRemoteNode) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"Ghost\"[1]\n"), "t.topo:2: remote node \"Ghost\" is not defined");
}

TEST(TopologyReaderErrors, DuplicateNodeGuid) {
  EXPECT_EQ(read_error("switchguid=0x5\nSwitch 4 \"A\"\n\nswitchguid=0x5\nSwitch 4 \"B\"\n"),
            "t.topo:5: duplicate node GUID 0x0000000000000005 of \"B\" (also \"A\" on line 2)");
}

TEST(TopologyReaderErrors, DuplicatePortGuid) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1](77)\n[2] \"C\"[1](77)\n\n"
                       "caguid=0x10\nCa 1 \"B\"\n\ncaguid=0x20\nCa 1 \"C\"\n"),
            "t.topo:3: duplicate port GUID 0x0000000000000077 of \"C\" (also \"B\" on line 2)");
}

TEST(TopologyReaderErrors, PortGuidDisagrees) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1](77)\n\ncaguid=0x10\nCa 1 \"B\"\n[1](78) \"A\"[1]\n"),
            "t.topo:2: port GUID 0x0000000000000077 of \"B\"[1] disagrees with 0x0000000000000078 on line 6");
}

TEST(TopologyReaderErrors, DuplicateName) {
  EXPECT_EQ(read_error("Switch 4 \"A\"\n\nHca 1 \"A\"\n"),
            "t.topo:3: duplicate node name \"A\" (first defined on line 1)");
}

TEST(TopologyReaderErrors, DuplicateLid) {
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"a\" port 0 lid 7 lmc 0\n\n"
                       "Switch 4 \"B\" # \"b\" port 0 lid 6 lmc 1\n"),
            "t.topo:3: LID 7 of \"B\" is already assigned to \"A\" (line 1)");
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"a\" lid 49150 lmc 2\n"),
            "t.topo:1: LID range 49150..49153 of \"A\" ends above the unicast limit 0xBFFF");
}

TEST(TopologyReaderErrors, MalformedLines) {
  EXPECT_EQ(read_error("Switch 4 \"A\n"), "t.topo:1: unterminated quote in node name \"\\\"A\"");
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"desc\n"),
            "t.topo:1: unterminated quote in node description \"\\\"desc\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1 \"B\"[1]\n"),
            "t.topo:2: missing ']' after the port number, found \" \\\"B\\\"[1]\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n1] \"B\"[1]\n"), "t.topo:2: unrecognized line \"1] \\\"B\\\"[1]\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"1]\n"),
            "t.topo:2: missing '[' before the remote port number, found \"1]\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1\n"),
            "t.topo:2: missing ']' after the remote port number, found \"\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1]\n"), "t.topo:2: port line has no remote end");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[x] \"B\"[1]\n"),
            "t.topo:2: expected a number for the port number, found \"x] \\\"B\\\"[1]\"");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1] junk\n"),
            "t.topo:2: unexpected text \"junk\" in port line");
  EXPECT_EQ(read_error("Switch 4x \"A\"\n"), "t.topo:1: expected a quoted node name, found \"x \\\"A\\\"\"");
  EXPECT_EQ(read_error("Switch 4 \"A\" extra\n"), "t.topo:1: unexpected text \"extra\" after node name");
  EXPECT_EQ(read_error("Switch 4 \"\"\n"), "t.topo:1: empty node name");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1] w=3\n"),
            "t.topo:2: bad link width w=3 (expected 1, 2, 4, 8 or 12)");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[1] \"B\"[1] # \"B\" lid 1 4xFOO\n"),
            "t.topo:2: unknown link width/speed \"4xFOO\"");
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"a\" lid five\n"),
            "t.topo:1: expected a number for the LID, found \"five\"");
}

TEST(TopologyReaderErrors, HugeNumbers) {
  EXPECT_EQ(read_error("Switch 99999999999999999999999999 \"A\"\n"),
            "t.topo:1: port count \"99999999999999999999999999\" is out of range 1..254");
  EXPECT_EQ(read_error("Switch 0 \"A\"\n"), "t.topo:1: port count \"0\" is out of range 1..254");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[300] \"B\"[1]\n"),
            "t.topo:2: port number \"300\" is out of range 1..254");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n[0] \"B\"[1]\n"),
            "t.topo:2: port number 0 is the switch management port and cannot be cabled");
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"a\" lid 49152\n"),
            "t.topo:1: LID \"49152\" is out of range 0..49151");
  EXPECT_EQ(read_error("Switch 4 \"A\" # \"a\" lid 1 lmc 8\n"), "t.topo:1: LMC \"8\" is out of range 0..7");
  EXPECT_EQ(read_error("switchguid=0x12345678901234567\nSwitch 4 \"A\"\n"),
            "t.topo:1: node GUID \"0x12345678901234567\" has more than 16 hex digits");
  EXPECT_EQ(read_error("switchguid=0x0\nSwitch 4 \"A\"\n"), "t.topo:1: node GUID 0 is not valid");
}

TEST(TopologyReaderErrors, PortLineOutsideRecord) {
  EXPECT_EQ(read_error("[1] \"B\"[1]\n"),
            "t.topo:1: port line outside any node record (a blank line ends a record)");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n\n[1] \"B\"[1]\n"),
            "t.topo:3: port line outside any node record (a blank line ends a record)");
}

TEST(TopologyReaderErrors, KeyLines) {
  EXPECT_EQ(read_error("caguid=0x10\nSwitch 4 \"A\"\n"), "t.topo:2: Switch record follows a caguid= line");
  EXPECT_EQ(read_error("Switch 4 \"A\"\n\nvendid=0x0\ndevid=0x0\n"),
            "t.topo:3: key line is not followed by a node record");
  EXPECT_EQ(read_error("nodeguid=0x10\n"), "t.topo:1: unknown key \"nodeguid\"");
  EXPECT_EQ(read_error("sysimgguid=zz\n"), "t.topo:1: expected a hex system image GUID, found \"zz\"");
  EXPECT_EQ(read_error("switchguid=0x10(11\n"), "t.topo:1: missing ')' after port GUID, found \"\"");
}

TEST(TopologyReaderErrors, IncludeIsRefused) {
  EXPECT_EQ(read_error("# top\ninclude other.net\n"),
            "t.topo:2: \"include\" is not supported: the reader takes the text of one file; "
            "concatenate included files first");
}

TEST(TopologyReaderErrors, NulBytesAndLongLines) {
  std::string nul = "Switch 4 \"A\"\n[1] \"B";
  nul += '\0';
  nul += "\"[1]\n";
  EXPECT_EQ(read_error(nul), "t.topo:2: NUL byte in line");
  std::string longline = "# " + std::string(5000, 'x') + "\n";
  EXPECT_EQ(read_error("\n" + longline), "t.topo:2: line is longer than 4096 characters");
}

TEST(TopologyReaderErrors, SourceNameIsUsed) {
  auto f = read_topology("bogus\n", "/etc/fabric/ibnet.out");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "/etc/fabric/ibnet.out:1: unrecognized line \"bogus\"");
}

// --- robustness ------------------------------------------------------------

// Seeded mutations of real fixtures: the reader must return a Fabric or a
// located Error, never crash (this suite also runs under ASan+UBSan), and any
// Fabric it accepts must survive a write/read round trip.
std::string mutate(std::string text, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  auto line_bounds = [&](size_t at) {
    size_t b = text.rfind('\n', at == 0 ? 0 : at - 1);
    b = (b == std::string::npos || at == 0) ? 0 : b + 1;
    size_t e = text.find('\n', at);
    return std::pair{b, e == std::string::npos ? text.size() : e + 1};
  };
  static const char* const kGarbage[] = {"\"", "[", "]", "(", ")", "#", "\n", "\t", "0x", "99999999999",
                                         "[ext 3]", "Switch 4 \"Z\"\n", "[1] \"Z\"[1]\n", "lid 5", "4xHDR",
                                         "include x\n", "\r", "<NUL>"};
  int steps = 1 + static_cast<int>(pick(3));
  for (int s = 0; s < steps && !text.empty(); ++s) {
    size_t at = pick(text.size());
    switch (pick(7)) {
      case 0:  // flip a byte
        text[at] = static_cast<char>(text[at] ^ (1u << pick(8)));
        break;
      case 1:  // truncate
        text.resize(at);
        break;
      case 2: {  // delete a line
        auto [b, e] = line_bounds(at);
        text.erase(b, e - b);
        break;
      }
      case 3: {  // duplicate a line
        auto [b, e] = line_bounds(at);
        text.insert(e, text.substr(b, e - b));
        break;
      }
      case 4: {  // insert garbage
        size_t g = pick(std::size(kGarbage));
        if (g == std::size(kGarbage) - 1) text.insert(at, 1, '\0');
        else text.insert(at, kGarbage[g]);
        break;
      }
      case 5: {  // change a digit
        size_t d = text.find_first_of("0123456789", at);
        if (d != std::string::npos) text[d] = static_cast<char>('0' + pick(10));
        break;
      }
      default:  // swap two bytes
        std::swap(text[at], text[pick(text.size())]);
        break;
    }
  }
  return text;
}

TEST(TopologyReaderRobustness, SeededMutationsNeverCrash) {
  const char* files[] = {"ibnetdiscover_net_lids.topo", "ibnetdiscover_features.topo",
                         "ibnetdiscover_2sw2path4hca.topo", "ibsim_net_2sw2path4hca2port.net"};
  std::mt19937_64 rng(20261130);
  int accepted = 0, rejected = 0;
  for (const char* file : files) {
    const std::string original = fixture(file);
    for (int i = 0; i < 150; ++i) {
      std::string text = mutate(original, rng);
      auto f = read_topology(text, "mut.topo");
      if (!f.ok()) {
        ++rejected;
        EXPECT_EQ(f.error().message.rfind("mut.topo:", 0), 0u) << f.error().message;
        continue;
      }
      ++accepted;
      auto again = read_topology(write_topology(*f), "rewritten");
      EXPECT_TRUE(again.ok()) << file << " mutation " << i << ": " << again.error().message << "\n" << text;
      if (again.ok()) {
        EXPECT_EQ(again->num_nodes(), f->num_nodes());
        EXPECT_EQ(again->num_links(), f->num_links());
      }
    }
  }
  // Both outcomes must be exercised, or the mutations test nothing.
  EXPECT_GT(accepted, 20);
  EXPECT_GT(rejected, 100);
}

}  // namespace topology_reader_test
}  // namespace railyard::routing
