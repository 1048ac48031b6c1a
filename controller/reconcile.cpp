// What the controller puts right at start, and what it prunes as it runs.
//
// Reconcile: reroute requests the previous run left pending or queued (it
// stopped before the plugin answered) are not left pending forever. Live,
// they are sent again, as one policy_changed, once the plugin connects (the
// policy file written at start carries their changes) and finish with its
// answer like any other; if the plugin does not connect within
// limits.reroute_timeout_s they fail, saying so. Offline there is nobody to
// answer: the view was routed at start from the stored drains and link
// states, so they fail with that reason.
//
// Retention: events and audit records beyond the configured age or count
// (retention: in railyardd.yaml) are deleted at start and every hour.
#include "controller/controller.h"

namespace railyard::controller {

namespace {
constexpr double kRetentionIntervalS = 3600;
}

void Controller::reconcile_requests() {
  const double now = unix_now();
  for (RerouteRecord r : store_->unfinished_reroutes()) {
    if (k_.offline()) {
      store_->finish_reroute(r.id, RerouteStatus::kFailed, now,
                             "railyardd restarted before it was applied; the offline view was routed again at "
                             "start from the stored drains and link states");
      continue;
    }
    r.status = RerouteStatus::kQueued;
    r.detail = "railyardd restarted before the plugin answered; sent again once the plugin connects";
    store_->put_reroute(r);
    state_.requests.unanswered.push_back(r.id);
  }
  state_.requests.unanswered_since = steady_now();
}

void Controller::apply_retention(double steady) {
  if (last_retention_ != 0 && steady - last_retention_ < kRetentionIntervalS) return;
  last_retention_ = steady;
  const ControllerConfig& c = k_.config;
  try {
    (void)store_->prune(unix_now(), c.events_max_age_days * 86400.0, c.events_max_count,
                        c.audit_max_age_days * 86400.0, c.audit_max_count);
  } catch (const StoreError&) {
    // Tried again at the next interval; /health shows the database.
  }
}

}  // namespace railyard::controller
