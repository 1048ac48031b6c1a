// Reroute requests: created with a change, sent to the plugin once the change
// is durable (an effect), followed to applied | failed (plugin events,
// disconnection, timeouts), and rate-limited as one stream whatever asked for
// them (controller.h). Pure: the request book is part of the State.
#include <algorithm>
#include <cstdio>

#include "controller/decide_parts.h"

namespace railyard::controller {

namespace {

std::string next_request_id(RequestBook& book, const Clock& clock) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "r%lld-%llu", static_cast<long long>(clock.now * 1000),
                static_cast<unsigned long long>(++book.counter));
  return buf;
}

void count_applied(Counters& c, double latency_ms) {
  ++c.reroutes_applied;
  c.reroute_seconds.observe(latency_ms / 1000);
}

}  // namespace

bool take_reroute_slot(const Constants& k, RequestBook& book, double steady) {
  while (!book.sent_times.empty() && steady - book.sent_times.front() >= 60.0) book.sent_times.pop_front();
  if (book.sent_times.size() >= k.config.reroutes_per_minute) return false;
  book.sent_times.push_back(steady);
  return true;
}

RerouteRecord new_reroute(const Constants& k, State& next, const Actor& actor, const std::string& reason,
                          double route_ms, const Clock& clock, bool slot_taken) {
  RerouteRecord r;
  r.id = next_request_id(next.requests, clock);
  r.requested_at = clock.now;
  r.requested_by = actor.name;
  r.reason = reason;
  if (k.offline()) {
    // The decision re-routed the view: applied as soon as it is committed.
    r.status = RerouteStatus::kApplied;
    r.finished_at = r.requested_at;
    r.latency_ms = route_ms;
    r.detail = "offline fabric re-routed";
  } else if (slot_taken || take_reroute_slot(k, next.requests, clock.steady)) {
    r.status = RerouteStatus::kPending;
  } else {
    r.status = RerouteStatus::kQueued;
    r.detail = "waiting for the rate limit (" + std::to_string(k.config.reroutes_per_minute) +
               " reroutes a minute); sent with the changes queued with it";
  }
  return r;
}

void follow_reroute(State& next, Effects& fx, const RerouteRecord& r, bool policy_changed, const Clock& clock) {
  ++next.counters.reroutes_requested;
  if (r.status == RerouteStatus::kApplied) {
    count_applied(next.counters, r.latency_ms.value_or(0));
    return;
  }
  if (r.status == RerouteStatus::kQueued) {
    ++next.counters.reroutes_coalesced;
    next.requests.queued.push_back(r.id);
    return;
  }
  // Followed from here either way: a failed send fails it (the executor
  // decides FinishRequests), and if even that cannot be stored, the timeout
  // fails it later.
  next.requests.pending[r.id] = clock.steady;
  fx.plugin.push_back({policy_changed ? protocol::CommandKind::kPolicyChanged : protocol::CommandKind::kReroute, r.id});
}

void finish_request(State& next, Effects& fx, const std::string& id, bool applied, const std::string& detail,
                    const Clock& clock) {
  auto it = next.requests.pending.find(id);
  if (it == next.requests.pending.end()) return;
  const double latency_ms = (clock.steady - it->second) * 1000.0;
  const RerouteStatus status = applied ? RerouteStatus::kApplied : RerouteStatus::kFailed;
  fx.writes.push_back(FinishReroute{id, status, clock.now, detail});
  if (auto c = next.requests.coalesced.find(id); c != next.requests.coalesced.end()) {
    for (const std::string& one : c->second) {
      fx.writes.push_back(FinishReroute{one, status, clock.now, detail + " (carried by " + id + ")"});
    }
    next.requests.coalesced.erase(c);
  }
  next.requests.pending.erase(it);
  if (applied) {
    count_applied(next.counters, latency_ms);
  } else {
    ++next.counters.reroutes_failed;
  }
}

Decision decide_finish(const Constants&, const State& s, const FinishRequests& c, const Clock& clock) {
  Decision d = unchanged(s);
  for (const std::string& id : c.ids) finish_request(d.next, d.effects, id, c.applied, c.detail, clock);
  return d;
}

Decision decide_connection(const Constants&, const State& s, const ConnectionCommand& c, const Clock& clock) {
  Decision d = unchanged(s);
  d.next.plugin_connected = c.connected;
  // Sequence numbers are followed per connection: the next one starts with
  // its hello (maybe from another plugin process, numbering from 1 again).
  d.next.last_plugin_seq = 0;
  if (c.connected) {
    ++d.next.counters.plugin_connects;
    // What the previous run sent and never heard back about goes out again
    // (with the next timer tick, as one policy_changed).
    RequestBook& book = d.next.requests;
    book.queued.insert(book.queued.begin(), book.unanswered.begin(), book.unanswered.end());
    book.unanswered.clear();
    return d;
  }
  // Requests sent to a plugin that went away will not be answered by it.
  std::vector<std::string> ids;
  for (const auto& [id, at] : s.requests.pending) ids.push_back(id);
  for (const std::string& id : ids) finish_request(d.next, d.effects, id, false, "plugin disconnected", clock);
  return d;
}

Decision decide_timer(const Constants& k, const State& s, const Clock& clock) {
  Decision d = unchanged(s);
  RequestBook& book = d.next.requests;
  // Changes whose reroute waited for the rate limit go out as one.
  if (!book.queued.empty() && take_reroute_slot(k, book, clock.steady)) {
    const std::string carrier = book.queued.back();
    book.coalesced[carrier] = std::vector<std::string>(book.queued.begin(), book.queued.end() - 1);
    book.queued.clear();
    book.pending[carrier] = clock.steady;
    d.effects.plugin.push_back({protocol::CommandKind::kPolicyChanged, carrier});
  }
  if (!book.unanswered.empty() && clock.steady - book.unanswered_since > k.config.reroute_timeout_s) {
    for (const std::string& id : book.unanswered) {
      d.effects.writes.push_back(FinishReroute{id, RerouteStatus::kFailed, clock.now,
                                               "railyardd restarted before the plugin answered, and the plugin did "
                                               "not connect within " +
                                                   std::to_string(k.config.reroute_timeout_s) +
                                                   " s; the policy file in force carries the change"});
      ++d.next.counters.reroutes_failed;
    }
    book.unanswered.clear();
  }
  std::vector<std::string> overdue;
  for (const auto& [id, at] : book.pending) {
    if (clock.steady - at > k.config.reroute_timeout_s) overdue.push_back(id);
  }
  for (const std::string& id : overdue) {
    finish_request(d.next, d.effects, id, false,
                   "no routing pass within " + std::to_string(k.config.reroute_timeout_s) + " s", clock);
  }
  return d;
}

}  // namespace railyard::controller
