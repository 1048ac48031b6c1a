// railyard ar: adaptive-routing groups for a topology, after the static tables.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "routing/ar_groups.h"
#include "routing/lid_assignment.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"

namespace railyard::cli {

namespace {

struct ArOptions {
  std::string topo;
  std::string policy;
  uint32_t max_groups = 64;
  bool json = false;
  std::string switch_name;
};

std::string ports_text(const std::vector<uint8_t>& ports) {
  std::string out;
  for (uint8_t p : ports) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

nlohmann::json switch_json(const routing::Fabric& f, const routing::ArTables& t, uint32_t s) {
  const auto& sw = t.switches[s];
  NodeId node = f.switches()[s];
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : sw.groups) groups.push_back(g);
  nlohmann::json lft = nlohmann::json::object();
  for (uint32_t lid = 1; lid < t.num_lids; ++lid) {
    uint16_t g = t.group(s, Lid{static_cast<uint16_t>(lid)});
    if (g != routing::ArTables::kNoGroup) lft[std::to_string(lid)] = g;
  }
  return {{"name", std::string(f.desc(node))},
          {"lid", f.port(f.node(node).first_port).lid.value},
          {"adaptive_groups", sw.adaptive_groups},
          {"trimmed", sw.trimmed},
          {"groups", std::move(groups)},
          {"ar_lft", std::move(lft)}};
}

void print_switch(const routing::Fabric& f, const routing::ArTables& t, uint32_t s) {
  const auto& sw = t.switches[s];
  std::printf("switch %s: %zu groups (%u adaptive), %u destinations trimmed\n",
              std::string(f.desc(f.switches()[s])).c_str(), sw.groups.size(), sw.adaptive_groups, sw.trimmed);
  std::vector<uint32_t> uses(sw.groups.size(), 0);
  for (uint32_t lid = 1; lid < t.num_lids; ++lid) {
    uint16_t g = t.group(s, Lid{static_cast<uint16_t>(lid)});
    if (g != routing::ArTables::kNoGroup) ++uses[g];
  }
  for (size_t g = 0; g < sw.groups.size(); ++g) {
    std::printf("  group %zu: ports %s (%u LIDs)\n", g, ports_text(sw.groups[g]).c_str(), uses[g]);
  }
}

int run_ar(const ArOptions& o) {
  routing::Fabric fabric = load_fabric(o.topo);
  policies::Policy policy = load_policy(o.policy);
  ensure_lids(fabric);
  routing::RoutingOptions options = plan_or_fail(fabric, policy, o.policy);

  uint32_t only = routing::SwitchGraph::kNone;
  if (!o.switch_name.empty()) {
    NodeId n = fabric.find_name(o.switch_name);
    if (!n.valid() || !fabric.is_switch(n)) fail("--switch: no switch named '" + o.switch_name + "'");
    routing::SwitchGraph g(fabric);
    only = g.switch_index(n);
  }

  auto t0 = Clock::now();
  auto result = routing::route_unicast(fabric, options);
  if (!result) fail(result.error().message);
  double route_ms = ms_since(t0);
  auto t1 = Clock::now();
  auto ar = routing::compute_ar_groups(fabric, result->tables, options, o.max_groups);
  if (!ar) fail(ar.error().message);
  double ar_ms = ms_since(t1);
  auto t2 = Clock::now();
  routing::ArCheck check = routing::verify_ar_groups(fabric, *ar);
  double verify_ms = ms_since(t2);

  size_t max_groups = 0, total = 0;
  uint32_t max_adaptive = 0;
  for (const auto& sw : ar->switches) {
    max_groups = std::max(max_groups, sw.groups.size());
    max_adaptive = std::max(max_adaptive, sw.adaptive_groups);
    total += sw.adaptive_groups;
  }
  const size_t n = ar->switches.size();
  double mean_adaptive = n ? static_cast<double>(total) / static_cast<double>(n) : 0.0;

  if (o.json) {
    nlohmann::json over = nlohmann::json::array();
    for (uint32_t s : ar->over_limit) over.push_back(std::string(fabric.desc(fabric.switches()[s])));
    nlohmann::json switches = nlohmann::json::array();
    for (uint32_t s = 0; s < n; ++s) {
      if (only == routing::SwitchGraph::kNone || s == only) switches.push_back(switch_json(fabric, *ar, s));
    }
    nlohmann::json j = {
        {"topology", o.topo},
        {"max_groups_per_switch", o.max_groups},
        {"adaptive_groups", {{"max", max_adaptive}, {"mean", mean_adaptive}}},
        {"over_limit", std::move(over)},
        {"trimmed_destinations", ar->trimmed},
        {"verify",
         {{"valid", check.valid},
          {"acyclic", check.acyclic},
          {"problems", check.problems},
          {"cycle", check.cycle},
          {"channels", check.channels},
          {"dependencies", check.dependencies}}},
        {"timings_ms", {{"route", route_ms}, {"ar_groups", ar_ms}, {"verify", verify_ms}}},
        {"switches", std::move(switches)},
    };
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf(
        "railyard ar: %zu switches; adaptive groups per switch: max %u, mean %.2f (limit %u; up to %zu with "
        "single-port entries)\n"
        "  over-limit switches: %zu; trimmed destinations: %llu\n"
        "  verifier: %s (%llu members, CDG %llu channels, %llu dependencies)\n"
        "  route %.1f ms, AR groups %.1f ms, verify %.1f ms\n",
        n, max_adaptive, mean_adaptive, o.max_groups, max_groups, ar->over_limit.size(),
        static_cast<unsigned long long>(ar->trimmed),
        check.ok() ? "valid, acyclic" : (!check.valid ? "INVALID" : "CREDIT LOOP"),
        static_cast<unsigned long long>(check.members), static_cast<unsigned long long>(check.channels),
        static_cast<unsigned long long>(check.dependencies), route_ms, ar_ms, verify_ms);
    for (size_t i = 0; i < ar->over_limit.size() && i < 10; ++i) {
      uint32_t s = ar->over_limit[i];
      std::printf("  over limit: %s (%u destinations trimmed)\n", std::string(fabric.desc(fabric.switches()[s])).c_str(),
                  ar->switches[s].trimmed);
    }
    for (const auto& p : check.problems) std::printf("  problem: %s\n", p.c_str());
    if (!check.acyclic) std::printf("  credit loop: %s\n", check.cycle.c_str());
    if (only != routing::SwitchGraph::kNone) print_switch(fabric, *ar, only);
  }
  return check.ok() ? kExitOk : kExitFindings;
}

}  // namespace

void add_ar_commands(CLI::App& app) {
  auto o = std::make_shared<ArOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ar",
      "Compute adaptive-routing (AR) groups for a topology.\n"
      "Routes with the engine first (as `railyard route`), then gives every switch and\n"
      "destination LID the set of ports on minimal up*/down* paths that avoid down and\n"
      "drained links (the static port always included), shares identical sets as one\n"
      "group per switch and checks the result on its own (one hop closer on every\n"
      "member, no credit loop with all members in use).\n\n"
      "Examples:\n"
      "  railyard ar --topo roft.net\n"
      "  railyard ar --topo roft.net --max-groups 8 --switch 'leaf g000 r0'\n"
      "  railyard ar --topo roft.net --policy drains.yaml --json > ar.json\n\n"
      "Exit codes: 0 groups valid; 1 the verifier found a problem; 2 bad input.");
  cmd->add_option("--topo,-t", o->topo, "topology file (ibnetdiscover output or ibsim net file)")->required();
  cmd->add_option("--policy,-p", o->policy, "policy YAML (drains, roots, rail naming)");
  cmd->add_option("--max-groups", o->max_groups, "adaptive groups (2+ ports) per switch, default 64")
      ->check(CLI::Range(1u, 65534u));
  cmd->add_flag("--json", o->json, "print per-switch groups and the AR LFT as JSON on stdout");
  cmd->add_option("--switch", o->switch_name, "print this switch's group table (name or description)");
  cmd->callback([o] {
    int rc = run_ar(*o);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

}  // namespace railyard::cli
