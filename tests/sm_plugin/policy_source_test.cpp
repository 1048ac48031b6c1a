#include "sm_plugin/policy_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace railyard::sm_plugin {
namespace {

using Kind = PolicySource::Refresh::Kind;

class PolicySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry_policy_source_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "policy.yaml").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes the file with a modification time distinct from the last write,
  // so the change is seen whatever the file system's time granularity.
  void write(const std::string& text) {
    std::ofstream(path_, std::ios::trunc) << text;
    std::filesystem::last_write_time(path_, std::filesystem::file_time_type::clock::now() +
                                                std::chrono::seconds(++stamp_));
  }

  std::filesystem::path dir_;
  std::string path_;
  int stamp_ = 0;
};

TEST_F(PolicySourceTest, NoPathMeansTheDefaultPolicyForever) {
  PolicySource src("");
  EXPECT_EQ(src.refresh().kind, Kind::kUnchanged);
  EXPECT_EQ(src.policy(), policies::Policy{});
  EXPECT_EQ(src.origin(), "default");
}

TEST_F(PolicySourceTest, LoadsThenRereadsOnlyWhenTheFileChanges) {
  write("drains:\n  switches: [\"spine s00\"]\n");
  PolicySource src(path_);
  auto r = src.refresh();
  ASSERT_EQ(r.kind, Kind::kLoaded) << r.message;
  EXPECT_EQ(r.message, "policy loaded from " + path_);
  EXPECT_EQ(src.policy().drains.switches, std::vector<std::string>{"spine s00"});
  EXPECT_EQ(src.origin(), path_);

  EXPECT_EQ(src.refresh().kind, Kind::kUnchanged);

  write("drains:\n  switches: [\"spine s01\"]\n");
  ASSERT_EQ(src.refresh().kind, Kind::kLoaded);
  EXPECT_EQ(src.policy().drains.switches, std::vector<std::string>{"spine s01"});
}

TEST_F(PolicySourceTest, BrokenFileKeepsTheLastGoodPolicyAndIsReportedOncePerChange) {
  write("drains:\n  switches: [\"spine s00\"]\n");
  PolicySource src(path_);
  ASSERT_EQ(src.refresh().kind, Kind::kLoaded);

  write("drains:\n  switches: [\"spine s00\"]\ndrainz: {}\n");
  auto r = src.refresh();
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_EQ(r.message.rfind(path_ + ":3: unknown key 'drainz'", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("; keeping the last good policy from " + path_), std::string::npos) << r.message;
  EXPECT_EQ(src.policy().drains.switches, std::vector<std::string>{"spine s00"});

  EXPECT_EQ(src.refresh().kind, Kind::kUnchanged);  // same broken file: no new report
}

TEST_F(PolicySourceTest, BrokenFromTheStartKeepsTheDefaultPolicy) {
  write("drains:\n  switches: [\"spine s00\"\n");
  PolicySource src(path_);
  auto r = src.refresh();
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_EQ(r.message, path_ + ":3: invalid YAML: end of sequence flow not found; keeping the default policy");
  EXPECT_EQ(src.policy(), policies::Policy{});
  EXPECT_EQ(src.origin(), "default");
}

TEST_F(PolicySourceTest, MissingFileIsReportedAndRecoveredWhenItAppears) {
  PolicySource src(path_);
  auto r = src.refresh();
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_EQ(r.message, path_ + ": policy file not found; keeping the default policy");
  EXPECT_EQ(src.refresh().kind, Kind::kUnchanged);

  write("roots: [\"spine s00\"]\n");
  ASSERT_EQ(src.refresh().kind, Kind::kLoaded);
  EXPECT_EQ(src.policy().roots, std::vector<std::string>{"spine s00"});
}

}  // namespace
}  // namespace railyard::sm_plugin
