// The handlers of operations: automatic isolation, telemetry (hot ports, a
// link's counters), the schedulers' topologies (Slurm, Kubernetes), the web
// console's fabric picture and Prometheus metrics.
#include <charconv>

#include "api/api.h"
#include "api/console/grid.h"
#include "api/isolation_render.h"
#include "api/metrics.h"
#include "api/render.h"
#include "api/request.h"
#include "api/request_bodies.h"
#include "api/scheduler_render.h"
#include "api/telemetry_render.h"
#include "routing/node_lookup.h"

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;
using ctl::Failure;

namespace {

// The console's picture (api/console/grid.h) of the view, with the controller's
// link states and names, and with loads when asked.
json grid_document(const ctl::FabricView& v, const std::vector<ctl::LinkStatus>& links, bool loads) {
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

}  // namespace

HttpResponse Api::isolation(Call&) {
  return json_response(200, render_isolation(need_isolation(isolation_)->snapshot()));
}

HttpResponse Api::isolation_reset(Call& call) {
  parse_empty_request(call.request.body);
  const ctl::Outcome o = need_isolation(isolation_)->reset(replying(call.actor, 200), ctl::unix_now());
  call.audited = o.audited;
  return outcome_response(o, render_isolation(isolation_->snapshot()), 200);
}

HttpResponse Api::isolation_exclude(Call& call) {
  const ctl::ExcludeEntry x = parse_exclude_request(call.request.body);
  const ctl::Outcome o = need_isolation(isolation_)->exclude(x, replying(call.actor, 201), ctl::unix_now());
  call.audited = o.audited;
  return outcome_response(o, render_isolation(isolation_->snapshot()), 201);
}

HttpResponse Api::isolation_unexclude(Call& call) {
  const ctl::Outcome o =
      need_isolation(isolation_)->unexclude(call.params.at("target"), replying(call.actor, 200), ctl::unix_now());
  call.audited = o.audited;
  return outcome_response(o, render_isolation(isolation_->snapshot()), 200);
}

HttpResponse Api::hotspots(Call&) {
  auto v = c_.view();
  return json_response(200, render_hotspots(c_.telemetry(), v.get(), ctl::unix_now()));
}

// {link}: "NODE[PORT]", the node by GUID, record name or description, either
// end of the link.
HttpResponse Api::link_counters(Call& call) {
  const std::string& ref = call.params.at("link");
  auto v = need_view(c_);
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
  return json_response(200, render_link_counters(c_.telemetry(), *v, f.port(id).link));
}

HttpResponse Api::grid(Call& call) {
  bool loads = false;
  if (auto it = call.request.query.find("loads"); it != call.request.query.end()) {
    if (it->second != "predicted") throw Failure::invalid("query 'loads' must be predicted");
    loads = true;
  }
  // A whole-fabric document, and the loads walk every destination's tree:
  // once per controller generation.
  return cached(static_cast<int>(call.endpoint.id) * 2 + (loads ? 1 : 0) + 1000,
                [&] { return json_response(200, grid_document(*need_view(c_), *c_.links(), loads)); });
}

HttpResponse Api::scheduler_topology(Call& call) {
  const EndpointId id = call.endpoint.id;
  std::string format = id == EndpointId::kKubernetes ? "kubernetes" : "conf";
  if (auto it = call.request.query.find("format"); id == EndpointId::kSlurm && it != call.request.query.end()) {
    if (it->second != "conf" && it->second != "yaml") throw Failure::invalid("query 'format' must be conf or yaml");
    format = it->second;
  }
  const int key = static_cast<int>(id) * 4 + (format == "yaml" ? 1 : 0);
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

HttpResponse Api::metrics(Call&) {
  auto v = c_.view();
  return text_response(render_metrics(c_, *http_stats_, v.get(), *c_.links(), c_.drains().size()));
}

}  // namespace railyard::api
