// Reconcile at start: reroute requests a previous run left pending or queued
// are not left pending forever. A real SQLite file holds them as the previous
// run left them; a controller starts on it (live with a recording plugin
// sender, or offline on a generated topology file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "controller/controller.h"
#include "api/protocol/event_codec.h"
#include "routing/fabric_changes.h"
#include "routing/fabric_fingerprint.h"
#include "routing/generator.h"
#include "routing/lid_assignment.h"
#include "routing/topology_writer.h"

namespace railyard::controller {
namespace {

class ReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-reconcile-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    cfg_.database = (dir_ / "state.db").string();
    cfg_.policy_output_file = (dir_ / "policy.yaml").string();
    // What the previous run left: one request sent (pending), one waiting
    // for the rate limit (queued), one finished.
    auto store = Store::open(cfg_.database);
    ASSERT_TRUE(store.ok());
    for (const auto& [id, status] : {std::pair{"r-pending", RerouteStatus::kPending},
                                     std::pair{"r-queued", RerouteStatus::kQueued},
                                     std::pair{"r-done", RerouteStatus::kApplied}}) {
      RerouteRecord r;
      r.id = id;
      r.requested_at = unix_now() - 30;
      r.requested_by = "ops";
      r.reason = "drain";
      r.status = status;
      (*store)->put_reroute(r);
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Controller> start(ControllerConfig cfg) {
    auto store = Store::open(cfg.database);
    EXPECT_TRUE(store.ok());
    auto c = std::make_unique<Controller>(cfg, std::move(store).value());
    Status s = c->start();
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return c;
  }

  RerouteRecord stored(Controller& c, const std::string& id) {
    std::optional<RerouteRecord> r = c.store().reroute(id);
    EXPECT_TRUE(r.has_value()) << id;
    return r.value_or(RerouteRecord{});
  }

  std::filesystem::path dir_;
  ControllerConfig cfg_;
};

TEST_F(ReconcileTest, LiveTheyAreSentAgainOnceThePluginConnectsAndFinishWithItsAnswer) {
  ControllerConfig cfg = cfg_;
  cfg.fabric_source = FabricSource::kLive;
  cfg.plugin_socket = (dir_ / "plugin.sock").string();
  auto c = start(cfg);
  std::vector<nlohmann::json> sent;
  c->set_plugin_sender([&](const std::string& line) {
    sent.push_back(nlohmann::json::parse(line));
    return true;
  });
  EXPECT_EQ(stored(*c, "r-pending").status, RerouteStatus::kQueued);
  EXPECT_NE(stored(*c, "r-pending").detail.find("railyardd restarted"), std::string::npos);
  // Nothing goes out before the plugin is there.
  c->tick(unix_now());
  EXPECT_TRUE(sent.empty());
  c->on_plugin_connection(true);
  c->tick(unix_now());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["type"], "policy_changed");
  const std::string carrier = sent[0]["id"];
  EXPECT_TRUE(carrier == "r-pending" || carrier == "r-queued") << carrier;
  // The plugin's fabric, then its answer with the digests of the tables it
  // wrote, railyardd's route: a request is applied only then (divergence.h).
  routing::GeneratorSpec spec;
  spec.servers = 8;
  spec.rails = 2;
  spec.radix = 8;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  ASSERT_TRUE(g.ok());
  auto fabric = routing::apply_changes(routing::Fabric{}, routing::full_changes(g->fabric));
  ASSERT_TRUE(fabric.ok());
  protocol::FabricChangesEvent whole;
  whole.pass = 1;
  whole.full = true;
  whole.fingerprint = routing::fabric_fingerprint(*fabric);
  whole.changes = routing::full_changes(*fabric);
  c->on_plugin_line(protocol::encode_event({1, unix_now(), whole}));
  ASSERT_TRUE(c->view() != nullptr);
  const ViewDigests ours = digests_of(*c->view());
  protocol::UcastRoutingDoneEvent done;
  done.engine_ok = true;
  done.blocks_changed = 2;
  done.requests = {carrier};
  done.digests = protocol::Digests{ours.policy, ours.lfts.total, ours.lfts.switches};
  c->on_plugin_line(protocol::encode_event({2, unix_now(), done}));
  for (const char* id : {"r-pending", "r-queued"}) {
    EXPECT_EQ(stored(*c, id).status, RerouteStatus::kApplied) << id << ": " << stored(*c, id).detail;
  }
  EXPECT_EQ(stored(*c, "r-done").status, RerouteStatus::kApplied);
}

TEST_F(ReconcileTest, LiveTheyFailWithAReasonWhenThePluginDoesNotCome) {
  ControllerConfig cfg = cfg_;
  cfg.fabric_source = FabricSource::kLive;
  cfg.plugin_socket = (dir_ / "plugin.sock").string();
  cfg.reroute_timeout_s = 1;
  auto c = start(cfg);
  c->tick(unix_now());
  EXPECT_EQ(stored(*c, "r-queued").status, RerouteStatus::kQueued);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  c->tick(unix_now());
  for (const char* id : {"r-pending", "r-queued"}) {
    const RerouteRecord r = stored(*c, id);
    EXPECT_EQ(r.status, RerouteStatus::kFailed) << id;
    EXPECT_NE(r.detail.find("the plugin did not connect within 1 s"), std::string::npos) << r.detail;
    EXPECT_TRUE(r.finished_at.has_value());
  }
}

TEST_F(ReconcileTest, OfflineTheyFailSayingTheViewWasRoutedAgain) {
  routing::GeneratorSpec spec;
  spec.servers = 16;
  spec.rails = 4;
  spec.radix = 16;
  auto g = routing::generate_fabric(spec);
  ASSERT_TRUE(g.ok());
  const std::string topo = (dir_ / "fabric.topo").string();
  std::ofstream(topo) << routing::write_topology(g->fabric);
  ControllerConfig cfg = cfg_;
  cfg.fabric_source = FabricSource::kOffline;
  cfg.topology_file = topo;
  auto c = start(cfg);
  for (const char* id : {"r-pending", "r-queued"}) {
    const RerouteRecord r = stored(*c, id);
    EXPECT_EQ(r.status, RerouteStatus::kFailed) << id;
    EXPECT_NE(r.detail.find("routed again at start"), std::string::npos) << r.detail;
  }
  EXPECT_EQ(stored(*c, "r-done").status, RerouteStatus::kApplied);
}

}  // namespace
}  // namespace railyard::controller
