// The handlers that read the fabric: help, OpenAPI, health, the fabric's
// documents, hosts' rails, links, routes, AR groups and the recorded events.
#include <set>

#include "api/api.h"
#include "api/event_stream.h"
#include "api/openapi.h"
#include "api/rail_events.h"
#include "api/render.h"
#include "api/request.h"
#include "routing/node_lookup.h"

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;
using ctl::Failure;

namespace {

json endpoint_index() {
  json list = json::array();
  for (const Endpoint& e : endpoints()) {
    json q = json::object();
    for (const QueryParam& p : e.query) q[std::string(p.name)] = std::string(p.description);
    json item = {{"method", e.method},
                 {"path", e.pattern},
                 {"role", ctl::to_string(e.role)},
                 {"summary", e.summary}};
    if (!q.empty()) item["query"] = q;
    if (!e.body.empty()) item["body"] = std::string(e.body);
    list.push_back(item);
  }
  return {{"api", "railyard /api/v1"}, {"auth", "Authorization: Bearer <token>; roles viewer < operator"},
          {"endpoints", list}};
}

}  // namespace

HttpResponse Api::index(Call&) { return json_response(200, endpoint_index()); }

HttpResponse Api::openapi(Call&) { return json_response(200, openapi_document()); }

HttpResponse Api::health(Call&) {
  auto v = c_.view();
  const bool live = c_.config().fabric_source == ctl::FabricSource::kLive;
  const ctl::Health h = c_.health();
  json reasons = json::array();
  if (!v) reasons.push_back(live ? "no fabric yet: waiting for the plugin's first snapshot" : "no fabric");
  if (!h.database_writable) reasons.push_back("the database cannot be written: " + h.database_error);
  if (!h.policy_file_writable) reasons.push_back("the policy file cannot be written: " + h.policy_file_error);
  if (live && !c_.plugin_connected()) reasons.push_back("the OpenSM plugin is not connected");
  for (const std::string& r : h.plugin_reasons) reasons.push_back(r);
  const bool ok = reasons.empty();
  json body = {{"status", ok ? "ok" : "degraded"},
               {"fabric", v ? json{{"version", v->version}, {"origin", v->origin}} : json(nullptr)},
               {"source", live ? "live" : "offline"},
               {"database", h.database_writable ? "ok" : "failing"},
               {"policy_file", h.policy_file_writable ? "ok" : "failing"}};
  if (!ok) body["reasons"] = reasons;
  if (live) {
    body["plugin"] = c_.plugin_connected() ? "connected" : "disconnected";
    body["plugin_status"] = h.plugin;
  }
  if (replicator_) body["ha"] = ha_health();
  return json_response(ok ? 200 : 503, body);
}

HttpResponse Api::whoami(Call& call) {
  return json_response(200, {{"name", call.actor.name}, {"role", ctl::to_string(call.actor.role)}});
}

HttpResponse Api::document(Call& call) { return current_document(call.endpoint.id); }

HttpResponse Api::host_rails(Call& call) {
  const std::string& host = call.params.at("host");
  auto snap = rail_health();
  const ctl::HostRails* h = snap->health.find(host);
  if (!h) throw Failure::not_found("no host '" + host + "'");
  json body = render_host_rails(*snap->view, *h);
  body["fabric_version"] = snap->view->version;
  return json_response(200, body);
}

HttpResponse Api::links(Call& call) {
  LinkFilter filter = LinkFilter::kAll;
  if (auto it = call.request.query.find("state"); it != call.request.query.end()) {
    const std::optional<LinkFilter> f = parse_link_filter(it->second);
    if (!f) throw Failure::invalid("query 'state' must be up, down or drained");
    filter = *f;
  }
  auto v = c_.view();
  return json_response(200, render_links(v.get(), *c_.links(), filter));
}

HttpResponse Api::route(Call& call) {
  const std::map<std::string, std::string>& params = call.params;
  auto v = need_view(c_);
  const routing::Fabric& f = v->fabric;
  Lid src_lid, dst_lid;
  const NodeId src = find_node_or_lid(f, params.at("src"), &src_lid);
  if (!src.valid()) {
    throw Failure::not_found("unknown source '" + params.at("src") + "' (node name, GUID or LID)");
  }
  const NodeId dst = find_node_or_lid(f, params.at("dst"), &dst_lid);
  if (!dst.valid()) {
    throw Failure::not_found("unknown destination '" + params.at("dst") + "' (node name, GUID or LID)");
  }
  if (!dst_lid.valid()) dst_lid = f.port(f.primary_port(dst)).lid;
  PortId src_port = src_lid.valid() ? f.lid_owner(src_lid) : f.primary_port(src);
  if (call.request.query.contains("src_port")) {
    const int64_t p = query_int(call.request, "src_port", 1, 1, f.node(src).num_ports);
    src_port = f.port_id(src, PortNum{static_cast<uint8_t>(p)});
  }
  if (!dst_lid.valid()) throw Failure::not_found("'" + params.at("dst") + "' has no LID");
  const routing::RouteWalk w = routing::walk_route(f, v->routing.tables, src_port, dst_lid);
  json hops = json::array();
  for (const routing::RouteHop& h : w.hops) {
    const routing::Node& nd = f.node(h.node);
    json hop = {{"node", f.desc(h.node)},
                {"guid", routing::to_string(nd.guid)},
                {"type", routing::to_string(nd.type)}};
    if (h.in_port) hop["in_port"] = h.in_port;
    if (h.out_port) hop["out_port"] = h.out_port;
    if (nd.type == routing::NodeType::kSwitch) {
      hop["lid"] = f.port(nd.first_port).lid.value;
      const int32_t level = h.node.value() < v->rails.level.size() ? v->rails.level[h.node.value()] : -1;
      if (level >= 0) hop["level"] = level;
    }
    hops.push_back(hop);
  }
  const bool delivered = w.end == routing::RouteEnd::kDelivered;
  return json_response(200, {{"source", f.desc(src)},
                             {"source_lid", f.port(src_port).lid.value},
                             {"destination", f.desc(dst)},
                             {"destination_lid", dst_lid.value},
                             {"delivered", delivered},
                             {"end", routing::to_string(w.end)},
                             {"switch_hops", delivered && hops.size() >= 2 ? hops.size() - 2 : 0},
                             {"fabric_version", v->version},
                             {"hops", hops}});
}

HttpResponse Api::ar_summary(Call&) {
  auto v = need_view(c_);
  auto ar = c_.ar_tables();
  if (!ar) throw ar.failure();
  return json_response(200, render_ar_summary(*v, **ar));
}

HttpResponse Api::ar_switch(Call& call) {
  auto v = need_view(c_);
  auto ar = c_.ar_tables();
  if (!ar) throw ar.failure();
  Lid ignored;
  const NodeId sw = find_node_or_lid(v->fabric, call.params.at("switch"), &ignored);
  if (!sw.valid() || !v->fabric.is_switch(sw)) throw Failure::not_found("no switch '" + call.params.at("switch") + "'");
  auto sws = v->fabric.switches();
  const uint32_t index = static_cast<uint32_t>(std::lower_bound(sws.begin(), sws.end(), sw) - sws.begin());
  const int lid = static_cast<int>(query_int(call.request, "lid", -1, 1, 0xBFFF));
  return json_response(200, render_ar_switch(*v, **ar, index, lid));
}

HttpResponse Api::events(Call& call) {
  const int64_t since = query_int(call.request, "since", 0, 0, INT64_MAX);
  const int64_t limit = query_int(call.request, "limit", 100, 1, 1000);
  json list = json::array();
  for (const ctl::EventRecord& ev : c_.store().events_since(since, static_cast<uint32_t>(limit))) {
    list.push_back(render_event(ev));
  }
  return json_response(200, {{"events", list}, {"last_id", c_.store().last_event_id()}});
}

HttpResponse Api::event_stream(Call& call) {
  const int64_t since = query_int(call.request, "since", -1, 0, INT64_MAX);
  HttpResponse r;
  r.content_type = "text/event-stream";
  r.body = ": railyard events; one 'event' per recorded event\n\n";
  r.events = open_event_stream(*this, since < 0 ? c_.store().last_event_id() : since);
  return r;
}

HttpResponse Api::rail_events(Call& call) {
  std::set<std::string> hosts;
  if (auto it = call.request.query.find("host"); it != call.request.query.end()) {
    size_t start = 0;
    while (start <= it->second.size()) {
      const size_t comma = std::min(it->second.find(',', start), it->second.size());
      if (comma > start) hosts.insert(it->second.substr(start, comma - start));
      start = comma + 1;
    }
  }
  HttpResponse r;
  r.content_type = "text/event-stream";
  r.body = ": railyard rail health; one 'rails' event per host, then per change\n\n";
  r.events = open_rail_events(*this, hosts);
  return r;
}

}  // namespace railyard::api
