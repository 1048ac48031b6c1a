#include "api/metrics.h"

#include <cstdio>

#include "api/api.h"
#include "api/render.h"
#include "api/telemetry_render.h"

namespace railyard::api {

namespace ctl = railyard::controller;

namespace {

// A label value as the text format wants it: \, " and newlines escaped.
std::string escape_label(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  // `labels`: pairs of name and raw value.
  void sample(const std::string& name, double value,
              std::initializer_list<std::pair<const char*, std::string>> labels = {}) {
    out_ += name;
    if (labels.size()) {
      char sep = '{';
      for (const auto& [k, v] : labels) {
        out_ += sep;
        out_ += k;
        out_ += "=\"" + escape_label(v) + "\"";
        sep = ',';
      }
      out_ += '}';
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.17g\n", value);
    out_ += buf;
  }
  void histogram(const char* name, const char* help, const ctl::Histogram& h) {
    family(name, "histogram", help);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      char le[32];
      std::snprintf(le, sizeof le, "%g", h.bounds()[i]);
      sample(std::string(name) + "_bucket", double(cumulative), {{"le", le}});
    }
    cumulative += h.counts().back();
    sample(std::string(name) + "_bucket", double(cumulative), {{"le", "+Inf"}});
    sample(std::string(name) + "_sum", h.sum());
    sample(std::string(name) + "_count", double(h.count()));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

void telemetry_metrics(Exposition& m, const ctl::Telemetry& t, const ctl::FabricView* v) {
  const double now = ctl::unix_now();
  const ctl::TelemetrySummary s = t.summary(now);
  m.family("railyard_telemetry_ports", "gauge", "Ports the perf manager reported counters for.");
  m.sample("railyard_telemetry_ports", double(s.ports));
  m.family("railyard_telemetry_ports_ignored_total", "counter",
           "Port reports ignored: more ports than telemetry.max_ports.");
  m.sample("railyard_telemetry_ports_ignored_total", double(s.ports_ignored));
  m.family("railyard_telemetry_samples_total", "counter", "Perf-manager samples received (port_errors, port_counters).");
  m.sample("railyard_telemetry_samples_total", double(s.samples));
  m.family("railyard_telemetry_baselines_total", "counter",
           "Samples not turned into rates: first of a port, a gap (reset), a wrapped delta.");
  for (ctl::BaselineReason r : {ctl::BaselineReason::kFirst, ctl::BaselineReason::kGap, ctl::BaselineReason::kWrap}) {
    auto it = s.baselines.find(r);
    m.sample("railyard_telemetry_baselines_total", it == s.baselines.end() ? 0.0 : double(it->second),
             {{"reason", std::string(ctl::to_string(r))}});
  }
  m.family("railyard_telemetry_last_sample_timestamp_seconds", "gauge",
           "Unix time of the last perf-manager sample (0: none yet).");
  m.sample("railyard_telemetry_last_sample_timestamp_seconds", s.last_sample_time);
  m.family("railyard_telemetry_sweep_interval_seconds", "gauge", "Interval of the last sample that was a rate.");
  m.sample("railyard_telemetry_sweep_interval_seconds", s.sweep_interval_s);
  m.family("railyard_port_xmit_wait_ticks_total", "counter",
           "PortXmitWait ticks of every reported port, added (samples that were rates).");
  m.sample("railyard_port_xmit_wait_ticks_total", double(s.totals.xmit_wait));
  m.family("railyard_port_transmit_bytes_total", "counter", "Bytes sent by every reported port, added.");
  m.sample("railyard_port_transmit_bytes_total", double(s.totals.xmit_bytes));
  m.family("railyard_port_receive_bytes_total", "counter", "Bytes received by every reported port, added.");
  m.sample("railyard_port_receive_bytes_total", double(s.totals.rcv_bytes));
  m.family("railyard_port_errors_total", "counter", "Error counter increments of every reported port, added.");
  m.sample("railyard_port_errors_total", double(s.totals.errors));
  m.family("railyard_error_bursts_total", "counter", "Samples with at least telemetry.error_burst errors.");
  m.sample("railyard_error_bursts_total", double(s.error_bursts));
  m.family("railyard_hot_ports", "gauge", "Ports whose PortXmitWait rate is over telemetry.hot_xmit_wait_per_s now.");
  m.sample("railyard_hot_ports", double(s.hot_ports));
  m.family("railyard_hotspot_threshold_xmit_wait_ticks_per_second", "gauge",
           "telemetry.hot_xmit_wait_per_s: the PortXmitWait rate from which a port is hot.");
  m.sample("railyard_hotspot_threshold_xmit_wait_ticks_per_second", t.config().hot_xmit_wait_per_s);
  // Per port: only the top-N hot ports (bounded cardinality on any fabric).
  const std::vector<ctl::HotPort> hot = t.hot(now);
  m.family("railyard_hotspot_xmit_wait_ticks_per_second", "gauge",
           "PortXmitWait rate of the telemetry.top_n hottest ports over the threshold.");
  for (const ctl::HotPort& h : hot) {
    const PortPlace p = place_port(v, h.node_guid, h.port, h.node_name);
    m.sample("railyard_hotspot_xmit_wait_ticks_per_second", h.latest.xmit_wait_per_s,
             {{"port", p.port}, {"name", p.name}, {"link", p.link}});
  }
  m.family("railyard_hotspot_transmit_bytes_per_second", "gauge", "Data rate sent by the same hot ports.");
  for (const ctl::HotPort& h : hot) {
    if (!h.latest_data) continue;
    const PortPlace p = place_port(v, h.node_guid, h.port, h.node_name);
    m.sample("railyard_hotspot_transmit_bytes_per_second", h.latest_data->xmit_bytes_per_s,
             {{"port", p.port}, {"name", p.name}, {"link", p.link}});
  }
}

}  // namespace

std::string render_metrics(const ctl::Controller& c, const HttpStats& http, const ctl::FabricView* v,
                           const std::vector<ctl::LinkStatus>& links, size_t drains) {
  const ctl::Counters k = c.counters();
  const LinkCounts lc = count_links(links);
  Exposition m;
  m.family("railyard_links", "gauge", "Links by state.");
  m.sample("railyard_links", double(lc.up), {{"state", "up"}});
  m.sample("railyard_links", double(lc.down), {{"state", "down"}});
  m.sample("railyard_links", double(lc.drained), {{"state", "drained"}});
  m.family("railyard_drains_active", "gauge", "Active drains.");
  m.sample("railyard_drains_active", double(drains));
  m.family("railyard_reroutes_total", "counter", "Reroute requests by outcome.");
  m.sample("railyard_reroutes_total", double(k.reroutes_requested), {{"status", "requested"}});
  m.sample("railyard_reroutes_total", double(k.reroutes_applied), {{"status", "applied"}});
  m.sample("railyard_reroutes_total", double(k.reroutes_failed), {{"status", "failed"}});
  m.sample("railyard_reroutes_total", double(k.reroutes_rate_limited), {{"status", "rate_limited"}});
  m.sample("railyard_reroutes_total", double(k.reroutes_coalesced), {{"status", "coalesced"}});
  m.histogram("railyard_reroute_duration_seconds", "Applied reroute requests: request to LFTs in place.",
              k.reroute_seconds);
  m.family("railyard_audit_refused_skipped_total", "counter",
           "Refused requests not audited one by one: over limits.refused_audits_per_minute, or the database failed.");
  m.sample("railyard_audit_refused_skipped_total", double(k.audits_suppressed), {{"reason", "rate"}});
  m.sample("railyard_audit_refused_skipped_total", double(k.audits_failed), {{"reason", "database"}});
  m.family("railyard_http_connections", "gauge", "Open HTTP connections.");
  m.sample("railyard_http_connections", double(http.open.load()));
  m.family("railyard_http_connections_refused_total", "counter",
           "Connections answered 503 at once: limits.max_connections reached.");
  m.sample("railyard_http_connections_refused_total", double(http.refused.load()));
  m.family("railyard_event_streams", "gauge", "Open server-sent-event streams.");
  m.sample("railyard_event_streams", double(http.event_streams.load()));
  m.histogram("railyard_http_request_duration_seconds", "Time to answer an API request (this one excluded).",
              http.request_durations());
  m.family("railyard_plugin_events_total", "counter", "Events received from the OpenSM plugin.");
  m.sample("railyard_plugin_events_total", double(k.plugin_events));
  m.family("railyard_plugin_events_dropped_total", "counter",
           "Events the plugin reported dropped (queue full, no controller).");
  m.sample("railyard_plugin_events_dropped_total", double(k.plugin_events_dropped));
  m.family("railyard_plugin_connections_total", "counter", "Connections of the OpenSM plugin.");
  m.sample("railyard_plugin_connections_total", double(k.plugin_connects));
  m.family("railyard_plugin_connected", "gauge", "1 when the OpenSM plugin is connected.");
  m.sample("railyard_plugin_connected", c.plugin_connected() ? 1 : 0);
  if (const std::optional<ctl::PluginLinkStats> link = c.plugin_link_stats()) {
    m.family("railyard_plugin_link_connections", "gauge",
             "Plugin connections open: the master SM's plugin and the standbys'.");
    m.sample("railyard_plugin_link_connections", double(link->connections));
    m.family("railyard_plugin_peers_refused_total", "counter",
             "Plugin-port peers refused: not allowed (credentials, token) or beyond the most connections.");
    m.sample("railyard_plugin_peers_refused_total", double(link->peers_refused));
    m.family("railyard_plugin_lines_ignored_total", "counter",
             "Lines of standby SMs' plugins ignored (only the master's plugin is heard).");
    m.sample("railyard_plugin_lines_ignored_total", double(link->lines_ignored));
  }
  m.family("railyard_routing_divergence_checks_total", "counter",
           "Plugin routing passes and pushes whose digests were compared with railyardd's route.");
  m.sample("railyard_routing_divergence_checks_total", double(k.divergence_checks));
  m.family("railyard_routing_divergences_total", "counter",
           "Plugin routing passes and pushes whose policy or LFT digests differed from railyardd's route.");
  m.sample("railyard_routing_divergences_total", double(k.divergences));
  m.family("railyard_plugin_fabric_resyncs_total", "counter",
           "Times the plugin was asked for the whole fabric again (its changes did not apply).");
  m.sample("railyard_plugin_fabric_resyncs_total", double(k.fabric_resyncs));
  m.family("railyard_lft_block_changes_total", "counter", "LFT blocks OpenSM pushed (plugin lft_change events).");
  m.sample("railyard_lft_block_changes_total", double(k.lft_changes));
  if (v) {
    m.family("railyard_fabric_version", "gauge", "Version of the routed fabric view.");
    m.sample("railyard_fabric_version", double(v->version));
    m.family("railyard_unreachable_pairs", "gauge", "CA pairs without a route.");
    m.sample("railyard_unreachable_pairs", double(v->routing.report.unreachable_pairs));
    m.family("railyard_route_duration_seconds", "gauge", "Time of the last full route computation of the view.");
    m.sample("railyard_route_duration_seconds", v->route_ms / 1000);
  }
  telemetry_metrics(m, c.telemetry(), v);
  return m.take();
}

}  // namespace railyard::api
