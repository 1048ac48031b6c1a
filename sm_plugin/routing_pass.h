// RoutingPass: what OpenSM's ucast_build_fwd_tables callback does, as named,
// timed stages:
//
//   policy refresh -> snapshot (osm_subn_t -> Fabric) -> plan (rails, policy)
//   -> route (routing::route_unicast) -> write (new_lft)
//
// Returns OpenSM's codes: 0 = tables written; -1 = refused (no switches, no
// LIDs, a subnet the model rejects, an internal error), so OpenSM tries the next
// engine of `routing_engine` and then minhop. Every refusal is logged with its
// reason. Runs under OpenSM's exclusive lock; nothing here blocks on anything
// but the CPU and one stat() of the policy file.
//
// Every pass, ok or refused, ends with a `routing_pass` event (when events are
// on), and a successful pass whose fabric changed hands the snapshot itself
// to the channel as a `fabric` event (shared, serialized off the lock). CAs
// that were in an earlier pass and are no longer in the subnet (their last-hop
// link went down, so OpenSM's sweep dropped them) are reported unreachable in
// the log and the event until they come back.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "policies/policy.h"
#include "routing/reroute.h"
#include "sm_plugin/event_channel.h"
#include "sm_plugin/events.h"
#include "sm_plugin/hop_matrices.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"
#include "sm_plugin/plugin_config.h"
#include "sm_plugin/policy_source.h"
#include "sm_plugin/request_book.h"

namespace railyard::sm_plugin {

class RoutingPass {
 public:
  // `events` may be null (events off); `requests` outlives the pass.
  RoutingPass(osm_opensm_t* osm, const PluginConfig& config, const OsmLogger& logger, RequestBook& requests)
      : osm_(osm), logger_(logger), policy_(config.policy_file), requests_(requests) {}

  // Set once, before OpenSM routes (create()).
  void set_events(EventChannel* events) { events_ = events; }

  // The callback body. May throw only std::bad_alloc and the like; the C
  // boundary in plugin.cpp catches everything.
  int run();

  // The build_lid_matrices callback body: 0 = the distances worked out
  // (and the rows written when OpenSM will dump them); 1 = not (logged),
  // OpenSM builds the matrices itself.
  int build_hop_matrices();
  // The mcast_build_stree callback body (mcast_tree.h), only after
  // build_hop_matrices returned 0: the plugin unsets the hook otherwise.
  ib_api_status_t build_mcast_tree(osm_mgrp_box_t& mbox);
  // After run() refused: if this pass's matrices were distances only, the
  // rows too (the distances reused), since OpenSM's multicast builder may
  // now read them (no fallback engine to build its own).
  void write_hop_rows_after_refusal();

  uint64_t passes() const { return passes_; }

  // Any thread: the next pass re-reads the policy file (`policy_changed`).
  void request_policy_reload() { reload_policy_.store(true); }

  // Any thread: the policy in force, re-read from its file when it changed
  // (always with `force`). The passes and the fast path read it through here,
  // so they share one "last good policy": a file that stops parsing keeps in
  // force the last policy either of them applied.
  struct PolicyRead {
    policies::Policy policy;
    std::string origin;             // PolicySource::origin()
    PolicySource::Refresh refresh;  // what this read found (logged by the caller)
    std::string error;              // the file's current error, until it loads again
  };
  PolicyRead read_policy(bool force);
  // Any thread: whether the last pass wrote the tables.
  bool last_ok() const { return last_ok_.load(); }
  // Any thread: the digests of the last pass's policy and tables (no
  // per-switch list), or of the fast path's last push; none after a refused
  // pass. For the ucast_routing_done that follows.
  std::optional<Digests> last_digests() const {
    std::lock_guard lock(digests_mu_);
    return last_digests_;
  }
  void set_last_digests(std::optional<Digests> d) {
    std::lock_guard lock(digests_mu_);
    last_digests_ = std::move(d);
  }

  // Any thread: `fabric` is what the plugin's tables are routed on now (a
  // pass's, or the fast path's after a command's push): sent to railyardd
  // (as changes from the last one it got) when it differs from the last one
  // shared, so that railyardd routes the same fabric before it compares the
  // digests that follow (docs/controller.md, "One routing, verified").
  void share_fabric(std::shared_ptr<const routing::Fabric> fabric);

  // The route of the last successful pass, for the fast path (fast_path.h)
  // to continue from incrementally (routing/reroute.h).
  struct Routed {
    std::shared_ptr<const routing::Fabric> fabric;
    routing::RoutingOptions options;
    routing::TrackedRouting tracked;
  };
  // Set once, before OpenSM routes: passes then route with
  // route_unicast_tracked and keep their route until it is taken.
  void keep_routed() { keep_routed_ = true; }
  // Any thread: the last successful pass's route, handed over once (null:
  // none since the last take).
  std::unique_ptr<Routed> take_routed() {
    std::lock_guard lock(routed_mu_);
    return std::move(routed_);
  }

 private:
  // The stages; fills `ev` as it goes. Returns run()'s code.
  int route(RoutingPassEvent& ev);
  int refuse(RoutingPassEvent& ev, std::string reason);
  // CAs of the previous fabric missing from `now`, merged into missing_cas_.
  void track_missing_cas(const routing::Fabric& now);

  osm_opensm_t* osm_;
  const OsmLogger& logger_;
  PolicySource policy_;
  // The last policy that planned on a live fabric: used when the current one
  // names nodes the fabric does not have (e.g. a drained switch that was removed).
  policies::Policy last_planned_;
  bool have_last_planned_ = false;
  uint64_t passes_ = 0;
  double hops_ms_ = -1;  // this pass's hop matrices; < 0 = built by OpenSM
  bool hop_rows_skipped_ = false;  // the last build succeeded with distances only
  HopMatrices hop_matrices_;  // its buffers and last switch graph, kept between passes
  RequestBook& requests_;
  EventChannel* events_ = nullptr;
  std::atomic<bool> reload_policy_{false};
  std::atomic<bool> last_ok_{false};
  std::mutex policy_mu_;      // guards policy_ and policy_error_ (read_policy)
  std::string policy_error_;  // the policy file's current error, until it loads again
  // The fabric of the last successful pass, and its digest (fabric events).
  std::shared_ptr<const routing::Fabric> last_fabric_;
  // The fingerprint of the last fabric shared with railyardd (share_fabric).
  std::mutex shared_mu_;
  bool shared_any_ = false;
  uint64_t shared_fingerprint_ = 0;
  // CAs seen in an earlier pass and absent now, by node GUID.
  std::map<uint64_t, UnreachableCa> missing_cas_;
  mutable std::mutex digests_mu_;
  std::optional<Digests> last_digests_;  // guarded by digests_mu_
  bool keep_routed_ = false;
  std::mutex routed_mu_;
  std::unique_ptr<Routed> routed_;  // guarded by routed_mu_
};

}  // namespace railyard::sm_plugin
