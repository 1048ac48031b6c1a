// Reroutes to the plugin are rate-limited as one stream, whatever asks for
// them (issue 12: drain/undrain cycles got 60 reroutes through in 3 s with a
// limit of 6 a minute). A live controller with a fake plugin sender and a
// fabric snapshot fed as the plugin sends it.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/controller.h"
#include "api/protocol/event_codec.h"
#include "routing/generator.h"
#include "routing/lid_assignment.h"
#include "routing/topology_writer.h"

namespace railyard::controller {
namespace reroute_rate_test {  // not anonymous: unity builds compile several test files as one

// The digests of the tables the view routes: what a plugin that wrote them reports.
std::optional<protocol::Digests> view_digests(const Controller& c) {
  auto v = c.view();
  EXPECT_TRUE(v != nullptr);
  return protocol::Digests{routing::policy_digest(v->policy), routing::lft_digests(v->fabric, v->routing.tables).total,
                           {}};
}

DrainRequest uplink_drain(uint32_t port, const std::string& reason) {
  DrainRequest d;
  d.kind = DrainKind::kLink;
  d.node = "leaf g000 r0";
  d.port = port;
  d.reason = reason;
  return d;
}

class RerouteRateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-rate-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Controller> live_controller(uint32_t per_minute) {
    ControllerConfig cfg;
    cfg.database = (dir_ / "state.db").string();
    cfg.fabric_source = FabricSource::kLive;
    cfg.plugin_socket = (dir_ / "plugin.sock").string();
    cfg.policy_output_file = (dir_ / "policy.yaml").string();
    cfg.reroutes_per_minute = per_minute;
    auto store = Store::open(cfg.database);
    EXPECT_TRUE(store.ok());
    auto c = std::make_unique<Controller>(cfg, std::move(store).value());
    EXPECT_TRUE(c->start().ok());
    c->set_plugin_sender([this](const std::string& line) {
      sent_.push_back(nlohmann::json::parse(line));
      return true;
    });
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

  std::filesystem::path dir_;
  std::vector<nlohmann::json> sent_;
};

TEST_F(RerouteRateTest, DrainsUndrainsAndReroutesShareTheLimit) {
  auto c = live_controller(3);
  const Actor ops{"ops", Role::kOperator, "test", ""};
  std::vector<RerouteStatus> statuses;
  for (int i = 0; i < 10; ++i) {
    DrainOutcome o = c->drain(uplink_drain(9, "cycle"), ops, false, false);
    ASSERT_TRUE(o.ok()) << o.failure->message;
    statuses.push_back(o.reroute->status);
    DrainOutcome u = c->undrain(o.drain->id, ops, false);
    ASSERT_TRUE(u.ok()) << u.failure->message;
    statuses.push_back(u.reroute->status);
  }
  // Every change was made; only three reroutes reached the plugin.
  EXPECT_EQ(sent_.size(), 3u);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), RerouteStatus::kPending), 3);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), RerouteStatus::kQueued), 17);
  EXPECT_TRUE(c->store().active_drains().empty());
  // An explicit reroute is refused now, with the time to wait.
  RerouteOutcome r = c->reroute(ops, "more");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure->kind, FailureKind::kRateLimited);
  EXPECT_GT(r.failure->retry_after_s, 0);
  // The queued ones wait (no window opens within this test)...
  c->tick(unix_now());
  EXPECT_EQ(sent_.size(), 3u);
  EXPECT_EQ(c->counters().reroutes_coalesced, 17u);
  // ...and are stored as such, with the reason.
  size_t queued = 0;
  for (const RerouteRecord& rec : c->store().reroutes(100)) {
    if (rec.status == RerouteStatus::kQueued) {
      ++queued;
      EXPECT_NE(rec.detail.find("rate limit"), std::string::npos);
    }
  }
  EXPECT_EQ(queued, 17u);
}

// When the plugin's routing pass applies the request that carried queued
// ones, they are applied with it.
TEST_F(RerouteRateTest, AQueuedRequestIsAppliedWithItsCarrier) {
  auto c = live_controller(1);
  const Actor ops{"ops", Role::kOperator, "test", ""};
  DrainOutcome first = c->drain(uplink_drain(9, "first"), ops, false, false);
  ASSERT_EQ(first.reroute->status, RerouteStatus::kPending);
  DrainOutcome second = c->drain(uplink_drain(10, "second"), ops, false, false);
  ASSERT_EQ(second.reroute->status, RerouteStatus::kQueued);
  ASSERT_EQ(sent_.size(), 1u);
  c->on_plugin_line(protocol::encode_event(
      {2, unix_now(),
       protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kReroute, {first.reroute->id}, true, -1,
                                       view_digests(*c)}}));
  EXPECT_EQ(c->store().reroute(first.reroute->id)->status, RerouteStatus::kApplied);
  EXPECT_EQ(c->store().reroute(second.reroute->id)->status, RerouteStatus::kQueued) << "not sent yet: not applied";
}

// The plugin's fast path pushes the blocks itself: its routing-done counts
// them (its acknowledgements do not come as lft_change events).
TEST_F(RerouteRateTest, AFastPathRoutingDoneCarriesItsBlockCount) {
  auto c = live_controller(2);
  const Actor ops{"ops", Role::kOperator, "test", ""};
  DrainOutcome drain = c->drain(uplink_drain(9, "pushed"), ops, false, false);
  ASSERT_EQ(drain.reroute->status, RerouteStatus::kPending);
  // An earlier pass's block, not this request's.
  c->on_plugin_line(protocol::encode_event({2, unix_now(), protocol::LftChangeEvent{0x1, 1, 0, 0}}));
  EXPECT_EQ(c->counters().lft_changes, 1u);
  c->on_plugin_line(protocol::encode_event(
      {3, unix_now(),
       protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kFastPath, {drain.reroute->id}, true, 9,
                                       view_digests(*c)}}));
  const auto rec = c->store().reroute(drain.reroute->id);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, RerouteStatus::kApplied);
  EXPECT_EQ(rec->detail, "LFTs in place (9 blocks changed, pushed by the plugin), digest " +
                             routing::digest_text(view_digests(*c)->lfts) + " = view " +
                             std::to_string(c->view()->version));
}

// A routing-done that does not decode is not believed: the request stays
// pending, and the rejection names the field.
TEST_F(RerouteRateTest, AMalformedRoutingDoneAppliesNothing) {
  auto c = live_controller(2);
  const Actor ops{"ops", Role::kOperator, "test", ""};
  DrainOutcome drain = c->drain(uplink_drain(9, "malformed"), ops, false, false);
  ASSERT_EQ(drain.reroute->status, RerouteStatus::kPending);
  nlohmann::json done = nlohmann::json::parse(protocol::encode_event(
      {2, unix_now(), protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kReroute, {drain.reroute->id}, true}}));
  done["engine_ok"] = "yes";
  c->on_plugin_line(done.dump());
  EXPECT_EQ(c->store().reroute(drain.reroute->id)->status, RerouteStatus::kPending);
  bool rejected = false;
  for (const EventRecord& e : c->store().events_since(0, 100)) {
    rejected |= e.type == "plugin_line_rejected" &&
                e.body.find("ucast_routing_done: engine_ok must be true or false") != std::string::npos;
  }
  EXPECT_TRUE(rejected);
}

}  // namespace reroute_rate_test
}  // namespace railyard::controller
