// Controller: railyardd's brain, as a driver around decide() (decide.h).
//
//   command -> [strand] decide(State, Command) -> Decision
//           -> (routing wanted?) route off the strand, decide again; a result
//              routed from a state that has moved on is routed again
//           -> [strand] carry out the effects (executor.cpp): policy file,
//              one store transaction (change + reroute request + audit),
//              then adopt State', publish the view, tell the plugin
//
// Commands: drain, undrain, link event, reroute (api/), plugin lines and
// connections (PluginLink), the timer (once a second), SHARP jobs.
//
// Readers never wait for a mutation: what they read (the view, the active
// drains, the link states) is published as one immutable snapshot through an
// atomic shared_ptr; the strand (a mutex held only to decide and carry out,
// never while routing) and the routing lock (one routing change at a time)
// are for mutations only. Nothing here parses HTTP or renders JSON for the
// API (api/ does): what is refused is a Failure (failure.h) with a kind,
// which api/ maps to a status.
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

#include "controller/background_worker.h"
#include "controller/config.h"
#include "controller/decide.h"
#include "controller/fabric_view.h"
#include "controller/failure.h"
#include "controller/plugin_watch.h"
#include "controller/states.h"
#include "controller/store.h"
#include "controller/telemetry.h"
#include "api/protocol/plugin_events.h"
#include "routing/ar_groups.h"
#include "routing/route_diff.h"
#include "routing/sharp_allocator.h"

namespace railyard::controller {

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

// What the plugin link counts (controller/plugin_link.h), for /metrics.
struct PluginLinkStats {
  uint64_t peers_refused = 0;  // not allowed (credentials, token) or beyond the most connections
  uint64_t lines_ignored = 0;  // lines of plugins other than *the* plugin, not hello/sm_state/ack
  size_t connections = 0;      // open now: the plugin and standbys' plugins
};

class Controller {
 public:
  // Sends one JSON line to the plugin; false when no plugin is connected.
  using PluginSender = std::function<bool(const std::string& line)>;
  using PluginLinkStatsSource = std::function<PluginLinkStats()>;
  // Hands the policy in force (canonical YAML, policies::render_policy_yaml)
  // to every plugin (PluginLink::broadcast_policy).
  using PolicyBroadcaster = std::function<void(const std::string& yaml)>;

  Controller(ControllerConfig config, std::unique_ptr<Store> store);

  // Offline: reads and routes the topology file (with the stored down links
  // and drains). Live: waits for the plugin's first fabric snapshot. Writes
  // the policy file either way.
  Status start();
  void set_plugin_sender(PluginSender sender);
  // Called at once with the policy in force, then with each new one, after
  // it is durable and before the commands that follow it (policy_changed).
  void set_policy_broadcaster(PolicyBroadcaster broadcaster);
  // Live: where the plugin link's counts come from (nullopt without one).
  void set_plugin_link_stats(PluginLinkStatsSource source);
  std::optional<PluginLinkStats> plugin_link_stats() const;

  // High availability (controller/replication.h, docs/ha.md). The gate says
  // whether this member may write now: nullopt when it may (the leader, or
  // single-node: no gate), else why not ("not the leader: ..."). A member
  // that may not write refuses mutations (kUnavailable, the reason), and
  // makes no writes of its own: no timer expiries, retention, plugin events,
  // reconcile or refused-request audits. Set before start().
  using WriteGate = std::function<std::optional<std::string>()>;
  void set_write_gate(WriteGate gate);
  std::optional<std::string> write_refusal() const;
  // The store changed underneath (a follower applied the leader's log, or
  // this member is about to lead): drains and link states read again, the
  // offline fabric routed again when they changed, the policy file written,
  // the view published. `leading`: also reconcile the unfinished reroute
  // requests, as at start (the gate must allow writes by then).
  Status follow_store(bool leading);

  // Readers: never wait for a mutation (the published snapshot).
  std::shared_ptr<const FabricView> view() const;
  // The active drains, as published with the view.
  std::vector<DrainRecord> drains() const;
  const ControllerConfig& config() const { return k_.config; }
  Store& store() { return *store_; }
  bool plugin_connected() const;
  Counters counters() const;
  // Changes with every change of the view, drains or link states: a key for
  // caching what is rendered from them.
  uint64_t generation() const;

  Health health() const;

  // Perf-manager counters (telemetry.h): its own lock, never the mutations'.
  const Telemetry& telemetry() const { return telemetry_; }

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
  // What readers see, swapped whole (published_).
  struct Published {
    std::shared_ptr<const FabricView> view;
    std::vector<DrainRecord> drains;
    std::vector<LinkStateRecord> link_states;
    uint64_t generation = 0;
    mutable std::once_flag links_once;  // links computed by the first reader that asks
    mutable std::shared_ptr<const std::vector<LinkStatus>> links;
  };

  // Decides `command` on the strand, routing off it when asked (`routes`:
  // the command may need routing; it takes the routing lock first), and
  // carries the decision out. Returns its reply.
  Reply run(Command command, bool routes);
  // The executor (executor.cpp; strand held): the effects under the one
  // rule, then State' adopted and published and the plugin told. On failure
  // the state is unchanged and the reply (if any) says why.
  void carry_out(Decision& decision, const Clock& clock);
  // Steps 1-2 of the rule: the policy file, then the transaction. Why not, or nothing.
  struct Written {
    std::optional<int64_t> drain_id;
    std::optional<EventRecord> event;  // the first event added
  };
  std::optional<Failure> make_durable(const Effects& effects, Written* written);
  void publish();  // strand held
  // Offline (strand held): the topology file's fabric routed with the state
  // (down links, drains) and adopted as the view; `origin` prefixes its name.
  Status route_offline(const std::string& origin);
  Status write_policy_file(const policies::Policy& policy);
  policies::Policy policy_in_force() const;  // strand held
  // After the view changed (strand held): recompute the SHARP jobs' trees.
  void sharp_follow_view();
  Result<routing::SharpAllocation> sharp_allocate(const JobRecord& job);
  // What is wrong with a job request on the current view, before the
  // allocator sees it: unknown hosts or CAs (kNotFound), a switch given as a
  // CA, rails the fabric does not have or none of the job's CAs is on, no CAs
  // (kInvalid). What the allocator still refuses then is the fabric's state
  // (capacity, broken links: kConflict).
  std::optional<Failure> check_job_request(const JobRequest& request) const;
  // The controller's own events beside a decision (SHARP): written at once,
  // a failure only counted.
  void record_event(Reporter source, const std::string& type, const nlohmann::json& body);
  // The plugin watch (plugin_events.cpp): what a decoded plugin event tells
  // it (identity, the fabric's changes, digests to compare), carried out
  // after the event's own decision: its events recorded, its verdicts as
  // FinishRequests, its commands sent, a new fabric copy routed.
  // `blocks_in_pass`: LFT blocks counted in the pass before this event.
  // `time`: the event's time (the plugin's clock).
  void watch_plugin_event(const protocol::EventBody& body, uint64_t blocks_in_pass, double time);
  void carry_out_watch(PluginWatch::Effects effects, uint64_t pass);
  void publish_watch();  // strand held: the watch's health and counters for readers
  // A perf-manager sample (port_errors, port_counters) into the telemetry;
  // an error burst is recorded as an event. `time`: the plugin's.
  void take_port_sample(const protocol::EventBody& body, const nlohmann::json& line, double time);
  // Reconcile at start (reconcile.cpp): requests left pending by the last
  // run are re-checked or failed with a reason.
  void reconcile_requests();
  // Retention (events and audit by age and count), at most every
  // limits.retention_interval_s.
  void apply_retention(double now);

  Constants k_;
  std::unique_ptr<Store> store_;

  std::mutex route_mu_;  // one routing change at a time (taken before strand_)
  BackgroundWorker routing_worker_;  // where it is routed: its own thread, at background priority
  mutable std::mutex strand_;  // decisions and their effects; guards state_, sender_, the fields below
  State state_;
  PluginSender sender_;
  PolicyBroadcaster broadcaster_;
  PluginLinkStatsSource link_stats_;  // guarded by strand_
  bool policy_file_ok_ = true;  // the last write of the policy file worked
  std::string policy_file_error_;
  double last_store_probe_ = 0;  // steady seconds
  double last_retention_ = 0;    // steady seconds
  uint64_t generation_counter_ = 0;

  std::atomic<std::shared_ptr<const Published>> published_;

  mutable std::mutex counters_mu_;  // a copy of state_.counters for readers
  Counters counters_;
  std::atomic<bool> plugin_connected_{false};
  std::atomic<bool> health_policy_ok_{true};
  mutable std::mutex health_mu_;
  std::string health_policy_error_;
  // The plugin's identity, fabric copy and the divergence check (strand
  // held); what readers see of it, under health_mu_.
  PluginWatch watch_;
  std::vector<std::string> watch_reasons_;
  nlohmann::json watch_status_;
  uint64_t watch_checks_ = 0, watch_divergences_ = 0, watch_resyncs_ = 0;

  std::mutex audit_mu_;  // refused requests' audit bound
  std::deque<double> refused_audit_times_;  // refused requests audited in the last minute
  uint64_t audits_suppressed_pending_ = 0;  // left out since the last summary record
  std::atomic<uint64_t> audits_suppressed_{0};
  std::atomic<uint64_t> audits_failed_{0};

  WriteGate write_gate_;  // set before start(); null: single-node

  Telemetry telemetry_;  // its own lock: fed by the plugin's counters, read by the API

  std::optional<routing::SharpAllocator> sharp_;  // strand held
  uint64_t sharp_version_ = 0;  // view version the allocator follows

  std::mutex ar_mu_;  // one AR computation at a time
  uint64_t ar_version_ = 0;
  std::shared_ptr<const routing::ArTables> ar_;
};

double unix_now();
double steady_now();  // seconds on the monotonic clock, for intervals

}  // namespace railyard::controller
