// railyardd's drain sync to Slurm (slurm.drain_sync in railyardd.yaml): a
// thread of its own that, every slurm.interval_s, reads Slurm's nodes with
// `scontrol show node --oneliner`, compares them with the hosts' rail health
// (controller/slurm_drain_sync.h decides) and runs `scontrol update` for each
// change. scontrol may take seconds: it never runs on an I/O thread. Each
// scontrol gets 20 s, then is killed (by its PID); stopping railyardd kills
// a running one at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "controller/controller.h"

namespace railyard::railyardd {

class SlurmSync {
 public:
  SlurmSync(controller::Controller& controller, const controller::ControllerConfig& config);
  ~SlurmSync();  // stops and joins the thread
  void start();

 private:
  void run();
  void sync_once();

  controller::Controller& c_;
  std::string scontrol_;
  std::string slurm_conf_;
  unsigned interval_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};  // read by a running scontrol's wait
  std::thread thread_;
};

}  // namespace railyard::railyardd
