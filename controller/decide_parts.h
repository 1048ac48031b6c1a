// The parts decide() is made of, one file per concern (internal to controller/):
//   decide.cpp           dispatch, shared helpers, routing jobs
//   decide_changes.cpp   drain, undrain, link event, explicit reroute
//   reroute_requests.cpp the request book: ids, rate window, send, finish, timer
//   plugin_events.cpp    plugin events and fabric snapshots
#pragma once

#include "controller/decide.h"

namespace railyard::controller {

Decision decide_drain(const Constants& k, const State& s, const DrainCommand& c, const Clock& clock, const Routed* r);
Decision decide_undrain(const Constants& k, const State& s, const UndrainCommand& c, const Clock& clock,
                        const Routed* r);
Decision decide_link_event(const Constants& k, const State& s, const LinkEventCommand& c, const Clock& clock,
                           const Routed* r);
Decision decide_reroute(const Constants& k, const State& s, const RerouteCommand& c, const Clock& clock,
                        const Routed* r);
Decision decide_finish(const Constants& k, const State& s, const FinishRequests& c, const Clock& clock);
Decision decide_timer(const Constants& k, const State& s, const Clock& clock);
Decision decide_connection(const Constants& k, const State& s, const ConnectionCommand& c, const Clock& clock);
Decision decide_plugin_event(const Constants& k, const State& s, const PluginEventCommand& c, const Clock& clock);
Decision decide_snapshot(const Constants& k, const State& s, const SnapshotCommand& c, const Clock& clock,
                         const Routed* r);

// Off the strand: parses and decodes one plugin line (plugin_events.cpp).
PluginEventCommand read_plugin_line(const std::string& text);

// A decision that changes nothing yet: next = s.
Decision unchanged(const State& s);
// The routing `r` when it was made at s.version; else asks for `job` (made
// from s) and returns null.
const Routed* routed_now(const State& s, const Routed* r, RoutingJob job, Decision& d);
// The view `routed` made, as the next view: next_view_version moves on.
std::shared_ptr<const FabricView> adopt_view(State& next, const Routed& routed);

// Request book (reroute_requests.cpp). A reroute request for a change about
// to be made: offline applied at once (the view was re-routed); live pending,
// or queued when the rate limit is spent (unless `slot_taken`).
RerouteRecord new_reroute(const Constants& k, State& next, const Actor& actor, const std::string& reason,
                          double route_ms, const Clock& clock, bool slot_taken = false);
// After the change: followed (counters, queue, pending) and, live and
// pending, sent to the plugin.
void follow_reroute(State& next, Effects& fx, const RerouteRecord& r, bool policy_changed, const Clock& clock);
// pending -> applied | failed, with the requests it carried.
void finish_request(State& next, Effects& fx, const std::string& id, bool applied, const std::string& detail,
                    const Clock& clock);
bool take_reroute_slot(const Constants& k, RequestBook& book, double steady);

// An event the controller records (the time: the reporter's when plausible).
EventRecord event_record(Reporter source, const std::string& type, const nlohmann::json& body, double now,
                         std::optional<double> time = std::nullopt);

}  // namespace railyard::controller
