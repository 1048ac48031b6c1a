// A follower's controller (docs/ha.md): it starts on a database it may not
// write (SHARP jobs held, nothing written), refuses mutations with the
// gate's reason, makes no writes of its own on the timer, and once the
// leader's entries are applied to its store, follow_store() publishes the
// leader's drains with the fabric routed around them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "controller/controller.h"
#include "tests/controller/recording_journal.h"
#include "routing/generator.h"
#include "routing/topology_writer.h"

namespace railyard::controller {
namespace {

class HaFollower : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-hafollow-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    routing::GeneratorSpec spec;
    spec.servers = 16;
    spec.rails = 4;
    spec.radix = 16;
    auto g = routing::generate_fabric(spec);
    ASSERT_TRUE(g.ok());
    topo_ = (dir_ / "fabric.topo").string();
    std::ofstream(topo_) << routing::write_topology(g->fabric);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ControllerConfig config(const std::string& name) {
    ControllerConfig cfg;
    cfg.database = (dir_ / (name + ".db")).string();
    cfg.policy_output_file = (dir_ / (name + ".policy.yaml")).string();
    cfg.fabric_source = FabricSource::kOffline;
    cfg.topology_file = topo_;
    return cfg;
  }

  std::filesystem::path dir_;
  std::string topo_;
};

TEST_F(HaFollower, WritesNothingAndFollowsTheLeadersEntries) {
  RecordingJournal leader_log;
  auto leader_store = Store::open(config("leader").database);
  ASSERT_TRUE(leader_store.ok());
  (*leader_store)->set_journal(&leader_log);
  Controller leader(config("leader"), std::move(*leader_store));
  ASSERT_TRUE(leader.start().ok());

  // The follower's database already holds an active SHARP job: starting
  // recomputes its trees in memory, and must not try to write them.
  auto follower_store = Store::open(config("follower").database);
  ASSERT_TRUE(follower_store.ok());
  (*follower_store)->put_job(JobRecord{"job1", R"({"hosts":[],"cas":[],"rails":[]})", "[]", JobStatus::kActive, "",
                                       "sched", 1.0, 1.0, 1});
  RecordingJournal refusing;
  refusing.refuse = true;
  (*follower_store)->set_journal(&refusing);
  Controller follower(config("follower"), std::move(*follower_store));
  follower.set_write_gate([] { return std::optional<std::string>("not the leader: m0 leads"); });
  Status started = follower.start();
  ASSERT_TRUE(started.ok()) << started.error().message;

  const Actor ops{"ops", Role::kOperator, "POST /api/v1/drains", "{}"};
  DrainRequest req;
  req.node = "leaf g000 r1";
  req.port = 9;
  req.reason = "maintenance";
  DrainOutcome refused = follower.drain(req, ops, false, false);
  ASSERT_TRUE(refused.failure);
  EXPECT_EQ(refused.failure->kind, FailureKind::kUnavailable);
  EXPECT_NE(refused.failure->message.find("not the leader"), std::string::npos);
  follower.tick(unix_now() + 1e6);  // nothing of its own: no throw, no write
  follower.audit_refused(ops, 503, "refused");
  EXPECT_TRUE(follower.store().audit_since(0, 10).empty());

  DrainOutcome made = leader.drain(req, ops, false, false);
  ASSERT_FALSE(made.failure) << made.failure->message;
  ASSERT_TRUE(made.drain);
  ASSERT_FALSE(leader_log.entries.empty());
  EXPECT_EQ(leader.store().applied_seq(), static_cast<int64_t>(leader_log.entries.size()));

  const uint64_t version_before = follower.view()->version;
  for (size_t i = 0; i < leader_log.entries.size(); ++i) {
    follower.store().apply_entry(static_cast<int64_t>(i + 1), leader_log.entries[i]);
  }
  ASSERT_TRUE(follower.follow_store(false).ok());
  ASSERT_EQ(follower.drains().size(), 1u);
  EXPECT_EQ(follower.drains()[0].id, made.drain->id);
  EXPECT_EQ(follower.drains()[0].target, made.drain->target);
  EXPECT_GT(follower.view()->version, version_before);
  // Routed around the drain, as the leader's view is.
  EXPECT_EQ(follower.view()->policy.drains, leader.view()->policy.drains);
  EXPECT_FALSE(follower.view()->policy.drains.empty());
  std::ifstream policy(config("follower").policy_output_file);
  std::string text((std::istreambuf_iterator<char>(policy)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(made.drain->target.substr(0, 18)), std::string::npos) << text;
}

}  // namespace
}  // namespace railyard::controller
