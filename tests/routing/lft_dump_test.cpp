// OpenSM LFT dump and ibroute text: writer, readers, real fixtures from
// OpenSM 3.3.23 + ibsim (tests/data/lfts/), every error, and seeded mutations.
#include "routing/lft_dump.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "routing/topology_reader.h"

namespace railyard::routing {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RAILYARD_SOURCE_DIR) + "/tests/data/lfts/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Fabric topology(const std::string& name) {
  Result<Fabric> f = read_topology(fixture(name), name);
  EXPECT_TRUE(f.ok()) << f.error().message;
  return std::move(f).value();
}

Lid lid(uint16_t v) { return Lid{v}; }

// ibsim's "net" example with the LIDs OpenSM 3.3.23 gave it, built by hand.
Fabric net_fabric() {
  FabricBuilder b;
  NodeId s1 = b.add_node(NodeType::kSwitch, 8, Guid{0x200000}, {}, "Switch1");
  NodeId s2 = b.add_node(NodeType::kSwitch, 8, Guid{0x200001}, {}, "Switch2");
  NodeId h1 = b.add_node(NodeType::kCa, 2, Guid{0x100000}, {}, "Hca1");
  NodeId h2 = b.add_node(NodeType::kCa, 2, Guid{0x100003}, {}, "Hca2");
  EXPECT_TRUE(b.set_port(s1, PortNum{0}, {}, lid(1)).ok());
  EXPECT_TRUE(b.set_port(s2, PortNum{0}, {}, lid(3)).ok());
  EXPECT_TRUE(b.set_port(h1, PortNum{1}, Guid{0x100001}, lid(2)).ok());
  EXPECT_TRUE(b.set_port(h2, PortNum{2}, Guid{0x100005}, lid(4)).ok());
  EXPECT_TRUE(b.connect(s1, PortNum{1}, h1, PortNum{1}).ok());
  EXPECT_TRUE(b.connect(s1, PortNum{2}, h2, PortNum{2}).ok());
  EXPECT_TRUE(b.connect(s1, PortNum{3}, s2, PortNum{3}).ok());
  EXPECT_TRUE(b.connect(s1, PortNum{4}, s2, PortNum{4}).ok());
  Result<Fabric> f = b.build();
  EXPECT_TRUE(f.ok()) << f.error().message;
  return std::move(f).value();
}

// What minhop programmed on it.
ForwardingTables net_tables() {
  ForwardingTables t(2, 5);
  const uint8_t s1[] = {0xFF, 0, 1, 3, 2};
  const uint8_t s2[] = {0xFF, 3, 3, 0, 4};
  for (uint16_t l = 0; l < 5; ++l) {
    t.set(0, lid(l), s1[l]);
    t.set(1, lid(l), s2[l]);
  }
  return t;
}

// OpenSM's own opensm-lfts.dump for those tables.
constexpr std::string_view kNetDump =
    "Unicast lids [0-4] of switch Lid 1 guid 0x0000000000200000 ('Switch1'):\n"
    "0x0001 000 # Switch portguid 0x0000000000200000: 'Switch1'\n"
    "0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'\n"
    "0x0003 003 # Switch portguid 0x0000000000200001: 'Switch2'\n"
    "0x0004 002 # Channel Adapter portguid 0x0000000000100005: 'Hca2'\n"
    "4 lids dumped\n"
    "Unicast lids [0-4] of switch Lid 3 guid 0x0000000000200001 ('Switch2'):\n"
    "0x0001 003 # Switch portguid 0x0000000000200000: 'Switch1'\n"
    "0x0002 003 # Channel Adapter portguid 0x0000000000100001: 'Hca1'\n"
    "0x0003 000 # Switch portguid 0x0000000000200001: 'Switch2'\n"
    "0x0004 004 # Channel Adapter portguid 0x0000000000100005: 'Hca2'\n"
    "4 lids dumped\n";

// The brief's ibroute sample (one switch).
constexpr std::string_view kSwitch1Ibroute =
    "Unicast lids [0x0-0x4] of switch Lid 1 guid 0x0000000000200000 (Switch1):\n"
    "  Lid  Out   Destination\n"
    "       Port     Info \n"
    "0x0001 000 : (Switch portguid 0x0000000000200000: 'Switch1')\n"
    "0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')\n"
    "0x0003 003 : (Switch portguid 0x0000000000200001: 'Switch2')\n"
    "0x0004 002 : (Channel Adapter portguid 0x0000000000100005: 'Hca2')\n"
    "4 valid lids dumped \n";

TEST(LftDump, WriterMatchesOpenSmByteForByte) {
  Fabric f = net_fabric();
  EXPECT_EQ(write_lft_dump(f, net_tables()), kNetDump);
  EXPECT_EQ(std::string(kNetDump), fixture("net.opensm-lfts.dump"));
}

TEST(LftDump, ReaderReadsOpenSmDump) {
  Result<ForwardingTables> t = read_lft_dump(net_fabric(), kNetDump, "net.dump");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, net_tables());
}

TEST(LftDump, ReadsTheBriefsIbrouteSample) {
  Result<ForwardingTables> t = read_ibroute(net_fabric(), kSwitch1Ibroute, "ibroute.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ForwardingTables want = net_tables();
  for (uint16_t l = 0; l < 5; ++l) want.set(1, lid(l), ForwardingTables::kNoPath);  // Switch2 not listed
  EXPECT_EQ(*t, want);
}

TEST(LftDump, IbrouteAllModeAndBriefMode) {
  // `ibroute -a` adds illegal-port lines (no path); `ibroute -n` drops annotations.
  std::string text =
      "Unicast lids [0x0-0x4] of switch Lid 3 guid 0x0000000000200001 (Switch2):\n"
      "  Lid  Out   Destination\n"
      "       Port     Info \n"
      "0x0000 255 : (path #0 - illegal port)\n"
      "0x0001 003 : (Switch portguid 0x0000000000200000: 'Switch1')\n"
      "0x0002 003 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')\n"
      "0x0003 000 : (Switch portguid 0x0000000000200001: 'Switch2')\n"
      "0x0004 077 : (illegal port)\n"
      "5 lids dumped \n"
      "Unicast lids [0x0-0x4] of switch Lid 1 guid 0x0000000000200000 (Switch1):\n"
      "  Lid  Out   Destination\n"
      "       Port     Info \n"
      "0x0001 000 \n"
      "0x0002 001 \n"
      "0x0003 003 \n"
      "0x0004 002 \n"
      "4 valid lids dumped \n";
  Result<ForwardingTables> t = read_ibroute(net_fabric(), text, "ibroute.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ForwardingTables want = net_tables();
  want.set(1, lid(4), ForwardingTables::kNoPath);
  EXPECT_EQ(*t, want);
}

TEST(LftDump, DetectsFormats) {
  EXPECT_EQ(detect_lft_format(kNetDump), LftFormat::kOpenSmDump);
  EXPECT_EQ(detect_lft_format(kSwitch1Ibroute), LftFormat::kIbroute);
  EXPECT_EQ(detect_lft_format("\n# comment\n" + std::string(kNetDump)), LftFormat::kOpenSmDump);
  EXPECT_EQ(detect_lft_format("Switch 8 \"S-1\"\n"), std::nullopt);
  EXPECT_EQ(detect_lft_format(""), std::nullopt);
  Result<ForwardingTables> a = read_tables(net_fabric(), kNetDump, "a");
  Result<ForwardingTables> b = read_tables(net_fabric(), fixture("net.ibroute"), "b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

// Real OpenSM 3.3.23 dumps, ibroute output and ibnetdiscover topologies from
// ibsim: the ibsim "net" example, the same with LMC 1, and a 10-switch tree
// whose GUIDs make OpenSM's switch order differ from numeric GUID order.
class RealFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(RealFixture, DumpRoundTripsByteForByteAndEqualsIbroute) {
  const std::string name = GetParam();
  Fabric f = topology(name + ".topo");
  const std::string dump = fixture(name + ".opensm-lfts.dump");
  Result<ForwardingTables> from_dump = read_lft_dump(f, dump, name);
  ASSERT_TRUE(from_dump.ok()) << from_dump.error().message;
  EXPECT_EQ(write_lft_dump(f, *from_dump), dump);

  Result<ForwardingTables> from_ibroute = read_ibroute(f, fixture(name + ".ibroute"), name);
  ASSERT_TRUE(from_ibroute.ok()) << from_ibroute.error().message;
  EXPECT_EQ(*from_ibroute, *from_dump);
  EXPECT_EQ(ForwardingTables::changed_blocks(*from_ibroute, *from_dump), 0u);
}

INSTANTIATE_TEST_SUITE_P(OpenSm3323, RealFixture, ::testing::Values("net", "netlmc", "tree"));

TEST(LftDump, SwitchOrderIsOpenSmsNetworkByteOrder) {
  Fabric f = topology("tree.topo");
  Result<ForwardingTables> t = read_lft_dump(f, fixture("tree.opensm-lfts.dump"), "tree");
  ASSERT_TRUE(t.ok()) << t.error().message;
  std::string out = write_lft_dump(f, *t);
  // 0x...a700 (leaf7) sorts first: its lowest GUID byte is 0x00.
  EXPECT_TRUE(out.starts_with("Unicast lids [0-26] of switch Lid 2 guid 0x0002c9030000a700 ('leaf7'):\n")) << out;
}

TEST(LftDump, RandomTablesRoundTrip) {
  Fabric f = topology("tree.topo");
  std::mt19937 rng(7);
  ForwardingTables t(static_cast<uint32_t>(f.switches().size()), f.max_lid().value + 1u);
  for (uint32_t s = 0; s < t.num_switches(); ++s) {
    const uint8_t ports = f.node(f.switches()[s]).num_ports;
    for (uint8_t& p : t.row(s)) {
      uint32_t r = rng() % (ports + 2u);
      p = r > ports ? ForwardingTables::kNoPath : static_cast<uint8_t>(r);
    }
  }
  std::string text = write_lft_dump(f, t);
  Result<ForwardingTables> back = read_lft_dump(f, text, "random");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, t);
}

TEST(LftDump, DescriptionsAreCleanedLikeOpenSm) {
  FabricBuilder b;
  std::string desc = "sw\tone " + std::string(70, 'x');
  NodeId s = b.add_node(NodeType::kSwitch, 2, Guid{0x10}, {}, desc);
  ASSERT_TRUE(b.set_port(s, PortNum{0}, {}, lid(1)).ok());
  Result<Fabric> f = b.build();
  ASSERT_TRUE(f.ok());
  ForwardingTables t(1, 2);
  t.set(0, lid(1), 0);
  std::string cleaned = "sw one " + std::string(56, 'x');
  EXPECT_EQ(write_lft_dump(*f, t),
            "Unicast lids [0-1] of switch Lid 1 guid 0x0000000000000010 ('" + cleaned + "'):\n" +
                "0x0001 000 # Switch portguid 0x0000000000000010: '" + cleaned + "'\n1 lids dumped\n");
}

TEST(LftDump, LidsBeyondTheTopologyWidenTheTable) {
  std::string text(kNetDump);
  text.insert(text.find("4 lids dumped"), "0x0009 002 # unknown node and type\n");
  Result<ForwardingTables> t = read_lft_dump(net_fabric(), text, "wide");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->num_lids(), 10u);
  EXPECT_EQ(t->get(0, lid(9)), 2);
  EXPECT_EQ(t->get(0, lid(4)), 2);
  EXPECT_EQ(t->get(1, lid(9)), ForwardingTables::kNoPath);
  EXPECT_EQ(t->get(1, lid(1)), 3);
}

TEST(LftDump, CommentsAndBlankLinesAreSkipped) {
  std::string text = "# written by hand\n\n" + std::string(kNetDump) + "\n";
  Result<ForwardingTables> t = read_lft_dump(net_fabric(), text, "c");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, net_tables());
}

// Replaces the first occurrence of `from` in kNetDump.
std::string net_dump_with(std::string_view from, std::string_view to) {
  std::string s(kNetDump);
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
  return s;
}

std::string dump_error(const std::string& text) {
  Result<ForwardingTables> t = read_lft_dump(net_fabric(), text, "x.dump");
  return t.ok() ? "(no error)" : t.error().message;
}

std::string ibroute_error(const std::string& text) {
  Result<ForwardingTables> t = read_ibroute(net_fabric(), text, "x.ibroute");
  return t.ok() ? "(no error)" : t.error().message;
}

TEST(LftDumpErrors, UnknownSwitchGuid) {
  EXPECT_EQ(dump_error(net_dump_with("Lid 3 guid 0x0000000000200001", "Lid 3 guid 0x0000000000200009")),
            "x.dump:7: unknown switch GUID 0x0000000000200009");
}

TEST(LftDumpErrors, GuidOfACa) {
  EXPECT_EQ(dump_error(net_dump_with("Lid 3 guid 0x0000000000200001", "Lid 3 guid 0x0000000000100000")),
            "x.dump:7: GUID 0x0000000000100000 is \"Hca1\", not a switch");
}

TEST(LftDumpErrors, SwitchListedTwice) {
  EXPECT_EQ(dump_error(net_dump_with("Lid 3 guid 0x0000000000200001", "Lid 3 guid 0x0000000000200000")),
            "x.dump:7: switch \"Switch1\" is listed twice (first at line 1)");
}

TEST(LftDumpErrors, UnparsableSwitchGuid) {
  EXPECT_EQ(dump_error(net_dump_with("Lid 3 guid 0x0000000000200001 ", "Lid 3 guid 0xg ")),
            "x.dump:7: cannot parse switch GUID in 'Unicast lids [0-4] of switch Lid 3 guid 0xg ('Switch2'):'");
  EXPECT_EQ(dump_error(net_dump_with(" guid 0x0000000000200001", "")),
            "x.dump:7: cannot parse switch header 'Unicast lids [0-4] of switch Lid 3 ('Switch2'):'");
}

TEST(LftDumpErrors, PortBeyondTheSwitch) {
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x0002 009")),
            "x.dump:3: port 9 for LID 0x0002 is beyond switch \"Switch1\"'s 8 ports");
  // OpenSM never writes OSM_NO_PATH entries and its file engine refuses them.
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x0002 255")),
            "x.dump:3: port 255 for LID 0x0002 is beyond switch \"Switch1\"'s 8 ports");
}

TEST(LftDumpErrors, BadLidOrPort) {
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0xzz02 001")), "x.dump:3: cannot parse LID in '0xzz02 001 # Channel Adapter portguid 0x0000000000100001: 'H...'");
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x00002 001")), "x.dump:3: cannot parse LID in '0x00002 001 # Channel Adapter portguid 0x0000000000100001: '...'");
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x0002 1x1")), "x.dump:3: cannot parse the port of LID 0x0002");
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x0002 0001")), "x.dump:3: cannot parse the port of LID 0x0002");
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001", "0x0002")), "x.dump:3: cannot parse the port of LID 0x0002");
  EXPECT_EQ(dump_error(net_dump_with("0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'",
                                     "0xc000 001")),
            "x.dump:3: LID 0xc000 is not a unicast LID");
}

TEST(LftDumpErrors, LidListedTwice) {
  EXPECT_EQ(dump_error(net_dump_with("0x0003 003", "0x0002 003")),
            "x.dump:4: LID 0x0002 is listed twice for switch \"Switch1\" (first at line 3)");
}

TEST(LftDumpErrors, LidOfAnotherPort) {
  // The dump says LID 2 is Hca2's port; the topology gives that port LID 4.
  EXPECT_EQ(dump_error(net_dump_with("portguid 0x0000000000100001", "portguid 0x0000000000100005")),
            "x.dump:3: LID 0x0002 is given to port GUID 0x0000000000100005 (\"Hca2\"), which has LID 4 in the "
            "topology");
}

TEST(LftDumpErrors, EntryOutsideATable) {
  EXPECT_EQ(dump_error("0x0001 000\n" + std::string(kNetDump)),
            "x.dump:1: LID entry outside a switch table (no 'Unicast lids ...' line before it)");
  EXPECT_EQ(dump_error(net_dump_with("4 lids dumped\n", "4 lids dumped\n0x0001 000\n")),
            "x.dump:7: LID entry outside a switch table (no 'Unicast lids ...' line before it)");
  EXPECT_EQ(dump_error("4 lids dumped\n"), "x.dump:1: '4 lids dumped' outside a switch table");
}

TEST(LftDumpErrors, TruncatedTables) {
  std::string cut(kNetDump.substr(0, kNetDump.rfind("4 lids dumped")));
  EXPECT_EQ(dump_error(cut), "x.dump:11: the table of switch \"Switch2\" (line 7) ends without its '... lids dumped' "
                             "line: truncated?");
  EXPECT_EQ(dump_error(net_dump_with("4 lids dumped\n", "")),
            "x.dump:6: the table of switch \"Switch1\" (line 1) ends without its '... lids dumped' line: truncated?");
  EXPECT_EQ(dump_error(""), "x.dump: no switch tables ('Unicast lids ...' lines) found");
  EXPECT_EQ(ibroute_error(std::string(kSwitch1Ibroute).replace(kSwitch1Ibroute.find("4 valid"), 1, "5")),
            "x.ibroute:8: ibroute reports 5 lids for switch \"Switch1\" but its table has 4");
}

TEST(LftDumpErrors, UnexpectedLines) {
  EXPECT_EQ(dump_error(net_dump_with("4 lids dumped", "4 lids were dumped")),
            "x.dump:6: unexpected line '4 lids were dumped'");
  EXPECT_EQ(dump_error(net_dump_with("0x0003 003", "garbage\n0x0003 003")), "x.dump:4: unexpected line 'garbage'");
  EXPECT_EQ(dump_error("Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x0000000000200000 (Switch1):\n"),
            "x.dump:1: this is a multicast forwarding table; expected unicast LFTs");
  // Column titles belong to ibroute only.
  EXPECT_EQ(dump_error(net_dump_with("0x0001 000", "  Lid  Out   Destination\n0x0001 000")),
            "x.dump:2: unexpected line 'Lid  Out   Destination'");
}

TEST(LftDumpErrors, WrongDialect) {
  EXPECT_EQ(dump_error(std::string(kSwitch1Ibroute)), "x.dump:1: this is an ibroute header, not an OpenSM LFT dump");
  EXPECT_EQ(ibroute_error(std::string(kNetDump)), "x.ibroute:1: this is an OpenSM LFT dump header, not ibroute output");
  Result<ForwardingTables> t = read_tables(net_fabric(), "Switch 8 \"S-1\"\n", "topo.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "topo.txt: neither an OpenSM LFT dump nor ibroute output (no leading 'Unicast lids [...' line)");
}

// Seeded mutations of real text: every result is a value or an error naming
// the source, never a crash (run under ASan/UBSan).
TEST(LftDumpErrors, MutationsNeverCrash) {
  Fabric f = topology("tree.topo");
  const std::string originals[] = {fixture("tree.opensm-lfts.dump"), fixture("tree.ibroute")};
  std::mt19937_64 rng(20240611);
  const std::string alphabet = "0123456789abcdefx :#'()\n\t-[]Unicast lids guid portguid\xff";
  int errors = 0, values = 0;
  for (int i = 0; i < 600; ++i) {
    std::string s = originals[i % 2];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = rng() % s.size();
      switch (rng() % 6) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        case 2: s.insert(at, 1 + rng() % 4, alphabet[rng() % alphabet.size()]); break;
        case 3: s.resize(at); break;
        case 4: {  // duplicate a line
          size_t b = s.rfind('\n', at);
          b = b == std::string::npos ? 0 : b + 1;
          size_t end = s.find('\n', at);
          if (end != std::string::npos) s.insert(b, s.substr(b, end - b + 1));
          break;
        }
        default: s[at] = static_cast<char>(rng() & 0xFF); break;
      }
    }
    Result<ForwardingTables> t = read_tables(f, s, "m");
    if (t.ok()) {
      ++values;
      EXPECT_EQ(t->num_switches(), f.switches().size());
    } else {
      ++errors;
      EXPECT_TRUE(t.error().message.starts_with("m:")) << t.error().message;
    }
  }
  EXPECT_GT(errors, 100);
  EXPECT_GT(values, 10);
}

TEST(ChangedBlocks, CountsDifferingBlocksPerSwitch) {
  ForwardingTables a(3, 200);
  ForwardingTables b = a;
  EXPECT_EQ(ForwardingTables::changed_blocks(a, b), 0u);
  b.set(0, lid(5), 1);
  b.set(0, lid(6), 2);  // same block
  EXPECT_EQ(ForwardingTables::changed_blocks(a, b), 1u);
  b.set(0, lid(64), 1);
  b.set(2, lid(199), 3);  // the last, partial block
  EXPECT_EQ(ForwardingTables::changed_blocks(a, b), 3u);
  EXPECT_EQ(ForwardingTables::changed_blocks(b, a), 3u);
}

TEST(ChangedBlocks, MissingEntriesCountAsNoPath) {
  ForwardingTables small(2, 10);
  ForwardingTables wide(2, 130);
  EXPECT_EQ(ForwardingTables::changed_blocks(small, wide), 0u);  // all kNoPath
  wide.set(1, lid(129), 4);
  EXPECT_EQ(ForwardingTables::changed_blocks(small, wide), 1u);
  wide.set(0, lid(3), 4);
  EXPECT_EQ(ForwardingTables::changed_blocks(small, wide), 2u);
  ForwardingTables more(3, 10);
  more.set(2, lid(1), 1);
  EXPECT_EQ(ForwardingTables::changed_blocks(small, more), 1u);
}

}  // namespace
}  // namespace railyard::routing
