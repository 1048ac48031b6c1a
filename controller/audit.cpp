// The audit log's refused requests. Changes are audited in their own
// transaction (changes.cpp); what is refused is audited here, bounded: an
// unauthenticated client must not be able to make the daemon fsync a row per
// request as fast as it can send them.
#include "controller/controller.h"

namespace railyard::controller {

void Controller::audit_refused(const Actor& actor, int reply_code, const std::string& result) {
  // A member that is not the leader writes nothing (its refusals name the leader).
  if (write_refusal()) return;
  std::lock_guard lock(audit_mu_);
  const double now = steady_now();
  while (!refused_audit_times_.empty() && now - refused_audit_times_.front() >= 60.0) refused_audit_times_.pop_front();
  if (refused_audit_times_.size() >= k_.config.refused_audits_per_minute) {
    ++audits_suppressed_;
    ++audits_suppressed_pending_;
    return;
  }
  refused_audit_times_.push_back(now);
  try {
    if (audits_suppressed_pending_ > 0) {
      AuditRecord gap;
      gap.time = unix_now();
      gap.actor = "controller";
      gap.role = "none";
      gap.action = "audit limit";
      gap.status = 0;  // the controller's own record: no reply to anyone
      gap.result = std::to_string(audits_suppressed_pending_) + " refused requests were not audited one by one (" +
                   std::to_string(k_.config.refused_audits_per_minute) + " a minute at most)";
      store_->add_audit(gap);
      audits_suppressed_pending_ = 0;
    }
    AuditRecord r;
    r.time = unix_now();
    r.actor = actor.name.empty() ? "anonymous" : actor.name;
    r.role = std::string(to_string(actor.role));
    r.action = actor.action;
    r.request = actor.request.substr(0, 4096);
    r.status = reply_code;
    r.result = result.substr(0, 1024);
    store_->add_audit(r);
  } catch (const StoreError&) {
    // The refusal stands without its record; /health shows the database.
    ++audits_failed_;
  }
}

}  // namespace railyard::controller
