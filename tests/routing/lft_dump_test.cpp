// OpenSM LFT dump and ibroute text: writer, readers, real fixtures from
// OpenSM 3.3.23 + ibsim (tests/data/lfts/), every error, and seeded mutations;
// the streamed writers (dump and JSON) against independent references on
// generated fabrics, and the bounds of their chunks.
#include "routing/lft_dump.h"
#include "routing/lft_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/topology_reader.h"
#include "routing/unicast_engine.h"
#include "tests/routing/test_fabrics.h"

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


// ---------------------------------------------------------------------------
// Streaming: the writers hand their text out in bounded chunks; the text is
// byte for byte what the references below print. The references are written
// the plain way, line by line with snprintf (the dump, as OpenSM's
// dump_ucast_lfts does) or as one nlohmann object (the JSON, as the CLI built
// it before it streamed), so they check the fast writers, not restate them.

std::string reference_desc(std::string_view d) {
  std::string s(d.substr(0, std::min<size_t>(63, d.find('\0'))));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7E) c = ' ';
  }
  return s;
}

std::string reference_dump(const Fabric& f, const ForwardingTables& t) {
  std::vector<uint32_t> rows(t.num_switches());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    return __builtin_bswap64(f.node(f.switches()[a]).guid.value) <
           __builtin_bswap64(f.node(f.switches()[b]).guid.value);
  });
  const unsigned max_lid = t.num_lids() - 1;
  std::string out;
  char line[512];
  for (uint32_t row : rows) {
    const NodeId sw = f.switches()[row];
    const Node& nd = f.node(sw);
    std::snprintf(line, sizeof line, "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx ('%s'):\n", max_lid,
                  static_cast<unsigned>(f.port(nd.first_port).lid.value),
                  static_cast<unsigned long long>(nd.guid.value), reference_desc(f.desc(sw)).c_str());
    out += line;
    for (unsigned lid = 0; lid <= max_lid; ++lid) {
      const unsigned port = t.get(row, Lid{static_cast<uint16_t>(lid)});
      if (port > nd.num_ports) continue;
      const PortId p = f.lid_owner(Lid{static_cast<uint16_t>(lid)});
      if (!p.valid()) {
        std::snprintf(line, sizeof line, "0x%04x %03u # unknown node and type\n", lid, port);
      } else {
        const NodeId n = f.port(p).node;
        const NodeType type = f.node(n).type;
        std::snprintf(line, sizeof line, "0x%04x %03u # %s portguid 0x%016llx: '%s'\n", lid, port,
                      type == NodeType::kSwitch ? "Switch" : type == NodeType::kCa ? "Channel Adapter" : "Router",
                      static_cast<unsigned long long>(f.port(p).guid.value), reference_desc(f.desc(n)).c_str());
      }
      out += line;
    }
    std::snprintf(line, sizeof line, "%u lids dumped\n", max_lid);
    out += line;
  }
  return out;
}

std::string reference_json(const Fabric& f, const ForwardingTables& t) {
  nlohmann::json sw = nlohmann::json::array();
  for (uint32_t i = 0; i < f.switches().size(); ++i) {
    const Node& nd = f.node(f.switches()[i]);
    nlohmann::json lft = nlohmann::json::object();
    for (uint32_t lid = 1; lid < t.num_lids(); ++lid) {
      const uint8_t port = t.row(i)[lid];
      if (port != ForwardingTables::kNoPath) lft[std::to_string(lid)] = port;
    }
    char guid[24];
    std::snprintf(guid, sizeof guid, "0x%016llx", static_cast<unsigned long long>(nd.guid.value));
    sw.push_back({{"guid", guid},
                  {"name", std::string(f.desc(f.switches()[i]))},
                  {"lid", f.port(nd.first_port).lid.value},
                  {"lft", std::move(lft)}});
  }
  return nlohmann::json{{"switches", std::move(sw)}}.dump() + "\n";
}

using StreamWriter = void (*)(const Fabric&, const ForwardingTables&, const TextSink&, size_t);

std::vector<std::string> chunks_of(StreamWriter write, const Fabric& f, const ForwardingTables& t,
                                   size_t chunk_bytes = kDumpChunkBytes) {
  std::vector<std::string> chunks;
  write(f, t, [&chunks](std::string_view c) { chunks.emplace_back(c); }, chunk_bytes);
  return chunks;
}

// The production size, a small one and the smallest allowed: many cuts.
constexpr size_t kChunkSizes[] = {kDumpChunkBytes, 4096, kMinChunkBytes};

std::string joined(const std::vector<std::string>& chunks) {
  std::string s;
  for (const std::string& c : chunks) s += c;
  return s;
}

// Routed tables of a generated fabric, with some entries then set to kNoPath
// or to a port past the switch's last (entries the dump leaves out and the
// JSON keeps), seeded.
ForwardingTables routed_and_scrambled(const Fabric& f, uint64_t seed) {
  Result<RoutingOptions> options = plan_routing(f, {}, map_rails(f, {}));
  EXPECT_TRUE(options.ok()) << options.error().message;
  Result<RoutingResult> routed = route_unicast(f, *options);
  EXPECT_TRUE(routed.ok()) << routed.error().message;
  ForwardingTables t = routed->tables;
  std::mt19937_64 rng(seed);
  for (uint32_t s = 0; s < t.num_switches(); ++s) {
    const uint8_t ports = f.node(f.switches()[s]).num_ports;
    for (uint8_t& p : t.row(s)) {
      switch (rng() % 50) {
        case 0: p = ForwardingTables::kNoPath; break;
        case 1: p = static_cast<uint8_t>(ports + 1 + rng() % 3); break;
        default: break;
      }
    }
  }
  return t;
}

struct StreamCase {
  std::string name;
  GeneratorSpec spec;
};
void PrintTo(const StreamCase& c, std::ostream* os) { *os << c.name; }

std::vector<StreamCase> stream_cases() {
  std::vector<StreamCase> v;
  v.push_back({"roft2_64x8_r32", test::roft(64, 8, 2, 32)});  // 2.2 MB of dump: three chunks
  GeneratorSpec degraded = test::roft(64, 8, 3, 16);
  degraded.remove_switch_links = 5;
  degraded.remove_ca_links = 3;
  degraded.seed = 4;
  v.push_back({"roft3_64x8_r16_degraded", degraded});
  GeneratorSpec fat = test::roft(24, 4, 2, 16);
  fat.kind = TopologyKind::kFatTree;
  fat.host_prefix = "gpu";
  v.push_back({"fat_tree_24x4_r16", fat});
  return v;
}

class StreamedTables : public ::testing::TestWithParam<StreamCase> {};

TEST_P(StreamedTables, DumpIsTheReferenceInBoundedWholeLineChunks) {
  Fabric f = test::generate(GetParam().spec);
  ForwardingTables t = routed_and_scrambled(f, 11);
  const std::string want = reference_dump(f, t);
  EXPECT_TRUE(write_lft_dump(f, t) == want) << "the dump differs from the reference";
  for (size_t size : kChunkSizes) {
    SCOPED_TRACE("chunks of " + std::to_string(size) + " bytes");
    std::vector<std::string> chunks = chunks_of(&write_lft_dump, f, t, size);
    EXPECT_TRUE(joined(chunks) == want) << "the streamed dump differs from the reference";
    for (size_t i = 0; i < chunks.size(); ++i) {
      ASSERT_FALSE(chunks[i].empty()) << "chunk " << i;
      EXPECT_LE(chunks[i].size(), size) << "chunk " << i;
      EXPECT_EQ(chunks[i].back(), '\n') << "chunk " << i << " cuts a line";
      // Chunks are filled: each but the last lacks less than one line.
      if (i + 1 < chunks.size()) {
        EXPECT_GT(chunks[i].size(), size - 200) << "chunk " << i;
      }
    }
  }
  Result<ForwardingTables> back = read_lft_dump(f, want, GetParam().name);
  ASSERT_TRUE(back.ok()) << back.error().message;
  for (uint32_t s = 0; s < t.num_switches(); ++s) {
    const uint8_t ports = f.node(f.switches()[s]).num_ports;
    for (uint32_t lid = 0; lid < t.num_lids(); ++lid) {
      const uint8_t entry = t.row(s)[lid] > ports ? ForwardingTables::kNoPath : t.row(s)[lid];
      ASSERT_EQ(back->row(s)[lid], entry) << "switch row " << s << " LID " << lid;
    }
  }
}

TEST_P(StreamedTables, JsonIsNlohmannsDumpInBoundedChunks) {
  Fabric f = test::generate(GetParam().spec);
  ForwardingTables t = routed_and_scrambled(f, 12);
  const std::string want = reference_json(f, t);
  for (size_t size : kChunkSizes) {
    SCOPED_TRACE("chunks of " + std::to_string(size) + " bytes");
    std::vector<std::string> chunks = chunks_of(&write_lft_json, f, t, size);
    EXPECT_TRUE(joined(chunks) == want) << "the streamed JSON differs from nlohmann's";
    for (size_t i = 0; i < chunks.size(); ++i) {
      ASSERT_FALSE(chunks[i].empty()) << "chunk " << i;
      EXPECT_LE(chunks[i].size(), size) << "chunk " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Generated, StreamedTables, ::testing::ValuesIn(stream_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(LftDumpStream, TheBigCaseSpansSeveralChunks) {
  // Guards the tests above: at the production size too the 2-level 64x8 dump is cut.
  Fabric f = test::generate(test::roft(64, 8, 2, 32));
  ForwardingTables t = routed_and_scrambled(f, 11);
  EXPECT_GE(chunks_of(&write_lft_dump, f, t).size(), 2u);
  EXPECT_GE(chunks_of(&write_lft_json, f, t, 4096).size(), 20u);
}

TEST(LftDumpStream, NoSwitchesNoChunks) {
  FabricBuilder b;
  NodeId h = b.add_node(NodeType::kCa, 1, Guid{0x10}, {}, "lonely");
  ASSERT_TRUE(b.set_port(h, PortNum{1}, Guid{0x11}, Lid{1}).ok());
  Result<Fabric> f = b.build();
  ASSERT_TRUE(f.ok()) << f.error().message;
  ForwardingTables t(0, 2);
  EXPECT_TRUE(chunks_of(&write_lft_dump, *f, t).empty());
  EXPECT_EQ(joined(chunks_of(&write_lft_json, *f, t)), "{\"switches\":[]}\n");
  EXPECT_EQ(joined(chunks_of(&write_lft_json, *f, t)), reference_json(*f, t));
}

// One switch named `desc`, no entries.
std::string json_of_switch_named(const std::string& desc, std::string* reference,
                                 size_t chunk_bytes = kDumpChunkBytes) {
  FabricBuilder b;
  NodeId s = b.add_node(NodeType::kSwitch, 2, Guid{0x20}, {}, desc);
  EXPECT_TRUE(b.set_port(s, PortNum{0}, {}, Lid{1}).ok());
  Result<Fabric> f = b.build();
  EXPECT_TRUE(f.ok()) << f.error().message;
  ForwardingTables t(1, 2);
  if (reference) *reference = reference_json(*f, t);
  return joined(chunks_of(&write_lft_json, *f, t, chunk_bytes));
}

TEST(LftJson, EscapesNamesLikeNlohmann) {
  const std::string names[] = {
      "plain leaf",
      "quote \" backslash \\ slash /",
      "controls \b\f\n\r\t \x01\x1f\x7f and a NUL " + std::string(1, '\0') + " inside",
      "UTF-8 \xC3\xA9 \xE2\x82\xAC \xF0\x9D\x84\x9E \xED\x9F\xBF \xF4\x8F\xBF\xBF",
  };
  for (const std::string& name : names) {
    std::string want;
    std::string got = json_of_switch_named(name, &want);
    EXPECT_EQ(got, want) << name;
  }
  // A name longer than a chunk is cut across chunks.
  const std::string long_name = std::string(700, '"') + "\xC3\xA9";
  std::string want;
  EXPECT_EQ(json_of_switch_named(long_name, &want, kMinChunkBytes), want);
  EXPECT_EQ(json_of_switch_named("", &want), want);
  EXPECT_EQ(want, "{\"switches\":[{\"guid\":\"0x0000000000000020\",\"lft\":{},\"lid\":1,\"name\":\"\"}]}\n");
}

TEST(LftJson, InvalidUtf8BecomesReplacementCharacters) {
  // nlohmann's dump() throws on these; the writer replaces each bad byte.
  const std::pair<std::string, std::string> cases[] = {
      {"a\xFF" "b", "a\xEF\xBF\xBD" "b"},
      {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},              // overlong '/'
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // a surrogate
      {"cut \xE2\x82", "cut \xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // past U+10FFFF
  };
  for (const auto& [raw, shown] : cases) {
    std::string text = json_of_switch_named(raw, nullptr);
    nlohmann::json j = nlohmann::json::parse(text);  // strict: throws on invalid UTF-8
    EXPECT_EQ(j["switches"][0]["name"], shown) << text;
  }
}

}  // namespace
}  // namespace railyard::routing
