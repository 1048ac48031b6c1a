#include "controller/files/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace railyard::files {

namespace {

Error failure(const std::string& path, const std::string& what, int err) {
  return Error{path + ": " + what + ": " + std::strerror(err)};
}

}  // namespace

AtomicFile::AtomicFile(std::string path, mode_t mode, Durability durability)
    : path_(std::move(path)), tmp_(path_ + ".tmp"), mode_(mode), durability_(durability) {
  // O_NOFOLLOW: a symlink planted at the temporary name is refused rather
  // than followed to a file elsewhere.
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode_);
  if (fd_ < 0) {
    error_ = failure(path_, "cannot create " + tmp_, errno);  // not ours to remove
    return;
  }
  remove_tmp_ = true;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (remove_tmp_) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  if (!error_) error_ = failure(path_, what, err);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AtomicFile::write(std::string_view data) {
  while (fd_ >= 0 && !data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write", n < 0 ? errno : EIO);
    data.remove_prefix(static_cast<size_t>(n));
  }
}

Status AtomicFile::commit() {
  if (!error_ && fd_ < 0) error_ = Error{path_ + ": committed twice"};
  // fchmod: O_CREAT's mode is filtered by the umask, and an old temporary
  // file keeps its mode.
  if (!error_ && ::fchmod(fd_, mode_) != 0) fail("cannot set the mode", errno);
  if (!error_ && durability_ == Durability::kSynced && ::fsync(fd_) != 0) fail("cannot sync", errno);
  if (!error_) {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot close", errno);
  }
  if (!error_ && std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot replace", errno);
  if (error_) {
    if (remove_tmp_) ::unlink(tmp_.c_str());
    remove_tmp_ = false;
    return *error_;
  }
  remove_tmp_ = false;  // renamed: the name is no longer ours
  if (durability_ == Durability::kReplaced) return {};
  // The rename is durable once the folder is synced. EINVAL: a file system
  // that cannot sync a folder (some network ones) has nothing to make durable.
  std::string dir = std::filesystem::path(path_).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return failure(path_, "replaced, but cannot open its folder to sync it", errno);
  const int synced = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  if (synced != 0 && err != EINVAL) return failure(path_, "replaced, but cannot sync its folder", err);
  return {};
}

Status write_file_atomically(const std::string& path, std::string_view data, mode_t mode) {
  AtomicFile file(path, mode);
  file.write(data);
  return file.commit();
}

}  // namespace railyard::files
