// One routing, verified (controller side): a live controller fed the plugin's
// lines as the plugin encodes them. Its copy of the fabric comes from
// fabric_changes (whole, then changes, a resync when they do not fit); a
// request is applied only when the plugin's digests are the controller's
// route; a pass under another policy is a divergence (event, counter,
// /health reason) until one agrees again.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/controller.h"
#include "api/protocol/command_codec.h"
#include "api/protocol/event_codec.h"
#include "routing/fabric_changes.h"
#include "routing/fabric_fingerprint.h"
#include "routing/generator.h"
#include "routing/lft_digest.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::controller {
namespace {

// The fabric in OpenSM's snapshot order, as the plugin has it.
routing::Fabric plugin_fabric() {
  routing::GeneratorSpec spec;
  spec.servers = 16;
  spec.rails = 4;
  spec.radix = 16;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  EXPECT_TRUE(g.ok());
  auto f = routing::apply_changes(routing::Fabric{}, routing::full_changes(g->fabric));
  EXPECT_TRUE(f.ok());
  return std::move(*f);
}

// What the plugin reports after routing `f` under `policy` itself.
protocol::Digests routed_by_plugin(const routing::Fabric& f, const policies::Policy& policy) {
  auto options = routing::plan_routing(f, policy, routing::map_rails(f, policy.rails));
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().message);
  auto routed = routing::route_unicast(f, *options);
  EXPECT_TRUE(routed.ok());
  routing::LftDigests lfts = routing::lft_digests(f, routed->tables);
  return protocol::Digests{routing::policy_digest(policy), lfts.total, lfts.switches};
}

class PluginVerificationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-verify-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ControllerConfig cfg;
    cfg.database = (dir_ / "state.db").string();
    cfg.fabric_source = FabricSource::kLive;
    cfg.plugin_socket = (dir_ / "plugin.sock").string();
    cfg.policy_output_file = (dir_ / "policy.yaml").string();
    auto store = Store::open(cfg.database);
    ASSERT_TRUE(store.ok());
    c_ = std::make_unique<Controller>(cfg, std::move(store).value());
    ASSERT_TRUE(c_->start().ok());
    c_->set_plugin_sender([this](const std::string& line) {
      sent_.push_back(nlohmann::json::parse(line));
      return true;
    });
    c_->on_plugin_connection(true);
    fabric_ = plugin_fabric();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void send(protocol::EventBody body) { c_->on_plugin_line(protocol::encode_event({++seq_, unix_now(), std::move(body)})); }
  void send_fabric(uint64_t pass, const routing::Fabric* before, const routing::Fabric& now) {
    protocol::FabricChangesEvent e;
    e.pass = pass;
    e.full = before == nullptr;
    e.base = before ? routing::fabric_fingerprint(*before) : 0;
    e.fingerprint = routing::fabric_fingerprint(now);
    e.changes = before ? routing::fabric_changes(*before, now) : routing::full_changes(now);
    send(std::move(e));
  }
  protocol::RoutingPassEvent pass(uint64_t n, protocol::Digests d) {
    protocol::RoutingPassEvent p;
    p.pass = n;
    p.ok = true;
    p.policy = "/etc/railyard/policy.yaml";
    p.digests = std::move(d);
    return p;
  }
  size_t events(const std::string& type, std::string* body = nullptr) {
    size_t n = 0;
    for (const EventRecord& e : c_->store().events_since(0, 1000)) {
      if (e.type != type) continue;
      ++n;
      if (body) *body = e.body;
    }
    return n;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Controller> c_;
  std::vector<nlohmann::json> sent_;
  routing::Fabric fabric_;
  uint64_t seq_ = 0;
};

TEST_F(PluginVerificationTest, TheCopyFromWholeThenChangesIsThePluginsFabric) {
  send_fabric(1, nullptr, fabric_);
  ASSERT_TRUE(c_->view() != nullptr);
  EXPECT_EQ(routing::fabric_fingerprint(c_->view()->fabric), routing::fabric_fingerprint(fabric_));

  // A spine link goes down: one link record.
  const routing::Fabric down = routing::test::with_first_switch_link_down(fabric_);
  ASSERT_FALSE(::testing::Test::HasFailure());
  send_fabric(2, &fabric_, down);
  // The controller's copy equals the plugin's fabric read whole.
  EXPECT_EQ(routing::fabric_fingerprint(c_->view()->fabric), routing::fabric_fingerprint(down));
  EXPECT_EQ(c_->view()->origin, "plugin pass 2");
  EXPECT_EQ(events("link_down"), 1u);
  EXPECT_TRUE(sent_.empty()) << "nothing asked";

  // Changes from a fabric the controller does not have: not applied, the
  // whole fabric is asked once, then again only after 10 s.
  send_fabric(3, &fabric_, fabric_);
  EXPECT_EQ(c_->view()->origin, "plugin pass 2");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0]["type"], "send_fabric");
  std::string body;
  EXPECT_EQ(events("fabric_changes_rejected", &body), 1u);
  EXPECT_NE(body.find("changes from fabric"), std::string::npos) << body;
  send_fabric(4, &fabric_, fabric_);
  EXPECT_EQ(sent_.size(), 1u);
  EXPECT_EQ(c_->counters().fabric_resyncs, 1u);
  // The whole fabric again: applied; changes chain on it.
  send_fabric(5, nullptr, fabric_);
  EXPECT_EQ(c_->view()->origin, "plugin pass 5");
  send_fabric(6, &fabric_, down);
  EXPECT_EQ(c_->view()->origin, "plugin pass 6");
  EXPECT_EQ(routing::fabric_fingerprint(c_->view()->fabric), routing::fabric_fingerprint(down));
}

TEST_F(PluginVerificationTest, TheSameRouteAgreesAndARequestIsAppliedOnlyOnEqualDigests) {
  send_fabric(1, nullptr, fabric_);
  send(pass(1, routed_by_plugin(fabric_, c_->view()->policy)));
  EXPECT_EQ(c_->counters().divergence_checks, 1u);
  EXPECT_EQ(c_->counters().divergences, 0u);
  EXPECT_TRUE(c_->health().plugin_reasons.empty());

  const Actor ops{"ops", Role::kOperator, "test", ""};
  DrainRequest d;
  d.kind = DrainKind::kLink;
  d.node = "leaf g000 r0";
  d.port = 9;
  DrainOutcome drain = c_->drain(d, ops, false, false);
  ASSERT_TRUE(drain.ok()) << drain.failure->message;
  ASSERT_FALSE(c_->view()->policy.drains.empty());

  DrainOutcome second = c_->drain(DrainRequest{DrainKind::kLink, "leaf g000 r0", 10, "", {}}, ops, false, false);
  ASSERT_TRUE(second.ok()) << second.failure->message;

  // A push of the drained tables: applied, verified.
  protocol::Digests now = routed_by_plugin(fabric_, c_->view()->policy);
  now.switches.clear();
  send(protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kFastPath, {second.reroute->id}, true, 4, now});
  auto rec = c_->store().reroute(second.reroute->id);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, RerouteStatus::kApplied) << rec->detail;
  EXPECT_NE(rec->detail.find("digest " + routing::digest_text(now.lfts)), std::string::npos) << rec->detail;

  // The first drain's request answered with tables of a policy railyardd
  // never had: failed, with the reason; a divergence.
  policies::Policy other = c_->view()->policy;
  other.drains.links.push_back({"leaf g001 r0", 11});
  protocol::Digests wrong = routed_by_plugin(fabric_, other);
  wrong.switches.clear();
  send(protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kFastPath, {drain.reroute->id}, true, 4, wrong});
  rec = c_->store().reroute(drain.reroute->id);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, RerouteStatus::kFailed);
  EXPECT_NE(rec->detail.find("the tables the plugin wrote are not railyardd's route"), std::string::npos)
      << rec->detail;
  EXPECT_EQ(c_->counters().divergences, 1u);
  EXPECT_EQ(events("routing_divergence"), 1u);
}

TEST_F(PluginVerificationTest, AnotherPolicyOnThePluginsSideIsADivergenceUntilOneAgrees) {
  send_fabric(1, nullptr, fabric_);
  policies::Policy extra = c_->view()->policy;
  extra.drains.links.push_back({"leaf g000 r1", 9});
  protocol::RoutingPassEvent p = pass(2, routed_by_plugin(fabric_, extra));
  p.policy_error = "";
  send(p);
  EXPECT_EQ(c_->counters().divergences, 1u);
  std::string body;
  ASSERT_EQ(events("routing_divergence", &body), 1u);
  const auto j = nlohmann::json::parse(body);
  EXPECT_EQ(j["kind"], "policy");
  EXPECT_EQ(j["source"], "routing_pass");
  EXPECT_GT(j["switches_differing"].get<uint64_t>(), 0u);
  const Health h = c_->health();
  ASSERT_EQ(h.plugin_reasons.size(), 1u);
  EXPECT_NE(h.plugin_reasons[0].find("the plugin's tables diverge from railyardd's: pass 2"), std::string::npos)
      << h.plugin_reasons[0];
  EXPECT_EQ(h.plugin["divergences"], 1);
  EXPECT_EQ(h.plugin["diverged"], true);
  // The stored routing_pass keeps the totals, not the per-switch list.
  std::string stored;
  ASSERT_EQ(events("routing_pass", &stored), 1u);
  EXPECT_NE(stored.find("\"lfts\""), std::string::npos);
  EXPECT_EQ(stored.find("\"switches\":{"), std::string::npos);

  // The plugin's file loads again: the next pass agrees, health clears.
  send(pass(3, routed_by_plugin(fabric_, c_->view()->policy)));
  EXPECT_TRUE(c_->health().plugin_reasons.empty());
  EXPECT_EQ(c_->counters().divergences, 1u);
  EXPECT_EQ(c_->counters().divergence_checks, 2u);
}

TEST_F(PluginVerificationTest, HelloAndThePluginsPolicyErrorAreReported) {
  send(protocol::HelloEvent{"osmrailyard", "9.9.9", 4242, "OpenSM 3.3.23", 0});
  send_fabric(1, nullptr, fabric_);
  protocol::RoutingPassEvent p = pass(1, routed_by_plugin(fabric_, c_->view()->policy));
  p.policy = "last policy that applied";
  p.policy_error = "policy.yaml:3: invalid YAML";
  send(p);
  const Health h = c_->health();
  EXPECT_EQ(h.plugin["version"], "9.9.9");
  EXPECT_EQ(h.plugin["opensm"], "OpenSM 3.3.23");
  EXPECT_EQ(h.plugin["pid"], 4242);
  EXPECT_EQ(h.plugin["policy"], "last policy that applied");
  EXPECT_EQ(h.plugin["policy_error"], "policy.yaml:3: invalid YAML");
  ASSERT_EQ(h.plugin_reasons.size(), 1u);
  EXPECT_EQ(h.plugin_reasons[0],
            "the plugin's policy file does not load (it routes with 'last policy that applied'): policy.yaml:3: "
            "invalid YAML");
  EXPECT_EQ(events("plugin_policy_error"), 1u);
  // A routing-done without digests (an older plugin) applies nothing.
  const Actor ops{"ops", Role::kOperator, "test", ""};
  RerouteOutcome r = c_->reroute(ops, "check");
  ASSERT_TRUE(r.ok());
  send(protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kReroute, {r.reroute->id}, true});
  auto rec = c_->store().reroute(r.reroute->id);
  EXPECT_EQ(rec->status, RerouteStatus::kFailed);
  EXPECT_NE(rec->detail.find("not verified"), std::string::npos) << rec->detail;
}

}  // namespace
}  // namespace railyard::controller
