#include "sm_plugin/routing_pass.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "sm_plugin/hop_matrices.h"
#include "sm_plugin/subnet_snapshot.h"
#include "sm_plugin/table_writer.h"

namespace railyard::sm_plugin {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// At most this many destinations are named per kind of issue; the counts are
// always complete.
constexpr size_t kIssuesLogged = 10;

}  // namespace

int RoutingPass::build_hop_matrices() {
  const auto t = Clock::now();
  auto stats = sm_plugin::build_hop_matrices(osm_->subn);
  if (!stats) {
    hops_ms_ = -1;
    logger_.log(LogLevel::kError, "hop matrices not written (%s); OpenSM builds them", stats.error().message.c_str());
    return 1;
  }
  hops_ms_ = ms_since(t);
  logger_.log(LogLevel::kVerbose, "hop matrices: %u switches, %llu entries in %.1f ms", stats->switches,
              static_cast<unsigned long long>(stats->entries), hops_ms_);
  return 0;
}

int RoutingPass::run() {
  ++passes_;
  const double hops_ms = hops_ms_;
  hops_ms_ = -1;  // consumed: the next pass reports its own
  const auto t_total = Clock::now();

  // Stage 0: the policy in force (re-read when its file changed).
  auto refresh = policy_.refresh();
  if (refresh.kind == PolicySource::Refresh::Kind::kError) {
    logger_.log(LogLevel::kError, "policy error: %s", refresh.message.c_str());
  } else if (refresh.kind == PolicySource::Refresh::Kind::kLoaded) {
    logger_.log(LogLevel::kInfo, "%s", refresh.message.c_str());
  }

  // Stage 1: snapshot.
  auto t = Clock::now();
  auto snap = take_snapshot(osm_->subn);
  const double snapshot_ms = ms_since(t);
  if (!snap) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: subnet not usable: %s",
                static_cast<unsigned long long>(passes_), snap.error().message.c_str());
    return -1;
  }
  const routing::Fabric& fabric = snap->fabric;
  if (fabric.switches().empty()) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: no switches in the subnet",
                static_cast<unsigned long long>(passes_));
    return -1;
  }
  if (!fabric.has_lids()) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: no LIDs assigned in the subnet",
                static_cast<unsigned long long>(passes_));
    return -1;
  }

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
  std::vector<Candidate> candidates{{&policy_.policy(), policy_.origin(),
                                     policy_.origin() == "default" ? "the default policy"
                                                                   : "policy " + policy_.origin()}};
  if (have_last_planned_ && last_planned_ != policy_.policy()) {
    candidates.push_back({&last_planned_, "last policy that applied", "the last policy that applied"});
  }
  if (policy_.policy() != default_policy && (!have_last_planned_ || last_planned_ != default_policy)) {
    candidates.push_back({&default_policy, "default", "the default policy"});
  }
  routing::RailMap rails;
  Result<routing::RoutingOptions> options = Error{"no policy"};
  std::string policy_origin;
  for (size_t i = 0; i < candidates.size(); ++i) {
    rails = routing::map_rails(fabric, candidates[i].policy->rails);
    options = routing::plan_routing(fabric, *candidates[i].policy, rails);
    if (options) {
      policy_origin = candidates[i].origin;
      if (i == 0) {
        last_planned_ = policy_.policy();
        have_last_planned_ = true;
      }
      break;
    }
    const std::string next = i + 1 < candidates.size() ? "; trying " + candidates[i + 1].label : "";
    logger_.log(LogLevel::kError, "%s does not apply to this fabric: %s%s", candidates[i].label.c_str(),
                options.error().message.c_str(), next.c_str());
  }
  if (!options) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: no policy applies to this fabric",
                static_cast<unsigned long long>(passes_));
    return -1;
  }
  const double plan_ms = ms_since(t);

  // Stage 3: route.
  t = Clock::now();
  auto result = routing::route_unicast(fabric, *options);
  const double route_ms = ms_since(t);
  if (!result) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: routing failed: %s",
                static_cast<unsigned long long>(passes_), result.error().message.c_str());
    return -1;
  }

  // Stage 4: write new_lft.
  t = Clock::now();
  auto written = write_tables(*snap, result->tables);
  const double write_ms = ms_since(t);
  if (!written) {
    logger_.log(LogLevel::kError, "pass %llu refused, OpenSM falls back: writing tables failed: %s",
                static_cast<unsigned long long>(passes_), written.error().message.c_str());
    return -1;
  }

  const auto& r = result->report;
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
  logger_.log(LogLevel::kInfo,
              "pass %llu: time %ssnapshot %.1f ms, plan %.1f ms, route %.1f ms, write %.1f ms, total %.1f ms",
              static_cast<unsigned long long>(passes_), hops, snapshot_ms, plan_ms, route_ms, write_ms,
              ms_since(t_total) + std::max(hops_ms, 0.0));

  const LogLevel issue_level = r.unreachable_pairs ? LogLevel::kInfo : LogLevel::kVerbose;
  for (size_t i = 0; i < r.unreachable.size() && i < kIssuesLogged; ++i) {
    const auto& u = r.unreachable[i];
    logger_.log(issue_level, "unreachable: LID %u (%s) from %u CA ports, e.g. %s", u.lid.value,
                std::string(fabric.desc(u.dest)).c_str(), u.sources,
                u.example_source.valid() ? std::string(fabric.desc(u.example_source)).c_str() : "-");
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
  return 0;
}

}  // namespace railyard::sm_plugin
