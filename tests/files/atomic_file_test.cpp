// controller/files/atomic_file.h: the file is replaced whole or not at all. That the
// folder is synced cannot be observed short of pulling the power; what can:
// a failure at any step leaves the old file as it was and no temporary file,
// and what commit() reports written is there completely.
#include "controller/files/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace railyard::files {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "policy.yaml").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Every name in the folder: the old file must be alone in it after a failure.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::filesystem::path dir_;
  std::string path_;
};

// Large enough to take many write() calls' worth of chunks.
std::string big_text() {
  std::string text;
  for (int i = 0; text.size() < (3u << 20); ++i) text += "line " + std::to_string(i) + " of the new file\n";
  return text;
}

TEST_F(AtomicFileTest, ReplacesTheFileWithTheCompleteContentAndMode) {
  std::ofstream(path_) << "old\n";
  const std::string text = big_text();
  AtomicFile file(path_, 0640);
  for (size_t at = 0; at < text.size(); at += 65536) file.write(std::string_view(text).substr(at, 65536));
  ASSERT_TRUE(file.commit().ok());
  EXPECT_EQ(read(path_), text);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "exactly the mode asked for, whatever the umask";
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"}) << "no temporary file left";
}

// Durability::kReplaced (the CLI's outputs) skips the syncs only: the file
// is still replaced whole, with its mode, or left as it was.
TEST_F(AtomicFileTest, ReplacedWithoutSyncIsStillWholeOrNothing) {
  std::ofstream(path_) << "old\n";
  const std::string text = big_text();
  {
    AtomicFile file(path_, 0600, Durability::kReplaced);
    file.write(text);
    EXPECT_EQ(read(path_), "old\n") << "nothing is visible before commit";
    ASSERT_TRUE(file.commit().ok());
  }
  EXPECT_EQ(read(path_), text);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
  {
    AtomicFile file(path_, 0644, Durability::kReplaced);
    file.write("never committed");
  }
  EXPECT_EQ(read(path_), text);
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

TEST_F(AtomicFileTest, CreatesAFileThatWasNotThere) {
  ASSERT_TRUE(write_file_atomically(path_, "new\n", 0644).ok());
  EXPECT_EQ(read(path_), "new\n");
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

TEST_F(AtomicFileTest, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  std::ofstream(path_) << "old\n";
  {
    AtomicFile file(path_, 0644);
    file.write("half of the new");
    EXPECT_EQ(read(path_), "old\n") << "nothing is visible before commit";
  }
  EXPECT_EQ(read(path_), "old\n");
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

// A write that fails half way: RLIMIT_FSIZE makes write() fail with EFBIG
// past 4 KiB (SIGXFSZ ignored), as a full disk would with ENOSPC.
TEST_F(AtomicFileTest, AFailedWriteLeavesTheOldFileIntactAndNoTemporaryFile) {
  std::ofstream(path_) << "old\n";
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = write_file_atomically(path_, big_text(), 0644);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path_ + ": cannot write: " + std::strerror(EFBIG));
  EXPECT_EQ(read(path_), "old\n");
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

TEST_F(AtomicFileTest, WritesAfterAFailureAreIgnoredAndTheFirstErrorIsKept) {
  std::ofstream(path_) << "old\n";
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  AtomicFile file(path_, 0644);
  file.write(std::string(8192, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  file.write("the rest, which would now fit");
  Status s = file.commit();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path_ + ": cannot write: " + std::strerror(EFBIG));
  EXPECT_EQ(read(path_), "old\n");
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

// The rename fails (a folder stands where the file goes): the folder is left
// as it was, the temporary file removed, and the error says which step.
TEST_F(AtomicFileTest, AFailedRenameLeavesNoTemporaryFile) {
  std::filesystem::create_directories(path_);
  std::ofstream(std::filesystem::path(path_) / "inside") << "kept\n";
  Status s = write_file_atomically(path_, "new\n", 0644);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path_ + ": cannot replace: " + std::strerror(EISDIR));
  EXPECT_TRUE(std::filesystem::is_directory(path_));
  EXPECT_EQ(read((std::filesystem::path(path_) / "inside").string()), "kept\n");
  EXPECT_EQ(names(), std::vector<std::string>{"policy.yaml"});
}

TEST_F(AtomicFileTest, AMissingFolderIsNamedWithTheCause) {
  const std::string path = (dir_ / "missing" / "policy.yaml").string();
  Status s = write_file_atomically(path, "new\n", 0644);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path + ": cannot create " + path + ".tmp: " + std::strerror(ENOENT));
  EXPECT_TRUE(names().empty());
}

TEST_F(AtomicFileTest, CommitTwiceIsAnError) {
  AtomicFile file(path_, 0644);
  file.write("once\n");
  ASSERT_TRUE(file.commit().ok());
  Status again = file.commit();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, path_ + ": committed twice");
  EXPECT_EQ(read(path_), "once\n");
}

}  // namespace
}  // namespace railyard::files
