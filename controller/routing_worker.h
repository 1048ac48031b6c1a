// RoutingWorker: the one thread railyardd routes on (what-ifs of drains,
// undrains, link events, reroutes, the plugin's fabrics), at background
// priority.
//
// A 16k-CA route takes a core for 0.2-0.5 s (and the engine's two lanes run
// on threads of their own, which inherit the worker's priority). At the
// readers' priority it competes with them on a small management node: GETs
// waited behind it for the CPU (p99 75-670 ms in bench/api_load.sh). At
// `nice` (limits.routing_nice, default 10) the scheduler lets a reader that
// wakes run first, and routing still takes every idle cycle. A nice of 0
// keeps the old behaviour.
//
// run() blocks its caller until the job is routed; jobs are routed one at a
// time, in the order they came.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace railyard::controller {

class RoutingWorker {
 public:
  // nice: 0..19, the worker thread's nice value (Linux: per thread); a
  // process already nicer keeps its own.
  explicit RoutingWorker(int nice);
  ~RoutingWorker();
  RoutingWorker(const RoutingWorker&) = delete;
  RoutingWorker& operator=(const RoutingWorker&) = delete;

  // Runs work on the worker thread and returns when it has returned; an
  // exception it throws is rethrown here.
  void run(const std::function<void()>& work);

  // The nice value the worker thread runs at (its creator's if the kernel
  // refused the change).
  int nice() const { return applied_nice_; }

 private:
  struct Job;
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> jobs_;
  bool stopping_ = false;
  int wanted_nice_ = 0;
  int applied_nice_ = 0;
  std::thread thread_;
};

}  // namespace railyard::controller
