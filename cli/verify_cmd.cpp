// railyard verify: judge any forwarding tables (railyard's, OpenSM's dump,
// ibroute output) against a topology.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io.h"
#include "api/console/grid.h"
#include "api/console/report.h"
#include "routing/congestion.h"
#include "routing/lft_dump.h"
#include "routing/lid_assignment.h"
#include "routing/node_lookup.h"
#include "routing/rails.h"
#include "routing/verifier.h"

namespace railyard::cli {

namespace {

struct VerifyCmdOptions {
  std::string topo;
  std::string lfts;
  std::string policy;
  bool json = false;
  std::string html;
  uint32_t max_shifts = 0;
  uint32_t permutations = 4;
  uint64_t seed = 1;
  bool no_congestion = false;
  bool no_all_to_all = false;
  std::vector<std::string> trace;
};

nlohmann::json cdg_json(const routing::CreditLoopCheck& c) {
  return {{"acyclic", c.acyclic}, {"channels", c.channels}, {"dependencies", c.dependencies}, {"cycle", c.cycle}};
}

void run_verify(const VerifyCmdOptions& o) {
  auto t0 = Clock::now();
  routing::Fabric fabric = load_fabric(o.topo);
  // A generated topology: `railyard route` assigned LIDs the same
  // deterministic way, so the tables line up with these.
  ensure_lids(fabric);
  policies::Policy policy = load_policy(o.policy);
  Result<std::string> text = read_file(o.lfts);
  if (!text) fail(text.error().message);
  auto tables = routing::read_tables(fabric, *text, o.lfts);
  if (!tables) fail(tables.error().message);
  double read_ms = ms_since(t0);

  // Traces first: they answer a direct question.
  std::vector<std::pair<std::string, std::string>> traces;
  for (size_t i = 0; i + 1 < o.trace.size(); i += 2) {
    auto src = routing::find_node(fabric, o.trace[i]);
    if (!src) fail("--trace source: " + src.error().message);
    auto dst = routing::find_node(fabric, o.trace[i + 1]);
    if (!dst) fail("--trace destination: " + dst.error().message);
    Lid lid = fabric.port(fabric.primary_port(*dst)).lid;
    traces.emplace_back(o.trace[i] + " -> " + o.trace[i + 1], routing::trace_path(fabric, *tables, *src, lid));
  }

  auto t1 = Clock::now();
  routing::VerifyReport v = routing::verify_tables(fabric, *tables);
  double verify_ms = ms_since(t1);

  auto t2 = Clock::now();
  routing::CongestionReport c;
  if (!o.no_congestion) {
    routing::RailMap rails = routing::map_rails(fabric, policy.rails);
    routing::CongestionOptions co;
    co.max_shifts = o.max_shifts;
    co.random_permutations = o.permutations;
    co.seed = o.seed;
    co.all_to_all = !o.no_all_to_all;
    c = routing::analyze_congestion(fabric, *tables, rails, co);
  }
  double congestion_ms = ms_since(t2);

  bool ok = v.all_reachable() && v.cdg_ca.acyclic && v.cdg_all.acyclic;
  if (o.json || !o.html.empty()) {
    nlohmann::json j = {
        {"topology", o.topo},
        {"tables", o.lfts},
        {"ok", ok},
        {"switches", v.switches},
        {"ca_ports", v.ca_ports},
        {"lids", v.lids},
        {"pairs", v.pairs},
        {"reachable", v.reachable},
        {"blackholed", v.blackholed},
        {"looped", v.looped},
        {"switch_pairs", v.switch_pairs},
        {"switch_pairs_reachable", v.switch_pairs_reachable},
        {"mean_hops", v.mean_hops},
        {"max_stretch", v.max_stretch},
        {"mean_stretch", v.mean_stretch},
        {"stretch_histogram", v.stretch_histogram},
        {"credit_loops", {{"ca_routes", cdg_json(v.cdg_ca)}, {"with_switch_lids", cdg_json(v.cdg_all)}}},
        {"balance", {{"worst_up_spread", v.worst_up_spread},
                     {"worst_switch", v.worst_up_spread_switch.valid() ? std::string(fabric.desc(v.worst_up_spread_switch)) : ""},
                     {"mean_up_spread", v.mean_up_spread}}},
        {"timings_ms", {{"read", read_ms}, {"verify", verify_ms}, {"congestion", congestion_ms}}},
    };
    nlohmann::json ex = nlohmann::json::array();
    for (const auto& e : v.examples) {
      ex.push_back({{"kind", e.kind == routing::PathProblem::Kind::kLoop ? "loop" : "blackhole"},
                    {"source", std::string(fabric.desc(e.source))},
                    {"lid", e.lid.value},
                    {"destination", std::string(fabric.desc(e.dest))},
                    {"path", e.path}});
    }
    j["examples"] = ex;
    nlohmann::json pats = nlohmann::json::array();
    for (const auto& p : c.patterns) {
      pats.push_back({{"pattern", p.name},
                      {"instances", p.instances},
                      {"flows", p.flows},
                      {"unrouted", p.unrouted},
                      {"max_load", p.max_load},
                      {"mean_max_load", p.mean_max_load},
                      {"mean_link_load", p.mean_link_load},
                      {"lower_bound", p.lower_bound},
                      {"worst_instance", p.worst_instance},
                      {"worst_link", p.worst_link}});
    }
    j["congestion"] = pats;
    nlohmann::json tr = nlohmann::json::array();
    for (auto& [k, path] : traces) tr.push_back({{"pair", k}, {"path", path}});
    j["traces"] = tr;
    if (!o.html.empty()) {
      // The report's picture: the console's grid, coloured by each switch
      // link's all-to-all flows over these tables.
      const routing::RailMap rails = routing::map_rails(fabric, policy.rails);
      const std::vector<routing::LinkLoad> loads = routing::all_to_all_link_loads(fabric, *tables);
      console::GridInput in;
      in.fabric = &fabric;
      in.rails = &rails;
      in.loads = &loads;
      Status st = write_file(o.html, console::verify_report_html(j, console::grid_json(in)));
      if (!st) fail(st.error().message);
    }
    if (o.json) std::cout << j.dump(2) << "\n";
  }
  if (!o.json) {
    std::printf("railyard verify: %s over %s\n", o.lfts.c_str(), o.topo.c_str());
    for (auto& [k, path] : traces) std::printf("trace %s:\n  %s\n", k.c_str(), path.c_str());
    std::printf("  switches %u, CA ports %u, LIDs %u\n", v.switches, v.ca_ports, v.lids);
    std::printf("  reachability: %llu of %llu CA pairs (%.4f%%); blackholed %llu, looped %llu\n",
                static_cast<unsigned long long>(v.reachable), static_cast<unsigned long long>(v.pairs),
                v.pairs ? 100.0 * static_cast<double>(v.reachable) / static_cast<double>(v.pairs) : 100.0,
                static_cast<unsigned long long>(v.blackholed), static_cast<unsigned long long>(v.looped));
    std::printf("  switch LIDs: %llu of %llu switch pairs reachable\n",
                static_cast<unsigned long long>(v.switch_pairs_reachable), static_cast<unsigned long long>(v.switch_pairs));
    for (const auto& e : v.examples) {
      std::printf("    %s: %s\n", e.kind == routing::PathProblem::Kind::kLoop ? "loop" : "blackhole", e.path.c_str());
    }
    std::printf("  hops: mean %.3f; stretch over shortest: max %u, mean %.4f\n", v.mean_hops, v.max_stretch, v.mean_stretch);
    std::printf("  credit loops (one VL): CA routes %s (%llu channels, %llu dependencies); with switch LIDs %s\n",
                v.cdg_ca.acyclic ? "none" : "FOUND", static_cast<unsigned long long>(v.cdg_ca.channels),
                static_cast<unsigned long long>(v.cdg_ca.dependencies), v.cdg_all.acyclic ? "none" : "FOUND");
    if (!v.cdg_ca.acyclic) std::printf("    cycle: %s\n", v.cdg_ca.cycle.c_str());
    else if (!v.cdg_all.acyclic) std::printf("    cycle: %s\n", v.cdg_all.cycle.c_str());
    std::printf("  balance: CA destinations per up port, max-min spread worst %u (%s), mean %.2f\n", v.worst_up_spread,
                v.worst_up_spread_switch.valid() ? std::string(fabric.desc(v.worst_up_spread_switch)).c_str() : "-",
                v.mean_up_spread);
    if (!c.patterns.empty()) std::printf("  congestion (flows on the busiest directed link):\n");
    for (const auto& p : c.patterns) {
      std::printf("    %-20s max %llu (bound %llu, mean of max %.2f) over %u instance(s), %llu flows, %llu unrouted; busiest: %s\n",
                  p.name.c_str(), static_cast<unsigned long long>(p.max_load),
                  static_cast<unsigned long long>(p.lower_bound), p.mean_max_load, p.instances,
                  static_cast<unsigned long long>(p.flows), static_cast<unsigned long long>(p.unrouted),
                  p.worst_link.c_str());
    }
    std::printf("  read %.1f ms, verify %.1f ms, congestion %.1f ms\n", read_ms, verify_ms, congestion_ms);
  }
  if (!ok) throw CLI::RuntimeError(kExitFindings);
}

}  // namespace

void add_verify_commands(CLI::App& app) {
  auto o = std::make_shared<VerifyCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Verify and analyze ANY forwarding tables over a topology: railyard's, OpenSM's\n"
      "own opensm-lfts.dump, or the concatenated output of `ibroute` for every switch.\n"
      "Checks reachability of every CA pair (blackholes, loops, with a path), hop\n"
      "stretch, credit loops on one VL (channel dependency graph, CA routes and with\n"
      "switch LIDs), per-switch up-port balance, and congestion (busiest link) for\n"
      "rail-aligned shifts, cross-rail shifts, random permutations and all-to-all.\n\n"
      "Examples:\n"
      "  railyard verify --topo fabric.topo --lfts opensm-lfts.dump\n"
      "  railyard verify --topo fabric.topo --lfts ibroute.txt --json\n"
      "  railyard verify --topo f.topo --lfts f.lfts --trace 'node001 mlx5_0' 'node017 mlx5_0'\n"
      "  railyard verify --topo f.topo --lfts f.lfts --html report.html   # one self-contained page\n\n"
      "Exit codes: 0 every CA pair reachable and no credit loop; 1 problems found;\n"
      "2 bad input (the reason is printed as file:line: reason).");
  cmd->add_option("--topo,-t", o->topo, "topology file")->required();
  cmd->add_option("--lfts,-l", o->lfts, "tables: opensm-lfts.dump or ibroute output")->required();
  cmd->add_option("--policy,-p", o->policy, "policy YAML (for rail naming)");
  cmd->add_flag("--json", o->json, "machine-readable report on stdout");
  cmd->add_option("--html", o->html,
                  "also write one self-contained HTML report to FILE (summary, credit loops, congestion per\n"
                  "pattern, worst links, the fabric picture coloured by all-to-all load); no network needed to view it");
  cmd->add_option("--max-shifts", o->max_shifts, "evaluate at most N shifts, evenly spaced (0 = all)");
  cmd->add_option("--permutations", o->permutations, "random permutations to evaluate (default 4)");
  cmd->add_option("--seed", o->seed, "seed of the random permutations");
  cmd->add_flag("--no-congestion", o->no_congestion, "skip the congestion analysis");
  cmd->add_flag("--no-all-to-all", o->no_all_to_all, "skip all-to-all (the slowest pattern)");
  cmd->add_option("--trace", o->trace, "SRC DST: print the hop-by-hop path (names, GUIDs); repeatable")
      ->expected(2)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->callback([o] { run_verify(*o); });
}

}  // namespace railyard::cli
