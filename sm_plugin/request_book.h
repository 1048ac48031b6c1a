// RequestBook: controller request ids on their way through a routing pass
// (docs/plugin_protocol.md, "Controller -> plugin").
//
//   add(id)            the socket thread, when a reroute/policy_changed arrives
//   start_pass()       the routing callback: every pending id now belongs to
//                      this pass (listed in its routing_pass event)
//   finish_routing()   report(UCAST_ROUTING_DONE): the ids of the pass that
//                      preceded it, handed over once
//
// Its own mutex, held for a few moves: never OpenSM's lock, safe from report().
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace railyard::sm_plugin {

class RequestBook {
 public:
  void add(std::string id) {
    std::lock_guard lock(mu_);
    pending_.push_back(std::move(id));
  }

  std::vector<std::string> start_pass() {
    std::lock_guard lock(mu_);
    // A pass that never reached UCAST_ROUTING_DONE (OpenSM stopped the sweep)
    // passes its ids on: they are served by this one.
    in_pass_.insert(in_pass_.end(), pending_.begin(), pending_.end());
    pending_.clear();
    return in_pass_;
  }

  std::vector<std::string> finish_routing() {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    out.swap(in_pass_);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> pending_;
  std::vector<std::string> in_pass_;
};

}  // namespace railyard::sm_plugin
