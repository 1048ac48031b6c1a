// The decisions of the changes operators and monitoring ask for: drain,
// undrain, link event, explicit reroute (decide.h). Each reads the state,
// asks for the routing it needs, and answers with the next state, the
// effects (policy file, one transaction with the audit record, the view, the
// plugin) and the reply; nothing here is carried out.
#include <algorithm>

#include "controller/decide_parts.h"
#include "routing/node_lookup.h"

namespace railyard::controller {

namespace {

// The job that routes `fabric_of`'s fabric under `policy`, compared with the view in force.
RoutingJob routing_of(const State& s, policies::Policy policy, bool diff = true) {
  RoutingJob job;
  job.base = s.view;
  job.fabric = std::shared_ptr<const routing::Fabric>(s.view, &s.view->fabric);
  job.policy = std::move(policy);
  job.origin = s.view->origin;
  job.diff = diff;
  return job;
}

}  // namespace

Decision decide_drain(const Constants& k, const State& s, const DrainCommand& c, const Clock& clock,
                      const Routed* r) {
  Decision d = unchanged(s);
  DrainOutcome out;
  out.dry_run = c.dry_run;
  auto refuse = [&](Failure f) {
    out.failure = std::move(f);
    d.reply = out;
    return d;
  };
  if (!s.view) return refuse(Failure::unavailable("no fabric yet: the plugin has not sent a snapshot"));
  std::string label;
  Expected<std::string> target = canonical_target(s.view->fabric, c.request, &label);
  if (!target) return refuse(target.failure());
  for (const DrainRecord& existing : s.drains) {
    if (existing.kind == c.request.kind && existing.target == *target) {
      out.drain = existing;
      return refuse(Failure::conflict(std::string(to_string(existing.kind)) + " " + label +
                                      " is already drained (drain " + std::to_string(existing.id) + ")"));
    }
  }
  DrainRecord record;
  record.kind = c.request.kind;
  record.target = *target;
  record.target_name = label;
  record.reason = c.request.reason;
  record.created_by = c.actor.name;
  record.created_at = clock.now;
  record.expires_at = c.request.expires_at;
  std::vector<DrainRecord> drains = s.drains;
  drains.push_back(record);

  const Routed* routed =
      routed_now(s, r, routing_of(s, effective_policy(k, drains, s.link_states, &s.view->fabric)), d);
  if (!routed) return d;
  out.impact = routed->impact;
  // The engine refuses the fabric with this drain (the current one routed):
  // the request is what makes it unroutable.
  if (!routed->view) return refuse(Failure::invalid(routed->error));
  if (out.impact.pairs_cut > 0 && !c.force) {
    return refuse(Failure::conflict("draining " + label + " would cut " + std::to_string(out.impact.pairs_cut) +
                                    " CA pairs (no path left that avoids drains); repeat with force to drain anyway"));
  }
  if (c.dry_run) {
    out.message = "dry run: nothing changed";
    d.reply = out;
    return d;
  }
  State& next = d.next;
  next.drains = drains;  // the new one's id comes from the store (the executor fills it in)
  next.view = adopt_view(next, *routed);
  ++next.version;
  const RerouteRecord reroute = new_reroute(k, next, c.actor, "drain of " + label, routed->view->route_ms, clock);
  const std::string done = "drained " + label;
  d.effects.policy_file = routed->view->policy;
  d.effects.writes.push_back(AddDrain{record});
  d.effects.writes.push_back(PutReroute{reroute});
  d.effects.audit = audit_of(c.actor, "drain " + label, done, clock.now);
  d.effects.publish = true;
  follow_reroute(next, d.effects, reroute, true, clock);
  out.message = done;
  out.audited = true;
  out.drain = record;
  out.reroute = reroute;
  d.reply = out;
  return d;
}

Decision decide_undrain(const Constants& k, const State& s, const UndrainCommand& c, const Clock& clock,
                        const Routed* r) {
  Decision d = unchanged(s);
  DrainOutcome out;
  out.dry_run = c.dry_run;
  auto it = std::find_if(s.drains.begin(), s.drains.end(), [&](const DrainRecord& x) { return x.id == c.id; });
  if (it == s.drains.end()) {
    out.failure = Failure::not_found("no active drain " + std::to_string(c.id));
    d.reply = out;
    return d;
  }
  out.drain = *it;
  std::vector<DrainRecord> drains = s.drains;
  std::erase_if(drains, [&](const DrainRecord& x) { return x.id == c.id; });
  const Routed* routed = nullptr;
  if (s.view) {
    routed = routed_now(s, r, routing_of(s, effective_policy(k, drains, s.link_states, &s.view->fabric)), d);
    if (!routed) return d;
    out.impact = routed->impact;
    if (!routed->view) {
      // Fewer drains than a fabric that routed: not the request's fault.
      out.failure = Failure::internal("re-routing without drain " + std::to_string(c.id) + " failed: " + routed->error);
      d.reply = out;
      return d;
    }
  }
  if (c.dry_run) {
    out.message = "dry run: nothing changed";
    d.reply = out;
    return d;
  }
  State& next = d.next;
  next.drains = drains;
  ++next.version;
  // Live before the first snapshot: nothing to resolve the drains against.
  const policies::Policy policy = routed ? routed->view->policy : effective_policy(k, drains, s.link_states, nullptr);
  if (routed) next.view = adopt_view(next, *routed);
  const RerouteRecord reroute =
      new_reroute(k, next, c.actor, "undrain " + std::to_string(c.id), routed ? routed->view->route_ms : 0, clock);
  const std::string done = "undrained " + it->target_name;
  d.effects.policy_file = policy;
  d.effects.writes.push_back(RemoveDrain{c.id, c.actor.name, clock.now});
  d.effects.writes.push_back(PutReroute{reroute});
  d.effects.audit = audit_of(c.actor, "undrain " + std::to_string(c.id), done, clock.now);
  d.effects.publish = true;
  follow_reroute(next, d.effects, reroute, true, clock);
  out.message = done;
  out.audited = true;
  out.drain->removed_at = clock.now;
  out.drain->removed_by = c.actor.name;
  out.reroute = reroute;
  d.reply = out;
  return d;
}

Decision decide_link_event(const Constants& k, const State& s, const LinkEventCommand& c, const Clock& clock,
                           const Routed* r) {
  Decision d = unchanged(s);
  auto refuse = [&](Failure f) {
    d.reply = refused<LinkEventOutcome>(std::move(f));
    return d;
  };
  if (!s.view) return refuse(Failure::unavailable("no fabric yet"));
  const LinkEventRequest& request = c.request;
  const routing::Fabric& f = k.offline() ? *k.offline_fabric : s.view->fabric;
  Result<NodeId> node = routing::find_node(f, request.node);
  if (!node) return refuse(Failure::not_found("unknown node '" + request.node + "'"));
  const routing::Node& nd = f.node(*node);
  if (request.port < 1 || request.port > nd.num_ports) {
    return refuse(Failure::invalid("'" + request.node + "' has ports 1.." + std::to_string(nd.num_ports)));
  }
  const PortId port = f.port_id(*node, PortNum{static_cast<uint8_t>(request.port)});
  if (!f.port(port).remote.valid()) return refuse(Failure::invalid(port_label(f, port) + " is not cabled"));
  const std::string key = link_key(f, f.port(port).link);
  const std::string state_word(to_string(request.state));
  const std::string type = "link_" + state_word;

  // The same id again is the same event; the same id for another link or
  // state is a reporter's bug, not something to ignore.
  if (c.known) {
    const nlohmann::json body = nlohmann::json::parse(c.known->body, nullptr, false);
    const bool same = c.known->type == type && body.is_object() && body.value("link", "") == key;
    LinkEventOutcome out;
    if (same) {
      out.message = "already recorded";
    } else {
      out.failure = Failure::conflict("event id '" + request.event_id + "' was recorded as " + c.known->type + " of " +
                                      (body.is_object() ? body.value("link_name", body.value("link", "?")) : "?") +
                                      "; an event id names one event");
    }
    out.event = *c.known;
    out.duplicate = true;
    d.reply = out;
    return d;
  }

  std::vector<LinkStateRecord> states = s.link_states;
  LinkState previous = LinkState::kUp;
  for (const LinkStateRecord& x : states) {
    if (x.link == key) previous = x.state;
  }
  const LinkStateRecord state{key, request.state, request.time.value_or(clock.now), Reporter::kRest, request.reason};
  std::erase_if(states, [&](const LinkStateRecord& x) { return x.link == key; });
  states.push_back(state);
  std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.link < b.link; });

  // Re-route around (or back over) the link: offline the link leaves the
  // fabric; live it joins the policy's drains (OpenSM may still see it up).
  const policies::Policy policy = effective_policy(k, s.drains, states, &f);
  LinkEventOutcome out;
  const Routed* routed = nullptr;
  if (previous != request.state) {
    RoutingJob job = routing_of(s, policy, false);
    if (k.offline()) {
      job.fabric = k.offline_fabric;
      job.down = down_links(states);
    }
    routed = routed_now(s, r, std::move(job), d);
    if (!routed) return d;
    if (!routed->view) {
      return refuse(Failure::internal("re-routing for the link event failed: " + routed->error));
    }
    out.impact.pairs_cut = routed->impact.pairs_cut;
    out.impact.route_ms = routed->impact.route_ms;
    if (request.state == LinkState::kDown && out.impact.pairs_cut > 0 && !c.force) {
      out.failure = Failure::conflict(
          "link " + port_label(f, port) + " down would cut " + std::to_string(out.impact.pairs_cut) +
          " CA pairs off (no other path); nothing recorded. If the link is really down, repeat with force=true");
      d.reply = out;
      return d;
    }
  }
  const nlohmann::json body = {{"link", key},
                               {"link_name", port_label(f, port) + " <-> " + port_label(f, f.port(port).remote)},
                               {"state", state_word},
                               {"reason", request.reason},
                               {"reported_by", c.actor.name}};
  EventRecord e;
  e.time = state.time;
  e.source = Reporter::kRest;
  e.type = type;
  e.external_id = request.event_id;
  e.body = body.dump();
  const std::string done = previous == request.state
                               ? "recorded (the link was already " + std::string(to_string(previous)) + ")"
                               : "recorded";
  State& next = d.next;
  next.link_states = states;
  ++next.version;
  d.effects.writes.push_back(AddEvent{e});
  d.effects.writes.push_back(AddLinkState{state});
  d.effects.audit = audit_of(c.actor, "link event " + request.event_id, done, clock.now);
  d.effects.publish = true;
  if (routed) {
    next.view = adopt_view(next, *routed);
    const RerouteRecord reroute =
        new_reroute(k, next, c.actor, "link " + key + " " + state_word, routed->view->route_ms, clock);
    d.effects.policy_file = policy;
    d.effects.writes.push_back(PutReroute{reroute});
    follow_reroute(next, d.effects, reroute, true, clock);
    out.reroute = reroute;
  }
  out.event = e;
  out.message = done;
  out.audited = true;
  d.reply = out;
  return d;
}

Decision decide_reroute(const Constants& k, const State& s, const RerouteCommand& c, const Clock& clock,
                        const Routed* r) {
  Decision d = unchanged(s);
  State& next = d.next;
  if (!take_reroute_slot(k, next.requests, clock.steady)) {
    ++next.counters.reroutes_rate_limited;
    d.reply = refused<RerouteOutcome>(Failure::rate_limited(
        "at most " + std::to_string(k.config.reroutes_per_minute) +
            " reroutes a minute (drains, undrains and link events count too)",
        std::max(1.0, 60.0 - (clock.steady - next.requests.sent_times.front()))));
    // Refused: nothing to make durable, the counter is the controller's own.
    return d;
  }
  const Routed* routed = nullptr;
  if (k.offline() && s.view) {
    routed = routed_now(s, r, routing_of(s, s.view->policy, false), d);
    if (!routed) {
      d.next = s;  // the slot is taken when the decision is made
      return d;
    }
    if (!routed->view) {
      d.next = s;
      d.reply = refused<RerouteOutcome>(Failure::internal(routed->error));
      return d;
    }
    next.view = adopt_view(next, *routed);
    ++next.version;
    d.effects.publish = true;
  }
  RerouteRecord reroute = new_reroute(k, next, c.actor, c.reason.empty() ? "requested" : c.reason,
                                      routed ? routed->view->route_ms : 0, clock, true);
  const std::string done = "reroute requested";
  d.effects.writes.push_back(PutReroute{reroute});
  d.effects.audit = audit_of(c.actor, "reroute", done, clock.now);
  follow_reroute(next, d.effects, reroute, false, clock);
  RerouteOutcome out;
  out.message = done;
  out.audited = true;
  out.reroute = reroute;
  d.reply = out;
  return d;
}

}  // namespace railyard::controller
