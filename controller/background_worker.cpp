#include "controller/background_worker.h"

#include <exception>

#include "controller/thread_priority.h"

namespace railyard::controller {

BackgroundWorker::BackgroundWorker(int nice) : wanted_nice_(nice) {
  std::promise<int> started;
  std::future<int> applied = started.get_future();
  thread_ = std::thread([this, &started] {
    // The threads it starts (the engine's lanes) inherit its nice.
    started.set_value(raise_thread_nice(wanted_nice_));
    loop();
  });
  applied_nice_ = applied.get();
}

BackgroundWorker::~BackgroundWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWorker::run(const std::function<void()>& work) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{work, &done});
  }
  cv_.notify_one();
  finished.get();  // rethrows what work threw
}

void BackgroundWorker::post(std::function<void()> work) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{std::move(work), nullptr});
  }
  cv_.notify_one();
}

void BackgroundWorker::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job.work();
      if (job.done != nullptr) job.done->set_value();
    } catch (...) {
      if (job.done != nullptr) job.done->set_exception(std::current_exception());
    }
  }
}

}  // namespace railyard::controller
