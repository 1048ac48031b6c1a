// Reroute requests: created with a change, sent to the plugin after the
// change is durable, followed to applied | failed (plugin events, timeouts),
// and rate-limited as one stream whatever asked for them (controller.h).
#include <algorithm>
#include <cstdio>

#include "controller/controller.h"
#include "protocol/command_codec.h"

namespace railyard::controller {

std::string Controller::next_request_id() {
  char buf[48];
  std::snprintf(buf, sizeof buf, "r%lld-%llu", static_cast<long long>(unix_now() * 1000),
                static_cast<unsigned long long>(++request_counter_));
  return buf;
}

bool Controller::take_reroute_slot(double now) {
  while (!reroute_times_.empty() && now - reroute_times_.front() >= 60.0) reroute_times_.pop_front();
  if (reroute_times_.size() >= config_.reroutes_per_minute) return false;
  reroute_times_.push_back(now);
  return true;
}

RerouteRecord Controller::new_reroute(const Actor& actor, const std::string& reason, double route_ms) {
  RerouteRecord r;
  r.id = next_request_id();
  r.requested_at = unix_now();
  r.requested_by = actor.name;
  r.reason = reason;
  if (config_.fabric_source == FabricSource::kOffline) {
    // The caller re-routed the view: applied as soon as it is committed.
    r.status = RerouteStatus::kApplied;
    r.finished_at = r.requested_at;
    r.latency_ms = route_ms;
    r.detail = "offline fabric re-routed";
  } else if (take_reroute_slot(steady_now())) {
    r.status = RerouteStatus::kPending;
  } else {
    r.status = RerouteStatus::kQueued;
    r.detail = "waiting for the rate limit (" + std::to_string(config_.reroutes_per_minute) +
               " reroutes a minute); sent with the changes queued with it";
  }
  return r;
}

void Controller::send_reroute(RerouteRecord& r, bool policy_changed) {
  ++counters_.reroutes_requested;
  if (r.status == RerouteStatus::kApplied) {
    ++counters_.reroutes_applied;
    counters_.reroute_latency_ms.push_back(r.latency_ms.value_or(0));
    if (counters_.reroute_latency_ms.size() > 1000) counters_.reroute_latency_ms.erase(counters_.reroute_latency_ms.begin());
    return;
  }
  if (r.status == RerouteStatus::kQueued) {
    ++counters_.reroutes_coalesced;
    queued_.push_back(r.id);
    return;
  }
  const protocol::Command command{
      policy_changed ? protocol::CommandKind::kPolicyChanged : protocol::CommandKind::kReroute, r.id};
  // Followed from here either way: a failed send fails it now, and if even
  // that cannot be stored, the timeout fails it later.
  pending_[r.id] = steady_now();
  if (sender_ && sender_(protocol::encode_command(command))) return;
  try {
    finish_request(r.id, false, "plugin not connected: the policy file is written and applies at OpenSM's next sweep",
                   unix_now());
    r.status = RerouteStatus::kFailed;
    r.detail = "plugin not connected: the policy file is written and applies at OpenSM's next sweep";
    r.finished_at = unix_now();
  } catch (const StoreError&) {
  }
}

RerouteOutcome Controller::reroute(const Actor& actor, const std::string& reason) {
  std::lock_guard lock(mu_);
  const double now = steady_now();
  if (!take_reroute_slot(now)) {
    ++counters_.reroutes_rate_limited;
    return refused<RerouteOutcome>(Failure::rate_limited(
        "at most " + std::to_string(config_.reroutes_per_minute) +
            " reroutes a minute (drains, undrains and link events count too)",
        std::max(1.0, 60.0 - (now - reroute_times_.front()))));
  }
  std::shared_ptr<const FabricView> next;
  if (config_.fabric_source == FabricSource::kOffline && view_) {
    Result<std::shared_ptr<const FabricView>> v =
        build_view(view_->fabric, view_->policy, view_->origin, next_version_++);
    if (!v) return refused<RerouteOutcome>(Failure::internal(v.error().message));
    next = *v;
  }
  RerouteRecord r = new_reroute(actor, reason.empty() ? "requested" : reason, next ? next->route_ms : 0);
  if (r.status == RerouteStatus::kQueued) r.status = RerouteStatus::kPending;  // the slot was taken above
  RerouteOutcome out;
  const std::string done = "reroute requested";
  if (std::optional<Failure> failed = commit_change(actor, "reroute", nullptr, done, &r, [] {})) {
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  out.audited = true;
  if (next) set_view(next);
  send_reroute(r, false);
  out.reroute = r;
  return out;
}

void Controller::finish_request(const std::string& id, bool applied, const std::string& detail, double now) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  const double latency_ms = (steady_now() - it->second) * 1000.0;
  std::vector<std::string> ids = {id};
  if (auto c = coalesced_.find(id); c != coalesced_.end()) {
    ids.insert(ids.end(), c->second.begin(), c->second.end());
  }
  for (const std::string& one : ids) {
    std::optional<RerouteRecord> r = store_->reroute(one);
    if (!r) continue;
    r->status = applied ? RerouteStatus::kApplied : RerouteStatus::kFailed;
    r->finished_at = now;
    r->detail = one == id ? detail : detail + " (carried by " + id + ")";
    if (applied) r->latency_ms = (now - r->requested_at) * 1000.0;
    store_->put_reroute(*r);  // throws on a full disk: pending_ keeps it, the timeout retries
  }
  pending_.erase(id);
  coalesced_.erase(id);
  if (applied) {
    ++counters_.reroutes_applied;
    counters_.reroute_latency_ms.push_back(latency_ms);
    if (counters_.reroute_latency_ms.size() > 1000) counters_.reroute_latency_ms.erase(counters_.reroute_latency_ms.begin());
  } else {
    ++counters_.reroutes_failed;
  }
}

void Controller::tick(double now) {
  std::vector<int64_t> expired;
  for (const DrainRecord& d : store_->active_drains()) {
    if (d.expires_at && *d.expires_at <= now) expired.push_back(d.id);
  }
  for (int64_t id : expired) {
    Actor system{"controller", Role::kOperator, "expire drain " + std::to_string(id), ""};
    DrainOutcome o = undrain(id, system, false);
    if (!o.audited) {
      audit_refused(system, 0,
                    o.failure ? std::string(to_string(o.failure->kind)) + ": " + o.failure->message : o.message);
    }
  }
  std::lock_guard lock(mu_);
  // Recovery: once the disk has room again (or is writable again), health
  // says so and the policy file is brought in line with the store.
  // Probed every tick while failing, every 10 s while healthy, so that a
  // database gone read-only shows in /health before a mutation trips on it.
  const double probe_at = steady_now();
  if (!store_->writable() || probe_at - last_store_probe_ >= 10.0) {
    last_store_probe_ = probe_at;
    (void)store_->probe_write();
  }
  if (!policy_file_ok_) {
    (void)write_policy_file(view_ ? view_->policy : effective_policy(store_->active_drains()));
  }
  // Changes whose reroute waited for the rate limit go out as one.
  if (!queued_.empty() && take_reroute_slot(steady_now())) {
    const std::string carrier = queued_.back();
    std::vector<std::string> others(queued_.begin(), queued_.end() - 1);
    queued_.clear();
    coalesced_[carrier] = others;
    const std::string line = protocol::encode_command({protocol::CommandKind::kPolicyChanged, carrier});
    pending_[carrier] = steady_now();
    if (!sender_ || !sender_(line)) {
      try {
        finish_request(carrier, false, "plugin not connected: the policy file applies at OpenSM's next sweep", now);
      } catch (const StoreError&) {
      }
    }
  }
  const double steady = steady_now();
  std::vector<std::string> overdue;
  for (const auto& [id, at] : pending_) {
    if (steady - at > config_.reroute_timeout_s) overdue.push_back(id);
  }
  for (const std::string& id : overdue) {
    finish_request(id, false, "no routing pass within " + std::to_string(config_.reroute_timeout_s) + " s", now);
  }
}

}  // namespace railyard::controller
