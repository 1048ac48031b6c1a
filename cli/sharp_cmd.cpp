// railyard sharp: SHARP aggregation trees for one job on a topology.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "routing/node_lookup.h"
#include "routing/rails.h"
#include "routing/sharp_trees.h"

namespace railyard::cli {

namespace {

struct SharpOptions {
  std::string topo;
  std::string policy;
  std::string job = "cli";
  std::vector<std::string> hosts;
  std::vector<std::string> cas;
  bool all = false;
  std::vector<int32_t> rails;
  uint32_t trees_per_switch = 0;  // 0 = the policy's
  bool json = false;
};

std::string name(const routing::Fabric& f, NodeId n) {
  std::string_view d = f.desc(n);
  return std::string(d.empty() ? f.name(n) : d);
}

std::string hex(Guid g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g.value));
  return buf;
}

// The port of `sw` its uplink leaves from.
uint8_t uplink_port(const routing::Fabric& f, const routing::SharpTreeSwitch& s) {
  const routing::Link& l = f.link(s.uplink);
  return f.port(f.port(l.a).node == s.node ? l.a : l.b).num.value;
}

nlohmann::json tree_json(const routing::Fabric& f, const routing::SharpTree& t) {
  nlohmann::json switches = nlohmann::json::array();
  for (const auto& s : t.switches) {
    nlohmann::json children = nlohmann::json::array(), cas = nlohmann::json::array();
    for (NodeId c : s.children) children.push_back(name(f, c));
    for (NodeId c : s.cas) cas.push_back(name(f, c));
    nlohmann::json sw = {{"name", name(f, s.node)},   {"guid", hex(f.node(s.node).guid)},
                         {"depth", s.depth},          {"parent", nullptr},
                         {"children", std::move(children)}, {"cas", std::move(cas)},
                         {"fan_in", s.fan_in()}};
    if (s.parent.valid()) {
      sw["parent"] = name(f, s.parent);
      sw["parent_port"] = uplink_port(f, s);
    }
    switches.push_back(std::move(sw));
  }
  return {{"rail", t.rail},
          {"root", name(f, t.root)},
          {"root_guid", hex(f.node(t.root).guid)},
          {"height", t.height},
          {"min_height", t.min_height},
          {"degraded", t.degraded},
          {"max_fan_in", t.max_fan_in},
          {"cas", t.num_cas()},
          {"switches", std::move(switches)}};
}

// The tree depth-first from the root, indented by depth; long CA lists cut.
void print_tree(const routing::Fabric& f, const routing::SharpTree& t) {
  std::printf("rail %s: root %s, height %u%s, max fan-in %u, %zu switches, %u CAs\n",
              t.rail == routing::kNoRail ? "-" : std::to_string(t.rail).c_str(), name(f, t.root).c_str(), t.height,
              t.degraded ? (" (degraded: shallowest " + std::to_string(t.min_height) + " is full)").c_str() : "",
              t.max_fan_in, t.switches.size(), t.num_cas());
  std::vector<size_t> at(f.num_nodes(), SIZE_MAX);
  for (size_t i = 0; i < t.switches.size(); ++i) at[t.switches[i].node.value()] = i;
  std::vector<size_t> stack{0};
  while (!stack.empty()) {
    const auto& s = t.switches[stack.back()];
    stack.pop_back();
    std::string line(2 + 2 * s.depth, ' ');
    line += name(f, s.node);
    if (s.parent.valid()) line += " [port " + std::to_string(uplink_port(f, s)) + " up]";
    if (!s.children.empty()) line += ", " + std::to_string(s.children.size()) + " children";
    if (!s.cas.empty()) {
      line += ", " + std::to_string(s.cas.size()) + " CAs: ";
      constexpr size_t kShown = 4;
      for (size_t i = 0; i < s.cas.size() && i < kShown; ++i) line += (i ? ", " : "") + name(f, s.cas[i]);
      if (s.cas.size() > kShown) line += ", ... (+" + std::to_string(s.cas.size() - kShown) + ")";
    }
    std::printf("%s\n", line.c_str());
    for (auto it = s.children.rbegin(); it != s.children.rend(); ++it) stack.push_back(at[it->value()]);
  }
}

int run_sharp(const SharpOptions& o) {
  routing::Fabric fabric = load_fabric(o.topo);
  policies::Policy policy = load_policy(o.policy);
  routing::RoutingOptions options = plan_or_fail(fabric, policy, o.policy);  // drains -> per-link flags
  routing::RailMap rails = routing::map_rails(fabric, policy.rails);
  const uint32_t capacity = o.trees_per_switch ? o.trees_per_switch : policy.sharp.trees_per_switch;

  routing::SharpJob job{o.job, {}, o.hosts, o.rails};
  if (o.all) job.hosts = rails.hosts;
  for (const std::string& c : o.cas) {
    auto n = routing::find_node(fabric, c);
    if (!n) fail("--cas: " + n.error().message);
    job.cas.push_back(*n);
  }
  auto t0 = Clock::now();
  routing::SharpTreeBuilder builder(fabric, rails, options.drained);
  auto resolved = builder.resolve(job);
  if (!resolved) fail(resolved.error().message);
  std::vector<uint32_t> load(builder.num_switches(), 0);
  auto trees = builder.build_job(*resolved, load, capacity);
  if (!trees) fail(trees.error().message, kExitFindings);
  double ms = ms_since(t0);

  size_t drained = 0;
  for (uint8_t d : options.drained) drained += d != 0;
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : *trees) out.push_back(tree_json(fabric, t));
    nlohmann::json j = {{"topology", o.topo},
                        {"job", o.job},
                        {"cas", resolved->cas.size()},
                        {"trees_per_switch", capacity},
                        {"drained_links", drained},
                        {"timings_ms", {{"sharp_trees", ms}}},
                        {"trees", std::move(out)}};
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("railyard sharp: job '%s': %zu CAs, %zu trees (%u trees per switch, %zu drained links), %.1f ms\n",
              o.job.c_str(), resolved->cas.size(), trees->size(), capacity, drained, ms);
  for (const auto& t : *trees) print_tree(fabric, t);
  return kExitOk;
}

}  // namespace

void add_sharp_commands(CLI::App& app) {
  auto o = std::make_shared<SharpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sharp",
      "Compute SHARP aggregation trees for a job.\n"
      "One tree per rail of the job's CAs, rooted where the tree is shallowest, over\n"
      "links that are up and not drained by the policy; each switch of a tree takes one\n"
      "of its `sharp.trees_per_switch` slots. Prints each tree from its root: every\n"
      "switch with the port to its parent, its children and the job CAs it aggregates.\n\n"
      "Examples:\n"
      "  railyard sharp --topo roft.net --hosts node001,node002,node017\n"
      "  railyard sharp --topo roft.net --all --rails 0,1 --policy drains.yaml\n"
      "  railyard sharp --topo roft.net --cas 'node001 mlx5_0,node002 mlx5_0' --json\n\n"
      "Exit codes: 0 trees built; 1 refused (capacity, CAs cut off, leaves not connected);\n"
      "2 bad input.");
  cmd->add_option("--topo,-t", o->topo, "topology file (ibnetdiscover output or ibsim net file)")->required();
  cmd->add_option("--policy,-p", o->policy, "policy YAML (drains, rail naming, sharp.trees_per_switch)");
  auto* hosts = cmd->add_option("--hosts", o->hosts, "the job's hosts, comma-separated (all their CAs)")
                    ->delimiter(',');
  auto* cas = cmd->add_option("--cas", o->cas, "the job's CAs (GUID, record name or description), comma-separated")
                  ->delimiter(',');
  auto* all = cmd->add_flag("--all", o->all, "every host of the fabric");
  hosts->excludes(all);
  cas->excludes(all);
  cmd->add_option("--rails", o->rails, "only these rails, comma-separated (default: every rail of the job)")
      ->delimiter(',');
  cmd->add_option("--trees-per-switch", o->trees_per_switch, "override the policy's sharp.trees_per_switch")
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--job", o->job, "job id shown in output and messages, default 'cli'");
  cmd->add_flag("--json", o->json, "print the trees as JSON on stdout");
  cmd->callback([o] {
    if (o->hosts.empty() && o->cas.empty() && !o->all) fail("give the job as --hosts, --cas or --all");
    int rc = run_sharp(*o);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

}  // namespace railyard::cli
