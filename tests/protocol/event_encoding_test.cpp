// The wire format of every event, byte for byte as the plugin has always
// written it: the controller and scripts (jq in the integration tests) read
// these keys.
#include "api/protocol/event_codec.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "routing/topology_reader.h"

namespace railyard::protocol {
namespace {

using nlohmann::json;

json decode(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line; the channel adds the line end";
  return json::parse(line);
}

TEST(EventEncoding, CommonFieldsAndSimpleEvents) {
  const json j = decode(encode_event(Event{7, 1700000000.25, SimpleEvent{SimpleKind::kHeavySweepStart}}));
  EXPECT_EQ(j, json::parse(R"({"type":"heavy_sweep_start","seq":7,"time":1700000000.25})"));
  EXPECT_EQ(decode(encode_event(Event{1, 0, SimpleEvent{SimpleKind::kHeavySweepDone}}))["type"], "heavy_sweep_done");
  EXPECT_EQ(decode(encode_event(Event{1, 0, SimpleEvent{SimpleKind::kSubnetUp}}))["type"], "subnet_up");
  EXPECT_EQ(decode(encode_event(Event{1, 0, SimpleEvent{SimpleKind::kSaDbDumped}}))["type"], "sa_db_dumped");
  EXPECT_EQ(decode(encode_event(Event{1, 0, SimpleEvent{SimpleKind::kStateChange}}))["type"], "state_change");
}

TEST(EventEncoding, TrapCarriesTheSwitchLidOnlyForTrap128) {
  const json t128 = decode(encode_event(Event{3, 1.5, TrapEvent{128, 5, true, 2, 9}}));
  EXPECT_EQ(t128, json::parse(R"({"type":"trap","seq":3,"time":1.5,"trap_num":128,"issuer_lid":5,
                                  "generic":true,"producer_type":2,"lid":9})"));
  const json t144 = decode(encode_event(Event{4, 1.5, TrapEvent{144, 5, true, 1, 0}}));
  EXPECT_FALSE(t144.contains("lid"));
  EXPECT_EQ(t144["trap_num"], 144);
}

TEST(EventEncoding, LftChangeAndRoutingDone) {
  const json lft = decode(encode_event(Event{5, 2, LftChangeEvent{0x2c90300a1b2c3ull, 17, 3, 191}}));
  EXPECT_EQ(lft["switch_guid"], "0x0002c90300a1b2c3");
  EXPECT_EQ(lft["switch_lid"], 17);
  EXPECT_EQ(lft["block"], 3);
  EXPECT_EQ(lft["lft_top"], 191);
  EXPECT_EQ(decode(encode_event(Event{6, 2, LftChangeEvent{1, 2, -1, 64}}))["block"], -1);

  const json done = decode(encode_event(Event{8, 3, UcastRoutingDoneEvent{RoutingReason::kReroute, {"a", "b"}, true}}));
  EXPECT_EQ(done, json::parse(R"({"type":"ucast_routing_done","seq":8,"time":3,"reason":"reroute",
                                  "requests":["a","b"],"engine_ok":true})"));
  EXPECT_EQ(decode(encode_event(Event{9, 3, UcastRoutingDoneEvent{RoutingReason::kHeavySweep, {}, false}}))["reason"],
            "heavy_sweep");
}

TEST(EventEncoding, FastPathAndItsRoutingDone) {
  const json done =
      decode(encode_event(Event{10, 3, UcastRoutingDoneEvent{RoutingReason::kFastPath, {"d1"}, true, 9}}));
  EXPECT_EQ(done, json::parse(R"({"type":"ucast_routing_done","seq":10,"time":3,"reason":"fast_path",
                                  "requests":["d1"],"engine_ok":true,"blocks_changed":9})"));

  FastPathEvent pushed;
  pushed.requests = {"d1"};
  pushed.pushed = true;
  pushed.incremental = true;
  pushed.entries_changed = 21;
  pushed.blocks_changed = 9;
  pushed.blocks_sent = 9;
  pushed.blocks_acked = 9;
  pushed.rounds = 2;
  pushed.read_ms = 0.5;
  pushed.route_ms = 1.25;
  pushed.order_ms = 0.125;
  pushed.push_ms = 2.0;
  pushed.total_ms = 3.875;
  EXPECT_EQ(decode(encode_event(Event{11, 3, pushed})), json::parse(R"({"type":"fast_path","seq":11,"time":3,
      "trigger":"command","requests":["d1"],"path":"push","incremental":true,"entries_changed":21,"blocks_changed":9,
      "blocks_sent":9,"blocks_acked":9,"reposted":0,"rounds":2,
      "stage_ms":{"read":0.5,"route":1.25,"order":0.125,"push":2.0},"total_ms":3.875})"));

  FastPathEvent trap;
  trap.trigger = "trap";
  trap.trap_lid = 17;
  trap.links = {"0x0002c90000000001[33] down"};
  trap.probe_ms = 0.5;
  trap.pushed = true;
  const json t = decode(encode_event(Event{13, 3, trap}));
  EXPECT_EQ(t["trigger"], "trap");
  EXPECT_EQ(t["trap_lid"], 17);
  EXPECT_EQ(t["links"], json::parse(R"(["0x0002c90000000001[33] down"])"));
  EXPECT_EQ(t["probe_ms"], 0.5);
  EXPECT_EQ(t["requests"], json::array());
  EXPECT_FALSE(t.contains("ca_first"));
  trap.ca_first = true;
  trap.ca_acked_ms = 2.5;
  const json tc = decode(encode_event(Event{14, 3, trap}));
  EXPECT_EQ(tc["ca_first"], true);
  EXPECT_EQ(tc["ca_acked_ms"], 2.5);

  FastPathEvent left;
  left.requests = {"d2"};
  left.reason = "this SM may not push (sm_state 2)";
  const json j = decode(encode_event(Event{12, 3, left}));
  EXPECT_EQ(j["path"], "opensm");
  EXPECT_EQ(j["reason"], "this SM may not push (sm_state 2)");
}

TEST(EventEncoding, RoutingPassOkAndRefused) {
  RoutingPassEvent ok;
  ok.pass = 4;
  ok.ok = true;
  ok.switches = 12;
  ok.ca_ports = 64;
  ok.lids = 76;
  ok.stage_ms = {0.0124, 1.5, 2.25, 10.0, 0.5};
  ok.hops_ms = 3.0;
  ok.total_ms = 17.2504;
  ok.changed_blocks = 12;
  ok.switches_changed = 12;
  ok.unreachable_pairs = 63;
  ok.unreachable_cas = {{0x10, "node003 mlx5_1", 33, "gone", 0}, {0x11, "node004 mlx5_1", 34, "no route", 2}};
  ok.policy_file = "/etc/railyard/policy.yaml";
  ok.policy = "/etc/railyard/policy.yaml";
  ok.requests = {"r1"};
  const json j = decode(encode_event(Event{10, 4, ok}));
  EXPECT_EQ(j, json::parse(R"({"type":"routing_pass","seq":10,"time":4,"pass":4,"status":"ok","switches":12,
      "ca_ports":64,"lids":76,
      "stage_ms":{"policy":0.012,"snapshot":1.5,"plan":2.25,"route":10.0,"write":0.5,"hop_matrices":3.0},
      "total_ms":17.25,"changed_blocks":12,"switches_changed":12,"unreachable_pairs":63,
      "unreachable_cas":[{"guid":"0x0000000000000010","name":"node003 mlx5_1","lid":33,"why":"gone"},
                         {"guid":"0x0000000000000011","name":"node004 mlx5_1","lid":34,"why":"no route","sources":2}],
      "drained_pairs":0,"policy_file":"/etc/railyard/policy.yaml","policy":"/etc/railyard/policy.yaml",
      "requests":["r1"]})"));

  RoutingPassEvent refused;
  refused.pass = 5;
  refused.reason = "no switches in the subnet";
  refused.policy_error = "p.yaml: line 3: bad";
  const json r = decode(encode_event(Event{11, 5, refused}));
  EXPECT_EQ(r["status"], "refused");
  EXPECT_EQ(r["reason"], "no switches in the subnet");
  EXPECT_TRUE(r["policy_file"].is_null()) << "no policy file: null";
  EXPECT_EQ(r["policy_error"], "p.yaml: line 3: bad");
  EXPECT_FALSE(r["stage_ms"].contains("hop_matrices")) << "hop matrices by OpenSM: no time of ours";
  EXPECT_EQ(r["requests"], json::array());
}

TEST(EventEncoding, FabricIsSerializedAsTopologyTextThatReadsBack) {
  const std::string text =
      "Switch 4 \"S-0000000000000001\" # \"leaf 1\" base port 0 lid 1 lmc 0\n"
      "[1] \"H-0000000000000010\"[1](10) # \"node01 mlx5_0\" lid 2 4xHDR\n"
      "[2] \"H-0000000000000020\"[1](20) # \"node02 mlx5_0\" lid 3 4xHDR\n\n"
      "Ca 1 \"H-0000000000000010\" # \"node01 mlx5_0\"\n"
      "[1](10) \"S-0000000000000001\"[1] # lid 2 lmc 0 \"leaf 1\" lid 1 4xHDR\n\n"
      "Ca 1 \"H-0000000000000020\" # \"node02 mlx5_0\"\n"
      "[1](20) \"S-0000000000000001\"[2] # lid 3 lmc 0 \"leaf 1\" lid 1 4xHDR\n";
  auto fabric = routing::read_topology(text, "t.net");
  ASSERT_TRUE(fabric.ok()) << fabric.error().message;
  auto shared = std::make_shared<const routing::Fabric>(std::move(fabric).value());
  const json j = decode(encode_event(Event{2, 1, FabricEvent{1, shared}}));
  EXPECT_EQ(j["type"], "fabric");
  EXPECT_EQ(j["pass"], 1);
  auto back = routing::read_topology(j["topology"].get<std::string>(), "event");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->num_nodes(), 3u);
  EXPECT_EQ(back->num_links(), 2u);
  EXPECT_EQ(back->port(back->lid_owner(Lid{3})).guid, Guid{0x20});
}

TEST(EventEncoding, CountersAckHello) {
  PortErrorsEvent pe;
  pe.port = {0xabc, 7, "leaf 1"};
  pe.xmit_wait = 123456;
  pe.link_downed = 1;
  pe.time_diff_s = 10;
  const json e = decode(encode_event(Event{1, 1, pe}));
  EXPECT_EQ(e["type"], "port_errors");
  EXPECT_EQ(e["node_guid"], "0x0000000000000abc");
  EXPECT_EQ(e["port"], 7);
  EXPECT_EQ(e["node_name"], "leaf 1");
  EXPECT_EQ(e["xmit_wait"], 123456);
  EXPECT_EQ(e["link_downed"], 1);
  EXPECT_EQ(e["time_diff_s"], 10);

  PortCountersEvent dc;
  dc.port = {0xabc, 7, "leaf 1"};
  dc.xmit_data = 1u << 30;
  const json c = decode(encode_event(Event{2, 1, dc}));
  EXPECT_EQ(c["type"], "port_counters");
  EXPECT_EQ(c["xmit_data"], 1u << 30);

  const json ps = decode(encode_event(Event{3, 1, PortSelectEvent{{1, 2, "x"}, 99, 5}}));
  EXPECT_EQ(ps["type"], "port_select");
  EXPECT_EQ(ps["xmit_wait"], 99);

  EXPECT_EQ(decode(encode_event(Event{4, 1, AckEvent{"R-1", "reroute"}})),
            json::parse(R"({"type":"ack","seq":4,"time":1,"id":"R-1","command":"reroute"})"));
  EXPECT_EQ(decode(encode_event(Event{5, 1, HelloEvent{"osmrailyard", "0.1.0", 42, "OpenSM 3.3.23", 17}})),
            json::parse(R"({"type":"hello","seq":5,"time":1,"plugin":"osmrailyard","version":"0.1.0","pid":42,
                            "opensm":"OpenSM 3.3.23","dropped":17})"));
}

TEST(EventEncoding, InvalidUtf8InANodeNameIsReplacedNotFatal) {
  PortSelectEvent ps{{1, 1, std::string("sw\xff\xfe", 4)}, 0, 0};
  const json j = decode(encode_event(Event{1, 1, ps}));
  EXPECT_EQ(j["node_name"], "sw\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace railyard::protocol
