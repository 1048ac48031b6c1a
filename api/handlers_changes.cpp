// The handlers of changes and their records: drains, reroutes, link events
// from outside monitoring, SHARP jobs. The body arrives typed
// (request_bodies.h); the controller decides, and writes the audit record
// with the change (Call::audited).
#include <charconv>

#include "api/api.h"
#include "api/render.h"
#include "api/request.h"
#include "api/request_bodies.h"

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;
using ctl::Failure;

namespace {

int64_t parse_drain_id(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) throw Failure::invalid("'" + s + "' is not a drain id");
  return v;
}

json drain_body(const ctl::DrainOutcome& o) {
  json body = {{"dry_run", o.dry_run}, {"impact", render_impact(o.impact)}};
  if (o.drain) body["drain"] = render_drain(*o.drain);
  if (o.reroute) body["reroute"] = render_reroute(*o.reroute);
  return body;
}

}  // namespace

HttpResponse Api::drains_list(Call&) {
  json list = json::array();
  for (const ctl::DrainRecord& d : c_.drains()) list.push_back(render_drain(d));
  return json_response(200, {{"drains", list}});
}

HttpResponse Api::drain_create(Call& call) {
  const ctl::DrainRequest d = parse_drain_request(call.request.body);
  const bool dry_run = query_flag(call.request, "dry_run");
  const int done = dry_run ? 200 : 201;
  const ctl::DrainOutcome o = c_.drain(d, replying(call.actor, done), dry_run, query_flag(call.request, "force"));
  call.audited = o.audited;
  return outcome_response(o, drain_body(o), done);
}

HttpResponse Api::drain_delete(Call& call) {
  const ctl::DrainOutcome o =
      c_.undrain(parse_drain_id(call.params.at("id")), replying(call.actor, 200), query_flag(call.request, "dry_run"));
  call.audited = o.audited;
  return outcome_response(o, drain_body(o), 200);
}

HttpResponse Api::reroute(Call& call) {
  const RerouteRequest request = parse_reroute_request(call.request.body);
  const ctl::RerouteOutcome o = c_.reroute(replying(call.actor, 202), request.reason);
  call.audited = o.audited;
  return outcome_response(o, o.reroute ? json{{"reroute", render_reroute(*o.reroute)}} : json::object(), 202);
}

HttpResponse Api::reroutes_list(Call&) {
  json list = json::array();
  for (const ctl::RerouteRecord& r : c_.store().reroutes(100)) list.push_back(render_reroute(r));
  return json_response(200, {{"reroutes", list}});
}

HttpResponse Api::reroute_get(Call& call) {
  std::optional<ctl::RerouteRecord> r = c_.store().reroute(call.params.at("id"));
  if (!r) throw Failure::not_found("no reroute request '" + call.params.at("id") + "'");
  return json_response(200, render_reroute(*r));
}

HttpResponse Api::link_event(Call& call) {
  const ctl::LinkEventRequest l = parse_link_event_request(call.request.body);
  const ctl::LinkEventOutcome o = c_.link_event(l, replying(call.actor, 201), query_flag(call.request, "force"));
  call.audited = o.audited;
  json body = {{"duplicate", o.duplicate}};
  if (o.event.id) body["event"] = render_event(o.event);
  if (o.impact.pairs_cut || o.impact.route_ms) body["impact"] = render_impact(o.impact);
  if (o.reroute) body["reroute"] = render_reroute(*o.reroute);
  // The same event again changes nothing: 200, not 201.
  return outcome_response(o, body, o.duplicate ? 200 : 201);
}

HttpResponse Api::jobs_list(Call& call) {
  json list = json::array();
  for (const ctl::JobRecord& j : c_.store().jobs(!query_flag(call.request, "all"))) {
    json item = render_job(j);
    // The list is a summary: trees without their switch lists.
    for (json& t : item["trees"]) t.erase("switches");
    list.push_back(item);
  }
  return json_response(200, {{"jobs", list}});
}

HttpResponse Api::job_create(Call& call) {
  const ctl::JobRequest job = parse_job_request(call.request.body);
  const ctl::JobOutcome o = c_.create_job(job, replying(call.actor, 201));
  call.audited = o.audited;
  return outcome_response(o, o.job ? render_job(*o.job) : json::object(), 201);
}

HttpResponse Api::job_get(Call& call) {
  std::optional<ctl::JobRecord> j = c_.store().job(call.params.at("id"));
  if (!j) throw Failure::not_found("no job '" + call.params.at("id") + "'");
  return json_response(200, render_job(*j));
}

HttpResponse Api::job_delete(Call& call) {
  const ctl::JobOutcome o = c_.delete_job(call.params.at("id"), replying(call.actor, 200));
  call.audited = o.audited;
  return outcome_response(o, o.job ? json{{"job", render_job(*o.job)}} : json::object(), 200);
}

}  // namespace railyard::api
