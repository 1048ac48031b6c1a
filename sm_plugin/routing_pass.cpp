#include "sm_plugin/routing_pass.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/fabric_fingerprint.h"
#include "sm_plugin/hop_matrices.h"
#include "sm_plugin/elapsed.h"
#include "sm_plugin/mcast_tree.h"
#include "sm_plugin/subnet_snapshot.h"
#include "sm_plugin/table_writer.h"

namespace railyard::sm_plugin {

namespace {

// At most this many destinations are named per kind of issue; the counts are
// always complete.
constexpr size_t kIssuesLogged = 10;

}  // namespace

int RoutingPass::build_hop_matrices() {
  const auto t = Clock::now();
  // After the pass OpenSM reads the rows only for its multicast trees, which
  // the plugin builds itself from the distances (mcast_tree.h), and for the
  // dumps of OSM_LOG_ROUTING (opensm-lid-matrix.dump, opensm.fdbs): the rows
  // are written only when those will be.
  // (As osm_dump.c asks: the global level or the dump module's own.)
  const bool rows = osm_log_is_active_v2(&osm_->log, OSM_LOG_ROUTING, OSM_FILE_DUMP_C) != 0;
  auto stats = hop_matrices_.build(osm_->subn, rows);
  if (!stats) {
    hops_ms_ = -1;
    hop_rows_skipped_ = false;
    logger_.log(LogLevel::kError, "hop matrices not written (%s); OpenSM builds them", stats.error().message.c_str());
    return 1;
  }
  hops_ms_ = ms_since(t);
  hop_rows_skipped_ = !stats->rows_written;
  if (!stats->rows_written) {
    logger_.log(LogLevel::kVerbose,
                "hop matrices: %u switches, distances only in %.1f ms (cpu %.1f ms; distances %.1f ms%s, rows not "
                "written: no routing dump, multicast trees by railyard)",
                stats->switches, hops_ms_, stats->cpu_ms, stats->distances_ms, stats->distances_reused ? " reused" : "");
    return 0;
  }
  logger_.log(LogLevel::kVerbose,
              "hop matrices: %u switches, %llu entries in %.1f ms (cpu %.1f ms; distances %.1f ms%s, rows %.1f ms, "
              "%llu allocated, %u arrays prefaulted)",
              stats->switches, static_cast<unsigned long long>(stats->entries), hops_ms_, stats->cpu_ms,
              stats->distances_ms, stats->distances_reused ? " reused" : "", stats->rows_ms,
              static_cast<unsigned long long>(stats->rows_allocated), stats->arrays_prefaulted);
  return 0;
}

void RoutingPass::write_hop_rows_after_refusal() {
  if (!hop_rows_skipped_) return;
  auto stats = hop_matrices_.build(osm_->subn, /*rows=*/true);
  if (!stats) {
    hop_rows_skipped_ = false;  // OpenSM's next builder writes them
    logger_.log(LogLevel::kError, "hop rows not written after the refused pass (%s)", stats.error().message.c_str());
    return;
  }
  hop_rows_skipped_ = false;
  logger_.log(LogLevel::kVerbose, "hop matrices: rows written after the refused pass (%llu entries, %.1f ms)",
              static_cast<unsigned long long>(stats->entries), stats->rows_ms);
}

ib_api_status_t RoutingPass::build_mcast_tree(osm_mgrp_box_t& mbox) {
  const auto t = Clock::now();
  McastTreeStats stats;
  const ib_api_status_t status = sm_plugin::build_mcast_tree(osm_->sm, mbox, hop_matrices_, logger_, &stats);
  logger_.log(LogLevel::kVerbose,
              "multicast MLID 0x%X: %u member ports, tree of %u switches (depth %u) from root 0x%016llx in %.2f ms%s",
              mbox.mlid, stats.members, stats.switches, stats.depth, static_cast<unsigned long long>(stats.root_guid),
              ms_since(t), stats.unrouted != 0 ? ", some members unreachable (logged)" : "");
  return status;
}

RoutingPass::PolicyRead RoutingPass::read_policy(bool force) {
  std::lock_guard lock(policy_mu_);
  if (force) policy_.invalidate();
  PolicyRead read;
  read.refresh = policy_.refresh();
  if (read.refresh.kind == PolicySource::Refresh::Kind::kError) {
    policy_error_ = read.refresh.message;
  } else if (read.refresh.kind == PolicySource::Refresh::Kind::kLoaded) {
    policy_error_.clear();
  }
  read.policy = policy_.policy();
  read.origin = policy_.origin();
  read.error = policy_error_;
  return read;
}

int RoutingPass::run() {
  ++passes_;
  RoutingPassEvent ev;
  ev.pass = passes_;
  ev.requests = requests_.start_pass();
  ev.policy_file = policy_.path();
  int rc = -1;
  try {
    rc = route(ev);
  } catch (...) {
    // The C boundary logs the exception; the controller still hears of the pass.
    last_ok_.store(false);
    set_last_digests(std::nullopt);
    if (events_) {
      ev.ok = false;
      try {
        throw;
      } catch (const std::exception& e) {
        ev.reason = std::string("internal error: ") + e.what();
      } catch (...) {
        ev.reason = "internal error";
      }
      events_->push(std::move(ev));
    }
    throw;
  }
  last_ok_.store(rc == 0);
  if (rc != 0) set_last_digests(std::nullopt);
  if (events_) events_->push(std::move(ev));
  return rc;
}

int RoutingPass::refuse(RoutingPassEvent& ev, std::string reason) {
  logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: %s", static_cast<unsigned long long>(passes_),
              reason.c_str());
  ev.ok = false;
  ev.reason = std::move(reason);
  return -1;
}

void RoutingPass::share_fabric(std::shared_ptr<const routing::Fabric> fabric) {
  if (!events_ || !fabric) return;
  const uint64_t fingerprint = routing::fabric_fingerprint(*fabric);
  std::lock_guard lock(shared_mu_);
  if (shared_any_ && fingerprint == shared_fingerprint_) return;
  // Pushed under the lock: two threads' fabrics reach the channel in the
  // order their fingerprints were recorded.
  events_->push_fabric(passes_, std::move(fabric));
  shared_any_ = true;
  shared_fingerprint_ = fingerprint;
}

void RoutingPass::track_missing_cas(const routing::Fabric& now) {
  for (auto it = missing_cas_.begin(); it != missing_cas_.end();) {
    it = now.find_node_guid(Guid{it->first}).valid() ? missing_cas_.erase(it) : std::next(it);
  }
  if (!last_fabric_) return;
  const routing::Fabric& before = *last_fabric_;
  for (NodeId ca : before.cas()) {
    const Guid guid = before.node(ca).guid;
    if (now.find_node_guid(guid).valid()) continue;
    const PortId port = before.primary_port(ca);
    missing_cas_.emplace(guid.value, UnreachableCa{guid.value, std::string(before.desc(ca)),
                                                   port.valid() ? before.port(port).lid.value : uint16_t{0}, "gone"});
  }
}

int RoutingPass::route(RoutingPassEvent& ev) {
  const double hops_ms = hops_ms_;
  hops_ms_ = -1;  // consumed: the next pass reports its own
  ev.hops_ms = hops_ms;
  const auto t_total = Clock::now();

  // Stage 0: the policy in force (re-read when its file changed, or when the
  // controller said it did).
  auto t = Clock::now();
  const PolicyRead in_force = read_policy(reload_policy_.exchange(false));
  const auto& refresh = in_force.refresh;
  if (refresh.kind == PolicySource::Refresh::Kind::kError) {
    logger_.log(LogLevel::kError, "policy error: %s", refresh.message.c_str());
  } else if (refresh.kind == PolicySource::Refresh::Kind::kLoaded) {
    logger_.log(LogLevel::kInfo, "%s", refresh.message.c_str());
  }
  ev.policy_error = in_force.error;
  ev.stage_ms.policy = ms_since(t);

  // Stage 1: snapshot.
  t = Clock::now();
  auto snap = take_snapshot(osm_->subn);
  const double snapshot_ms = ms_since(t);
  ev.stage_ms.snapshot = snapshot_ms;
  if (!snap) return refuse(ev, "subnet not usable: " + snap.error().message);
  const routing::Fabric& fabric = snap->fabric;
  ev.switches = static_cast<uint32_t>(fabric.switches().size());
  if (fabric.switches().empty()) return refuse(ev, "no switches in the subnet");
  if (!fabric.has_lids()) return refuse(ev, "no LIDs assigned in the subnet");

  // Stage 2: plan (rails and levels, policy resolved against this fabric).
  t = Clock::now();
  // Candidates in order: the policy in force, the last one that applied to a
  // live fabric, the default. A policy can stop applying when the fabric
  // changes under it (a drained switch removed); routing then continues with
  // the closest policy that still applies, and says so.
  struct Candidate {
    const policies::Policy* policy;
    std::string origin;  // for the pass summary
    std::string label;   // for error lines
  };
  const policies::Policy default_policy;
  std::vector<Candidate> candidates{{&in_force.policy, in_force.origin,
                                     in_force.origin == "default" ? "the default policy"
                                                                  : "policy " + in_force.origin}};
  if (have_last_planned_ && last_planned_ != in_force.policy) {
    candidates.push_back({&last_planned_, "last policy that applied", "the last policy that applied"});
  }
  if (in_force.policy != default_policy && (!have_last_planned_ || last_planned_ != default_policy)) {
    candidates.push_back({&default_policy, "default", "the default policy"});
  }
  routing::RailMap rails;
  Result<routing::RoutingOptions> options = Error{"no policy"};
  std::string policy_origin;
  uint64_t planned_digest = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    rails = routing::map_rails(fabric, candidates[i].policy->rails);
    options = routing::plan_routing(fabric, *candidates[i].policy, rails);
    if (options) {
      policy_origin = candidates[i].origin;
      planned_digest = routing::policy_digest(*candidates[i].policy);
      if (i == 0) {
        last_planned_ = in_force.policy;
        have_last_planned_ = true;
      }
      break;
    }
    const std::string next = i + 1 < candidates.size() ? "; trying " + candidates[i + 1].label : "";
    logger_.log(LogLevel::kError, "%s does not apply to this fabric: %s%s", candidates[i].label.c_str(),
                options.error().message.c_str(), next.c_str());
  }
  ev.policy = policy_origin;
  ev.stage_ms.plan = ms_since(t);
  if (!options) return refuse(ev, "no policy applies to this fabric");
  const double plan_ms = ev.stage_ms.plan;

  // Stage 3: route.
  // With a fast path, the memo of an incremental reroute is kept too.
  t = Clock::now();
  std::optional<routing::TrackedRouting> tracked;
  Result<routing::RoutingResult> plain = Error{"not routed"};
  const routing::RoutingResult* result = nullptr;
  if (keep_routed_) {
    auto routed = routing::route_unicast_tracked(fabric, *options);
    if (!routed) return refuse(ev, "routing failed: " + routed.error().message);
    tracked = std::move(routed).value();
    result = &tracked->result;
  } else {
    plain = routing::route_unicast(fabric, *options);
    if (!plain) return refuse(ev, "routing failed: " + plain.error().message);
    result = &plain.value();
  }
  const double route_ms = ms_since(t);
  ev.stage_ms.route = route_ms;

  // Stage 4: write new_lft.
  t = Clock::now();
  auto written = write_tables(*snap, result->tables);
  const double write_ms = ms_since(t);
  ev.stage_ms.write = write_ms;
  if (!written) return refuse(ev, "writing tables failed: " + written.error().message);

  // What the switches will hold, for the controller to compare with its own
  // route (docs/plugin_protocol.md, "Digests").
  Digests digests;
  digests.policy = planned_digest;
  digests.switches = std::move(written->digests);
  digests.lfts = routing::total_lft_digest(digests.switches);
  set_last_digests(Digests{digests.policy, digests.lfts, {}});
  ev.digests = std::move(digests);

  const auto& r = result->report;
  ev.ok = true;
  ev.ca_ports = r.ca_ports;
  ev.lids = r.lids_routed;
  ev.changed_blocks = written->changed_blocks;
  ev.switches_changed = written->switches_changed;
  ev.unreachable_pairs = r.unreachable_pairs;
  ev.drained_pairs = r.drained_pairs;
  logger_.log(LogLevel::kInfo,
              "pass %llu: engine railyard routed %zu switches, %u CA ports, %u LIDs, %zu links (%u down); "
              "policy %s; ranking %s, %u levels, %u roots",
              static_cast<unsigned long long>(passes_), fabric.switches().size(), r.ca_ports, r.lids_routed,
              fabric.num_links(), snap->down_links, policy_origin.c_str(),
              std::string(routing::to_string(r.ranking)).c_str(), r.levels, r.roots);
  logger_.log(LogLevel::kInfo,
              "pass %llu: unreachable CA pairs %llu, pairs through drained links %llu, changed LFT blocks %llu "
              "on %u of %u switches",
              static_cast<unsigned long long>(passes_), static_cast<unsigned long long>(r.unreachable_pairs),
              static_cast<unsigned long long>(r.drained_pairs),
              static_cast<unsigned long long>(written->changed_blocks), written->switches_changed,
              written->switches);
  char hops[48];
  if (hops_ms >= 0) {
    std::snprintf(hops, sizeof hops, "hop matrices %.1f ms, ", hops_ms);
  } else {
    std::snprintf(hops, sizeof hops, "hop matrices by OpenSM, ");
  }
  ev.total_ms = ms_since(t_total) + std::max(hops_ms, 0.0);
  logger_.log(LogLevel::kInfo,
              "pass %llu: time %ssnapshot %.1f ms, plan %.1f ms, route %.1f ms, write %.1f ms, total %.1f ms",
              static_cast<unsigned long long>(passes_), hops, snapshot_ms, plan_ms, route_ms, write_ms,
              ev.total_ms);

  const LogLevel issue_level = r.unreachable_pairs ? LogLevel::kInfo : LogLevel::kVerbose;
  for (size_t i = 0; i < r.unreachable.size() && i < kIssuesLogged; ++i) {
    const auto& u = r.unreachable[i];
    logger_.log(issue_level, "unreachable: LID %u (%s) from %u CA ports, e.g. %s", u.lid.value,
                std::string(fabric.desc(u.dest)).c_str(), u.sources,
                u.example_source.valid() ? std::string(fabric.desc(u.example_source)).c_str() : "-");
  }
  // CAs that were routed before and have left the subnet: a CA whose only
  // link went down is dropped by OpenSM's sweep, so no route can name it; it
  // is unreachable until it comes back.
  track_missing_cas(fabric);
  size_t logged = 0;
  for (const auto& [guid, ca] : missing_cas_) {
    if (logged++ == kIssuesLogged) break;
    logger_.log(LogLevel::kInfo, "pass %llu: CA unreachable: %s (GUID 0x%016llx, LID %u): no longer in the subnet",
                static_cast<unsigned long long>(passes_), ca.name.c_str(), static_cast<unsigned long long>(guid),
                ca.lid);
  }
  if (missing_cas_.size() > kIssuesLogged) {
    logger_.log(LogLevel::kInfo, "pass %llu: %zu CAs unreachable in all (no longer in the subnet)",
                static_cast<unsigned long long>(passes_), missing_cas_.size());
  }
  if (events_) {
    for (const auto& [guid, ca] : missing_cas_) ev.unreachable_cas.push_back(ca);
    for (const auto& u : r.unreachable) {
      const routing::Node& n = fabric.node(u.dest);
      ev.unreachable_cas.push_back(
          UnreachableCa{n.guid.value, std::string(fabric.desc(u.dest)), u.lid.value, "no route", u.sources});
    }
  }
  for (size_t i = 0; i < r.through_drained.size() && i < kIssuesLogged; ++i) {
    const auto& u = r.through_drained[i];
    logger_.log(LogLevel::kVerbose, "through drained links: LID %u (%s) from %u CA ports, e.g. %s", u.lid.value,
                std::string(fabric.desc(u.dest)).c_str(), u.sources,
                u.example_source.valid() ? std::string(fabric.desc(u.example_source)).c_str() : "-");
  }
  if (logger_.enabled(LogLevel::kVerbose)) {
    for (const auto& m : rails.misfits) {
      logger_.log(LogLevel::kVerbose, "rails: %s", m.detail.c_str());
    }
  }

  // The fabric is no longer needed here: it becomes the shared snapshot the
  // channel serializes (only when it changed) and the next pass compares with.
  auto shared = std::make_shared<const routing::Fabric>(std::move(snap->fabric));
  share_fabric(shared);
  if (tracked) {
    auto routed = std::make_unique<Routed>();
    routed->fabric = shared;
    routed->options = std::move(*options);
    routed->tracked = std::move(*tracked);
    std::lock_guard lock(routed_mu_);
    routed_ = std::move(routed);
  }
  last_fabric_ = std::move(shared);
  return 0;
}

}  // namespace railyard::sm_plugin
