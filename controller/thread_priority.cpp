#include "controller/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace railyard::controller {

int raise_thread_nice(int nice) {
  // With a thread id, PRIO_PROCESS names that thread only.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int before = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return 0;
  if (nice > before) (void)::setpriority(PRIO_PROCESS, tid, nice);
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  return errno == 0 ? now : before;
}

}  // namespace railyard::controller
