// BackgroundWorker: one thread at background priority, for work that must
// not take the CPU from the threads answering reads: the controller routes
// on one (what-ifs of drains, undrains and link events, the plugin's
// fabrics), the API renders its whole-fabric documents on another.
//
// A 16k-CA route takes a core for 0.2-0.5 s (and the engine's two lanes run
// on threads of their own, which inherit the worker's priority); the `hosts`
// document a good part of a second. At the readers' priority that competes
// with them on a small management node: GETs waited for the CPU (p99
// 75-670 ms in bench/api_load.sh). At `nice` (limits.mutation_nice, default
// 10) a reader that wakes runs first, and the worker still takes every idle
// cycle. A nice of 0 keeps the caller's priority.
//
// Jobs run one at a time, in the order they came: run() blocks its caller
// until its job has run, post() does not wait.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace railyard::controller {

class BackgroundWorker {
 public:
  // nice: 0..19, the worker thread's nice value (Linux: per thread); a
  // process already nicer keeps its own.
  explicit BackgroundWorker(int nice);
  // Runs the jobs still queued, then stops.
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Runs work on the worker thread and returns when it has returned; an
  // exception it throws is rethrown here.
  void run(const std::function<void()>& work);
  // Queues work and returns at once; what it throws is dropped (work
  // catches what it must report).
  void post(std::function<void()> work);

  // The nice value the worker thread runs at (its creator's if the kernel
  // refused the change).
  int nice() const { return applied_nice_; }

 private:
  struct Job {
    std::function<void()> work;
    std::promise<void>* done = nullptr;  // run(): the caller waits on it
  };
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  int wanted_nice_ = 0;
  int applied_nice_ = 0;
  std::thread thread_;
};

}  // namespace railyard::controller
