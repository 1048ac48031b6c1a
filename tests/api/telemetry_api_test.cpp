// Telemetry over real HTTP: perf-manager lines (encoded by api/protocol/, as the
// plugin sends them) fed to the controller, then GET /api/v1/hotspots,
// GET /api/v1/links/{link}/counters and /api/v1/metrics: checked by promtool
// (Prometheus' own linter), counters never going down, bounded per-port
// series, and the Grafana dashboard's queries naming exported metrics.
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "api/protocol/event_codec.h"
#include "tests/api/daemon.h"

namespace railyard::api {
namespace {

using namespace railyard::api::test_support;

// One end of a link of the generated fabric, as OpenSM's perf manager names it.
struct End {
  uint64_t guid = 0;
  uint8_t port = 0;
  std::string desc;
};

class TelemetryApiTest : public ApiTest {
 protected:
  // The spine end of "leaf g000 r0"[uplink], and the leaf end.
  std::pair<End, End> uplink(Daemon& d, uint8_t leaf_port) {
    auto v = d.controller().view();
    const routing::Fabric& f = v->fabric;
    const NodeId leaf = f.find_name("leaf g000 r0");
    EXPECT_TRUE(leaf.valid());
    const PortId lp = f.port_id(leaf, PortNum{leaf_port});
    const PortId sp = f.port(lp).remote;
    End l{f.node(leaf).guid.value, leaf_port, "leaf g000 r0"};
    End s{f.node(f.port(sp).node).guid.value, f.port(sp).num.value, std::string(f.desc(f.port(sp).node))};
    return {s, l};
  }

  void send_errors(Daemon& d, const End& e, double time, uint64_t xmit_wait, int64_t diff, uint64_t symbol_err = 0) {
    protocol::PortErrorsEvent pe;
    pe.port = protocol::CounterPort{e.guid, e.port, e.desc};
    pe.xmit_wait = xmit_wait;
    pe.symbol_err = symbol_err;
    pe.time_diff_s = diff;
    d.controller().on_plugin_line(protocol::encode_event(protocol::Event{++seq_, time, pe}));
  }
  void send_data(Daemon& d, const End& e, double time, uint64_t words, int64_t diff) {
    protocol::PortCountersEvent pc;
    pc.port = protocol::CounterPort{e.guid, e.port, e.desc};
    pc.xmit_data = words;
    pc.rcv_data = words;
    pc.xmit_pkts = words / 64;
    pc.rcv_pkts = words / 64;
    pc.time_diff_s = diff;
    d.controller().on_plugin_line(protocol::encode_event(protocol::Event{++seq_, time, pc}));
  }

  uint64_t seq_ = 0;
};

Daemon::Tweak telemetry_settings() {
  return [](controller::ControllerConfig& c) {
    c.telemetry.top_n = 3;
    c.telemetry.hot_xmit_wait_per_s = 100;
    c.telemetry.error_burst = 5;
    c.telemetry.history = 8;
  };
}

TEST_F(TelemetryApiTest, HotspotsRankPortsAndNameTheirLinks) {
  Daemon d(dir_, telemetry_settings());
  json empty = d.get("/api/v1/hotspots").doc();
  EXPECT_EQ(empty["hot"].size(), 0u);
  EXPECT_EQ(empty["ports"], 0);
  EXPECT_EQ(empty["settings"]["top_n"], 3);
  EXPECT_EQ(d.get("/api/v1/hotspots", "").status, 401);

  const double t0 = controller::unix_now() - 5;
  // Six spine ports toward "leaf g000 r0"'s uplinks 9..14, PortXmitWait rates
  // 0, 50, 300, 1000, 200, 700 ticks/s: four over 100, three listed.
  const uint64_t rates[] = {0, 50, 300, 1000, 200, 700};
  std::vector<End> spines;
  for (uint8_t i = 0; i < 6; ++i) spines.push_back(uplink(d, static_cast<uint8_t>(9 + i)).first);
  for (const End& s : spines) send_errors(d, s, t0, 123456789, 1);  // baselines
  for (size_t i = 0; i < spines.size(); ++i) send_errors(d, spines[i], t0 + 2, rates[i] * 2, 2);
  json hot = d.get("/api/v1/hotspots").doc();
  ASSERT_EQ(hot["hot"].size(), 3u) << hot.dump();
  EXPECT_EQ(hot["hot_ports"], 4);
  EXPECT_EQ(hot["ports"], 6);
  EXPECT_EQ(hot["baselines"]["first"], 6);
  const int expected_order[] = {3, 5, 2};  // 1000, 700, 300
  auto v = d.controller().view();
  for (int rank = 0; rank < 3; ++rank) {
    const json& h = hot["hot"][rank];
    const End& s = spines[expected_order[rank]];
    EXPECT_EQ(h["rank"], rank + 1);
    EXPECT_DOUBLE_EQ(h["xmit_wait_per_s"].get<double>(), double(rates[expected_order[rank]]));
    EXPECT_EQ(h["name"], s.desc + "[" + std::to_string(s.port) + "]");
    EXPECT_EQ(h["peer"], "leaf g000 r0[" + std::to_string(9 + expected_order[rank]) + "]");
    // The link's canonical name: the end with the lower GUID (the leaf's here).
    const End leaf = uplink(d, static_cast<uint8_t>(9 + expected_order[rank])).second;
    const End& low = leaf.guid < s.guid ? leaf : s;
    char key[64];
    std::snprintf(key, sizeof key, "0x%016llx[%u]", static_cast<unsigned long long>(low.guid), unsigned(low.port));
    EXPECT_EQ(h["link"], key);
  }
}

TEST_F(TelemetryApiTest, LinkCountersShowBothEndsAndTheirHistory) {
  Daemon d(dir_, telemetry_settings());
  const auto [spine, leaf] = uplink(d, 9);
  const double t0 = controller::unix_now() - 20;
  for (int i = 0; i <= 10; ++i) {
    send_errors(d, spine, t0 + i, static_cast<uint64_t>(i) * 10, 1);
    send_data(d, leaf, t0 + i, 1000, 1);
  }
  Reply r = d.get("/api/v1/links/leaf%20g000%20r0%5B9%5D/counters");
  ASSERT_EQ(r.status, 200) << r.body;
  json c = r.doc();
  EXPECT_EQ(c["history_size"], 8);
  ASSERT_EQ(c["ends"].size(), 2u);
  std::map<std::string, json> by_name;
  for (const json& e : c["ends"]) by_name[e["name"]] = e;
  const json& s = by_name.at(spine.desc + "[" + std::to_string(spine.port) + "]");
  const json& l = by_name.at("leaf g000 r0[9]");
  ASSERT_EQ(s["history"]["wait"].size(), 8u);  // the ring: the last 8 of 10 rates
  EXPECT_DOUBLE_EQ(s["history"]["wait"][0]["xmit_wait_per_s"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(s["latest"]["wait"]["xmit_wait_per_s"].get<double>(), 100);
  EXPECT_EQ(s["totals"]["xmit_wait"], 550);  // 10 + 20 + ... + 100 (the first sample is the baseline)
  EXPECT_TRUE(s["latest"]["data"].is_null());
  EXPECT_EQ(l["history"]["data"].size(), 8u);
  EXPECT_DOUBLE_EQ(l["latest"]["data"]["xmit_bytes_per_s"].get<double>(), 4000);  // 1000 words/s
  EXPECT_EQ(l["totals"]["xmit_bytes"], 10 * 4000);
  // Either end names the link; by GUID too.
  char by_guid[80];
  std::snprintf(by_guid, sizeof by_guid, "/api/v1/links/0x%016llx%%5B%u%%5D/counters",
                static_cast<unsigned long long>(spine.guid), unsigned(spine.port));
  EXPECT_EQ(d.get(by_guid).doc()["link"], c["link"]);

  EXPECT_EQ(d.get("/api/v1/links/leaf%20g000%20r0/counters").status, 400);       // no port
  EXPECT_EQ(d.get("/api/v1/links/leaf%20g000%20r0%5B99%5D/counters").status, 400);  // no such port
  EXPECT_EQ(d.get("/api/v1/links/leaf%20g000%20r0%5Bx%5D/counters").status, 400);
  Reply unknown = d.get("/api/v1/links/no%20such%20leaf%5B1%5D/counters");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
}

TEST_F(TelemetryApiTest, ErrorBurstsAreEventsAndSamplesAreNot) {
  Daemon d(dir_, telemetry_settings());
  const auto [spine, leaf] = uplink(d, 10);
  const double t0 = controller::unix_now() - 5;
  send_errors(d, leaf, t0, 0, 1);
  send_errors(d, leaf, t0 + 1, 0, 1, 3);   // under the bar (5)
  send_errors(d, leaf, t0 + 2, 0, 1, 40);  // a burst
  json hot = d.get("/api/v1/hotspots").doc();
  ASSERT_EQ(hot["error_bursts"].size(), 1u) << hot.dump();
  EXPECT_EQ(hot["error_bursts"][0]["errors"], 40);
  EXPECT_EQ(hot["error_bursts"][0]["name"], "leaf g000 r0[10]");
  json events = d.get("/api/v1/events?limit=1000").doc();
  size_t bursts = 0, samples = 0;
  for (const json& e : events["events"]) {
    bursts += e["type"] == "error_burst";
    samples += e["type"] == "port_errors" || e["type"] == "port_counters";
  }
  EXPECT_EQ(bursts, 1u) << events.dump();
  EXPECT_EQ(samples, 0u);
}

// ---- /metrics -----------------------------------------------------------------------------

std::string run_promtool(const std::string& text, int* rc) {
  const std::filesystem::path in = std::filesystem::temp_directory_path() /
                                   ("ry-metrics-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(in) << text;
  const std::string cmd = "promtool check metrics < '" + in.string() + "' 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    *rc = -1;
    return "popen failed";
  }
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  *rc = ::pclose(p);
  std::filesystem::remove(in);
  return out;
}

// Every sample line: "name{labels}" -> value.
std::map<std::string, double> samples_of(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

// Metric family names from "# TYPE name type".
std::map<std::string, std::string> families_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    std::istringstream w(line.substr(7));
    std::string name, type;
    w >> name >> type;
    out[name] = type;
  }
  return out;
}

TEST_F(TelemetryApiTest, MetricsPassPromtoolAndCountersNeverGoDown) {
  ASSERT_EQ(std::system("command -v promtool >/dev/null"), 0) << "promtool not found: run scripts/setup.sh (package prometheus)";
  Daemon d(dir_, telemetry_settings());
  // Recent samples (hot ports are those with a fresh sample); the later
  // ones may be ahead of the clock: the telemetry follows the plugin's times.
  const double t0 = controller::unix_now() - 4;
  std::vector<std::pair<End, End>> links;
  for (uint8_t p = 9; p <= 16; ++p) links.push_back(uplink(d, p));
  for (int i = 0; i <= 2; ++i) {
    for (const auto& [spine, leaf] : links) {
      send_errors(d, spine, t0 + i, 5000 * static_cast<uint64_t>(i), 1, i == 2 ? 9 : 0);
      send_data(d, leaf, t0 + i, 250000, 1);
    }
  }
  // A reroute, so the latency histogram has an observation.
  ASSERT_EQ(d.post("/api/v1/reroute", R"({"reason": "metrics test"})").status, 202);
  // The plugin link's counts (live), as railyardd's main hands them on.
  d.controller().set_plugin_link_stats([] { return controller::PluginLinkStats{3, 17, 2}; });
  const std::string first = d.get("/api/v1/metrics", "").body;
  int rc = 0;
  const std::string lint = run_promtool(first, &rc);
  EXPECT_EQ(rc, 0) << lint << "\n" << first;

  const std::map<std::string, std::string> families = families_of(first);
  for (const auto& [name, type] : families) {
    EXPECT_EQ(name.ends_with("_total"), type == "counter") << name << " is a " << type;
    EXPECT_EQ(name.find("_ms"), std::string::npos) << name << ": seconds, not milliseconds";
  }
  EXPECT_EQ(families.at("railyard_reroute_duration_seconds"), "histogram");
  EXPECT_EQ(families.at("railyard_http_request_duration_seconds"), "histogram");
  // Bounded: eight ports are hot, top_n (3) series are exported.
  std::map<std::string, double> s1 = samples_of(first);
  size_t hot_series = 0;
  for (const auto& [k, v] : s1) hot_series += k.rfind("railyard_hotspot_xmit_wait_ticks_per_second{", 0) == 0;
  EXPECT_EQ(hot_series, 3u) << first;
  EXPECT_EQ(s1.at("railyard_hot_ports"), 8);
  EXPECT_EQ(s1.at("railyard_reroute_duration_seconds_count"), 1);
  EXPECT_EQ(s1.at("railyard_reroute_duration_seconds_bucket{le=\"+Inf\"}"), 1);
  EXPECT_EQ(s1.at("railyard_plugin_peers_refused_total"), 3);
  EXPECT_EQ(s1.at("railyard_plugin_lines_ignored_total"), 17);
  EXPECT_EQ(s1.at("railyard_plugin_link_connections"), 2);

  // More samples: a wrapped delta, a reset after a gap, an ordinary one.
  const auto& [spine, leaf] = links[0];
  send_errors(d, spine, t0 + 3, uint64_t{0} - 5000, 1);
  send_data(d, leaf, t0 + 3, uint64_t{0} - 4, 1);
  send_errors(d, spine, t0 + 20, 4'000'000'000, 1);
  send_errors(d, spine, t0 + 21, 7000, 1);
  d.get("/api/v1/hotspots");
  const std::string second = d.get("/api/v1/metrics", "").body;
  const std::string lint2 = run_promtool(second, &rc);
  EXPECT_EQ(rc, 0) << lint2;
  const std::map<std::string, double> s2 = samples_of(second);
  for (const auto& [k, v] : s1) {
    const std::string name = k.substr(0, k.find('{'));
    const bool monotonic = name.ends_with("_total") || name.ends_with("_bucket") || name.ends_with("_count");
    if (!monotonic) continue;
    ASSERT_TRUE(s2.contains(k)) << k;
    EXPECT_GE(s2.at(k), v) << k << " went down";
  }
  EXPECT_EQ(s2.at("railyard_telemetry_baselines_total{reason=\"wrap\"}"), 2);
  EXPECT_EQ(s2.at("railyard_telemetry_baselines_total{reason=\"gap\"}"), 1);
  EXPECT_EQ(s2.at("railyard_port_xmit_wait_ticks_total"), s1.at("railyard_port_xmit_wait_ticks_total") + 7000);
  EXPECT_GT(s2.at("railyard_http_request_duration_seconds_count"), s1.at("railyard_http_request_duration_seconds_count"));
}

// config/grafana-railyard.json: parses, and every query names metrics this
// daemon exports (with telemetry data, so the hotspot series exist).
TEST_F(TelemetryApiTest, GrafanaDashboardQueriesNameExportedMetrics) {
  const std::filesystem::path path = std::filesystem::path(RAILYARD_SOURCE_DIR) / "config" / "grafana-railyard.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const json dash = json::parse(in, nullptr, false);
  ASSERT_FALSE(dash.is_discarded()) << path << " is not JSON";
  ASSERT_TRUE(dash.contains("panels") && dash["panels"].is_array());

  Daemon d(dir_, telemetry_settings());
  const auto [spine, leaf] = uplink(d, 9);
  const double t0 = controller::unix_now() - 5;
  send_errors(d, spine, t0, 0, 1);
  send_errors(d, spine, t0 + 1, 5000, 1);
  send_data(d, spine, t0, 0, 1);
  send_data(d, spine, t0 + 1, 5000, 1);
  const std::map<std::string, std::string> families = families_of(d.get("/api/v1/metrics", "").body);

  const std::regex metric_name("railyard_[a-z0-9_]+");
  size_t queries = 0;
  std::set<std::string> used;
  std::function<void(const json&)> walk = [&](const json& panels) {
    for (const json& p : panels) {
      if (p.contains("panels")) walk(p["panels"]);
      for (const json& t : p.value("targets", json::array())) {
        const std::string expr = t.value("expr", "");
        ASSERT_FALSE(expr.empty()) << "panel '" << p.value("title", "") << "' has a target without expr";
        ++queries;
        size_t names = 0;
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric_name); it != std::sregex_iterator(); ++it) {
          std::string name = it->str();
          for (const char* suffix : {"_bucket", "_sum", "_count"}) {
            const std::string base = name.substr(0, name.size() - std::strlen(suffix));
            if (name.ends_with(suffix) && families.contains(base) && families.at(base) == "histogram") name = base;
          }
          EXPECT_TRUE(families.contains(name)) << "panel '" << p.value("title", "") << "': " << name
                                               << " is not exported (" << expr << ")";
          used.insert(name);
          ++names;
        }
        EXPECT_GT(names, 0u) << "panel '" << p.value("title", "") << "' queries no railyard metric: " << expr;
      }
    }
  };
  walk(dash["panels"]);
  EXPECT_GE(queries, 8u);
  EXPECT_TRUE(used.contains("railyard_hotspot_xmit_wait_ticks_per_second"));
  EXPECT_TRUE(used.contains("railyard_reroute_duration_seconds"));
}

}  // namespace
}  // namespace railyard::api
