// The handler of each /api/v1 endpoint: parse, call the controller, render.
#include <charconv>
#include <cmath>

#include "api/api.h"
#include "api/event_stream.h"
#include "api/isolation_render.h"
#include "api/metrics.h"
#include "api/openapi.h"
#include "api/rail_events.h"
#include "api/render.h"
#include "api/request.h"
#include "api/scheduler_render.h"
#include "api/console/grid.h"
#include "api/telemetry_render.h"
#include "controller/controller.h"
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

// "expires": a Unix time (number) or "+SECONDS" from now.
std::optional<double> parse_expires(const json& j) {
  if (!j.contains("expires") || j["expires"].is_null()) return std::nullopt;
  const double now = ctl::unix_now();
  if (j["expires"].is_number()) {
    const double t = j["expires"].get<double>();
    if (!std::isfinite(t) || t <= now) throw Failure::invalid("field 'expires' must be a Unix time in the future");
    return t;
  }
  if (j["expires"].is_string()) {
    const std::string s = j["expires"].get<std::string>();
    uint64_t secs = 0;
    if (s.size() > 1 && s[0] == '+') {
      auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), secs);
      if (ec == std::errc() && end == s.data() + s.size() && secs > 0 && secs <= 366ull * 86400) return now + double(secs);
    }
  }
  throw Failure::invalid("field 'expires' must be a Unix time or \"+SECONDS\" (at most a year)");
}

int64_t parse_id(const std::map<std::string, std::string>& params, const char* key) {
  const std::string& s = params.at(key);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) {
    throw Failure::invalid("'" + s + "' is not a drain id");
  }
  return v;
}

// The actor of a change whose success is answered with `done_status`: the
// audit record written with the change carries it.
ctl::Actor replying(const ctl::Actor& actor, int done_status) {
  ctl::Actor a = actor;
  a.reply_code = done_status;
  return a;
}

json drain_body(const ctl::DrainOutcome& o) {
  json body = {{"dry_run", o.dry_run}, {"impact", render_impact(o.impact)}};
  if (o.drain) body["drain"] = render_drain(*o.drain);
  if (o.reroute) body["reroute"] = render_reroute(*o.reroute);
  return body;
}

// The console's picture (api/console/grid.h) of the view, with the controller's
// link states and names, and with loads when asked.
json grid(const ctl::FabricView& v, const std::vector<ctl::LinkStatus>& links, bool loads) {
  const routing::Fabric& f = v.fabric;
  console::GridInput in;
  in.fabric = &f;
  in.rails = &v.rails;
  in.state.assign(f.num_links(), console::GridLinkState::kUp);
  in.keys.assign(f.num_links(), std::string());
  for (const ctl::LinkStatus& l : links) {
    if (!l.link.valid() || l.link.value() >= f.num_links()) continue;
    in.keys[l.link.value()] = l.key;
    in.state[l.link.value()] = l.state == ctl::LinkState::kDown ? console::GridLinkState::kDown
                               : !l.drains.empty()              ? console::GridLinkState::kDrained
                                                                : console::GridLinkState::kUp;
  }
  std::vector<routing::LinkLoad> load;
  if (loads) {
    load = routing::all_to_all_link_loads(f, v.routing.tables);
    in.loads = &load;
  }
  json out = console::grid_json(in);
  out["version"] = v.version;
  return out;
}

// "NODE[PORT]" (the node by GUID, record name or description; either end of
// the link) -> the link's counters.
HttpResponse link_counters(ctl::Controller& c, const std::string& ref) {
  auto v = need_view(c);
  const routing::Fabric& f = v->fabric;
  const size_t open = ref.rfind('[');
  if (open == std::string::npos || open == 0 || ref.back() != ']') {
    throw Failure::invalid("link '" + ref + "' must be NODE[PORT]: a node's GUID, name or description and a port");
  }
  const std::string node_ref = ref.substr(0, open);
  const std::string port_text = ref.substr(open + 1, ref.size() - open - 2);
  uint32_t port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 255) {
    throw Failure::invalid("link '" + ref + "': the port must be a number 1..255");
  }
  Result<NodeId> node = routing::find_node(f, node_ref);
  if (!node) throw Failure::not_found(node.error().message);
  if (port > f.node(*node).num_ports) {
    throw Failure::invalid("'" + node_ref + "' has ports 1.." + std::to_string(f.node(*node).num_ports) + ", not " +
                           std::to_string(port));
  }
  const PortId id = f.port_id(*node, PortNum{static_cast<uint8_t>(port)});
  if (!f.port(id).remote.valid()) throw Failure::invalid(ctl::port_label(f, id) + " is not cabled");
  return json_response(200, render_link_counters(c.telemetry(), *v, f.port(id).link));
}

HttpResponse route(ctl::Controller& c, const std::map<std::string, std::string>& params, const HttpRequest& req) {
  auto v = need_view(c);
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
  if (req.query.contains("src_port")) {
    const int64_t p = query_int(req, "src_port", 1, 1, f.node(src).num_ports);
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

}  // namespace

HttpResponse Api::render_document(EndpointId id) {
  auto v = need_view(c_);
  switch (id) {
    case EndpointId::kFabric:
      return json_response(200, render_fabric_summary(*v, *c_.links(), c_.drains().size()));
    case EndpointId::kSwitches: return json_response(200, render_switches(*v, c_.drains()));
    case EndpointId::kHosts: {
      auto snap = rail_health();
      return json_response(200, render_hosts(*snap->view, snap->health));
    }
    default: break;
  }
  throw Failure::internal("not a cached document");
}

HttpResponse Api::cached(int key, const std::function<HttpResponse()>& render) {
  // The generation is read before rendering: a change during the render
  // makes the entry stale at once rather than hiding the change.
  const uint64_t generation = c_.generation();
  {
    std::lock_guard lock(cache_mu_);
    Cached& entry = cache_[key];
    if (entry.generation >= generation && entry.generation != 0) return entry.response;
    // Another reader is rendering a newer one: the last document meanwhile.
    if (entry.rendering && entry.generation != 0) return entry.response;
    entry.rendering = true;
  }
  HttpResponse r;
  try {
    r = render();
  } catch (...) {
    std::lock_guard lock(cache_mu_);
    cache_[key].rendering = false;
    throw;
  }
  std::lock_guard lock(cache_mu_);
  Cached& entry = cache_[key];
  entry.rendering = false;
  if (r.status == 200 && generation > entry.generation) {
    entry.generation = generation;
    entry.response = r;
  }
  return r;
}

std::shared_ptr<const Api::RailHealthSnapshot> Api::rail_health() {
  const uint64_t generation = c_.generation();
  {
    std::lock_guard lock(cache_mu_);
    if (health_ && health_generation_ == generation) return health_;
  }
  auto v = need_view(c_);
  auto health = std::make_shared<const RailHealthSnapshot>(RailHealthSnapshot{v, ctl::rail_health(*v, *c_.links())});
  std::lock_guard lock(cache_mu_);
  health_ = health;
  health_generation_ = generation;
  return health;
}

void Api::refresh_documents() {
  std::vector<EndpointId> read;
  {
    std::lock_guard lock(cache_mu_);
    for (EndpointId id : {EndpointId::kFabric, EndpointId::kSwitches, EndpointId::kHosts}) {
      auto it = cache_.find(static_cast<int>(id));
      if (it != cache_.end() && it->second.generation != 0) read.push_back(id);
    }
  }
  for (EndpointId id : read) {
    const uint64_t generation = c_.generation();
    HttpResponse r = render_document(id);
    std::lock_guard lock(cache_mu_);
    Cached& entry = cache_[static_cast<int>(id)];
    if (r.status == 200 && generation > entry.generation) {
      entry.generation = generation;
      entry.response = std::move(r);
    }
  }
}

HttpResponse Api::dispatch(const Endpoint& e, const std::map<std::string, std::string>& params,
                           const HttpRequest& req, const ctl::Actor& actor, bool* audited) {
  switch (e.id) {
    case EndpointId::kIndex: return json_response(200, endpoint_index());
    case EndpointId::kOpenApi: return json_response(200, openapi_document());
    case EndpointId::kHealth: {
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
      return json_response(ok ? 200 : 503, body);
    }
    case EndpointId::kEventStream: {
      const int64_t since = query_int(req, "since", -1, 0, INT64_MAX);
      HttpResponse r;
      r.content_type = "text/event-stream";
      r.body = ": railyard events; one 'event' per recorded event\n\n";
      r.events = open_event_stream(*this, since < 0 ? c_.store().last_event_id() : since);
      return r;
    }
    case EndpointId::kWhoami: return json_response(200, {{"name", actor.name}, {"role", ctl::to_string(actor.role)}});
    case EndpointId::kGrid: {
      bool loads = false;
      if (auto it = req.query.find("loads"); it != req.query.end()) {
        if (it->second != "predicted") throw Failure::invalid("query 'loads' must be predicted");
        loads = true;
      }
      // A whole-fabric document, and the loads walk every destination's tree:
      // once per controller generation.
      return cached(static_cast<int>(e.id) * 2 + (loads ? 1 : 0) + 1000,
                    [&] { return json_response(200, grid(*need_view(c_), *c_.links(), loads)); });
    }
    case EndpointId::kFabric:
    case EndpointId::kSwitches:
    case EndpointId::kHosts: return cached(static_cast<int>(e.id), [&] { return render_document(e.id); });
    case EndpointId::kRailEvents: {
      std::set<std::string> hosts;
      if (auto it = req.query.find("host"); it != req.query.end()) {
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
    case EndpointId::kHostRails: {
      auto snap = rail_health();
      const ctl::HostRails* h = snap->health.find(params.at("host"));
      if (!h) throw Failure::not_found("no host '" + params.at("host") + "'");
      json body = render_host_rails(*snap->view, *h);
      body["fabric_version"] = snap->view->version;
      return json_response(200, body);
    }
    case EndpointId::kLinks: {
      LinkFilter filter = LinkFilter::kAll;
      if (auto it = req.query.find("state"); it != req.query.end()) {
        const std::optional<LinkFilter> f = parse_link_filter(it->second);
        if (!f) throw Failure::invalid("query 'state' must be up, down or drained");
        filter = *f;
      }
      auto v = c_.view();
      return json_response(200, render_links(v.get(), *c_.links(), filter));
    }
    case EndpointId::kRoute: return route(c_, params, req);
    case EndpointId::kLinkCounters: return link_counters(c_, params.at("link"));
    case EndpointId::kHotspots: {
      auto v = c_.view();
      return json_response(200, render_hotspots(c_.telemetry(), v.get(), ctl::unix_now()));
    }
    case EndpointId::kEvents: {
      const int64_t since = query_int(req, "since", 0, 0, INT64_MAX);
      const int64_t limit = query_int(req, "limit", 100, 1, 1000);
      json list = json::array();
      for (const ctl::EventRecord& ev : c_.store().events_since(since, static_cast<uint32_t>(limit))) {
        list.push_back(render_event(ev));
      }
      return json_response(200, {{"events", list}, {"last_id", c_.store().last_event_id()}});
    }
    case EndpointId::kSlurm:
    case EndpointId::kKubernetes: {
      std::string format = e.id == EndpointId::kKubernetes ? "kubernetes" : "conf";
      if (auto it = req.query.find("format"); e.id == EndpointId::kSlurm && it != req.query.end()) {
        if (it->second != "conf" && it->second != "yaml") throw Failure::invalid("query 'format' must be conf or yaml");
        format = it->second;
      }
      const int key = static_cast<int>(e.id) * 4 + (format == "yaml" ? 1 : 0);
      return cached(key, [&] {
        auto snap = rail_health();
        const ctl::SchedulerTopology topo = ctl::scheduler_topology(*snap->view);
        const ctl::RailHealthMap& health = snap->health;
        HttpResponse r = text_response(format == "conf"   ? render_slurm_conf(topo, health)
                                       : format == "yaml" ? render_slurm_yaml(topo, health)
                                                          : render_kubernetes(topo, health));
        r.content_type = format == "conf" ? "text/plain; charset=utf-8" : "application/yaml; charset=utf-8";
        return r;
      });
    }
    case EndpointId::kMetrics: {
      auto v = c_.view();
      return text_response(render_metrics(c_, *http_stats_, v.get(), *c_.links(), c_.drains().size()));
    }
    case EndpointId::kDrainsList: {
      json list = json::array();
      for (const ctl::DrainRecord& d : c_.drains()) list.push_back(render_drain(d));
      return json_response(200, {{"drains", list}});
    }
    case EndpointId::kDrainCreate: {
      const json j = parse_object(req.body, {"target", "node", "port", "reason", "expires"});
      const std::string target = get_string(j, "target", true);
      std::optional<ctl::DrainKind> kind = ctl::parse_drain_kind(target);
      if (!kind) throw Failure::invalid("field 'target' must be link, port or switch");
      ctl::DrainRequest d;
      d.kind = *kind;
      d.node = get_string(j, "node", true);
      if (d.node.empty()) throw Failure::invalid("field 'node' must not be empty");
      d.port = get_port(j, d.kind != ctl::DrainKind::kSwitch);
      if (d.kind == ctl::DrainKind::kSwitch && j.contains("port")) {
        throw Failure::invalid("a switch drain takes no 'port'");
      }
      d.reason = get_string(j, "reason", true);
      if (d.reason.empty()) throw Failure::invalid("field 'reason' must say why");
      d.expires_at = parse_expires(j);
      const bool dry_run = query_flag(req, "dry_run");
      const int done = dry_run ? 200 : 201;
      const ctl::DrainOutcome o = c_.drain(d, replying(actor, done), dry_run, query_flag(req, "force"));
      *audited = o.audited;
      return outcome_response(o, drain_body(o), done);
    }
    case EndpointId::kDrainDelete: {
      const ctl::DrainOutcome o = c_.undrain(parse_id(params, "id"), replying(actor, 200), query_flag(req, "dry_run"));
      *audited = o.audited;
      return outcome_response(o, drain_body(o), 200);
    }
    case EndpointId::kReroute: {
      const json j = parse_object(req.body, {"reason"}, true);
      const ctl::RerouteOutcome o = c_.reroute(replying(actor, 202), get_string(j, "reason", false));
      *audited = o.audited;
      return outcome_response(o, o.reroute ? json{{"reroute", render_reroute(*o.reroute)}} : json::object(), 202);
    }
    case EndpointId::kReroutesList: {
      json list = json::array();
      for (const ctl::RerouteRecord& r : c_.store().reroutes(100)) list.push_back(render_reroute(r));
      return json_response(200, {{"reroutes", list}});
    }
    case EndpointId::kRerouteGet: {
      std::optional<ctl::RerouteRecord> r = c_.store().reroute(params.at("id"));
      if (!r) throw Failure::not_found("no reroute request '" + params.at("id") + "'");
      return json_response(200, render_reroute(*r));
    }
    case EndpointId::kLinkEvent: {
      const json j = parse_object(req.body, {"id", "node", "port", "state", "reason", "time"});
      ctl::LinkEventRequest l;
      l.event_id = get_id(j, "id", 256);
      l.node = get_string(j, "node", true);
      l.port = get_port(j, true);
      const std::optional<ctl::LinkState> state = ctl::parse_link_state(get_string(j, "state", true));
      if (!state) throw Failure::invalid("field 'state' must be down or up");
      l.state = *state;
      l.reason = get_string(j, "reason", false);
      if (j.contains("time")) {
        if (!j["time"].is_number() || !std::isfinite(j["time"].get<double>())) {
          throw Failure::invalid("field 'time' must be a Unix time");
        }
        l.time = j["time"].get<double>();
      }
      const ctl::LinkEventOutcome o = c_.link_event(l, replying(actor, 201), query_flag(req, "force"));
      *audited = o.audited;
      json body = {{"duplicate", o.duplicate}};
      if (o.event.id) body["event"] = render_event(o.event);
      if (o.impact.pairs_cut || o.impact.route_ms) body["impact"] = render_impact(o.impact);
      if (o.reroute) body["reroute"] = render_reroute(*o.reroute);
      // The same event again changes nothing: 200, not 201.
      return outcome_response(o, body, o.duplicate ? 200 : 201);
    }
    case EndpointId::kArSummary:
    case EndpointId::kAr: {
      auto v = need_view(c_);
      auto ar = c_.ar_tables();
      if (!ar) throw ar.failure();
      if (e.id == EndpointId::kArSummary) return json_response(200, render_ar_summary(*v, **ar));
      Lid ignored;
      const NodeId sw = find_node_or_lid(v->fabric, params.at("switch"), &ignored);
      if (!sw.valid() || !v->fabric.is_switch(sw)) {
        throw Failure::not_found("no switch '" + params.at("switch") + "'");
      }
      auto sws = v->fabric.switches();
      const uint32_t index = static_cast<uint32_t>(std::lower_bound(sws.begin(), sws.end(), sw) - sws.begin());
      const int lid = static_cast<int>(query_int(req, "lid", -1, 1, 0xBFFF));
      return json_response(200, render_ar_switch(*v, **ar, index, lid));
    }
    case EndpointId::kJobsList: {
      json list = json::array();
      for (const ctl::JobRecord& j : c_.store().jobs(!query_flag(req, "all"))) {
        json item = render_job(j);
        // The list is a summary: trees without their switch lists.
        for (json& t : item["trees"]) t.erase("switches");
        list.push_back(item);
      }
      return json_response(200, {{"jobs", list}});
    }
    case EndpointId::kJobGet: {
      std::optional<ctl::JobRecord> j = c_.store().job(params.at("id"));
      if (!j) throw Failure::not_found("no job '" + params.at("id") + "'");
      return json_response(200, render_job(*j));
    }
    case EndpointId::kJobCreate: {
      const json j = parse_object(req.body, {"id", "hosts", "cas", "rails"});
      ctl::JobRequest job;
      job.id = get_id(j, "id", 128);
      auto strings = [&](const char* key, std::vector<std::string>* out) {
        if (!j.contains(key)) return;
        if (!j[key].is_array()) throw Failure::invalid(std::string("field '") + key + "' must be a list of names");
        for (const json& v : j[key]) {
          if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 1024 ||
              !is_clean_utf8(v.get<std::string>())) {
            throw Failure::invalid(std::string("field '") + key +
                                   "' must hold names (1..1024 bytes, no control characters)");
          }
          if (out->size() >= 65536) {
            throw Failure::invalid(std::string("field '") + key + "' names more than 65,536");
          }
          out->push_back(v.get<std::string>());
        }
      };
      strings("hosts", &job.hosts);
      strings("cas", &job.cas);
      if (job.hosts.empty() && job.cas.empty()) throw Failure::invalid("a job needs 'hosts' or 'cas'");
      if (j.contains("rails")) {
        if (!j["rails"].is_array()) throw Failure::invalid("field 'rails' must be a list of rail numbers");
        for (const json& r : j["rails"]) {
          if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > 1023) {
            throw Failure::invalid("field 'rails' must hold integers 0..1023");
          }
          job.rails.push_back(static_cast<int32_t>(r.get<int64_t>()));
        }
      }
      const ctl::JobOutcome o = c_.create_job(job, replying(actor, 201));
      *audited = o.audited;
      return outcome_response(o, o.job ? render_job(*o.job) : json::object(), 201);
    }
    case EndpointId::kJobDelete: {
      const ctl::JobOutcome o = c_.delete_job(params.at("id"), replying(actor, 200));
      *audited = o.audited;
      return outcome_response(o, o.job ? json{{"job", render_job(*o.job)}} : json::object(), 200);
    }
    case EndpointId::kIsolation:
      return json_response(200, render_isolation(need_isolation(isolation_)->snapshot()));
    case EndpointId::kIsolationReset: {
      parse_object(req.body, {}, true);
      const ctl::Outcome o = need_isolation(isolation_)->reset(replying(actor, 200), ctl::unix_now());
      *audited = o.audited;
      return outcome_response(o, render_isolation(isolation_->snapshot()), 200);
    }
    case EndpointId::kIsolationExclude: {
      const json j = parse_object(req.body, {"target", "reason", "expires"});
      ctl::ExcludeEntry x;
      x.target = get_string(j, "target", true);
      x.reason = get_string(j, "reason", false);
      x.expires_at = parse_expires(j);
      const ctl::Outcome o = need_isolation(isolation_)->exclude(x, replying(actor, 201), ctl::unix_now());
      *audited = o.audited;
      return outcome_response(o, render_isolation(isolation_->snapshot()), 201);
    }
    case EndpointId::kIsolationUnexclude: {
      const ctl::Outcome o =
          need_isolation(isolation_)->unexclude(params.at("target"), replying(actor, 200), ctl::unix_now());
      *audited = o.audited;
      return outcome_response(o, render_isolation(isolation_->snapshot()), 200);
    }
    default: break;
  }
  throw Failure::internal("not implemented: " + std::string(e.pattern));
}

}  // namespace railyard::api
