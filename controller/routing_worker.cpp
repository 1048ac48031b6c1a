#include "controller/routing_worker.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <future>

namespace railyard::controller {

struct RoutingWorker::Job {
  const std::function<void()>* work = nullptr;
  std::promise<void> done;
};

RoutingWorker::RoutingWorker(int nice) : wanted_nice_(nice) {
  std::promise<int> started;
  std::future<int> applied = started.get_future();
  thread_ = std::thread([this, &started] {
    // setpriority on a thread id sets that thread's nice alone (Linux); the
    // threads it starts (the engine's lanes) inherit it.
    // Never lower than the creator's: only raised.
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    errno = 0;
    const int before = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && wanted_nice_ > before) (void)::setpriority(PRIO_PROCESS, tid, wanted_nice_);
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    started.set_value(errno == 0 ? now : before);
    loop();
  });
  applied_nice_ = applied.get();
}

RoutingWorker::~RoutingWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RoutingWorker::run(const std::function<void()>& work) {
  Job job;
  job.work = &work;
  std::future<void> done = job.done.get_future();
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(&job);
  }
  cv_.notify_one();
  done.get();  // rethrows what work threw
}

void RoutingWorker::loop() {
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = jobs_.front();
      jobs_.pop_front();
    }
    try {
      (*job->work)();
      job->done.set_value();
    } catch (...) {
      job->done.set_exception(std::current_exception());
    }
  }
}

}  // namespace railyard::controller
