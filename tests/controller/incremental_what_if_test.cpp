// Drains, undrains and link events route their what-if incrementally from
// the view in force (routing/reroute.h), and the tables are those of a full
// route of the same fabric under the same options, computed here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "controller/controller.h"
#include "routing/generator.h"
#include "routing/topology_writer.h"

namespace railyard::controller {
namespace incremental_what_if_test {  // not anonymous: unity builds compile several test files as one

class IncrementalWhatIf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ry-whatif-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // 3 levels: 64 servers x 4 rails at radix 16 (leaf uplinks on ports
    // 9..16, spine uplinks to the cores on 9..16).
    routing::GeneratorSpec spec;
    spec.servers = 64;
    spec.rails = 4;
    spec.levels = 3;
    spec.radix = 16;
    auto g = routing::generate_fabric(spec);
    ASSERT_TRUE(g.ok()) << g.error().message;
    std::ofstream(dir_ / "fabric.topo") << routing::write_topology(g->fabric);
    ControllerConfig cfg;
    cfg.database = (dir_ / "state.db").string();
    cfg.fabric_source = FabricSource::kOffline;
    cfg.topology_file = (dir_ / "fabric.topo").string();
    cfg.reroutes_per_minute = 600;
    auto store = Store::open(cfg.database);
    ASSERT_TRUE(store.ok());
    c_ = std::make_unique<Controller>(cfg, std::move(store).value());
    Status started = c_->start();
    ASSERT_TRUE(started.ok()) << started.error().message;
  }
  void TearDown() override {
    c_.reset();
    std::filesystem::remove_all(dir_);
  }

  static Actor operator_actor() { return Actor{"test", Role::kOperator, "drain", "", 0}; }

  // The view in force was routed incrementally, and equals a full route.
  void expect_incremental_and_exact(const std::string& what) {
    auto v = c_->view();
    ASSERT_TRUE(v != nullptr);
    EXPECT_TRUE(v->route_stats.incremental) << what << ": " << v->route_stats.full_reason;
    EXPECT_GT(v->route_stats.columns_recomputed, 0u) << what;
    EXPECT_LT(v->route_stats.columns_recomputed, v->route_stats.columns) << what;
    auto full = routing::route_unicast(v->fabric, v->options);
    ASSERT_TRUE(full.ok()) << full.error().message;
    EXPECT_TRUE(full->tables == v->routing.tables) << what << ": the incremental tables differ from a full route";
    EXPECT_EQ(full->report.hot_link_moves, v->routing.report.hot_link_moves) << what;
    EXPECT_EQ(full->report.unreachable_pairs, v->routing.report.unreachable_pairs) << what;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Controller> c_;
};

TEST_F(IncrementalWhatIf, DrainsLinkEventsAndUndrainsAreIncrementalAndEqualAFullRoute) {
  auto first = c_->view();
  ASSERT_TRUE(first != nullptr);
  EXPECT_FALSE(first->route_stats.incremental) << "the first view has nothing to start from";

  DrainRequest spine_core;
  spine_core.kind = DrainKind::kLink;
  spine_core.node = "spine p00 s00";
  spine_core.port = 9;
  spine_core.reason = "what-if test";
  DrainOutcome drained = c_->drain(spine_core, operator_actor(), false, false);
  ASSERT_TRUE(drained.ok()) << drained.failure->message;
  expect_incremental_and_exact("drain of a spine-core link");

  LinkEventRequest down;
  down.event_id = "whatif-1";
  down.node = "leaf g001 r2";
  down.port = 10;
  down.state = LinkState::kDown;
  down.reason = "monitoring";
  LinkEventOutcome event = c_->link_event(down, operator_actor(), false);
  ASSERT_TRUE(event.ok()) << event.failure->message;
  expect_incremental_and_exact("a leaf uplink down");

  ASSERT_TRUE(drained.drain.has_value());
  DrainOutcome undrained = c_->undrain(drained.drain->id, operator_actor(), false);
  ASSERT_TRUE(undrained.ok()) << undrained.failure->message;
  expect_incremental_and_exact("undrain");

  LinkEventRequest up = down;
  up.event_id = "whatif-2";
  up.state = LinkState::kUp;
  LinkEventOutcome back = c_->link_event(up, operator_actor(), false);
  ASSERT_TRUE(back.ok()) << back.failure->message;
  expect_incremental_and_exact("the uplink back");
  EXPECT_TRUE(c_->view()->routing.tables == first->routing.tables) << "everything undone: the first tables again";
}

}  // namespace incremental_what_if_test
}  // namespace railyard::controller
