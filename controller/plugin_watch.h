// PluginWatch: what railyardd keeps of the plugin beyond its events' effects
// on requests (docs/controller.md, "One routing, verified"):
//  - the plugin's identity (hello: version, OpenSM, pid) and the policy its
//    last pass planned with (routing_pass: policy, policy_file,
//    policy_error), reported in /health;
//  - railyardd's copy of the plugin's fabric, from fabric_changes
//    (plugin_fabric.h), and when to ask for it whole again;
//  - the divergence check (divergence.h): every routing pass and fast-path
//    push is compared with railyardd's views, and a reroute request is
//    applied only when the tables the plugin wrote have the digests of
//    railyardd's route.
// Decides only: returns what to record, finish and send; the controller
// carries it out. Not thread-safe (called under the controller's
// serialization).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/divergence.h"
#include "controller/fabric_view.h"
#include "controller/plugin_fabric.h"
#include "api/protocol/plugin_events.h"

namespace railyard::controller {

struct PluginIdentity {
  std::string version;  // hello.version; empty before the first hello
  std::string opensm;
  int64_t pid = 0;
};

struct PluginPolicy {
  uint64_t pass = 0;          // the last routing pass; 0 before the first
  bool ok = false;
  std::string policy;         // routing_pass.policy: what planned ("default", the file, "last policy that applied")
  std::string policy_file;    // empty: none configured
  std::string policy_error;   // the file does not load (the plugin routes with its last good policy)
};

class PluginWatch {
 public:
  struct Verdict {
    std::string id;
    bool applied = false;
    std::string detail;
  };
  struct Effects {
    std::vector<std::pair<std::string, nlohmann::json>> events;  // controller events to record (type, body)
    std::vector<Verdict> finished;                               // requests to mark
    std::vector<std::string> commands;                           // lines for the plugin
    std::shared_ptr<const routing::Fabric> fabric;               // a new copy of the plugin's fabric to route
  };

  explicit PluginWatch(double grace_s = 30) : divergence_(grace_s) {}

  void on_connection(bool connected);
  // A view is in force from `now` on (live views only).
  void on_view(const FabricView& view, double now);

  // `time`: the plugin's time of each event (its envelope). Reports the
  // plugin made before its hello (kept across a controller switch and sent
  // again after it) are history: recorded by the caller, not compared with
  // views routed from the fabric that came after them.
  Effects on_hello(const protocol::HelloEvent& hello, double time);
  Effects on_fabric_changes(const protocol::FabricChangesEvent& event, double now);
  // An older plugin's whole fabric as text: kept, but changes cannot chain on it.
  void on_fabric_text(std::shared_ptr<const routing::Fabric> fabric);
  Effects on_routing_pass(const protocol::RoutingPassEvent& pass, double now, double time);
  // `blocks`: LFT blocks the routing changed (for the request's detail).
  Effects on_routing_done(const protocol::UcastRoutingDoneEvent& done, uint64_t blocks, double now, double time);
  Effects on_fast_path(const protocol::FastPathEvent& push, double now);

  // Why /health is degraded because of the plugin (empty: nothing).
  std::vector<std::string> health_reasons() const;
  // For /health: identity, policy, divergence state and counts.
  nlohmann::json status() const;

  const PluginIdentity& identity() const { return identity_; }
  const PluginPolicy& policy() const { return policy_; }
  const DivergenceTracker& divergence() const { return divergence_; }
  const PluginFabric& fabric() const { return fabric_; }

 private:
  nlohmann::json divergence_event(const DivergenceCheck& c, const std::string& source) const;

  PluginIdentity identity_;
  PluginPolicy policy_;
  DivergenceTracker divergence_;
  PluginFabric fabric_;
  uint64_t unverified_ = 0;  // passes or pushes that carried no digests (an older plugin)
  double hello_time_ = 0;    // the plugin's time of the current connection's hello
  uint64_t earlier_ = 0;     // reports from before it (sent again), not compared
};

}  // namespace railyard::controller
