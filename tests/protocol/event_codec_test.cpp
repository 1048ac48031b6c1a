// Events through the shared codec both ways: every message type encodes and
// decodes back to the same struct, the lines the plugin wrote before the
// shared definition (and older plugins' lines) still decode, and bad lines
// are refused naming the field.
#include "api/protocol/event_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "routing/topology_reader.h"

namespace railyard::protocol {
namespace {

using nlohmann::json;

// One leaf named `leaf` with two CAs.
std::shared_ptr<const routing::Fabric> two_cas_fabric(const std::string& leaf = "leaf 1") {
  const std::string text =
      "Switch 4 \"S-0000000000000001\" # \"" + leaf + "\" base port 0 lid 1 lmc 0\n"
      "[1] \"H-0000000000000010\"[1](10) # \"node01 mlx5_0\" lid 2 4xHDR\n"
      "[2] \"H-0000000000000020\"[1](20) # \"node02 mlx5_0\" lid 3 4xHDR\n\n"
      "Ca 1 \"H-0000000000000010\" # \"node01 mlx5_0\"\n"
      "[1](10) \"S-0000000000000001\"[1] # lid 2 lmc 0 \"" + leaf + "\" lid 1 4xHDR\n\n"
      "Ca 1 \"H-0000000000000020\" # \"node02 mlx5_0\"\n"
      "[1](20) \"S-0000000000000001\"[2] # lid 3 lmc 0 \"" + leaf + "\" lid 1 4xHDR\n";
  auto fabric = routing::read_topology(text, "t.net");
  EXPECT_TRUE(fabric.ok()) << fabric.error().message;
  return std::make_shared<const routing::Fabric>(std::move(fabric).value());
}

// At least one event of every body type and of every branch the wire format
// has (fields present only in some cases). Times and stage times are at the
// wire's precision (microseconds), so decoding gives back the same doubles.
std::vector<Event> samples() {
  std::vector<Event> out;
  uint64_t seq = 1;
  auto add = [&](EventBody body) { out.push_back(Event{seq++, 1796156610.948586, std::move(body)}); };

  for (SimpleKind k : {SimpleKind::kHeavySweepStart, SimpleKind::kHeavySweepDone, SimpleKind::kSubnetUp,
                       SimpleKind::kSaDbDumped, SimpleKind::kStateChange}) {
    add(SimpleEvent{k});
  }
  add(TrapEvent{128, 2, true, 2, 2});
  add(TrapEvent{144, 5, true, 1, 0});
  add(TrapEvent{4660, 9, false, 713, 0});  // a vendor notice
  add(LftChangeEvent{0xe41d2d0301000000ull, 1, 0, 0});
  add(LftChangeEvent{0xffffffffffffffffull, 65535, -1, 49151});
  add(UcastRoutingDoneEvent{RoutingReason::kHeavySweep, {}, true, -1});
  add(UcastRoutingDoneEvent{RoutingReason::kReroute, {"it-reroute-1", "r2"}, false, -1});
  add(UcastRoutingDoneEvent{RoutingReason::kFastPath, {"d1"}, true, 9});
  add(UcastRoutingDoneEvent{RoutingReason::kNone, {}, false, 0});
  add(UcastRoutingDoneEvent{RoutingReason::kFastPath, {"d2"}, true, 3, Digests{0x1, 0xfedcba9876543210ull, {}}});

  RoutingPassEvent ok;
  ok.pass = 4;
  ok.ok = true;
  ok.switches = 12;
  ok.ca_ports = 64;
  ok.lids = 76;
  ok.stage_ms = {0.012, 1.5, 2.25, 10.0, 0.5};
  ok.hops_ms = 3.0;
  ok.total_ms = 17.25;
  ok.changed_blocks = 12;
  ok.switches_changed = 12;
  ok.unreachable_pairs = 63;
  ok.unreachable_cas = {{0x10, "node003 mlx5_1", 33, "gone", 0}, {0x11, "node004 mlx5_1", 34, "no route", 2}};
  ok.drained_pairs = 7;
  ok.policy_file = "/etc/railyard/policy.yaml";
  ok.policy = "/etc/railyard/policy.yaml";
  ok.requests = {"r1"};
  add(ok);
  ok.pass = 6;
  ok.digests = Digests{0xabcdef, 0x0123456789abcdefull, {{Guid{0x2}, 7}, {Guid{0xe41d2d0301000000ull}, ~0ull}}};
  add(ok);
  RoutingPassEvent refused;
  refused.pass = 5;
  refused.reason = "no switches in the subnet";
  refused.policy_error = "p.yaml:3: bad";
  add(refused);

  add(FabricEvent{1, two_cas_fabric()});
  // A whole fabric, then one whose leaf was renamed and lost a CA.
  add(FabricChangesEvent{1, true, 0, 0x1234, routing::full_changes(*two_cas_fabric())});
  {
    routing::FabricChanges c;
    c.nodes_removed = {Guid{0x20}};
    routing::NodeRecord leaf = routing::node_record(*two_cas_fabric("leaf 2"), NodeId(0));
    leaf.ports[2].state = routing::PortState::kDown;
    leaf.ports[3].lmc = 2;
    c.nodes = {leaf};
    c.links_removed = {routing::LinkEnd{Guid{0x1}, 2}};
    c.links = {routing::LinkRecord{{Guid{0x1}, 1}, {Guid{0x10}, 1}, routing::LinkWidth::k4x, routing::LinkSpeed::kNdr,
                                   routing::PortState::kInit},
               routing::LinkRecord{{Guid{0x1}, 3}, {Guid{0x30}, 1}, routing::LinkWidth::kUnknown,
                                   routing::LinkSpeed::kUnknown, routing::PortState::kUnknown}};
    add(FabricChangesEvent{2, false, 0x1234, 0xfedcba9876543210ull, std::move(c)});
  }

  FastPathEvent pushed;
  pushed.requests = {"d1"};
  pushed.pushed = true;
  pushed.incremental = true;
  pushed.entries_changed = 21;
  pushed.blocks_changed = 9;
  pushed.blocks_sent = 10;
  pushed.blocks_acked = 9;
  pushed.reposted = 1;
  pushed.rounds = 2;
  pushed.read_ms = 0.5;
  pushed.route_ms = 1.25;
  pushed.order_ms = 0.125;
  pushed.push_ms = 2.0;
  pushed.total_ms = 3.875;
  add(pushed);
  FastPathEvent with_digests = pushed;
  with_digests.digests = Digests{0x10, 0x20, {}};
  add(with_digests);
  FastPathEvent trap = pushed;
  trap.trigger = "trap";
  trap.trap_lid = 17;
  trap.links = {"0x0002c90000000001[33] down"};
  trap.probe_ms = 0.5;
  trap.detours = 3;
  trap.ca_first = true;
  trap.ca_acked_ms = 2.5;
  trap.requests = {};
  add(trap);
  FastPathEvent second = trap;  // routed with a link found down before still in OpenSM's model
  second.known_down = 1;
  add(second);
  FastPathEvent left;
  left.requests = {"d2", "d3"};
  left.reason = "this SM may not push (sm_state 2)";
  add(left);

  PortCountersEvent counters;
  counters.port = {0xabc, 7, "leaf 1"};
  counters.xmit_data = 1ull << 40;
  counters.rcv_data = 2;
  counters.xmit_pkts = 3;
  counters.rcv_pkts = 4;
  counters.unicast_xmit_pkts = 5;
  counters.unicast_rcv_pkts = 6;
  counters.multicast_xmit_pkts = 7;
  counters.multicast_rcv_pkts = 8;
  counters.time_diff_s = 10;
  add(counters);
  PortErrorsEvent errors;
  errors.port = {0xabc, 255, "leaf 1"};
  errors.symbol_err = 1;
  errors.link_err_recover = 2;
  errors.link_downed = 3;
  errors.rcv_err = 4;
  errors.rcv_rem_phys_err = 5;
  errors.rcv_switch_relay_err = 6;
  errors.xmit_discards = 7;
  errors.xmit_constraint_err = 8;
  errors.rcv_constraint_err = 9;
  errors.link_integrity = 10;
  errors.buffer_overrun = 11;
  errors.vl15_dropped = 12;
  errors.xmit_wait = 123456;
  errors.time_diff_s = -1;
  add(errors);
  add(PortSelectEvent{{1, 2, "x"}, 99, 5});
  add(AckEvent{"R-1", "reroute"});
  add(HelloEvent{"osmrailyard", "0.1.0", 14154, "OpenSM 3.3.23", 6});
  add(HelloEvent{"osmrailyard", "0.1.0", 14155, "OpenSM 3.3.23", 0, "s3cret", 0xe41d2d0300000001, "standby"});
  add(SmStateEvent{"master", 0xe41d2d0300000001});
  return out;
}

TEST(EventCodec, TheSamplesCoverEveryMessageType) {
  std::set<size_t> alternatives;
  std::set<std::string> types;
  for (const Event& e : samples()) {
    alternatives.insert(e.body.index());
    types.insert(std::string(event_type(e.body)));
  }
  // A new alternative of EventBody fails here until it has a sample.
  EXPECT_EQ(alternatives.size(), std::variant_size_v<EventBody>);
  EXPECT_EQ(types.size(), std::variant_size_v<EventBody> - 1 + 5) << "every SimpleKind too";
}

TEST(EventCodec, EncodeThenDecodeGivesTheSameEvent) {
  for (const Event& e : samples()) {
    const std::string line = encode_event(e);
    Decoded<Event> back = decode_event_line(line);
    ASSERT_TRUE(back.ok()) << line << "\n-> " << back.error().message();
    EXPECT_TRUE(*back == e) << line;
    EXPECT_EQ(encode_event(*back), line) << "the decoded event encodes to the same bytes";
  }
}

TEST(EventCodec, ADifferenceInAnyFieldIsSeen) {
  // The round trip above must be able to fail: events that differ in one
  // field compare unequal (FabricEvent compares by topology text).
  Event a{1, 2, TrapEvent{128, 2, true, 2, 2}};
  Event b = a;
  std::get<TrapEvent>(b.body).lid = 3;
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(Event(a) == (Event{2, 2, a.body}));
  EXPECT_FALSE((FabricEvent{1, two_cas_fabric()} == FabricEvent{1, two_cas_fabric("leaf 2")}));
  EXPECT_FALSE((FabricEvent{1, two_cas_fabric()} == FabricEvent{2, two_cas_fabric()}));
  EXPECT_TRUE((FabricEvent{1, two_cas_fabric()} == FabricEvent{1, two_cas_fabric()}));
  EXPECT_FALSE((FabricEvent{1, two_cas_fabric()} == FabricEvent{1, nullptr}));
}

// Lines libosmrailyard.so wrote before the codec was shared (taken from the
// event sink of plugin_events_test.sh, plugin_fast_path_test.sh,
// plugin_trap_fast_path_test.sh and plugin_ca_down_test.sh on ibsim): they
// decode, and encode back to the same bytes.
const char* const kPluginLines[] = {
    R"({"dropped":6,"opensm":"OpenSM 3.3.23","pid":14154,"plugin":"osmrailyard","seq":7,"time":1796156610.191807,"type":"hello","version":"0.1.0"})",
    R"({"generic":true,"issuer_lid":2,"lid":2,"producer_type":2,"seq":9,"time":1796156610.948586,"trap_num":128,"type":"trap"})",
    R"({"seq":10,"time":1796156610.948801,"type":"heavy_sweep_start"})",
    R"({"seq":11,"time":1796156610.979736,"type":"heavy_sweep_done"})",
    R"({"ca_ports":64,"changed_blocks":10,"drained_pairs":0,"lids":80,"pass":2,"policy":"default","policy_file":null,"requests":[],"seq":13,"stage_ms":{"hop_matrices":0.036,"plan":0.023,"policy":0.002,"route":0.326,"snapshot":0.061,"write":0.002},"status":"ok","switches":16,"switches_changed":9,"time":1796156610.985143,"total_ms":0.461,"type":"routing_pass","unreachable_cas":[],"unreachable_pairs":0})",
    R"({"block":0,"lft_top":0,"seq":14,"switch_guid":"0xe41d2d0301000000","switch_lid":1,"time":1796156610.985207,"type":"lft_change"})",
    R"({"engine_ok":true,"reason":"heavy_sweep","requests":[],"seq":25,"time":1796156610.985577,"type":"ucast_routing_done"})",
    R"({"seq":26,"time":1796156610.995534,"type":"subnet_up"})",
    R"({"command":"reroute","id":"it-reroute-1","seq":27,"time":1796156611.901372,"type":"ack"})",
    R"({"ca_ports":64,"changed_blocks":0,"drained_pairs":0,"lids":80,"pass":3,"policy":"default","policy_file":null,"requests":["it-reroute-1"],"seq":28,"stage_ms":{"hop_matrices":0.052,"plan":0.03,"policy":0.003,"route":7.96,"snapshot":0.111,"write":0.004},"status":"ok","switches":16,"switches_changed":0,"time":1796156611.909662,"total_ms":8.199,"type":"routing_pass","unreachable_cas":[],"unreachable_pairs":0})",
    R"({"engine_ok":true,"reason":"reroute","requests":["it-reroute-1"],"seq":33,"time":1796156611.91175,"type":"ucast_routing_done"})",
    R"({"command":"policy_changed","id":"it-policy-1","seq":34,"time":1796156612.212554,"type":"ack"})",
    R"({"blocks_acked":9,"blocks_changed":9,"blocks_sent":9,"entries_changed":21,"incremental":true,"path":"push","reposted":0,"requests":["fp-drain-1"],"rounds":1,"seq":9,"stage_ms":{"order":0.037,"push":0.468,"read":0.758,"route":3.558},"time":1796156618.736674,"total_ms":4.827,"trigger":"command","type":"fast_path"})",
    R"({"blocks_acked":0,"blocks_changed":0,"blocks_sent":0,"entries_changed":0,"incremental":false,"path":"opensm","reason":"policy file: /tmp/railyard-it.2kxTps/policy.yaml:2: invalid YAML: end of sequence flow not found; keeping the last good policy from /tmp/railyard-it.2kxTps/policy.yaml","reposted":0,"requests":["fp-broken-1"],"rounds":0,"seq":21,"stage_ms":{"order":0.0,"push":0.0,"read":0.593,"route":0.0},"time":1796156627.541975,"total_ms":0.0,"trigger":"command","type":"fast_path"})",
    R"({"blocks_changed":9,"engine_ok":true,"reason":"fast_path","requests":["fp-drain-1"],"seq":10,"time":1796156618.73669,"type":"ucast_routing_done"})",
    R"({"blocks_acked":14,"blocks_changed":14,"blocks_sent":14,"detours":0,"entries_changed":49,"incremental":true,"links":["0xe41d2d0301000001[35] down"],"path":"push","probe_ms":2.392,"reposted":0,"requests":[],"rounds":1,"seq":10,"stage_ms":{"order":0.043,"push":0.763,"read":0.741,"route":1.205},"time":1796156641.761419,"total_ms":5.333,"trap_lid":3,"trigger":"trap","type":"fast_path"})",
    R"({"blocks_acked":0,"blocks_changed":0,"blocks_sent":0,"detours":0,"entries_changed":0,"incremental":false,"links":[],"path":"opensm","probe_ms":5.39,"reason":"the probe found no link changed","reposted":0,"requests":[],"rounds":0,"seq":29,"stage_ms":{"order":0.0,"push":0.0,"read":0.459,"route":0.0},"time":1796156644.429809,"total_ms":5.891,"trap_lid":3,"trigger":"trap","type":"fast_path"})",
    R"({"ca_ports":255,"changed_blocks":40,"drained_pairs":0,"lids":295,"pass":2,"policy":"default","policy_file":null,"requests":[],"seq":13,"stage_ms":{"hop_matrices":0.141,"plan":0.045,"policy":0.002,"route":4.574,"snapshot":0.263,"write":0.012},"status":"ok","switches":40,"switches_changed":40,"time":1796156655.328817,"total_ms":5.071,"type":"routing_pass","unreachable_cas":[{"guid":"0xe41d2d0304000022","lid":75,"name":"node003 mlx5_1","why":"gone"}],"unreachable_pairs":0})",
};

TEST(EventCodec, LinesThePluginWroteDecodeToTheSameBytes) {
  for (const char* line : kPluginLines) {
    Decoded<Event> e = decode_event_line(line);
    ASSERT_TRUE(e.ok()) << line << "\n-> " << e.error().message();
    EXPECT_EQ(encode_event(*e), line);
  }
}

TEST(EventCodec, AFabricLineThePluginWroteDecodesToTheSameBytes) {
  // 16 servers x 4 rails as OpenSM's subnet held it (plugin_events_test.sh).
  std::ifstream in(std::string(RAILYARD_SOURCE_DIR) + "/tests/data/protocol/fabric_event.jsonl");
  ASSERT_TRUE(in) << "tests/data/protocol/fabric_event.jsonl";
  std::string line;
  std::getline(in, line);
  Decoded<Event> e = decode_event_line(line);
  ASSERT_TRUE(e.ok()) << e.error().message();
  const FabricEvent& f = std::get<FabricEvent>(e->body);
  ASSERT_TRUE(f.fabric);
  EXPECT_EQ(f.fabric->cas().size(), 64u);
  EXPECT_EQ(encode_event(*e), line);
}

TEST(EventCodec, AFabricLineDecodesToItsFabric) {
  const std::string line = encode_event(Event{3, 1, FabricEvent{2, two_cas_fabric()}});
  Decoded<Event> e = decode_event_line(line);
  ASSERT_TRUE(e.ok()) << e.error().message();
  const FabricEvent& f = std::get<FabricEvent>(e->body);
  EXPECT_EQ(f.pass, 2u);
  ASSERT_TRUE(f.fabric);
  EXPECT_EQ(f.fabric->num_nodes(), 3u);
  EXPECT_EQ(f.fabric->port(f.fabric->lid_owner(Lid{3})).guid, Guid{0x20});
}

// Fields added after the first release are optional: lines of plugins built
// before them decode, with the defaults.
TEST(EventCodec, LinesOfOlderPluginsStillDecode) {
  // fast_path before the trap fast path (no trigger), and a trap one before
  // detours; ucast_routing_done before the fast path (no blocks_changed).
  Decoded<Event> first = decode_event_line(
      R"({"blocks_acked":9,"blocks_changed":9,"blocks_sent":9,"entries_changed":21,"incremental":true,"path":"push","reposted":0,"requests":["d1"],"rounds":2,"seq":11,"stage_ms":{"order":0.125,"push":2.0,"read":0.5,"route":1.25},"time":3.0,"total_ms":3.875,"type":"fast_path"})");
  ASSERT_TRUE(first.ok()) << first.error().message();
  const FastPathEvent& f = std::get<FastPathEvent>(first->body);
  EXPECT_EQ(f.trigger, "command");
  EXPECT_TRUE(f.pushed);
  EXPECT_EQ(f.requests, std::vector<std::string>{"d1"});
  EXPECT_FALSE(f.ca_first);
  EXPECT_FALSE(f.digests.has_value());

  Decoded<Event> trap = decode_event_line(
      R"({"blocks_acked":4,"blocks_changed":4,"blocks_sent":4,"entries_changed":8,"incremental":true,"links":["0x0002c90000000001[33] down"],"path":"push","probe_ms":0.5,"reposted":0,"requests":[],"rounds":1,"seq":12,"stage_ms":{"order":0.1,"push":1.0,"read":0.2,"route":0.3},"time":3.0,"total_ms":2.0,"trap_lid":17,"trigger":"trap","type":"fast_path"})");
  ASSERT_TRUE(trap.ok()) << trap.error().message();
  EXPECT_EQ(std::get<FastPathEvent>(trap->body).trap_lid, 17);
  EXPECT_EQ(std::get<FastPathEvent>(trap->body).detours, 0u);

  Decoded<Event> done = decode_event_line(
      R"({"engine_ok":false,"reason":"heavy_sweep","requests":["r1"],"seq":4,"time":3.5,"type":"ucast_routing_done"})");
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_FALSE(std::get<UcastRoutingDoneEvent>(done->body).digests.has_value());
  EXPECT_EQ(std::get<UcastRoutingDoneEvent>(done->body).blocks_changed, -1);
  EXPECT_FALSE(std::get<UcastRoutingDoneEvent>(done->body).engine_ok);
}

TEST(EventCodec, HelloSaysTokenAndSmStateOnlyWhenItHasThem) {
  const std::string old = encode_event({1, 2, HelloEvent{"osmrailyard", "0.1.0", 1, "OpenSM 3.3.23", 0}});
  EXPECT_EQ(old.find("token"), std::string::npos) << old;
  EXPECT_EQ(old.find("sm_"), std::string::npos) << old;
  const std::string line =
      encode_event({1, 2, HelloEvent{"osmrailyard", "0.1.0", 1, "OpenSM 3.3.23", 0, "t", 0x1234, "master"}});
  EXPECT_EQ(line,
            R"({"dropped":0,"opensm":"OpenSM 3.3.23","pid":1,"plugin":"osmrailyard","seq":1,"sm_port_guid":"0x0000000000001234","sm_state":"master","time":2.0,"token":"t","type":"hello","version":"0.1.0"})");
  EXPECT_EQ(encode_event({3, 4, SmStateEvent{"standby", 0x1234}}),
            R"({"seq":3,"sm_port_guid":"0x0000000000001234","state":"standby","time":4.0,"type":"sm_state"})");
}

TEST(EventCodec, UnknownSmStatesAreRefused) {
  Decoded<Event> bad = decode_event_line(R"({"seq":3,"sm_port_guid":"0x1","state":"boss","time":4.0,"type":"sm_state"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "sm_state: state must be master, standby, discovering, not_active or unknown");
  Decoded<Event> hello = decode_event_line(
      R"({"dropped":0,"opensm":"x","pid":1,"plugin":"p","seq":1,"sm_state":7,"time":2.0,"type":"hello","version":"v"})");
  ASSERT_FALSE(hello.ok());
  EXPECT_EQ(hello.error().message(), "hello: sm_state must be a string");
}

TEST(EventCodec, NonFiniteNumbersAreRefused) {
  // JSON text cannot carry them (1e400 does not parse), a json value can.
  Decoded<Event> e = decode_event(json{{"type", "subnet_up"}, {"seq", 1}, {"time", HUGE_VAL}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message(), "subnet_up: time must be a finite number");
  EXPECT_FALSE(decode_event_line(R"({"type":"subnet_up","seq":1,"time":1e400})").ok());
}

TEST(EventCodec, HugeNumbersStayNumbers) {
  // Scaled to micro- or milliseconds they would overflow: encoded as they
  // are, never as null.
  Event e{1, 1e305, SimpleEvent{SimpleKind::kSubnetUp}};
  Decoded<Event> back = decode_event_line(encode_event(e));
  ASSERT_TRUE(back.ok()) << encode_event(e) << " -> " << back.error().message();
  EXPECT_EQ(back->time, 1e305);
  FastPathEvent slow;
  slow.total_ms = 1e307;
  Decoded<Event> fast = decode_event_line(encode_event({2, 1, slow}));
  ASSERT_TRUE(fast.ok()) << fast.error().message();
  EXPECT_EQ(std::get<FastPathEvent>(fast->body).total_ms, 1e307);
}

TEST(EventCodec, UnknownFieldsAreIgnored) {
  Decoded<Event> e =
      decode_event_line(R"({"seq":1,"time":2,"type":"subnet_up","new_field":{"deep":[1,2]}})" "\n");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(std::get<SimpleEvent>(e->body).kind, SimpleKind::kSubnetUp);
}

struct BadLine {
  std::string line;
  DecodeError::Kind kind;
  std::string message;
};

TEST(EventCodec, BadLinesAreRefusedNamingTheField) {
  using K = DecodeError::Kind;
  const BadLine cases[] = {
      {"this is not json", K::kNotJson, "not JSON"},
      {"[1,2,3]", K::kNotAnObject, "not a JSON object"},
      {R"({"seq":1,"time":2})", K::kMissingField, "type is missing"},
      {R"({"type":7,"seq":1,"time":2})", K::kWrongType, "type must be a string"},
      {R"({"type":"dance","seq":1,"time":2})", K::kUnknownType, "unknown type 'dance'"},
      {R"({"type":"trap","time":2})", K::kMissingField, "trap: seq is missing"},
      {R"({"type":"trap","seq":-1,"time":2})", K::kBadValue, "trap: seq must be an integer 0..18446744073709551615"},
      {R"({"type":"trap","seq":1,"time":"x"})", K::kWrongType, "trap: time must be a number"},
      {R"({"type":"trap","seq":1,"time":2})", K::kMissingField, "trap: trap_num is missing"},
      {R"({"type":"trap","seq":1,"time":2,"trap_num":128,"issuer_lid":70000,"generic":true,"producer_type":2,"lid":1})",
       K::kBadValue, "trap: issuer_lid must be an integer 0..65535"},
      {R"({"type":"trap","seq":1,"time":2,"trap_num":128,"issuer_lid":1,"generic":true,"producer_type":2})",
       K::kMissingField, "trap: lid is missing"},
      {R"({"type":"lft_change","seq":1,"time":2,"switch_guid":"e41d","switch_lid":1,"block":0,"lft_top":0})",
       K::kBadValue, "lft_change: switch_guid must be a GUID (\"0x\" and 1..16 hex digits)"},
      {R"({"type":"lft_change","seq":1,"time":2,"switch_guid":"0x1","switch_lid":1,"block":1.5,"lft_top":0})",
       K::kBadValue, "lft_change: block must be an integer -2147483648..2147483647"},
      {R"({"type":"ucast_routing_done","seq":3,"time":2,"reason":"reroute","engine_ok":"yes","requests":[]})",
       K::kWrongType, "ucast_routing_done: engine_ok must be true or false"},
      {R"({"type":"ucast_routing_done","seq":3,"time":2,"reason":"reroute","engine_ok":true,"requests":[1,"y"]})",
       K::kWrongType, "ucast_routing_done: requests[0] must be a string"},
      {R"({"type":"ucast_routing_done","seq":3,"time":2,"reason":"whim","engine_ok":true,"requests":[]})",
       K::kBadValue, "ucast_routing_done: reason must be heavy_sweep, reroute, fast_path or none"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":5,"requests":["x"]})", K::kWrongType,
       "routing_pass: status must be a string"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"maybe","requests":["x"]})", K::kBadValue,
       "routing_pass: status must be ok or refused"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"refused","requests":["x"]})", K::kMissingField,
       "routing_pass: reason is missing"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"ok","switches":1,"ca_ports":2,"lids":3,
           "stage_ms":{"policy":0,"snapshot":0,"plan":0,"write":0},"total_ms":1})",
       K::kMissingField, "routing_pass: stage_ms.route is missing"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"ok","switches":1,"ca_ports":2,"lids":3,
           "stage_ms":{"policy":0,"snapshot":0,"plan":0,"route":0,"write":0},"total_ms":1,"changed_blocks":0,
           "switches_changed":0,"unreachable_pairs":1,
           "unreachable_cas":[{"guid":"0x1","name":"a","lid":1,"why":"gone"},{"guid":"0x2","name":"b","lid":-4,"why":"gone"}]})",
       K::kBadValue, "routing_pass: unreachable_cas[1].lid must be an integer 0..65535"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"ok","switches":1,"ca_ports":2,"lids":3,
           "stage_ms":{"policy":0,"snapshot":0,"plan":0,"route":0,"write":0},"total_ms":1,"changed_blocks":0,
           "switches_changed":0,"unreachable_pairs":0,"unreachable_cas":[],"drained_pairs":0,"requests":[]})",
       K::kMissingField, "routing_pass: policy_file is missing"},
      {R"({"type":"ucast_routing_done","seq":3,"time":2,"reason":"fast_path","engine_ok":true,"requests":[],
           "digests":{"policy":"0x1"}})",
       K::kMissingField, "ucast_routing_done: digests.lfts is missing"},
      {R"({"type":"ucast_routing_done","seq":3,"time":2,"reason":"fast_path","engine_ok":true,"requests":[],
           "digests":{"policy":"0x1","lfts":"12"}})",
       K::kBadValue, "ucast_routing_done: digests.lfts must be a digest (\"0x\" and 1..16 hex digits)"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"ok","switches":1,"ca_ports":2,"lids":3,
           "stage_ms":{"policy":0,"snapshot":0,"plan":0,"route":0,"write":0},"total_ms":1,"changed_blocks":0,
           "switches_changed":0,"unreachable_pairs":0,"unreachable_cas":[],"drained_pairs":0,"policy_file":null,
           "requests":[],"digests":{"policy":"0x1","lfts":"0x2","switches":{"leaf":"0x3"}}})",
       K::kBadValue, "routing_pass: digests.switches.leaf is not a switch GUID (\"0x\" and 1..16 hex digits)"},
      {R"({"type":"routing_pass","seq":2,"time":2,"pass":1,"status":"ok","switches":1,"ca_ports":2,"lids":3,
           "stage_ms":{"policy":0,"snapshot":0,"plan":0,"route":0,"write":0},"total_ms":1,"changed_blocks":0,
           "switches_changed":0,"unreachable_pairs":0,"unreachable_cas":[],"drained_pairs":0,"policy_file":null,
           "requests":[],"digests":{"policy":"0x1","lfts":"0x2","switches":{"0x5":7}}})",
       K::kWrongType, "routing_pass: digests.switches.0x5 must be a string"},
      {R"({"type":"fabric","seq":5,"time":2,"pass":1})", K::kMissingField, "fabric: topology is missing"},
      {R"({"type":"fabric_changes","seq":5,"time":2,"pass":1,"full":false,"base":"0x1","fingerprint":"0x2",
           "nodes_removed":["S-1"],"nodes":[],"links_removed":[],"links":[]})",
       K::kBadValue, "fabric_changes: nodes_removed[0] must be a GUID (\"0x\" and 1..16 hex digits)"},
      {R"({"type":"fabric_changes","seq":5,"time":2,"pass":1,"full":false,"base":"0x1","fingerprint":"0x2",
           "nodes_removed":[],"nodes":[{"guid":"0x1","type":"Switch","ports":2,"system_guid":"0x1","desc":"l",
           "name":"S-1","states":"?A","addresses":[]}],"links_removed":[],"links":[]})",
       K::kBadValue, "fabric_changes: nodes[0].states must have one character per port 0..2"},
      {R"({"type":"fabric_changes","seq":5,"time":2,"pass":1,"full":false,"base":"0x1","fingerprint":"0x2",
           "nodes_removed":[],"nodes":[{"guid":"0x1","type":"Hub","ports":2,"system_guid":"0x1","desc":"l",
           "name":"S-1","states":"?AA","addresses":[]}],"links_removed":[],"links":[]})",
       K::kBadValue, "fabric_changes: nodes[0].type must be Switch, Ca or Rt"},
      {R"({"type":"fabric_changes","seq":5,"time":2,"pass":1,"full":false,"base":"0x1","fingerprint":"0x2",
           "nodes_removed":[],"nodes":[{"guid":"0x1","type":"Ca","ports":1,"system_guid":"0x1","desc":"l",
           "name":"S-1","states":"?A","addresses":[{"port":2,"guid":"0x5","lid":3,"lmc":0}]}],"links_removed":[],"links":[]})",
       K::kBadValue, "fabric_changes: nodes[0].addresses[0].port is beyond the node's 1 ports"},
      {R"({"type":"fabric_changes","seq":5,"time":2,"pass":1,"full":false,"base":"0x1","fingerprint":"0x2",
           "nodes_removed":[],"nodes":[],"links_removed":[],"links":[{"a":"0x1","a_port":1,"b":"0x2","b_port":1,
           "width":"4x","speed":"warp","state":"active"}]})",
       K::kBadValue, "fabric_changes: links[0].speed must be SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR or empty"},
      {R"({"type":"fast_path","seq":5,"time":2,"trigger":"trap","requests":[]})", K::kMissingField,
       "fast_path: trap_lid is missing"},
      {R"({"type":"fast_path","seq":5,"time":2,"requests":[],"path":"carrier pigeon"})", K::kBadValue,
       "fast_path: path must be push or opensm"},
      {R"({"type":"hello","seq":1,"time":2,"plugin":"osmrailyard","version":"0.1.0","pid":1,"opensm":"x"})",
       K::kMissingField, "hello: dropped is missing"},
      {R"({"type":"port_select","seq":1,"time":2,"node_guid":"0x1","port":256,"node_name":"x","xmit_wait":1,"time_diff_s":1})",
       K::kBadValue, "port_select: port must be an integer 0..255"},
      {R"({"type":"ack","seq":1,"time":2,"id":null,"command":"reroute"})", K::kMissingField, "ack: id is missing"},
  };
  for (const BadLine& c : cases) {
    Decoded<Event> e = decode_event_line(c.line);
    ASSERT_FALSE(e.ok()) << c.line;
    EXPECT_EQ(e.error().kind, c.kind) << c.line << "\n-> " << e.error().message();
    EXPECT_EQ(e.error().message(), c.message) << c.line;
  }
}

TEST(EventCodec, ATopologyThatDoesNotReadIsAnErrorOfTheTopologyField) {
  Decoded<Event> e =
      decode_event_line(R"({"type":"fabric","seq":5,"time":2,"pass":7,"topology":"Switch 8 \"S-1\"\n[1] garbage\n"})");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, DecodeError::Kind::kBadValue);
  EXPECT_EQ(e.error().field, "topology");
  EXPECT_EQ(e.error().message().rfind("fabric: topology does not read: plugin snapshot (pass 7)", 0), 0u)
      << e.error().message();
}

TEST(EventCodec, TheEnvelopeDecodesAlone) {
  // The controller follows seq of lines whose body is bad.
  const json j = json::parse(R"({"type":"trap","seq":9,"time":1.5})");
  Decoded<Envelope> env = decode_envelope(j);
  ASSERT_TRUE(env.ok()) << env.error().message();
  EXPECT_EQ(env->type, "trap");
  EXPECT_EQ(env->seq, 9u);
  EXPECT_EQ(env->time, 1.5);
  EXPECT_FALSE(decode_event_body("trap", j).ok());
  EXPECT_EQ(decode_event_body("subnet_up", j).ok(), true);
}

}  // namespace
}  // namespace railyard::protocol
