// AutoIsolation: automatic isolation carried out (the decisions are
// isolation.h's). Twice a second, on a thread of its own (a drain routes:
// never on an I/O thread), it
//   - reads the link events stored since the last look (link_down/link_up:
//     the plugin's, from OpenSM's subnet, and monitoring's, POST events/link),
//     in order, from the store: none is missed, none read twice;
//     and the error bursts the telemetry recorded (error_burst: a perf-manager
//     sample with at least telemetry.error_burst errors), as an error rate;
//   - gives them to the engine, with the fabric's switch-link count (the cap);
//   - carries its actions out through the operator's path: Controller::drain
//     and undrain with the actor "auto" (durable before done, audited with the
//     change, what-if refused when it would cut CA pairs; a link decided
//     while it is down, out of the subnet, is drained once it is back); dry run, excluded
//     and the breaker's trip are audited only.
// Operators (api/): the state, the breaker's reset, the exclude list; each
// change audited with the operator's name.
//
// Kept in memory (not in the store): the breaker, the exclude list and the
// flap counts; a restart starts them afresh. Drains made by "auto" are
// adopted back at start.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "controller/controller.h"
#include "controller/isolation.h"

namespace railyard::controller {

class AutoIsolation {
 public:
  AutoIsolation(Controller& controller, IsolationConfig config);
  ~AutoIsolation();  // stops the thread

  // Where decisions are logged (railyardd: spdlog); warn: trips, refusals.
  using Log = std::function<void(bool warn, const std::string& text)>;
  void set_log(Log log) { log_ = std::move(log); }

  // Adopts the drains "auto" made and starts reading events from the newest.
  void start_at(double now);
  void start_thread();  // start_at(now) then tick() every 0.5 s until stopped
  void stop();

  // One round (the thread's; tests call it with their own clock).
  void tick(double now);

  IsolationSnapshot snapshot() const;
  // Operators: done (audited), or refused with a Failure.
  Outcome reset(const Actor& actor, double now);
  Outcome exclude(const ExcludeEntry& entry, const Actor& actor, double now);
  Outcome unexclude(const std::string& target, const Actor& actor, double now);

 private:
  void note(bool warn, const std::string& text) const;
  void audit(const Actor& actor, const std::string& result, double now);
  void carry_out(const IsolationAction& action, double now);
  // Links of the view that are cabled and up (a drain names one of those).
  void refresh_view();

  Controller& c_;
  Log log_;
  mutable std::mutex mu_;  // engine_ and last_event_
  IsolationEngine engine_;
  int64_t last_event_ = 0;
  uint64_t view_version_ = 0;
  std::set<std::string> present_;  // refresh_view(): the view's links, up
  // Isolations decided while the link was out of the subnet (it went down):
  // carried out once it is back (a drain names a cabled link).
  std::vector<IsolationAction> deferred_;
  std::mutex tick_mu_;  // one round at a time

  std::mutex thread_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// A target for the exclude list: "0x<guid>[port]" or "0x<guid>"; false when neither.
bool valid_exclude_target(const std::string& target);

}  // namespace railyard::controller
