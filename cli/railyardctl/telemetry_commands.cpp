// Perf-manager telemetry: hotspots (the hottest ports by PortXmitWait rate,
// error bursts) and counters (one link's rates, both ends). Tables for
// people; --json prints the API's reply unchanged.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

// 1234567 -> "1.23M": rates span many orders of magnitude.
std::string si(const json& v, const char* unit = "") {
  if (!v.is_number()) return "-";
  double x = v.get<double>();
  const char* prefix = "";
  for (const char* p : {"k", "M", "G", "T"}) {
    if (std::fabs(x) < 1000) break;
    x /= 1000;
    prefix = p;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s%s", x, prefix, unit);
  return buf;
}

void run_hotspots(Context& ctx) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"hotspots"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  const json& b = r.body;
  const json settings = b.value("settings", json::object());
  Table t({"RANK", "PORT", "PEER", "XMIT WAIT/S", "DATA/S", "ERRORS", "LINK"});
  t.align_right(0).align_right(3).align_right(4).align_right(5);
  for (const json& h : b.value("hot", json::array())) {
    t.add_row({cell(h, "rank"), cell(h, "name"), cell(h, "peer"), si(h.value("xmit_wait_per_s", json())),
               si(h.value("xmit_bytes_per_s", json()), "B"), cell(h, "errors"), cell(h, "link")});
  }
  t.print(std::cout);
  std::cout << t.rows() << " of " << cell(b, "hot_ports") << " hot ports shown (PortXmitWait >= "
            << si(settings.value("hot_xmit_wait_per_s", json())) << "/s, top " << cell(settings, "top_n") << "); "
            << cell(b, "ports") << " ports reported, last sample " << format_time(b.value("last_sample_time", json()))
            << ", sweep " << cell(b, "sweep_interval_s") << " s\n";
  const json bursts = b.value("error_bursts", json::array());
  if (!bursts.empty()) {
    Table e({"ERROR BURST", "PEER", "ERRORS", "IN", "AT"});
    e.align_right(2);
    for (const json& x : bursts) {
      e.add_row({cell(x, "name"), cell(x, "peer"), cell(x, "errors"), cell(x, "interval_s") + " s",
                 format_time(x.value("time", json()))});
    }
    std::cout << "\n";
    e.print(std::cout);
  }
}

struct CountersOptions {
  std::string node;
  int port = 0;
};

void run_counters(Context& ctx, const CountersOptions& o) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"links", o.node + "[" + std::to_string(o.port) + "]", "counters"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"END", "XMIT WAIT/S", "ERRORS", "SENT/S", "RECEIVED/S", "SAMPLES", "LAST"});
  for (size_t c : {1, 2, 3, 4, 5}) t.align_right(c);
  for (const json& e : r.body.value("ends", json::array())) {
    const json latest = e.value("latest", json::object());
    const json w = latest.value("wait", json());
    const json d = latest.value("data", json());
    const json hist = e.value("history", json::object());
    t.add_row({cell(e, "name"), w.is_object() ? si(w.value("xmit_wait_per_s", json())) : "-",
               w.is_object() ? cell(w, "errors") : "-", d.is_object() ? si(d.value("xmit_bytes_per_s", json()), "B") : "-",
               d.is_object() ? si(d.value("rcv_bytes_per_s", json()), "B") : "-",
               std::to_string(hist.value("wait", json::array()).size()),
               format_time(w.is_object() ? w.value("time", json()) : json())});
  }
  t.print(std::cout);
  std::cout << "link " << cell(r.body, "link") << "; history keeps " << cell(r.body, "history_size")
            << " samples per end (--json for all of them)\n";
}

}  // namespace

void add_telemetry_commands(CLI::App& app, Context& ctx) {
  auto* hotspots = app.add_subcommand("hotspots", "Hot ports (PortXmitWait rate, from OpenSM's perf manager) and error bursts");
  hotspots->footer(
      "A port is hot when its PortXmitWait rate (ticks/s: it had data and no credit to send)\n"
      "is at least railyardd's telemetry.hot_xmit_wait_per_s; the hottest come first, at most\n"
      "telemetry.top_n. An error burst is a perf-manager sample with at least\n"
      "telemetry.error_burst errors. Needs OpenSM's perf manager on (perfmgr TRUE).\n\n"
      "Examples:\n"
      "  railyardctl hotspots\n"
      "  railyardctl --json hotspots | jq -r '.hot[0].link'");
  hotspots->callback([&ctx] { run_hotspots(ctx); });

  auto o = std::make_shared<CountersOptions>();
  auto* counters = app.add_subcommand("counters", "One link's counter rates at both ends (latest sample, history with --json)");
  counters->add_option("NODE", o->node, "Either end's node: description, GUID or record name")->required();
  counters->add_option("PORT", o->port, "Its port")->required()->check(CLI::Range(1, 255));
  counters->footer(
      "Examples:\n"
      "  railyardctl counters \"leaf g000 r1\" 9\n"
      "  railyardctl --json counters \"leaf g000 r1\" 9 | jq '.ends[0].history.wait'");
  counters->callback([&ctx, o] { run_counters(ctx, *o); });
}

}  // namespace railyard::ctl
