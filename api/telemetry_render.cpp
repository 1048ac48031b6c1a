#include "api/telemetry_render.h"

#include <cmath>

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;

namespace {

// Rates as sent: finite, rounded to 3 decimals (floats carry ~7 digits).
double rate(float r) { return std::isfinite(r) ? std::round(static_cast<double>(r) * 1000) / 1000 : 0.0; }

json render_wait(const ctl::WaitSample& s) {
  return {{"time", s.time},
          {"interval_s", rate(s.interval_s)},
          {"xmit_wait_per_s", rate(s.xmit_wait_per_s)},
          {"errors", s.errors},
          {"xmit_discards", s.xmit_discards}};
}

json render_data(const ctl::DataSample& s) {
  return {{"time", s.time},
          {"interval_s", rate(s.interval_s)},
          {"xmit_bytes_per_s", rate(s.xmit_bytes_per_s)},
          {"rcv_bytes_per_s", rate(s.rcv_bytes_per_s)},
          {"xmit_pkts_per_s", rate(s.xmit_pkts_per_s)},
          {"rcv_pkts_per_s", rate(s.rcv_pkts_per_s)}};
}

json render_place(const PortPlace& p) {
  json j = {{"port", p.port}, {"name", p.name}};
  j["link"] = p.link.empty() ? json() : json(p.link);
  j["peer"] = p.peer.empty() ? json() : json(p.peer);
  return j;
}

}  // namespace

PortPlace place_port(const ctl::FabricView* v, uint64_t node_guid, uint8_t port, const std::string& node_name) {
  PortPlace p;
  p.port = routing::to_string(Guid{node_guid}) + "[" + std::to_string(port) + "]";
  p.name = node_name + "[" + std::to_string(port) + "]";
  if (v == nullptr) return p;
  const routing::Fabric& f = v->fabric;
  const NodeId node = f.find_node_guid(Guid{node_guid});
  if (!node.valid() || port < 1 || port > f.node(node).num_ports) return p;
  const PortId id = f.port_id(node, PortNum{port});
  p.name = ctl::port_label(f, id);
  const routing::Port& pt = f.port(id);
  if (pt.remote.valid()) {
    p.link = ctl::link_key(f, pt.link);
    p.peer = ctl::port_label(f, pt.remote);
  }
  return p;
}

json render_hotspots(const ctl::Telemetry& t, const ctl::FabricView* v, double now) {
  const ctl::TelemetryConfig& c = t.config();
  const ctl::TelemetrySummary s = t.summary(now);
  json hot = json::array();
  uint32_t rank = 0;
  for (const ctl::HotPort& h : t.hot(now)) {
    json j = render_place(place_port(v, h.node_guid, h.port, h.node_name));
    j["rank"] = ++rank;
    j["xmit_wait_per_s"] = rate(h.latest.xmit_wait_per_s);
    j["errors"] = h.latest.errors;
    j["interval_s"] = rate(h.latest.interval_s);
    j["time"] = h.latest.time;
    j["xmit_bytes_per_s"] = h.latest_data ? json(rate(h.latest_data->xmit_bytes_per_s)) : json();
    hot.push_back(std::move(j));
  }
  json bursts = json::array();
  for (const ctl::ErrorBurst& b : t.bursts()) {
    json j = render_place(place_port(v, b.node_guid, b.port, b.node_name));
    j["errors"] = b.errors;
    j["interval_s"] = rate(b.interval_s);
    j["time"] = b.time;
    bursts.push_back(std::move(j));
  }
  json baselines = json::object();
  for (ctl::BaselineReason r : {ctl::BaselineReason::kFirst, ctl::BaselineReason::kGap, ctl::BaselineReason::kWrap}) {
    auto it = s.baselines.find(r);
    baselines[std::string(ctl::to_string(r))] = it == s.baselines.end() ? 0 : it->second;
  }
  return {{"hot", hot},
          {"hot_ports", s.hot_ports},
          {"error_bursts", bursts},
          {"error_bursts_total", s.error_bursts},
          {"settings",
           {{"hot_xmit_wait_per_s", c.hot_xmit_wait_per_s},
            {"top_n", c.top_n},
            {"error_burst", c.error_burst},
            {"history", c.history}}},
          {"ports", s.ports},
          {"ports_ignored", s.ports_ignored},
          {"samples", s.samples},
          {"baselines", baselines},
          {"sweep_interval_s", s.sweep_interval_s > 0 ? json(std::round(s.sweep_interval_s * 1000) / 1000) : json()},
          {"last_sample_time", s.last_sample_time > 0 ? json(s.last_sample_time) : json()}};
}

json render_link_counters(const ctl::Telemetry& t, const ctl::FabricView& v, LinkId link) {
  const routing::Fabric& f = v.fabric;
  const routing::Link& l = f.link(link);
  json ends = json::array();
  for (PortId end : {l.a, l.b}) {
    const routing::Port& p = f.port(end);
    const uint64_t guid = f.node(p.node).guid.value;
    const uint8_t num = p.num.value;
    const std::optional<ctl::PortTelemetry> pt = t.port(guid, num);
    json j = {{"port", ctl::port_key(f, end)}, {"name", ctl::port_label(f, end)}, {"reported", pt.has_value()}};
    json wait = json::array(), data = json::array();
    if (pt) {
      for (const ctl::WaitSample& s : pt->wait) wait.push_back(render_wait(s));
      for (const ctl::DataSample& s : pt->data) data.push_back(render_data(s));
      j["totals"] = {{"xmit_wait", pt->totals.xmit_wait},
                     {"xmit_bytes", pt->totals.xmit_bytes},
                     {"rcv_bytes", pt->totals.rcv_bytes},
                     {"errors", pt->totals.errors}};
      j["baselines"] = pt->baselines;
    }
    j["latest"] = {{"wait", wait.empty() ? json() : wait.back()}, {"data", data.empty() ? json() : data.back()}};
    j["history"] = {{"wait", wait}, {"data", data}};
    ends.push_back(std::move(j));
  }
  return {{"link", ctl::link_key(f, link)},
          {"ends", ends},
          {"history_size", t.config().history},
          {"hot_xmit_wait_per_s", t.config().hot_xmit_wait_per_s}};
}

}  // namespace railyard::api
