// The policy the controller pushes, into the plugin's policy file: written
// only when the bytes differ, refused (file untouched) when it does not parse.
#include "sm_plugin/controller_policy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "policies/policy_loader.h"

namespace railyard::sm_plugin {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Stamp {
  ino_t ino;
  int64_t mtime_ns;
};
Stamp stamp(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return {st.st_ino, static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

class ControllerPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ry_controller_policy_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "policy.yaml").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A canonical policy with one drained link, as railyardd renders it.
  static std::string drained(const std::string& link) {
    Result<policies::Policy> parsed = policies::parse_policy_yaml("drains:\n  links: [\"" + link + "\"]\n", "test");
    EXPECT_TRUE(parsed.ok()) << parsed.error().message;
    return policies::render_policy_yaml(*parsed);
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(ControllerPolicyTest, WrittenWhenItDiffersAndOnlyThen) {
  const std::string a = drained("sw1[1]");
  Result<PolicyWrite> w = write_controller_policy(path_, a);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(*w, PolicyWrite::kWritten) << "no file yet";
  EXPECT_EQ(read(path_), a);
  const Stamp first = stamp(path_);

  // The same bytes again (every reconnect sends the policy): not rewritten.
  ::usleep(20'000);
  w = write_controller_policy(path_, a);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, PolicyWrite::kUnchanged);
  const Stamp again = stamp(path_);
  EXPECT_EQ(again.ino, first.ino);
  EXPECT_EQ(again.mtime_ns, first.mtime_ns);

  // Another policy replaces the file (a new inode: renamed over it).
  const std::string b = drained("sw1[2]");
  w = write_controller_policy(path_, b);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, PolicyWrite::kWritten);
  EXPECT_EQ(read(path_), b);
  EXPECT_NE(stamp(path_).ino, first.ino);
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(ControllerPolicyTest, YamlThatDoesNotParseIsRefusedAndTheFileLeftAsItIs) {
  const std::string good = drained("sw1[1]");
  ASSERT_TRUE(write_controller_policy(path_, good).ok());
  for (const std::string& bad : {std::string("drains: [unclosed\n"), std::string("roots: 7\n"),
                                std::string("drains:\n  links: [a[1]]\n  links: [b[1]]\n"), std::string("\x01\x02")}) {
    Result<PolicyWrite> w = write_controller_policy(path_, bad);
    ASSERT_FALSE(w.ok()) << bad;
    EXPECT_NE(w.error().message.find("the controller's policy"), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find(path_ + " left as it is"), std::string::npos) << w.error().message;
    EXPECT_EQ(read(path_), good);
  }
}

TEST_F(ControllerPolicyTest, NoPolicyFileIsAnError) {
  Result<PolicyWrite> w = write_controller_policy("", "drains: []\n");
  ASSERT_FALSE(w.ok());
}

}  // namespace
}  // namespace railyard::sm_plugin
