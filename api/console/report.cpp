#include "api/console/report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "api/console/assets.h"

namespace railyard::console {

using nlohmann::json;

namespace {

constexpr size_t kWorstLinks = 20;

// A JSON value as table text: numbers as JSON writes them (the test reads
// them back and compares with --json), strings as they are.
std::string cell(const json& v) {
  if (v.is_string()) return html_escape(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_null()) return "-";
  return html_escape(v.dump());
}

std::string row(const std::string& key, const std::string& label, const json& value) {
  return "<tr data-key=\"" + html_escape(key) + "\"><th>" + html_escape(label) + "</th><td>" + cell(value) +
         "</td></tr>\n";
}

// JSON inside <script>: "</" would end the element.
std::string script_json(const json& j) {
  std::string s = j.dump();
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string asset(std::string_view name) {
  const Asset* a = find_asset(name);
  return a ? std::string(a->body) : std::string();
}

constexpr const char* kStyle = R"(
body { font: 13px/1.4 sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 15px; margin-top: 22px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { text-align: left; padding: 2px 10px; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
thead th { background: #f1f3f6; }
.ok { color: #1b5e20; font-weight: bold; } .bad { color: #b71c1c; font-weight: bold; }
#picture { overflow-x: auto; border: 1px solid #ddd; } canvas { display: block; }
#picked { min-height: 1.4em; color: #333; }
.muted { color: #666; }
)";

constexpr const char* kScript = R"(
(() => {
  const doc = JSON.parse(document.getElementById("grid-data").textContent);
  const picked = document.getElementById("picked");
  const view = new RailyardGrid.View(document.getElementById("grid"), {
    onSelect: (kind, i) => {
      if (kind === "switch") {
        const s = doc.switches[i];
        picked.textContent = `${s.name} (${s.guid}), level ${s.level}, rail ${s.rail}, ${s.cas} CA links`;
      } else {
        const [a, ap, b, bp] = doc.links[i];
        picked.textContent = `${doc.switches[a].name}[${ap}] -> ${doc.switches[b].name}[${bp}]: ` +
                             `${doc.loads[i][0]} flows, back ${doc.loads[i][1]} (all-to-all)`;
      }
    }});
  view.setDoc(doc);
  view.setMode("predicted");
})();
)";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string verify_report_html(const json& v, const json& grid) {
  const bool ok = v.value("ok", false);
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>railyard verify: " +
                  html_escape(v.value("tables", "")) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  h += "<h1>railyard verify</h1>\n<p>tables <b>" + html_escape(v.value("tables", "")) + "</b> over topology <b>" +
       html_escape(v.value("topology", "")) + "</b>: <span id=\"verdict\" class=\"" + (ok ? "ok" : "bad") + "\">" +
       (ok ? "every CA pair reachable, no credit loop" : "problems found") + "</span></p>\n";

  h += "<h2>Summary</h2>\n<table id=\"summary\">\n";
  const std::pair<const char*, const char*> summary[] = {
      {"switches", "switches"}, {"ca_ports", "CA ports"}, {"lids", "LIDs"}, {"pairs", "CA pairs"},
      {"reachable", "reachable pairs"}, {"blackholed", "blackholed"}, {"looped", "looped"},
      {"switch_pairs", "switch-LID pairs"}, {"switch_pairs_reachable", "switch-LID pairs reachable"},
      {"mean_hops", "mean switch hops"}, {"max_stretch", "max stretch"}, {"mean_stretch", "mean stretch"}};
  for (const auto& [key, label] : summary) h += row(key, label, v.value(key, json()));
  const json& bal = v.value("balance", json::object());
  h += row("balance.worst_up_spread", "worst up-port spread", bal.value("worst_up_spread", json()));
  h += row("balance.worst_switch", "worst up-port spread at", bal.value("worst_switch", json()));
  h += row("balance.mean_up_spread", "mean up-port spread", bal.value("mean_up_spread", json()));
  h += "</table>\n";

  h += "<h2>Credit loops (one VL)</h2>\n<table id=\"credit-loops\">\n<thead><tr><th>routes</th><th>acyclic</th>"
       "<th>channels</th><th>dependencies</th><th>cycle</th></tr></thead>\n";
  const json& cl = v.value("credit_loops", json::object());
  for (const auto& [key, label] : {std::pair{"ca_routes", "CA to CA"}, std::pair{"with_switch_lids", "with switch LIDs"}}) {
    const json& c = cl.value(key, json::object());
    h += std::string("<tr data-key=\"") + key + "\"><th>" + label + "</th><td data-field=\"acyclic\" class=\"" +
         (c.value("acyclic", false) ? "ok" : "bad") + "\">" + cell(c.value("acyclic", json())) +
         "</td><td data-field=\"channels\">" + cell(c.value("channels", json())) +
         "</td><td data-field=\"dependencies\">" + cell(c.value("dependencies", json())) +
         "</td><td data-field=\"cycle\">" + cell(c.value("cycle", json(""))) + "</td></tr>\n";
  }
  h += "</table>\n";

  h += "<h2>Congestion per pattern</h2>\n<p class=\"muted\">Flows on the busiest directed link (CA links included); "
       "the bound is the leaf cut bound.</p>\n<table id=\"congestion\">\n<thead><tr><th>pattern</th><th>instances</th>"
       "<th>flows</th><th>unrouted</th><th>max load</th><th>bound</th><th>mean of max</th><th>mean link load</th>"
       "<th>worst instance</th><th>busiest link</th></tr></thead>\n";
  for (const json& p : v.value("congestion", json::array())) {
    h += "<tr data-key=\"" + html_escape(p.value("pattern", "")) + "\"><th>" + html_escape(p.value("pattern", "")) + "</th>";
    for (const char* f : {"instances", "flows", "unrouted", "max_load", "lower_bound", "mean_max_load", "mean_link_load",
                          "worst_instance", "worst_link"}) {
      h += std::string("<td data-field=\"") + f + "\">" + cell(p.value(f, json())) + "</td>";
    }
    h += "</tr>\n";
  }
  h += "</table>\n";

  // Worst links by predicted all-to-all load.
  const json& links = grid.value("links", json::array());
  const json& loads = grid.value("loads", json::array());
  const json& sws = grid.value("switches", json::array());
  std::vector<size_t> order(std::min(links.size(), loads.size()));
  std::iota(order.begin(), order.end(), 0);
  auto load_of = [&](size_t k) { return std::max(loads[k][0].get<uint64_t>(), loads[k][1].get<uint64_t>()); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return load_of(a) > load_of(b); });
  if (order.size() > kWorstLinks) order.resize(kWorstLinks);
  h += "<h2>Worst links (all-to-all)</h2>\n<table id=\"worst-links\">\n<thead><tr><th>link</th><th>flows a&rarr;b</th>"
       "<th>flows b&rarr;a</th></tr></thead>\n";
  for (size_t k : order) {
    const json& l = links[k];
    const std::string name = sws[l[0].get<size_t>()].value("name", "") + "[" + l[1].dump() + "] <-> " +
                             sws[l[2].get<size_t>()].value("name", "") + "[" + l[3].dump() + "]";
    h += "<tr data-key=\"" + std::to_string(k) + "\"><th>" + html_escape(name) + "</th><td data-field=\"a_to_b\">" +
         loads[k][0].dump() + "</td><td data-field=\"b_to_a\">" + loads[k][1].dump() + "</td></tr>\n";
  }
  h += "</table>\n";

  const json& ex = v.value("examples", json::array());
  if (!ex.empty()) {
    h += "<h2>Problems (examples)</h2>\n<table id=\"examples\">\n<thead><tr><th>kind</th><th>source</th>"
         "<th>destination</th><th>path</th></tr></thead>\n";
    for (const json& e : ex) {
      h += "<tr><td>" + cell(e.value("kind", json())) + "</td><td>" + cell(e.value("source", json())) + "</td><td>" +
           cell(e.value("destination", json())) + "</td><td>" + cell(e.value("path", json())) + "</td></tr>\n";
    }
    h += "</table>\n";
  }

  h += "<h2>Fabric, coloured by predicted load</h2>\n<p class=\"muted\">Rails &times; leaves below, spines and cores "
       "above; each line a switch link, blue the least loaded to red the busiest (" +
       html_escape(grid.value("load_max", json(0)).dump()) +
       " all-to-all flows; one colour when all carry the same). Click a link or a switch.</p>\n<div id=\"picked\"></div>\n"
       "<div id=\"picture\"><canvas id=\"grid\" width=\"1200\" height=\"400\"></canvas></div>\n";
  h += "<script type=\"application/json\" id=\"grid-data\">" + script_json(grid) + "</script>\n";
  h += "<script>\n" + asset("grid.js") + "\n</script>\n<script>" + kScript + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace railyard::console
