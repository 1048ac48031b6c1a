// Controller: railyardd's decisions. It owns the current FabricView, the
// durable Store and the reroute requests, and turns API calls and plugin
// events into state changes:
//
//   drain / undrain  -> what-if routing (refuse a cut unless forced; dry runs
//                       stop here) -> store -> policy file for the
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
// Nothing here parses HTTP or renders JSON for the API (api/ does): what is
// refused is a Failure (failure.h) with a kind, which api/ maps to a status.
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
#include "controller/failure.h"
#include "controller/plugin_watch.h"
#include "controller/states.h"
#include "controller/store.h"
#include "protocol/plugin_events.h"
#include "routing/ar_groups.h"
#include "routing/route_diff.h"
#include "routing/sharp_allocator.h"

namespace railyard::controller {

// Who asks, and what they asked as the audit log records it. api/ fills
// action ("POST /api/v1/drains?force=true") and request (the body) for every
// call; a mutation that changes state writes its audit record in the same
// transaction as the change.
struct Actor {
  std::string name;  // token name, or "plugin", "controller"
  Role role = Role::kNone;
  std::string action;
  std::string request;
  // What the caller answers when the change is made (api/: the HTTP status),
  // for the audit record; never interpreted here. 0: the controller's own.
  int reply_code = 0;
};

// What a mutation did: done (no failure; `message` says what was done) or
// not (`failure` says why). Either way the other fields of each outcome hold
// what was found: the impact of a refused drain, the drain that exists.
struct Outcome {
  std::optional<Failure> failure;
  std::string message;   // done: "drained ...", "dry run: nothing changed"
  bool audited = false;  // the audit record was written with the change
  bool ok() const { return !failure; }
};

// An outcome of type O refused for `failure`, with nothing else found.
template <class O>
O refused(Failure failure) {
  O out;
  out.failure = std::move(failure);
  return out;
}

// What /health reports: every reason the daemon cannot do its job right now.
struct Health {
  bool database_writable = true;
  std::string database_error;
  bool policy_file_writable = true;
  std::string policy_file_error;
  // Live: what is wrong on the plugin's side (a divergence, its policy file
  // not loading), and its status (plugin_watch.h).
  std::vector<std::string> plugin_reasons;
  nlohmann::json plugin;
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
};

struct LinkEventRequest {
  std::string event_id;  // the reporter's id: the same id twice is one event
  std::string node;      // either end of the link
  uint32_t port = 0;
  LinkState state = LinkState::kDown;
  std::string reason;
  std::optional<double> time;
};

struct LinkEventOutcome : Outcome {
  EventRecord event;
  bool duplicate = false;  // the same id, link and state again: done before, nothing changed now
  DrainImpact impact;  // of a state change: pairs cut (refused without force), routing time
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
  LinkState state = LinkState::kUp;
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
  uint64_t reroutes_coalesced = 0;       // changes whose reroute waited for the rate limit
  uint64_t audits_suppressed = 0;        // refused requests beyond limits.refused_audits_per_minute
  uint64_t audits_failed = 0;            // refused requests whose record could not be written
  uint64_t divergence_checks = 0;        // plugin digests compared with railyardd's views
  uint64_t divergences = 0;              // ... that differed (routing_divergence events)
  uint64_t fabric_resyncs = 0;           // times the plugin was asked for the whole fabric again
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

  Health health() const;

  // Mutations follow one rule: done only once every effect is durable — the
  // policy file written, the store's transaction (change, reroute request,
  // audit record) committed — else rolled back and refused as kUnavailable,
  // saying nothing changed. Reroutes to the plugin count against
  // limits.reroutes_per_minute whatever asked for them: an explicit reroute
  // beyond it is refused (kRateLimited); a drain, undrain or link event beyond
  // it is made, and its reroute is queued and sent, coalesced, when the window
  // allows.
  DrainOutcome drain(const DrainRequest& request, const Actor& actor, bool dry_run, bool force);
  DrainOutcome undrain(int64_t id, const Actor& actor, bool dry_run);
  RerouteOutcome reroute(const Actor& actor, const std::string& reason);
  // A "down" that would leave CA pairs without a path is refused (kConflict,
  // the impact, nothing recorded) unless forced: monitoring can be wrong, and
  // a false "down" on a CA's only link would cut it off. The same event id
  // with another link or state is a kConflict.
  LinkEventOutcome link_event(const LinkEventRequest& request, const Actor& actor, bool force = false);

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
  Expected<std::shared_ptr<const routing::ArTables>> ar_tables();

  // One line from the plugin socket (already split; may be malformed).
  void on_plugin_line(const std::string& line);
  void on_plugin_connection(bool connected);

  // Once a second: expired drains are removed, overdue requests fail.
  void tick(double now);

  // Records a refused or failed mutation (api/ calls it for every mutation
  // the controller did not audit itself: unauthenticated, forbidden, refused,
  // failed), with the caller's reply code (opaque here, 0 for the
  // controller's own), at most limits.refused_audits_per_minute a minute;
  // beyond that they are counted (audits_suppressed) and one record says how
  // many were left out. Never throws: the refusal stands whether or not its
  // record could be written.
  void audit_refused(const Actor& actor, int reply_code, const std::string& result);

 private:
  // Base policy + drains + links reported down by monitoring; references that
  // do not resolve in `fabric` (default: the current one) are left out.
  policies::Policy effective_policy(const std::vector<DrainRecord>& drains,
                                    const routing::Fabric* fabric = nullptr) const;
  policies::Policy effective_policy(const std::vector<DrainRecord>& drains, const std::vector<LinkStateRecord>& states,
                                    const routing::Fabric* fabric) const;
  // The drain's target key ("0x<guid>[port]", "0x<guid>"); *label names it for people.
  Expected<std::string> canonical_target(const routing::Fabric& fabric, const DrainRequest& request,
                                         std::string* label) const;
  DrainImpact what_if(const FabricView& current, const policies::Policy& policy,
                      std::shared_ptr<const FabricView>* out, Status* error) const;
  Status write_policy_file(const policies::Policy& policy);
  // A reroute request for a change about to be committed: offline applied at
  // once (the caller re-routed the view); live pending, or queued when the
  // rate limit is spent (unless `must_send`: then the caller checked it).
  RerouteRecord new_reroute(const Actor& actor, const std::string& reason, double route_ms);
  // After the commit: tells the plugin (live, pending); a failed send fails
  // the request.
  void send_reroute(RerouteRecord& record, bool policy_changed);
  // The rate window of reroutes sent to the plugin; true (and counted) when
  // one more fits.
  bool take_reroute_slot(double now);
  // Makes a change durable (see the rule above): `policy` (may be null) to
  // the policy file, then `write`, the reroute record (may be null) and the
  // audit record (`done` as its result) in one transaction. An empty optional
  // on success, else why not (kUnavailable); on failure the old policy file is
  // put back.
  std::optional<Failure> commit_change(const Actor& actor, const std::string& fallback_action,
                                       const policies::Policy* policy, const std::string& done,
                                       const RerouteRecord* reroute, const std::function<void()>& write);
  void finish_request(const std::string& id, bool applied, const std::string& detail, double now);
  void set_view(std::shared_ptr<const FabricView> view);
  // After the view changed (mu_ held): recompute the SHARP jobs' trees.
  void sharp_follow_view();
  Result<routing::SharpAllocation> sharp_allocate(const JobRecord& job);
  // What is wrong with a job request on the current view, before the
  // allocator sees it: unknown hosts or CAs (kNotFound), a switch given as a
  // CA, rails the fabric does not have or none of the job's CAs is on, no CAs
  // (kInvalid). What the allocator still refuses then is the fabric's state
  // (capacity, broken links: kConflict).
  std::optional<Failure> check_job_request(const JobRequest& request) const;
  std::vector<std::string> down_links() const;
  static std::vector<std::string> down_links(const std::vector<LinkStateRecord>& states);
  // `time`: when the reporter says it happened (believed when plausible); else now.
  void record_event(Reporter source, const std::string& type, const nlohmann::json& body,
                    std::optional<double> time = std::nullopt);
  // A decoded plugin event (plugin_events.cpp; mu_ held): what it does to
  // requests and counters. `line` is the event as received, stored as is.
  void take_plugin_event(const protocol::EventBody& body, const std::string& type, nlohmann::json& line,
                         double time);
  void handle_fabric_snapshot(const protocol::FabricEvent& snapshot);
  // Carries out what the plugin watch decided (mu_ held).
  void carry_out(PluginWatch::Effects effects, uint64_t pass);
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
  std::deque<double> reroute_times_;       // reroutes sent to the plugin in the last minute
  std::vector<std::string> queued_;        // reroute requests waiting for the rate limit
  std::map<std::string, std::vector<std::string>> coalesced_;  // sent id -> queued ids it carries
  bool policy_file_ok_ = true;             // the last write of the policy file worked
  double last_store_probe_ = 0;            // steady seconds
  std::string policy_file_error_;
  std::deque<double> refused_audit_times_;  // refused requests audited in the last minute
  uint64_t audits_suppressed_pending_ = 0;  // left out since the last summary record
  Counters counters_;
  uint64_t request_counter_ = 0;
  uint64_t lft_changes_in_pass_ = 0;
  PluginWatch watch_;  // the plugin's identity, fabric copy and the divergence check

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
double steady_now();  // seconds on the monotonic clock, for intervals

}  // namespace railyard::controller
