// keep_freed_memory(): a block freed and asked for again comes back on pages
// that are already mapped. Each case runs in a child process, so that glibc's
// defaults and the policy never mix in one heap.
#include "sm_plugin/heap_policy.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace railyard::sm_plugin {
namespace {

// Above the largest mmap threshold glibc slides to by itself (32 MiB): under
// its defaults such a block is always mapped afresh and unmapped on free.
// (The forwarding tables of ~25,000 CAs and 2,000 switches are this size.)
constexpr size_t kBlock = 40u << 20;
constexpr size_t kPage = 4096;

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Allocates, writes every page of and frees a block, three times, and
// returns the minor faults of the third round (the first two warm the heap
// whichever policy is in force). Runs in a child; -1 on a failure, -2 if
// the policy was not applied.
long faults_of_third_round(bool keep) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::close(fds[0]);
    long result = keep && !keep_freed_memory().applied ? -2 : -1;
    if (result == -1) {
      for (int round = 0; round < 3; ++round) {
        const long before = minor_faults();
        auto* p = static_cast<volatile char*>(std::malloc(kBlock));
        if (p == nullptr) break;
        for (size_t i = 0; i < kBlock; i += kPage) p[i] = static_cast<char>(i);
        std::free(const_cast<char*>(p));
        result = minor_faults() - before;
      }
    }
    const ssize_t w = ::write(fds[1], &result, sizeof result);
    _exit(w == sizeof result ? 0 : 1);
  }
  ::close(fds[1]);
  long result = -1;
  const ssize_t r = ::read(fds[0], &result, sizeof result);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return r == sizeof result && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? result : -1;
}

// ASan and TSan bring an allocator of their own (GCC says so with
// __SANITIZE_*__, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RY_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RY_SANITIZER_ALLOCATOR 1
#endif
#endif

TEST(HeapPolicy, AFreedBlockComesBackOnMappedPages) {
#if defined(RY_SANITIZER_ALLOCATOR)
  GTEST_SKIP() << "a sanitizer's allocator stands in for glibc's: mallopt does not apply";
#endif
  const long pages = static_cast<long>(kBlock / kPage);
  const long defaults = faults_of_third_round(false);
  ASSERT_GE(defaults, 0) << "the child with glibc's defaults failed";
  // Every page faults again under the defaults. A kernel that backs the
  // block with huge pages faults far fewer times: this measure then says
  // nothing.
  if (defaults < pages / 2) GTEST_SKIP() << "only " << defaults << " faults for " << pages << " pages: huge pages?";
  const long kept = faults_of_third_round(true);
  ASSERT_NE(kept, -2) << "keep_freed_memory() was not applied";
  ASSERT_GE(kept, 0) << "the child with heap: keep failed";
  EXPECT_LT(kept, pages / 20) << "faults on the third round: " << kept << " with heap: keep, " << defaults
                              << " with glibc's defaults, for " << pages << " pages";
}

}  // namespace
}  // namespace railyard::sm_plugin
