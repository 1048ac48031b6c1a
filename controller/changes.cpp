// The controller's mutations of drains and link states, and the one rule they
// all follow (controller.h): acknowledged only once durable, else rolled back.
#include <algorithm>

#include "controller/controller.h"
#include "routing/node_lookup.h"

namespace railyard::controller {

std::optional<Failure> Controller::commit_change(const Actor& actor, const std::string& fallback_action,
                                                 const policies::Policy* policy, const std::string& done,
                                                 const RerouteRecord* reroute, const std::function<void()>& write) {
  // The policy file first: when it cannot be written nothing else happens.
  // It is the file OpenSM's plugin reads; the store is ours.
  if (policy) {
    if (Status s = write_policy_file(*policy); !s) {
      // The write may have failed after its rename (the folder could not be
      // synced): put the file back as the view has it, as below.
      if (view_) (void)write_policy_file(view_->policy);
      return Failure::unavailable("the policy file cannot be written (" + s.error().message + "): nothing changed");
    }
  }
  try {
    Store::Transaction txn(*store_);
    write();
    if (reroute) store_->put_reroute(*reroute);
    AuditRecord a;
    a.time = unix_now();
    a.actor = actor.name;
    a.role = std::string(to_string(actor.role));
    a.action = actor.action.empty() ? fallback_action : actor.action;
    a.request = actor.request.substr(0, 4096);
    a.status = actor.reply_code;
    a.result = done.substr(0, 1024);
    store_->add_audit(a);
    txn.commit();
  } catch (const StoreError& e) {
    // Put the policy file back as it was (the view is still the old one). If
    // even that fails, health says so and tick() rewrites it once it can.
    if (policy && view_) (void)write_policy_file(view_->policy);
    return Failure::unavailable(std::string("the database cannot be written (") + e.what() + "): nothing changed");
  }
  return std::nullopt;
}

DrainOutcome Controller::drain(const DrainRequest& request, const Actor& actor, bool dry_run, bool force) {
  std::lock_guard lock(mu_);
  DrainOutcome out;
  out.dry_run = dry_run;
  if (!view_) {
    out.failure = Failure::unavailable("no fabric yet: the plugin has not sent a snapshot");
    return out;
  }
  std::string label;
  Expected<std::string> target = canonical_target(view_->fabric, request, &label);
  if (!target) {
    out.failure = target.failure();
    return out;
  }
  std::vector<DrainRecord> drains = store_->active_drains();
  for (const DrainRecord& d : drains) {
    if (d.kind == request.kind && d.target == *target) {
      out.failure = Failure::conflict(std::string(to_string(d.kind)) + " " + label + " is already drained (drain " +
                                      std::to_string(d.id) + ")");
      out.drain = d;
      return out;
    }
  }
  DrainRecord record;
  record.kind = request.kind;
  record.target = *target;
  record.target_name = label;
  record.reason = request.reason;
  record.created_by = actor.name;
  record.created_at = unix_now();
  record.expires_at = request.expires_at;
  drains.push_back(record);

  std::shared_ptr<const FabricView> next;
  Status error;
  out.impact = what_if(*view_, effective_policy(drains), &next, &error);
  if (!error) {
    // The routing engine refuses the fabric with this drain (the current one
    // routed): the request is what makes it unroutable.
    out.failure = Failure::invalid(error.error().message);
    return out;
  }
  if (out.impact.pairs_cut > 0 && !force) {
    out.failure = Failure::conflict("draining " + label + " would cut " + std::to_string(out.impact.pairs_cut) +
                                    " CA pairs (no path left that avoids drains); repeat with force to drain anyway");
    return out;
  }
  if (dry_run) {
    out.message = "dry run: nothing changed";
    return out;
  }
  RerouteRecord reroute = new_reroute(actor, "drain of " + label, next->route_ms);
  const std::string done = "drained " + label;
  if (std::optional<Failure> failed = commit_change(actor, "drain " + label, &next->policy, done, &reroute,
                                                    [&] { record = store_->add_drain(record); })) {
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  out.audited = true;
  out.drain = record;
  auto fresh = std::make_shared<FabricView>(*next);
  fresh->version = next_version_++;
  set_view(std::move(fresh));
  send_reroute(reroute, true);
  out.reroute = reroute;
  return out;
}

DrainOutcome Controller::undrain(int64_t id, const Actor& actor, bool dry_run) {
  std::lock_guard lock(mu_);
  DrainOutcome out;
  out.dry_run = dry_run;
  std::optional<DrainRecord> existing = store_->drain(id);
  if (!existing || existing->removed_at) {
    out.failure = Failure::not_found("no active drain " + std::to_string(id));
    return out;
  }
  out.drain = existing;
  std::vector<DrainRecord> drains = store_->active_drains();
  std::erase_if(drains, [&](const DrainRecord& d) { return d.id == id; });
  std::shared_ptr<const FabricView> next;
  if (view_) {
    Status error;
    out.impact = what_if(*view_, effective_policy(drains), &next, &error);
    if (!error) {
      // Fewer drains than a fabric that routed: not the request's fault.
      out.failure = Failure::internal("re-routing without drain " + std::to_string(id) + " failed: " +
                                      error.error().message);
      return out;
    }
  }
  if (dry_run) {
    out.message = "dry run: nothing changed";
    return out;
  }
  const double now = unix_now();
  const policies::Policy policy = next ? next->policy : effective_policy(drains);
  RerouteRecord reroute = new_reroute(actor, "undrain " + std::to_string(id), next ? next->route_ms : 0);
  const std::string done = "undrained " + existing->target_name;
  if (std::optional<Failure> failed = commit_change(actor, "undrain " + std::to_string(id), &policy, done, &reroute,
                                                    [&] { store_->remove_drain(id, actor.name, now); })) {
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  out.audited = true;
  out.drain->removed_at = now;
  out.drain->removed_by = actor.name;
  if (next) {
    auto fresh = std::make_shared<FabricView>(*next);
    fresh->version = next_version_++;
    set_view(std::move(fresh));
  } else {
    ++generation_;
  }
  send_reroute(reroute, true);
  out.reroute = reroute;
  return out;
}

LinkEventOutcome Controller::link_event(const LinkEventRequest& request, const Actor& actor, bool force) {
  std::lock_guard lock(mu_);
  if (!view_) return refused<LinkEventOutcome>(Failure::unavailable("no fabric yet"));
  const bool offline = config_.fabric_source == FabricSource::kOffline;
  const routing::Fabric& f = offline ? offline_fabric_ : view_->fabric;
  Result<NodeId> node = routing::find_node(f, request.node);
  if (!node) return refused<LinkEventOutcome>(Failure::not_found("unknown node '" + request.node + "'"));
  const routing::Node& nd = f.node(*node);
  if (request.port < 1 || request.port > nd.num_ports) {
    return refused<LinkEventOutcome>(
        Failure::invalid("'" + request.node + "' has ports 1.." + std::to_string(nd.num_ports)));
  }
  const PortId port = f.port_id(*node, PortNum{static_cast<uint8_t>(request.port)});
  if (!f.port(port).remote.valid()) {
    return refused<LinkEventOutcome>(Failure::invalid(port_label(f, port) + " is not cabled"));
  }
  const std::string key = link_key(f, f.port(port).link);
  const std::string state_word(to_string(request.state));
  const std::string type = "link_" + state_word;

  // The same id again is the same event; the same id for another link or
  // state is a reporter's bug, not something to ignore.
  if (std::optional<EventRecord> seen = store_->event_by_external_id(Reporter::kRest, request.event_id)) {
    const nlohmann::json body = nlohmann::json::parse(seen->body, nullptr, false);
    const bool same = seen->type == type && body.is_object() && body.value("link", "") == key;
    LinkEventOutcome out;
    if (same) {
      out.message = "already recorded";
    } else {
      out.failure = Failure::conflict("event id '" + request.event_id + "' was recorded as " + seen->type + " of " +
                                      (body.is_object() ? body.value("link_name", body.value("link", "?")) : "?") +
                                      "; an event id names one event");
    }
    out.event = *seen;
    out.duplicate = true;
    return out;
  }

  std::vector<LinkStateRecord> states = store_->current_link_states();
  LinkState previous = LinkState::kUp;
  for (const LinkStateRecord& r : states) {
    if (r.link == key) previous = r.state;
  }
  const LinkStateRecord state{key, request.state, request.time.value_or(unix_now()), Reporter::kRest, request.reason};
  std::erase_if(states, [&](const LinkStateRecord& r) { return r.link == key; });
  states.push_back(state);

  // Re-route around (or back over) the link: offline the link leaves the
  // fabric; live it joins the policy's drains (OpenSM may still see it up).
  std::shared_ptr<const FabricView> next;
  DrainImpact impact;
  const std::vector<DrainRecord> drains = store_->active_drains();
  const policies::Policy policy = effective_policy(drains, states, offline ? &offline_fabric_ : &view_->fabric);
  if (previous != request.state) {
    routing::Fabric fabric = offline ? with_links_down(offline_fabric_, down_links(states)) : view_->fabric;
    Result<std::shared_ptr<const FabricView>> v = build_view(std::move(fabric), policy, view_->origin, 0);
    if (!v) {
      return refused<LinkEventOutcome>(
          Failure::internal("re-routing for the link event failed: " + v.error().message));
    }
    next = *v;
    const routing::RoutingReport& before = view_->routing.report;
    const routing::RoutingReport& after = next->routing.report;
    const uint64_t cut_before = before.drained_pairs + before.unreachable_pairs;
    const uint64_t cut_after = after.drained_pairs + after.unreachable_pairs;
    impact.pairs_cut = cut_after > cut_before ? cut_after - cut_before : 0;
    impact.route_ms = next->route_ms;
    if (request.state == LinkState::kDown && impact.pairs_cut > 0 && !force) {
      LinkEventOutcome out = refused<LinkEventOutcome>(Failure::conflict(
          "link " + port_label(f, port) + " down would cut " + std::to_string(impact.pairs_cut) +
          " CA pairs off (no other path); nothing recorded. If the link is really down, repeat with force=true"));
      out.impact = impact;
      return out;
    }
  }

  nlohmann::json body = {{"link", key},
                         {"link_name", port_label(f, port) + " <-> " + port_label(f, f.port(port).remote)},
                         {"state", state_word},
                         {"reason", request.reason},
                         {"reported_by", actor.name}};
  EventRecord e;
  e.time = state.time;
  e.source = Reporter::kRest;
  e.type = type;
  e.external_id = request.event_id;
  e.body = body.dump();
  LinkEventOutcome out;
  out.impact = impact;
  const std::string done = previous == request.state
                               ? "recorded (the link was already " + std::string(to_string(previous)) + ")"
                               : "recorded";
  std::optional<RerouteRecord> reroute;
  if (next) reroute = new_reroute(actor, "link " + key + " " + state_word, next->route_ms);
  if (std::optional<Failure> failed = commit_change(actor, "link event " + request.event_id, next ? &policy : nullptr,
                                                    done, reroute ? &*reroute : nullptr, [&] {
                                                      out.event = store_->add_event(e).event;
                                                      store_->add_link_state(state);
                                                    })) {
    out.failure = std::move(failed);
    return out;
  }
  out.message = done;
  out.audited = true;
  ++generation_;
  if (next) {
    auto fresh = std::make_shared<FabricView>(*next);
    fresh->version = next_version_++;
    set_view(std::move(fresh));
    send_reroute(*reroute, true);
    out.reroute = reroute;
  }
  return out;
}

}  // namespace railyard::controller
