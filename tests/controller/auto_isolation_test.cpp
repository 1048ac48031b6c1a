// AutoIsolation on a real Controller (live, the fabric fed as the plugin
// sends it, a real SQLite store): link events reported through the
// controller's own path become a drain by "auto" with reason
// "auto: flapping", audited; undrained once clean; dry run drains nothing;
// the breaker stops it and a reset resumes it. The test owns the clock.
#include "controller/auto_isolation.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "api/protocol/event_codec.h"
#include "routing/generator.h"
#include "routing/lid_assignment.h"
#include "routing/node_lookup.h"

namespace railyard::controller {
namespace {

class AutoIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-iso-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Controller> live_controller() {
    ControllerConfig cfg;
    cfg.database = (dir_ / "state.db").string();
    cfg.fabric_source = FabricSource::kLive;
    cfg.plugin_socket = (dir_ / "plugin.sock").string();
    cfg.policy_output_file = (dir_ / "policy.yaml").string();
    cfg.reroutes_per_minute = 1000;
    auto store = Store::open(cfg.database);
    EXPECT_TRUE(store.ok());
    auto c = std::make_unique<Controller>(cfg, std::move(store).value());
    EXPECT_TRUE(c->start().ok());
    c->set_plugin_sender([](const std::string&) { return true; });
    c->on_plugin_connection(true);
    routing::GeneratorSpec spec;
    spec.servers = 16;
    spec.rails = 4;
    spec.radix = 16;
    auto g = routing::generate_fabric(spec);
    EXPECT_TRUE(g.ok());
    auto with_lids = routing::assign_lids(g->fabric);
    EXPECT_TRUE(with_lids.ok());
    c->on_plugin_line(protocol::encode_event(
        {1, unix_now(), protocol::FabricEvent{1, std::make_shared<const routing::Fabric>(std::move(*with_lids))}}));
    EXPECT_TRUE(c->view() != nullptr);
    return c;
  }

  // Monitoring reports the leaf's uplink `port` down then up, `times` times.
  void flap(Controller& c, uint32_t port, int times, const std::string& leaf = "leaf g000 r0") {
    const Actor mon{"monitoring", Role::kOperator, "POST /api/v1/events/link", ""};
    for (int i = 0; i < times; ++i) {
      for (LinkState s : {LinkState::kDown, LinkState::kUp}) {
        LinkEventRequest r;
        r.event_id = "ev-" + leaf + std::to_string(port) + "-" + std::to_string(counter_++);
        r.node = leaf;
        r.port = port;
        r.state = s;
        LinkEventOutcome o = c.link_event(r, mon);
        ASSERT_TRUE(o.ok()) << o.failure->message;
      }
    }
  }

  // The plugin's fabric of pass `pass`.
  void send_fabric(Controller& c, uint64_t pass, routing::Fabric f) {
    c.on_plugin_line(protocol::encode_event(
        {pass, unix_now(), protocol::FabricEvent{pass, std::make_shared<const routing::Fabric>(std::move(f))}}));
  }

  // f without the link on `desc`'s port `port`, as OpenSM's subnet has it
  // while the link is down (discovery drops it).
  static routing::Fabric without_link(const routing::Fabric& f, const std::string& desc, uint32_t port) {
    using namespace routing;
    const Result<NodeId> node = find_node(f, desc);
    EXPECT_TRUE(node.ok());
    const LinkId cut = f.port(f.port_id(*node, PortNum{static_cast<uint8_t>(port)})).link;
    FabricBuilder b;
    for (uint32_t i = 0; i < f.num_nodes(); ++i) {
      const Node& nd = f.node(NodeId(i));
      b.add_node(nd.type, nd.num_ports, nd.guid, nd.system_guid, f.desc(NodeId(i)), f.name(NodeId(i)));
      for (uint32_t p = 0; p <= nd.num_ports; ++p) {
        const Port& pt = f.port(PortId(nd.first_port.value() + p));
        if (pt.lid.valid() || pt.guid.valid()) EXPECT_TRUE(b.set_port(NodeId(i), pt.num, pt.guid, pt.lid, pt.lmc).ok());
      }
    }
    for (uint32_t l = 0; l < f.num_links(); ++l) {
      if (LinkId(l) == cut) continue;
      const Link& link = f.link(LinkId(l));
      const Port& a = f.port(link.a);
      const Port& z = f.port(link.b);
      EXPECT_TRUE(b.connect(a.node, a.num, z.node, z.num, link.width, link.speed, link.state).ok());
    }
    return std::move(b.build()).value();
  }

  std::vector<DrainRecord> auto_drains(Controller& c) {
    std::vector<DrainRecord> out;
    for (const DrainRecord& d : c.store().active_drains()) {
      if (d.created_by == "auto") out.push_back(d);
    }
    return out;
  }

  IsolationConfig config() {
    IsolationConfig cfg;
    cfg.enabled = true;
    cfg.flaps = 3;
    cfg.window_s = 60;
    cfg.clean_s = 10;
    cfg.max_links = 2;
    cfg.max_percent = 0;
    return cfg;
  }

  std::filesystem::path dir_;
  int counter_ = 0;
};

TEST_F(AutoIsolationTest, AFlappingLinkIsDrainedByAutoAuditedAndRestoredOnceClean) {
  auto c = live_controller();
  AutoIsolation iso(*c, config());
  iso.start_at(unix_now());
  flap(*c, 9, 2);
  iso.tick(unix_now());
  EXPECT_TRUE(auto_drains(*c).empty()) << "two flaps are under the threshold of 3";
  flap(*c, 9, 1);
  const double t = unix_now();
  iso.tick(t);
  auto drains = auto_drains(*c);
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_EQ(drains[0].reason, "auto: flapping");
  EXPECT_NE(drains[0].target_name.find("leaf g000 r0[9]"), std::string::npos) << drains[0].target_name;
  bool audited = false;
  for (const AuditRecord& a : c->store().audit_since(0, 1000)) {
    audited = audited || (a.actor == "auto" && a.action.find("isolate") != std::string::npos);
  }
  EXPECT_TRUE(audited) << "the drain's audit record names the actor auto";
  ASSERT_EQ(iso.snapshot().isolated.size(), 1u);
  iso.tick(t + 5);
  EXPECT_EQ(auto_drains(*c).size(), 1u) << "not clean long enough";
  iso.tick(t + 11);
  EXPECT_TRUE(auto_drains(*c).empty()) << "clean for 10 s: undrained";
  EXPECT_TRUE(iso.snapshot().isolated.empty());
}

TEST_F(AutoIsolationTest, DryRunAuditsAndDrainsNothing) {
  auto c = live_controller();
  IsolationConfig cfg = config();
  cfg.dry_run = true;
  AutoIsolation iso(*c, cfg);
  iso.start_at(unix_now());
  flap(*c, 10, 3);
  iso.tick(unix_now());
  EXPECT_TRUE(c->store().active_drains().empty());
  ASSERT_EQ(iso.snapshot().isolated.size(), 1u);
  EXPECT_TRUE(iso.snapshot().isolated[0].dry_run);
  bool audited = false;
  for (const AuditRecord& a : c->store().audit_since(0, 1000)) {
    audited = audited || (a.actor == "auto" && a.result.find("dry run: would isolate") != std::string::npos);
  }
  EXPECT_TRUE(audited);
}

TEST_F(AutoIsolationTest, TheBreakerTripsPastTheCapAndAResetResumes) {
  auto c = live_controller();
  AutoIsolation iso(*c, config());  // cap 2
  iso.start_at(unix_now());
  flap(*c, 9, 3, "leaf g000 r0");
  flap(*c, 9, 3, "leaf g000 r1");
  flap(*c, 9, 3, "leaf g000 r2");
  const double t = unix_now();
  iso.tick(t);
  EXPECT_EQ(auto_drains(*c).size(), 2u);
  EXPECT_TRUE(iso.snapshot().breaker.tripped);
  iso.tick(t + 100);
  EXPECT_EQ(auto_drains(*c).size(), 2u) << "tripped: nothing restored either";
  const Actor ops{"ops", Role::kOperator, "POST /api/v1/isolation/reset", ""};
  Outcome o = iso.reset(ops, t + 101);
  EXPECT_TRUE(o.ok());
  EXPECT_FALSE(iso.snapshot().breaker.tripped);
  iso.tick(t + 102);
  EXPECT_TRUE(auto_drains(*c).empty()) << "reset: the clean links are restored";
}

TEST_F(AutoIsolationTest, ExcludeRefusesBadTargetsAndKeepsALinkOut) {
  auto c = live_controller();
  AutoIsolation iso(*c, config());
  iso.start_at(unix_now());
  const Actor ops{"ops", Role::kOperator, "POST /api/v1/isolation/exclude", ""};
  EXPECT_EQ(iso.exclude({"leaf g000 r0", std::nullopt, "", "", 0}, ops, unix_now()).failure->kind,
            FailureKind::kInvalid);
  EXPECT_EQ(iso.exclude({"0x01[3]", unix_now() - 1, "", "", 0}, ops, unix_now()).failure->kind,
            FailureKind::kInvalid);
  EXPECT_EQ(iso.unexclude("0x01[3]", ops, unix_now()).failure->kind, FailureKind::kNotFound);
  // Exclude the leaf itself (its GUID): its flapping uplink is not drained.
  const auto v = c->view();
  const auto leaf = routing::find_node(v->fabric, "leaf g000 r0");
  ASSERT_TRUE(leaf.ok());
  const std::string guid = routing::to_string(v->fabric.node(*leaf).guid);
  EXPECT_TRUE(iso.exclude({guid, std::nullopt, "RMA", "", 0}, ops, unix_now()).ok());
  flap(*c, 9, 3);
  iso.tick(unix_now());
  EXPECT_TRUE(auto_drains(*c).empty());
  EXPECT_FALSE(iso.snapshot().breaker.tripped);
}

TEST_F(AutoIsolationTest, ErrorBurstsFromThePerfManagerIsolateTheirLinkAboveTheRate) {
  auto c = live_controller();
  IsolationConfig cfg = config();
  cfg.errors_per_minute = 100;
  AutoIsolation iso(*c, cfg);
  iso.start_at(unix_now());
  const routing::Fabric& f = c->view()->fabric;
  auto leaf = routing::find_node(f, "leaf g000 r0");
  ASSERT_TRUE(leaf.ok());
  // The plugin relays the perf manager's deltas: a first sample is a
  // baseline, the next ones rates over their 10 s interval.
  uint64_t seq = 100;
  const double t0 = unix_now();
  auto sample = [&](uint32_t port, uint64_t symbol_errors, double at) {
    protocol::PortErrorsEvent e;
    e.port = protocol::CounterPort{f.node(*leaf).guid.value, static_cast<uint8_t>(port), "leaf g000 r0"};
    e.symbol_err = symbol_errors;
    e.time_diff_s = 10;
    c->on_plugin_line(protocol::encode_event({++seq, at, e}));
  };
  // Port 10: 12 errors in 10 s, a burst (>= telemetry.error_burst, 10) but
  // 72 a minute, under the 100 configured.
  sample(10, 0, t0);
  sample(10, 12, t0 + 10);
  // Port 9: 50 errors in 10 s = 300 a minute.
  sample(9, 0, t0);
  sample(9, 50, t0 + 10);
  iso.tick(unix_now());
  auto drains = auto_drains(*c);
  ASSERT_EQ(drains.size(), 1u) << "only the port over the rate";
  EXPECT_EQ(drains[0].reason, "auto: errors");
  EXPECT_NE(drains[0].target_name.find("leaf g000 r0[9]"), std::string::npos) << drains[0].target_name;
  bool burst_recorded = false;
  for (const EventRecord& e : c->store().events_since(0, 1000)) burst_recorded = burst_recorded || e.type == "error_burst";
  EXPECT_TRUE(burst_recorded);
}

// A round decides to isolate two links; while it drains the first, the
// second goes down again and OpenSM's next fabric no longer has it (CI saw
// this: "not isolated: ... is not cabled", and the breaker never tripped).
// The second is drained once it is back, not dropped.
TEST_F(AutoIsolationTest, ALinkThatLeavesTheSubnetDuringTheRoundIsDrainedOnceBack) {
  auto c = live_controller();
  AutoIsolation iso(*c, config());
  iso.start_at(unix_now());
  const routing::Fabric whole = c->view()->fabric;
  flap(*c, 9, 3, "leaf g000 r0");
  flap(*c, 9, 3, "leaf g000 r1");
  bool sent = false;
  iso.set_log([&](bool, const std::string& text) {
    if (!sent && text.find("isolation: isolated") != std::string::npos) {
      sent = true;
      send_fabric(*c, 2, without_link(whole, "leaf g000 r1", 9));
    }
  });
  const double t = unix_now();
  iso.tick(t);
  ASSERT_TRUE(sent) << "the first link was not isolated";
  auto drains = auto_drains(*c);
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_NE(drains[0].target_name.find("leaf g000 r0[9]"), std::string::npos) << drains[0].target_name;
  for (const AuditRecord& a : c->store().audit_since(0, 1000)) {
    EXPECT_EQ(a.result.find("not isolated"), std::string::npos) << "refused while out of the subnet: " << a.result;
  }
  iso.tick(t + 1);
  EXPECT_EQ(auto_drains(*c).size(), 1u) << "still out of the subnet";
  send_fabric(*c, 3, whole);  // back
  iso.tick(t + 2);
  drains = auto_drains(*c);
  ASSERT_EQ(drains.size(), 2u) << "drained once back";
  EXPECT_EQ(drains[1].reason, "auto: flapping");
  EXPECT_NE(drains[1].target_name.find("leaf g000 r1[9]"), std::string::npos) << drains[1].target_name;
}

}  // namespace
}  // namespace railyard::controller
