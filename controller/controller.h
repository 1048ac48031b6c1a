// Controller: railyardd's decisions. It owns the current FabricView, the
// durable Store and the reroute requests, and turns API calls and plugin
// events into state changes:
//
//   drain / undrain  -> what-if routing (refuse a cut with 409 unless forced;
//                       dry runs stop here) -> store -> policy file for the
//                       plugin -> reroute request (policy_changed to the plugin,
//                       or an immediate re-route offline)
//   reroute          -> rate limit -> request to the plugin
//   link event       -> store (idempotent by event id) -> link health ->
//                       offline: re-route without the link
//   plugin events    -> store -> fabric snapshots, link health, request
//                       outcomes (pending -> applied | failed, latency)
//
// Thread-safe: mutations are serialised by one mutex; readers take the view
// (a shared_ptr) and the Store (its own lock) without blocking mutations.
// Nothing here parses HTTP or renders JSON for the API (api/ does).
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/config.h"
#include "controller/fabric_view.h"
#include "controller/store.h"
#include "routing/ar_groups.h"
#include "routing/route_diff.h"
#include "routing/sharp_allocator.h"

namespace railyard::controller {

struct Actor {
  std::string name;  // token name, or "plugin", "controller"
  Role role = Role::kNone;
};

// An HTTP-shaped outcome: status 2xx on success, else 4xx/5xx and a message.
struct Outcome {
  int status = 200;
  std::string message;
  bool ok() const { return status < 300; }
};

struct DrainRequest {
  DrainKind kind = DrainKind::kLink;
  std::string node;      // GUID, record name or node description
  uint32_t port = 0;     // link/port drains
  std::string reason;
  std::optional<double> expires_at;  // Unix time
};

struct CutPair {
  std::string source;       // CA description
  std::string destination;  // CA description
  uint32_t sources = 0;     // how many sources lose this destination
};

struct DrainImpact {
  uint64_t pairs_cut = 0;          // CA pairs left with only drained paths
  std::vector<CutPair> cut;        // examples, up to 10
  routing::RouteDiff diff;         // vs the tables in force
  double route_ms = 0;             // what-if routing time
};

struct DrainOutcome : Outcome {
  bool dry_run = false;
  std::optional<DrainRecord> drain;
  DrainImpact impact;
  std::optional<RerouteRecord> reroute;
};

struct RerouteOutcome : Outcome {
  std::optional<RerouteRecord> reroute;
  double retry_after_s = 0;  // with 429
};

struct LinkEventRequest {
  std::string event_id;  // the reporter's id: the same id twice is one event
  std::string node;      // either end of the link
  uint32_t port = 0;
  std::string state;     // down | up
  std::string reason;
  std::optional<double> time;
};

struct LinkEventOutcome : Outcome {
  EventRecord event;
  bool duplicate = false;
  std::optional<RerouteRecord> reroute;
};

struct JobRequest {
  std::string id;
  std::vector<std::string> hosts;  // host names (all their CAs)
  std::vector<std::string> cas;    // CA names, GUIDs
  std::vector<int32_t> rails;      // only these rails; empty = all of the job's
};

struct JobOutcome : Outcome {
  std::optional<JobRecord> job;
};

struct LinkStatus {
  LinkId link;   // invalid when the link is not in the current fabric (live: gone)
  std::string key;        // canonical name
  std::string state;      // up | down
  std::vector<int64_t> drains;  // active drains covering it
};

struct Counters {
  uint64_t reroutes_requested = 0;
  uint64_t reroutes_applied = 0;
  uint64_t reroutes_failed = 0;
  uint64_t reroutes_rate_limited = 0;
  uint64_t plugin_events = 0;
  uint64_t plugin_events_dropped = 0;  // reported by the plugin (seq gaps and hello.dropped)
  uint64_t plugin_connects = 0;
  uint64_t lft_changes = 0;
  std::vector<double> reroute_latency_ms;  // the last 1,000 applied
};

class Controller {
 public:
  // Sends one JSON line to the plugin; false when no plugin is connected.
  using PluginSender = std::function<bool(const std::string& line)>;

  Controller(ControllerConfig config, std::unique_ptr<Store> store);

  // Offline: reads and routes the topology file (with the stored down links
  // and drains). Live: waits for the plugin's first fabric snapshot. Writes
  // the policy file either way.
  Status start();
  void set_plugin_sender(PluginSender sender);

  std::shared_ptr<const FabricView> view() const;
  const ControllerConfig& config() const { return config_; }
  Store& store() { return *store_; }
  bool plugin_connected() const;
  Counters counters() const;
  // Changes with every change of the view, drains or link states: a key for
  // caching what is rendered from them.
  uint64_t generation() const { return generation_.load(); }

  DrainOutcome drain(const DrainRequest& request, const Actor& actor, bool dry_run, bool force);
  DrainOutcome undrain(int64_t id, const Actor& actor, bool dry_run);
  RerouteOutcome reroute(const Actor& actor, const std::string& reason);
  LinkEventOutcome link_event(const LinkEventRequest& request, const Actor& actor);

  // SHARP jobs (sharp_jobs.cpp): trees per rail, capacity shared by all jobs,
  // recomputed when the fabric view changes; persisted in the store.
  JobOutcome create_job(const JobRequest& request, const Actor& actor);
  JobOutcome delete_job(const std::string& id, const Actor& actor);
  // Trees in use on a switch (all jobs), for the API.
  uint32_t sharp_trees_on(NodeId sw) const;

  // Every link of the current view plus links known down but absent from it.
  // Computed once per change (view, drains, link states) and shared.
  std::shared_ptr<const std::vector<LinkStatus>> links() const;

  // The AR group tables of the current view, computed on first use per view.
  Result<std::shared_ptr<const routing::ArTables>> ar_tables();

  // One line from the plugin socket (already split; may be malformed).
  void on_plugin_line(const std::string& line);
  void on_plugin_connection(bool connected);

  // Once a second: expired drains are removed, overdue requests fail.
  void tick(double now);

  // Records a mutation in the audit log (api/ calls it for every mutation).
  void audit(const Actor& actor, const std::string& action, const std::string& request, int status,
             const std::string& result);

 private:
  // Base policy + drains + links reported down by monitoring; references that
  // do not resolve in `fabric` (default: the current one) are left out.
  policies::Policy effective_policy(const std::vector<DrainRecord>& drains,
                                    const routing::Fabric* fabric = nullptr) const;
  Result<std::string> canonical_target(const routing::Fabric& fabric, const DrainRequest& request,
                                       std::string* label) const;
  DrainImpact what_if(const FabricView& current, const policies::Policy& policy,
                      std::shared_ptr<const FabricView>* out, Status* error) const;
  Status write_policy_file(const policies::Policy& policy) const;
  // Applies a new policy/down set: offline re-route now; live ask the plugin.
  RerouteRecord push_reroute(const Actor& actor, const std::string& reason, bool policy_changed);
  void finish_request(const std::string& id, bool applied, const std::string& detail, double now);
  void set_view(std::shared_ptr<const FabricView> view);
  // After the view changed (mu_ held): recompute the SHARP jobs' trees.
  void sharp_follow_view();
  Result<routing::SharpAllocation> sharp_allocate(const JobRecord& job);
  std::vector<std::string> down_links() const;
  void record_event(const std::string& source, const std::string& type, const nlohmann::json& body,
                    const std::string& external_id = {});
  void handle_fabric_snapshot(const nlohmann::json& event);
  void note_link_changes(const FabricView* before, const FabricView& after);
  std::string next_request_id();

  ControllerConfig config_;
  std::unique_ptr<Store> store_;
  policies::Policy base_policy_;
  routing::Fabric offline_fabric_;  // offline source, as read

  mutable std::mutex mu_;           // mutations and the fields below
  std::shared_ptr<const FabricView> view_;
  uint64_t next_version_ = 1;
  PluginSender sender_;
  bool plugin_connected_ = false;
  uint64_t last_plugin_seq_ = 0;
  std::map<std::string, double> pending_;  // request id -> requested at (steady seconds)
  std::deque<double> reroute_times_;       // explicit reroutes in the last minute
  Counters counters_;
  uint64_t request_counter_ = 0;
  uint64_t lft_changes_in_pass_ = 0;

  std::atomic<uint64_t> generation_{1};  // bumped by every change links() depends on
  mutable std::mutex links_mu_;
  mutable uint64_t links_generation_ = 0;
  mutable std::shared_ptr<const std::vector<LinkStatus>> links_;

  std::optional<routing::SharpAllocator> sharp_;
  uint64_t sharp_version_ = 0;  // view version the allocator follows

  std::mutex ar_mu_;  // one AR computation at a time
  uint64_t ar_version_ = 0;
  std::shared_ptr<const routing::ArTables> ar_;
};

double unix_now();

}  // namespace railyard::controller
