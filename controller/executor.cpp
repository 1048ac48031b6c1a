// The executor: carries a Decision's effects out under the one rule every
// change follows (docs/controller.md "One rule for every mutation"):
//
//   1. the policy file (temporary file, fsync, rename, fsync of the folder);
//      if it cannot be written, nothing else happens;
//   2. the store's writes and the audit record, one SQLite transaction; if
//      it fails, the policy file is put back as it was;
//   3. only then is State' adopted, the snapshot published to readers and
//      the plugin told (a failed send fails its request: one more decision).
//
// Nothing is acknowledged before 1 and 2 are durable; on a failure the state
// stays as it was and the reply says nothing changed.
#include <variant>

#include "controller/controller.h"
#include "controller/decide_parts.h"
#include "api/protocol/command_codec.h"
#include "policies/policy_loader.h"

namespace railyard::controller {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// The reply's failure, with everything a success would have claimed undone.
void fail_reply(Reply& reply, const Failure& failure) {
  std::visit(Overloaded{[](std::monostate&) {},
                        [&](DrainOutcome& o) {
                          o.failure = failure;
                          o.message.clear();
                          o.audited = false;
                          o.reroute.reset();
                          if (o.drain && o.drain->id == 0) o.drain.reset();
                          if (o.drain) {
                            o.drain->removed_at.reset();
                            o.drain->removed_by.clear();
                          }
                        },
                        [&](auto& o) {
                          o.failure = failure;
                          o.message.clear();
                          o.audited = false;
                          o.reroute.reset();
                        }},
             reply);
}

}  // namespace

std::optional<Failure> Controller::make_durable(const Effects& fx, Written* written) {
  // The policy file first: when it cannot be written nothing else happens.
  // It is the file OpenSM's plugin reads; the store is ours.
  if (fx.policy_file) {
    if (Status s = write_policy_file(*fx.policy_file); !s) {
      // The write may have failed after its rename (the folder could not be
      // synced): put the file back as the state in force has it.
      (void)write_policy_file(policy_in_force());
      return Failure::unavailable("the policy file cannot be written (" + s.error().message + "): nothing changed");
    }
  }
  if (fx.writes.empty() && !fx.audit) return std::nullopt;
  try {
    Store::Transaction txn(*store_);
    for (const StoreWrite& w : fx.writes) {
      std::visit(Overloaded{[&](const AddDrain& x) { written->drain_id = store_->add_drain(x.drain).id; },
                            [&](const RemoveDrain& x) { (void)store_->remove_drain(x.id, x.by, x.at); },
                            [&](const AddEvent& x) {
                              Store::Added added = store_->add_event(x.event);
                              if (!written->event) written->event = added.event;
                            },
                            [&](const AddLinkState& x) { store_->add_link_state(x.state); },
                            [&](const PutReroute& x) { store_->put_reroute(x.reroute); },
                            [&](const FinishReroute& x) { store_->finish_reroute(x.id, x.status, x.at, x.detail); },
                            [&](const PutJob& x) { store_->put_job(x.job); }},
                 w);
    }
    if (fx.audit) store_->add_audit(*fx.audit);
    txn.commit();
  } catch (const StoreError& e) {
    // Put the policy file back as it was (the state is still the old one).
    // If even that fails, health says so and tick() rewrites it once it can.
    if (fx.policy_file) (void)write_policy_file(policy_in_force());
    return Failure::unavailable(std::string("the database cannot be written (") + e.what() + "): nothing changed");
  }
  return std::nullopt;
}

void Controller::carry_out(Decision& d, const Clock& clock) {
  Written written;
  if (std::optional<Failure> failed = make_durable(d.effects, &written)) {
    fail_reply(d.reply, *failed);
    return;
  }
  const bool view_changed = d.next.view != state_.view;
  state_ = std::move(d.next);
  // What the store numbered: the new drain's id, the event's record.
  if (written.drain_id) {
    for (DrainRecord& x : state_.drains) {
      if (x.id == 0) x.id = *written.drain_id;
    }
  }
  std::visit(Overloaded{[](std::monostate&) {},
                        [&](DrainOutcome& o) {
                          if (o.drain && o.drain->id == 0 && written.drain_id) o.drain->id = *written.drain_id;
                        },
                        [&](LinkEventOutcome& o) {
                          if (written.event && !o.duplicate) o.event = *written.event;
                        },
                        [](RerouteOutcome&) {}},
             d.reply);
  plugin_connected_ = state_.plugin_connected;
  {
    std::lock_guard lock(counters_mu_);
    counters_ = state_.counters;
  }
  if (view_changed) {
    sharp_follow_view();
    // Live: the divergence check compares the plugin's digests with the views in force.
    if (state_.view && !k_.offline()) {
      watch_.on_view(*state_.view, clock.now);
      publish_watch();
    }
  }
  if (d.effects.publish || view_changed) publish();
  // Every plugin gets the new policy (standby SMs too), before the command
  // that makes the master route with it.
  if (d.effects.policy_file && broadcaster_) broadcaster_(policies::render_policy_yaml(*d.effects.policy_file));
  // Told once durable; a failed send fails the request now (and if even that
  // cannot be stored, the timeout fails it later).
  for (const protocol::Command& command : d.effects.plugin) {
    if (sender_ && sender_(protocol::encode_command(command))) continue;
    const std::string why = "plugin not connected: the policy file is written and applies at OpenSM's next sweep";
    Decision failed = decide(k_, state_, FinishRequests{{command.id}, false, why}, clock);
    carry_out(failed, clock);
    auto mark = [&](std::optional<RerouteRecord>& r) {
      if (r && r->id == command.id && !state_.requests.pending.contains(command.id)) {
        r->status = RerouteStatus::kFailed;
        r->detail = why;
        r->finished_at = clock.now;
      }
    };
    std::visit(Overloaded{[](std::monostate&) {}, [&](auto& o) { mark(o.reroute); }}, d.reply);
  }
}

void Controller::record_event(Reporter source, const std::string& type, const nlohmann::json& body) {
  if (write_refusal()) return;
  try {
    store_->add_event(event_record(source, type, body, unix_now()));
  } catch (const StoreError&) {
    // The event is lost, the change it describes is not; /health shows the database.
  }
}

}  // namespace railyard::controller
