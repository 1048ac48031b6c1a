#include "api/endpoints.h"

#include <array>

#include "api/api.h"
#include "api/http_types.h"
#include "api/request_bodies.h"

namespace railyard::api {

namespace {

constexpr QueryParam kLinksQuery[] = {{"state", "up | down | drained: only links in this state"}};
constexpr QueryParam kEventsQuery[] = {{"since", "return events with id > since (default 0)"},
                                       {"limit", "at most this many (default 100, max 1000)"}};
constexpr QueryParam kDryRun[] = {{"dry_run", "true: say what would change, change nothing"}};
constexpr QueryParam kDrainCreateQuery[] = {{"dry_run", "true: say what would change, change nothing"},
                                            {"force", "true: drain even if CA pairs would be cut"}};
constexpr QueryParam kRouteQuery[] = {{"src_port", "the source CA's port (default: its first cabled port)"}};
constexpr QueryParam kLinkEventQuery[] = {
    {"force", "true: apply a \"down\" even when it leaves CA pairs without a path (otherwise 409, nothing recorded)"}};
constexpr QueryParam kJobsQuery[] = {{"all", "true: also refused and deleted jobs"}};
constexpr QueryParam kSlurmQuery[] = {
    {"format", "conf (default): topology.conf for topology/tree; yaml: Slurm 25.05 topology.yaml (tree and block)"}};
constexpr QueryParam kRailEventsQuery[] = {{"host", "only these hosts (comma-separated names)"}};
constexpr QueryParam kEventStreamQuery[] = {{"since", "send events with id > since (default: only new ones)"}};
constexpr QueryParam kGridQuery[] = {
    {"loads", "predicted: each switch link's all-to-all flows (the verifier's edge forwarding index)"}};
constexpr QueryParam kArQuery[] = {{"lid", "only this destination LID"}};

// "/api/v1/routes/{src}/{dst}" against "/api/v1/routes/a/b".
bool match_pattern(std::string_view pattern, std::string_view path, std::map<std::string, std::string>* params) {
  while (!pattern.empty() || !path.empty()) {
    if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return false;
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const size_t pe = pattern.find('/');
    const size_t se = path.find('/');
    std::string_view pseg = pattern.substr(0, pe);
    std::string_view sseg = path.substr(0, se);
    if (pseg.size() >= 2 && pseg.front() == '{' && pseg.back() == '}') {
      std::string value;
      if (sseg.empty() || !percent_decode(sseg, &value, false) || value.empty()) return false;
      (*params)[std::string(pseg.substr(1, pseg.size() - 2))] = std::move(value);
    } else if (pseg != sseg) {
      return false;
    }
    pattern = pe == std::string_view::npos ? std::string_view() : pattern.substr(pe);
    path = se == std::string_view::npos ? std::string_view() : path.substr(se);
  }
  return true;
}

// Each EndpointId has exactly one row, and each row a handler.
constexpr bool complete(std::span<const Endpoint> table) {
  if (table.size() != static_cast<size_t>(EndpointId::kCount)) return false;
  for (size_t id = 0; id < table.size(); ++id) {
    size_t rows = 0;
    for (const Endpoint& e : table) rows += static_cast<size_t>(e.id) == id ? 1 : 0;
    if (rows != 1) return false;
  }
  for (const Endpoint& e : table) {
    if (e.handler == nullptr) return false;
  }
  return true;
}

}  // namespace

// A friend of Api: the rows name its private handlers.
std::span<const Endpoint> endpoints() {
  using controller::Role;
  static constexpr Endpoint kEndpoints[] = {
      {EndpointId::kIndex, "GET", "/api/v1", Role::kViewer, false, "This list of endpoints", {}, "",
       &Api::index, {200}, nullptr, nullptr},
      {EndpointId::kOpenApi, "GET", "/api/v1/openapi.json", Role::kNone, false, "OpenAPI 3 document of this API", {}, "",
       &Api::openapi, {200}, nullptr, nullptr},
      {EndpointId::kHealth, "GET", "/api/v1/health", Role::kNone, false,
       "Liveness: fabric loaded, plugin connected, database writable", {}, "",
       &Api::health, {200, 503}, nullptr, &kHealthDocument},
      {EndpointId::kFabric, "GET", "/api/v1/fabric", Role::kViewer, false,
       "Fabric summary: sizes, rails, levels, link states, routing quality", {}, "",
       &Api::document, {200, 503}, nullptr, &kFabricDocument},
      {EndpointId::kWhoami, "GET", "/api/v1/whoami", Role::kViewer, false, "The caller's token name and role", {}, "",
       &Api::whoami, {200}, nullptr, nullptr},
      {EndpointId::kGrid, "GET", "/api/v1/grid", Role::kViewer, false,
       "The fabric picture of the web console: switches by level and rail, CA links per leaf, switch links with "
       "state (and predicted load)",
       kGridQuery, "",
       &Api::grid, {200, 400, 503}, nullptr, nullptr},
      {EndpointId::kSwitches, "GET", "/api/v1/switches", Role::kViewer, false,
       "Switches: GUID, LID, level, rail, ports up, drains", {}, "",
       &Api::document, {200, 503}, nullptr, nullptr},
      {EndpointId::kHosts, "GET", "/api/v1/hosts", Role::kViewer, false,
       "Hosts: their CAs by rail, the leaf per rail, per-rail health", {}, "",
       &Api::document, {200, 503}, nullptr, nullptr},
      {EndpointId::kHostRails, "GET", "/api/v1/hosts/{host}/rails", Role::kViewer, false,
       "One host's rails: per rail its CA, leaf and health (healthy, degraded, isolated, drained, down)", {}, "",
       &Api::host_rails, {200, 404, 503}, nullptr, nullptr},
      {EndpointId::kRailEvents, "GET", "/api/v1/rails/events", Role::kViewer, false,
       "Server-sent events (text/event-stream): a `rails` event per host on connect, then one per host whose rails "
       "changed; data as GET /hosts/{host}/rails (at most 64 streams)",
       kRailEventsQuery, "",
       &Api::rail_events, {200, 404, 503}, nullptr, nullptr},
      {EndpointId::kLinks, "GET", "/api/v1/links", Role::kViewer, false, "Links and their state", kLinksQuery, "",
       &Api::links, {200, 400}, nullptr, nullptr},
      {EndpointId::kLinkCounters, "GET", "/api/v1/links/{link}/counters", Role::kViewer, false,
       "A link's perf-manager counters (link: NODE[PORT], either end): each end's PortXmitWait, data and error "
       "rates, totals and history",
       {}, "",
       &Api::link_counters, {200, 400, 404, 503}, nullptr, nullptr},
      {EndpointId::kHotspots, "GET", "/api/v1/hotspots", Role::kViewer, false,
       "Hot ports (PortXmitWait rate over telemetry.hot_xmit_wait_per_s, hottest first, top N) and error bursts", {},
       "",
       &Api::hotspots, {200}, nullptr, nullptr},
      {EndpointId::kRoute, "GET", "/api/v1/routes/{src}/{dst}", Role::kViewer, false,
       "Hop-by-hop path from src to dst (node name, GUID or LID)", kRouteQuery, "",
       &Api::route, {200, 400, 404, 503}, nullptr, nullptr},
      {EndpointId::kEvents, "GET", "/api/v1/events", Role::kViewer, false, "Recorded events", kEventsQuery, "",
       &Api::events, {200, 400, 503}, nullptr, nullptr},
      {EndpointId::kEventStream, "GET", "/api/v1/events/stream", Role::kViewer, false,
       "Server-sent events (text/event-stream): each recorded event as it is recorded", kEventStreamQuery, "",
       &Api::event_stream, {200, 400, 503}, nullptr, nullptr},
      {EndpointId::kSlurm, "GET", "/api/v1/topology/slurm", Role::kViewer, false,
       "Slurm topology.conf or topology.yaml (text/plain): blocks of hosts sharing their rail leaves, pods, the fabric; "
       "hosts with a broken rail listed for exclusion",
       kSlurmQuery, "",
       &Api::scheduler_topology, {200, 400, 503}, nullptr, nullptr},
      {EndpointId::kKubernetes, "GET", "/api/v1/topology/kubernetes", Role::kViewer, false,
       "Kubernetes YAML: a Kueue Topology and per node Topograph-style topology labels and a health label per rail", {},
       "",
       &Api::scheduler_topology, {200, 503}, nullptr, nullptr},
      {EndpointId::kMetrics, "GET", "/api/v1/metrics", Role::kNone, false,
       "Prometheus metrics (text/plain)", {}, "",
       &Api::metrics, {200}, nullptr, nullptr},
      {EndpointId::kDrainsList, "GET", "/api/v1/drains", Role::kViewer, false, "Active drains", {}, "",
       &Api::drains_list, {200}, nullptr, &kDrainsDocument},
      {EndpointId::kDrainCreate, "POST", "/api/v1/drains", Role::kOperator, true,
       "Drain a link, port or switch; 409 if CA pairs would be cut (unless force)", kDrainCreateQuery,
       R"({"target": "link|port|switch", "node": "GUID, name or description", "port": 1, "reason": "...", "expires": "<Unix time or seconds from now as \"+3600\">"})",
       &Api::drain_create, {200, 201, 400, 404, 409, 503}, &kDrainBody, &kDrainOutcomeDocument},
      {EndpointId::kDrainDelete, "DELETE", "/api/v1/drains/{id}", Role::kOperator, true, "Undrain", kDryRun, "",
       &Api::drain_delete, {200, 400, 404, 503}, nullptr, &kDrainOutcomeDocument},
      {EndpointId::kReroute, "POST", "/api/v1/reroute", Role::kOperator, true,
       "Recompute and push the forwarding tables now (rate-limited)", {}, R"({"reason": "..."} (optional))",
       &Api::reroute, {202, 400, 429, 503}, &kRerouteBody, &kRerouteAccepted},
      {EndpointId::kReroutesList, "GET", "/api/v1/reroutes", Role::kViewer, false,
       "Reroute requests: pending, applied or failed, with latency", {}, "",
       &Api::reroutes_list, {200, 503}, nullptr, &kReroutesDocument},
      {EndpointId::kRerouteGet, "GET", "/api/v1/reroutes/{id}", Role::kViewer, false, "One reroute request", {}, "",
       &Api::reroute_get, {200, 404, 503}, nullptr, &kRerouteDocument},
      {EndpointId::kLinkEvent, "POST", "/api/v1/events/link", Role::kOperator, true,
       "Outside monitoring reports a link down or up (idempotent by id; a down that cuts CAs off needs force)",
       kLinkEventQuery,
       R"({"id": "monitor-event-id", "node": "GUID, name or description", "port": 1, "state": "down|up", "reason": "...", "time": 0})",
       &Api::link_event, {200, 201, 400, 404, 409, 503}, &kLinkEventBody, nullptr},
      {EndpointId::kArSummary, "GET", "/api/v1/ar", Role::kViewer, false,
       "Adaptive-routing groups: per switch counts, maximum, over-limit switches", {}, "",
       &Api::ar_summary, {200, 503}, nullptr, nullptr},
      {EndpointId::kAr, "GET", "/api/v1/ar/{switch}", Role::kViewer, false,
       "One switch's AR group table and destination -> group map", kArQuery, "",
       &Api::ar_switch, {200, 400, 404, 503}, nullptr, nullptr},
      {EndpointId::kJobsList, "GET", "/api/v1/jobs", Role::kViewer, false,
       "SHARP jobs and their aggregation trees (active by default)", kJobsQuery, "",
       &Api::jobs_list, {200, 400, 503}, nullptr, nullptr},
      {EndpointId::kJobCreate, "POST", "/api/v1/jobs", Role::kOperator, true,
       "Allocate SHARP trees for a job: one per rail, shallowest root, capacity shared by all jobs", {},
       R"({"id": "job-42", "hosts": ["node001", "node002"], "cas": ["node003 mlx5_0"], "rails": [0, 1]})",
       &Api::job_create, {201, 400, 404, 409, 503}, &kJobBody, nullptr},
      {EndpointId::kJobGet, "GET", "/api/v1/jobs/{id}", Role::kViewer, false,
       "One job: per rail the root, each switch's parent and children, each leaf's CAs, height, fan-in", {}, "",
       &Api::job_get, {200, 404, 503}, nullptr, nullptr},
      {EndpointId::kJobDelete, "DELETE", "/api/v1/jobs/{id}", Role::kOperator, true,
       "Release a job's SHARP trees (frees their switch slots)", {}, "",
       &Api::job_delete, {200, 404, 503}, nullptr, nullptr},
      {EndpointId::kIsolation, "GET", "/api/v1/isolation", Role::kViewer, false,
       "Automatic isolation: config, the breaker (tripped or not), links isolated, the exclude list, recent flaps", {},
       "",
       &Api::isolation, {200, 503}, nullptr, nullptr},
      {EndpointId::kIsolationReset, "POST", "/api/v1/isolation/reset", Role::kOperator, true,
       "Reset the breaker: automation resumes", {}, "",
       &Api::isolation_reset, {200, 400, 503}, &kEmptyBody, nullptr},
      {EndpointId::kIsolationExclude, "POST", "/api/v1/isolation/exclude", Role::kOperator, true,
       "Never isolate this link or node automatically (until it expires)", {},
       R"({"target": "0x<guid>[port] or 0x<guid>", "reason": "...", "expires": "<Unix time or \"+SECONDS\">"})",
       &Api::isolation_exclude, {201, 400, 503}, &kExcludeBody, nullptr},
      {EndpointId::kIsolationUnexclude, "DELETE", "/api/v1/isolation/exclude/{target}", Role::kOperator, true,
       "Take a link or node off the exclude list", {}, "",
       &Api::isolation_unexclude, {200, 404, 503}, nullptr, nullptr},
  };
  static_assert(complete(kEndpoints), "every EndpointId needs exactly one row with a handler");
  return kEndpoints;
}

std::vector<int> Statuses::list() const {
  std::vector<int> out;
  for (int code : kKnown) {
    if (contains(code)) out.push_back(code);
  }
  return out;
}

Statuses answered(const Endpoint& e) {
  Statuses s = e.statuses.with(400).with(500);
  return e.role == controller::Role::kNone ? s : s.with(401).with(403);
}

Match match(std::string_view method, std::string_view path) {
  if (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  Match m;
  for (const Endpoint& e : endpoints()) {
    std::map<std::string, std::string> params;
    if (!match_pattern(e.pattern, path, &params)) continue;
    m.path_known = true;
    if (e.method == method) {
      m.endpoint = &e;
      m.params = std::move(params);
      return m;
    }
  }
  return m;
}

}  // namespace railyard::api
