// decide(): the heart of the controller. Every change is a Command decided
// against the State into the next State and the Effects that make it real:
//
//   decide(State, Command) -> Decision {State', Effects, Reply}
//
// decide() is pure: no store, no file, no socket, no clock (the command
// carries the time). What it needs routed (a what-if drain, a link event, a
// plugin snapshot) it asks for first: a Decision holding a RoutingJob means
// "route this (off the strand) and decide again with the result"; a result
// routed at another State::version is stale and asked for again, so a
// decision never commits a routing made from a state that is gone.
//
// Controller (controller.h) is the driver: it decides on one strand, routes
// off it, and carries the effects out (executor.cpp) under one rule: nothing
// is acknowledged before everything is durable, and what failed is rolled
// back (State' is adopted only once the effects are).
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "controller/config.h"
#include "controller/fabric_view.h"
#include "controller/histogram.h"
#include "controller/failure.h"
#include "controller/states.h"
#include "controller/store.h"
#include "api/protocol/plugin_commands.h"
#include "api/protocol/event_codec.h"
#include "routing/route_diff.h"

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
  Histogram reroute_seconds{kLatencyBucketsSeconds};  // applied: request to LFTs in place
};

// Reroute requests sent to the plugin and followed to applied | failed, and
// the one rate window they share (limits.reroutes_per_minute).
struct RequestBook {
  std::map<std::string, double> pending;  // request id -> sent at (steady seconds)
  std::deque<double> sent_times;          // reroutes sent in the last minute (steady seconds)
  std::vector<std::string> queued;        // requests waiting for the rate limit
  std::map<std::string, std::vector<std::string>> coalesced;  // sent id -> queued ids it carries
  uint64_t counter = 0;                   // for request ids
  // Left unanswered by the previous run (reconcile.cpp): sent again, as one,
  // once the plugin connects; failed if it does not within reroute_timeout_s.
  std::vector<std::string> unanswered;
  double unanswered_since = 0;  // steady seconds
};

// Everything a decision reads, and nothing else.
struct State {
  std::shared_ptr<const FabricView> view;   // null: live, before the plugin's first snapshot
  std::vector<DrainRecord> drains;          // active, by id
  std::vector<LinkStateRecord> link_states; // the last state of each link
  RequestBook requests;
  Counters counters;
  bool plugin_connected = false;
  uint64_t last_plugin_seq = 0;  // this connection's
  uint64_t lft_changes_in_pass = 0;
  // +1 with every change of what routing reads (view, drains, link states):
  // a routing started at another version is stale.
  uint64_t version = 1;
  uint64_t next_view_version = 1;
};

// What decisions read and nothing changes after start.
struct Constants {
  ControllerConfig config;
  policies::Policy base_policy;
  std::shared_ptr<const routing::Fabric> offline_fabric;  // offline: as read (with LIDs); live: null
  bool offline() const { return config.fabric_source == FabricSource::kOffline; }
};

// Routing a decision waits for: `fabric` (with `down` links taken out) under
// `policy`, compared with `base` (the view in force, may be null).
struct RoutingJob {
  uint64_t at_version = 0;    // State::version it was made from
  uint64_t view_version = 0;  // the version the routed view gets (State::next_view_version)
  std::shared_ptr<const FabricView> base;
  std::shared_ptr<const routing::Fabric> fabric;
  std::vector<std::string> down;
  policies::Policy policy;
  std::string origin;
  bool diff = true;  // compare the tables with base's (the impact's diff)
};

struct Routed {
  uint64_t at_version = 0;
  std::shared_ptr<const FabricView> view;  // null when routing failed
  std::string error;
  DrainImpact impact;  // vs the job's base
};

// Off the strand: routes the job and measures its impact. Never throws.
Routed run_routing(const RoutingJob& job);

// ---- Commands ---------------------------------------------------------------

struct DrainCommand {
  DrainRequest request;
  Actor actor;
  bool dry_run = false;
  bool force = false;
};
struct UndrainCommand {
  int64_t id = 0;
  Actor actor;
  bool dry_run = false;
};
struct LinkEventCommand {
  LinkEventRequest request;
  Actor actor;
  bool force = false;
  std::optional<EventRecord> known;  // the store's event with this id, looked up on the strand
};
struct RerouteCommand {
  Actor actor;
  std::string reason;
};
// Reroute requests finished: by the plugin's answer, its disconnection, a failed send.
struct FinishRequests {
  std::vector<std::string> ids;
  bool applied = false;
  std::string detail;
};
// One line from the plugin, parsed and decoded off the strand
// (plugin_events.cpp): its sequence number counts for drops whatever it is;
// a fabric snapshot's routing is a SnapshotCommand decided after it.
struct PluginEventCommand {
  std::optional<protocol::Envelope> envelope;  // null: not a JSON object with type and seq
  std::optional<protocol::EventBody> body;     // null: did not decode (error says why)
  bool unknown_type = false;                   // a newer plugin's event type
  std::string error;
  size_t bytes = 0;
  nlohmann::json line;  // as received, stored as is
};
struct SnapshotCommand {
  std::shared_ptr<const routing::Fabric> fabric;
  uint64_t pass = 0;
};
struct ConnectionCommand {
  bool connected = false;
};
// Once a second: queued reroutes go out when the rate allows, overdue ones fail.
struct TimerCommand {};

using Command = std::variant<DrainCommand, UndrainCommand, LinkEventCommand, RerouteCommand, FinishRequests,
                             PluginEventCommand, SnapshotCommand, ConnectionCommand, TimerCommand>;

// ---- Effects ----------------------------------------------------------------

struct AddDrain { DrainRecord drain; };  // the store gives it its id
struct RemoveDrain { int64_t id = 0; std::string by; double at = 0; };
struct AddEvent { EventRecord event; };
struct AddLinkState { LinkStateRecord state; };
struct PutReroute { RerouteRecord reroute; };
struct FinishReroute { std::string id; RerouteStatus status; double at = 0; std::string detail; };
struct PutJob { JobRecord job; };
using StoreWrite = std::variant<AddDrain, RemoveDrain, AddEvent, AddLinkState, PutReroute, FinishReroute, PutJob>;

struct Effects {
  std::optional<policies::Policy> policy_file;  // 1. written first (atomic, synced)
  std::vector<StoreWrite> writes;               // 2. one transaction with
  std::optional<AuditRecord> audit;             //    the audit record
  bool publish = false;                         // 3. the new view/drains/link states to readers
  std::vector<protocol::Command> plugin;        // 4. then told to the plugin (a failed send fails the request)
  bool durable() const { return policy_file || !writes.empty() || audit; }
};

using Reply = std::variant<std::monostate, DrainOutcome, RerouteOutcome, LinkEventOutcome>;

struct Decision {
  std::optional<RoutingJob> route;  // set: route this, then decide again with the result
  State next;                       // the state once the effects are carried out
  Effects effects;
  Reply reply;
};

// The times a command is decided at.
struct Clock {
  double now = 0;     // Unix seconds
  double steady = 0;  // monotonic seconds
};

Decision decide(const Constants& k, const State& state, const Command& command, const Clock& clock,
                const Routed* routed = nullptr);

// ---- Helpers decide() is made of (pure; also for tests) ---------------------

// Base policy + drains + links monitoring reported down; references that do
// not resolve in `fabric` (when given) are left out.
policies::Policy effective_policy(const Constants& k, const std::vector<DrainRecord>& drains,
                                  const std::vector<LinkStateRecord>& states, const routing::Fabric* fabric);
std::vector<std::string> down_links(const std::vector<LinkStateRecord>& states);
// The drain's target key ("0x<guid>[port]", "0x<guid>"); *label names it for people.
Expected<std::string> canonical_target(const routing::Fabric& fabric, const DrainRequest& request, std::string* label);
// The audit record of a change made by `actor`.
AuditRecord audit_of(const Actor& actor, const std::string& fallback_action, const std::string& done, double now);

}  // namespace railyard::controller
