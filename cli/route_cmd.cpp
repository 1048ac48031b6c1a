// railyard route: compute forwarding tables for a topology file.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io.h"
#include "routing/lft_dump.h"
#include "routing/lft_json.h"
#include "routing/lid_assignment.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"

namespace railyard::cli {

namespace {

nlohmann::json issues_json(const routing::Fabric& f, const std::vector<routing::DestinationIssue>& v, size_t cap) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < v.size() && i < cap; ++i) {
    out.push_back({{"lid", v[i].lid.value},
                   {"destination", std::string(f.desc(v[i].dest))},
                   {"sources", v[i].sources},
                   {"example_source", v[i].example_source.valid() ? std::string(f.desc(v[i].example_source)) : ""}});
  }
  return out;
}

// Switch LIDs (management traffic): entries filled through the turn switch,
// by the repair under the dependency check, and those still empty.
nlohmann::json turns_json(const routing::Fabric& f, const routing::RoutingReport& r) {
  nlohmann::json turn = nlohmann::json::array();
  for (railyard::NodeId t : r.turn_switches) turn.push_back(std::string(f.desc(t)));
  return {{"turn_switches", turn},
          {"turned", r.switch_entries_turned},
          {"repaired", r.switch_entries_repaired},
          {"empty", r.switch_entries_empty}};
}

struct RouteOptions {
  std::string topo;
  std::string policy;
  std::string output = "-";
  std::string format = "dump";
  bool json = false;
};

void run_route(const RouteOptions& o) {
  auto t0 = Clock::now();
  routing::Fabric fabric = load_fabric(o.topo);
  policies::Policy policy = load_policy(o.policy);
  double read_ms = ms_since(t0);

  auto t1 = Clock::now();
  bool assigned = ensure_lids(fabric);
  routing::RoutingOptions options = plan_or_fail(fabric, policy, o.policy);
  double prep_ms = ms_since(t1);

  auto t2 = Clock::now();
  auto result = routing::route_unicast(fabric, options);
  if (!result) fail(result.error().message);
  double route_ms = ms_since(t2);

  auto t3 = Clock::now();
  // Streamed to the file: the 16k-CA dump is 1.65 GB, of which one chunk
  // (routing::kDumpChunkBytes) is in memory at a time.
  OutputFile out(o.output);
  routing::TextSink sink = [&out](std::string_view chunk) { out.write(chunk); };
  if (o.format == "json") {
    routing::write_lft_json(fabric, result->tables, sink);
  } else {
    routing::write_lft_dump(fabric, result->tables, sink);
  }
  if (auto st = out.commit(); !st) fail(st.error().message);
  double write_ms = ms_since(t3);

  const auto& r = result->report;
  if (o.json) {
    nlohmann::json j = {
        {"topology", o.topo},
        {"switches", r.switches},
        {"ca_ports", r.ca_ports},
        {"lids_routed", r.lids_routed},
        {"lids_assigned_by_railyard", assigned},
        {"ranking", std::string(routing::to_string(r.ranking))},
        {"levels", r.levels},
        {"roots", r.roots},
        {"unreachable_pairs", r.unreachable_pairs},
        {"drained_pairs", r.drained_pairs},
        {"switch_lids", turns_json(fabric, r)},
        // Degraded trees: (switch, destination) choices phase B made, moves
        // off the busiest links, and the pass over shifts (load above the
        // rail-aligned and cross-rail shifts' bounds, summed over shifts and
        // links, before and after it).
        {"balancing",
         {{"displaced_choices", r.phase_b_waiting},
          {"busiest_link_moves", r.hot_link_moves},
          {"shift_moves", r.shift_moves},
          {"shift_excess_before", r.shift_excess_before},
          {"shift_excess_after", r.shift_excess_after}}},
        {"unreachable", issues_json(fabric, r.unreachable, 1000)},
        {"through_drained", issues_json(fabric, r.through_drained, 1000)},
        {"timings_ms", {{"read", read_ms}, {"prepare", prep_ms}, {"route", route_ms}, {"write", write_ms}}},
    };
    std::cerr << j.dump(2) << "\n";
  } else {
    std::fprintf(stderr,
                 "railyard route: %u switches, %u CA ports, %u LIDs%s; ranking: %s (%u levels, %u roots)\n"
                 "  unreachable CA pairs: %llu; pairs through drained links: %llu\n"
                 "  switch-LID entries: %llu through the turn switch, %llu repaired, %llu still empty\n"
                 "  balancing: %llu choices displaced, %u moves off the busiest links, %u for the shifts (load above "
                 "their bounds %llu -> %llu)\n"
                 "  read %.1f ms, prepare %.1f ms, route %.1f ms, write %.1f ms\n",
                 r.switches, r.ca_ports, r.lids_routed, assigned ? " (LIDs assigned by railyard)" : "",
                 std::string(routing::to_string(r.ranking)).c_str(), r.levels, r.roots,
                 static_cast<unsigned long long>(r.unreachable_pairs), static_cast<unsigned long long>(r.drained_pairs),
                 static_cast<unsigned long long>(r.switch_entries_turned),
                 static_cast<unsigned long long>(r.switch_entries_repaired),
                 static_cast<unsigned long long>(r.switch_entries_empty),
                 static_cast<unsigned long long>(r.phase_b_waiting), r.hot_link_moves, r.shift_moves,
                 static_cast<unsigned long long>(r.shift_excess_before),
                 static_cast<unsigned long long>(r.shift_excess_after), read_ms, prep_ms, route_ms, write_ms);
    for (size_t i = 0; i < r.unreachable.size() && i < 10; ++i) {
      const auto& u = r.unreachable[i];
      std::fprintf(stderr, "  unreachable: LID %u (%s) from %u CA ports, e.g. %s\n", u.lid.value,
                   std::string(fabric.desc(u.dest)).c_str(), u.sources,
                   u.example_source.valid() ? std::string(fabric.desc(u.example_source)).c_str() : "-");
    }
    for (size_t i = 0; i < r.through_drained.size() && i < 10; ++i) {
      const auto& u = r.through_drained[i];
      std::fprintf(stderr, "  through drained links: LID %u (%s) from %u CA ports, e.g. %s\n", u.lid.value,
                   std::string(fabric.desc(u.dest)).c_str(), u.sources,
                   u.example_source.valid() ? std::string(fabric.desc(u.example_source)).c_str() : "-");
    }
  }
}

}  // namespace

void add_route_commands(CLI::App& app) {
  auto o = std::make_shared<RouteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "route",
      "Compute railyard's forwarding tables (LFTs) for a topology.\n"
      "Reads an ibnetdiscover or ibsim topology, applies the policy (drains, roots,\n"
      "rail naming) and writes the tables in OpenSM's opensm-lfts.dump format, which\n"
      "stock OpenSM loads with `opensm -R file -U DUMP`. A topology without LIDs gets\n"
      "them assigned deterministically; the dump names every LID's port.\n\n"
      "Examples:\n"
      "  railyard topo gen --servers 64 --rails 8 --radix 32 -o roft.net\n"
      "  railyard route --topo roft.net -o roft.lfts\n"
      "  railyard route --topo fabric.topo --policy drains.yaml -o lfts.dump --json\n\n"
      "Exit codes: 0 routed (unreachable pairs, if any, are listed); 2 bad input.");
  cmd->add_option("--topo,-t", o->topo, "topology file (ibnetdiscover output or ibsim net file)")->required();
  cmd->add_option("--policy,-p", o->policy, "policy YAML (drains, roots, rail naming)");
  cmd->add_option("--output,-o", o->output, "where to write the tables (default: stdout)");
  cmd->add_option("--format", o->format, "dump (OpenSM opensm-lfts.dump) or json")
      ->check(CLI::IsMember({"dump", "json"}));
  cmd->add_flag("--json", o->json, "print the routing report as JSON on stderr");
  cmd->callback([o] { run_route(*o); });
}

}  // namespace railyard::cli
