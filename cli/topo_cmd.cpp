// `railyard topo ...`: generate, inspect and compare topology files.
//
//   topo gen    GeneratorSpec from flags -> ibnetdiscover-dialect file
//   topo show   read a file, map rails, report levels/rails/links/odd links
//   topo diff   compare two files by GUID/port and host/rail (hidden from the
//               command list, described in `topo --help`)
//
// Exit codes: 0 success; 1 `topo diff` found differences; 2 bad input (a file
// that cannot be read or parsed, a bad policy, a spec the generator refuses);
// CLI11's own codes (>= 100) for usage errors.
#include <array>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/io.h"
#include "cli/topo_diff.h"
#include "cli/topo_report.h"
#include "policies/policy_loader.h"
#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/topology_reader.h"
#include "routing/topology_writer.h"

namespace railyard::cli {
namespace {


const char* const kExitCodesHelp =
    "Exit codes: 0 ok; 1 differences found (topo diff); 2 unreadable or invalid input\n"
    "(the reason is printed as \"file:line: reason\"); >= 100 usage errors.";

struct GenOptions {
  routing::GeneratorSpec spec;
  std::string kind = "roft";
  std::string output = "-";
  std::vector<std::vector<std::string>> remove_switch;  // one entry per --remove-switch: {LEVEL, N} or {LEVEL:N}
  std::string remove_links_at = "all";
};

const std::map<std::string, routing::TopologyKind>& topology_kinds() {
  static const std::map<std::string, routing::TopologyKind> kinds{{"roft", routing::TopologyKind::kRoft},
                                                                  {"fat-tree", routing::TopologyKind::kFatTree},
                                                                  {"rail-only", routing::TopologyKind::kRailOnly}};
  return kinds;
}

const std::map<std::string, routing::LinkTier>& link_tiers() {
  static const std::map<std::string, routing::LinkTier> tiers{{"all", routing::LinkTier::kAll},
                                                              {"leaf-spine", routing::LinkTier::kLeafSpine},
                                                              {"spine-core", routing::LinkTier::kSpineCore}};
  return tiers;
}

// A whole number in 0..max, or nothing.
std::optional<uint32_t> parse_count(const std::string& s, uint32_t max) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

// --remove-switch LEVEL N or LEVEL:N, repeatable, once per level.
std::array<uint32_t, routing::kMaxSwitchLevel> parse_remove_switch(const std::vector<std::vector<std::string>>& uses) {
  std::array<uint32_t, routing::kMaxSwitchLevel> counts{};
  std::array<bool, routing::kMaxSwitchLevel> named{};
  for (const std::vector<std::string>& use : uses) {
    std::vector<std::string> parts = use;
    if (parts.size() == 1) {
      size_t colon = parts[0].find(':');
      if (colon != std::string::npos) parts = {parts[0].substr(0, colon), parts[0].substr(colon + 1)};
    }
    std::string shown;
    for (const std::string& p : use) shown += (shown.empty() ? "" : " ") + p;
    if (parts.size() != 2) {
      throw CLI::ValidationError("--remove-switch", "expects LEVEL N or LEVEL:N, got \"" + shown + "\"");
    }
    std::optional<uint32_t> level = parse_count(parts[0], routing::kMaxSwitchLevel);
    std::optional<uint32_t> n = parse_count(parts[1], UINT32_MAX);
    if (!level || *level == 0) {
      throw CLI::ValidationError("--remove-switch",
                                 "level must be 1 (leaf), 2 (spine) or 3 (core), got \"" + shown + "\"");
    }
    if (!n) throw CLI::ValidationError("--remove-switch", "N must be a whole number, got \"" + shown + "\"");
    if (named[*level - 1]) {
      throw CLI::ValidationError("--remove-switch", "level " + std::to_string(*level) + " is named twice");
    }
    named[*level - 1] = true;
    counts[*level - 1] = *n;
  }
  return counts;
}

void run_gen(GenOptions o) {
  o.spec.kind = topology_kinds().at(o.kind);  // validated by the option's IsMember check
  o.spec.remove_links_at = link_tiers().at(o.remove_links_at);  // likewise
  o.spec.remove_switches = parse_remove_switch(o.remove_switch);
  Result<routing::GeneratedFabric> g = routing::generate_fabric(o.spec);
  if (!g) fail("topo gen: " + g.error().message);
  const routing::Fabric& f = g->fabric;
  routing::TopologyWriteOptions wo;
  wo.header_comment = "railyard topo gen --kind " + std::string(routing::to_string(o.spec.kind)) + " --servers " +
                      std::to_string(o.spec.servers) + " --rails " + std::to_string(o.spec.rails) + " --levels " +
                      std::to_string(o.spec.levels) + " --radix " + std::to_string(o.spec.radix) + " --seed " +
                      std::to_string(o.spec.seed);
  Status st = write_file(o.output, routing::write_topology(f, wo));
  if (!st) fail(st.error().message);
  std::cerr << "generated " << routing::to_string(o.spec.kind) << ": " << o.spec.servers << " servers x "
            << o.spec.rails << " rails, " << o.spec.levels << " levels, radix " << o.spec.radix << ": "
            << f.switches().size() << " switches, " << f.cas().size() << " CAs, " << f.num_links() << " links, "
            << g->removed_links.size() << " removed";
  if (!g->removed_switches.empty()) {
    std::cerr << " (" << g->removed_switches.size() << (g->removed_switches.size() == 1 ? " switch" : " switches")
              << " without links)";
  }
  std::cerr << (o.output == "-" ? "" : " -> " + o.output) << "\n";
  for (const std::string& s : g->removed_switches) std::cerr << "removed switch: " << s << "\n";
  for (const std::string& r : g->removed_links) std::cerr << "removed: " << r << "\n";
}

void add_gen(CLI::App& topo) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* gen = topo.add_subcommand("gen", "Generate a fabric: rail-optimized or plain fat tree, or rail-only");
  gen->footer(
      "Shapes (K = radix; K/2 CAs per leaf, K/2 uplinks):\n"
      "  roft       leaf (group g, rail r) holds rail r of every server of group g\n"
      "  fat-tree   all CAs of a server on one leaf\n"
      "  rail-only  one network per rail, nothing between rails\n"
      "Writes an ibnetdiscover-dialect file (ibsim loads it as is); prints a summary\n"
      "and every removed switch and link (\"node[port] <-> node[port]\") on stderr.\n\n"
      "Removals (seeded by --seed; each picks among what the ones before it left):\n"
      "  --remove-switch LEVEL N   N whole switches of level 1 (leaf), 2 (spine) or\n"
      "                            3 (core, 3 levels only); also LEVEL:N, once per level.\n"
      "                            A removed switch stays in the file with no link\n"
      "                            (the SM never discovers it); a removed leaf takes\n"
      "                            its CAs' links, the CAs stay uncabled.\n"
      "  --remove-uplink-per-leaf  then that many uplinks of every leaf left\n"
      "  --remove-switch-links N   then N switch-switch links, in the tier\n"
      "                            --remove-links-at names (default all)\n"
      "  --remove-ca-links N       then N CA cables\n"
      "The same options and seed give the same fabric.\n\n"
      "Examples:\n"
      "  railyard topo gen --servers 32 --rails 8 --levels 2 --radix 32 -o roft.net\n"
      "      256 CAs: 16 leaves (2 groups x 8 rails), 16 spines\n"
      "  railyard topo gen --servers 2048 --rails 8 --levels 3 --radix 64 -o big.net\n"
      "      16,384 CAs, 3 levels\n"
      "  railyard topo gen --servers 64 --levels 3 --radix 16 --remove-switch-links 3 --seed 7\n"
      "      a degraded tree; same seed, same links removed\n"
      "  railyard topo gen --servers 128 --levels 3 --radix 16 --remove-switch 3 1 --seed 2\n"
      "      one core switch down\n"
      "  railyard topo gen --servers 128 --levels 3 --radix 16 \\\n"
      "    --remove-switch-links 1 --remove-links-at spine-core\n"
      "      one spine-core link down\n"
      "  railyard topo gen --kind rail-only --servers 16 --radix 32 --assign-lids\n\n" +
      std::string(kExitCodesHelp));
  gen->add_option("--kind", o->kind, "roft, fat-tree or rail-only")
      ->check(CLI::IsMember({"roft", "fat-tree", "rail-only"}))
      ->capture_default_str();
  gen->add_option("--servers", o->spec.servers, "Number of servers")->capture_default_str();
  gen->add_option("--rails", o->spec.rails, "CAs (rails) per server")->capture_default_str();
  gen->add_option("--levels", o->spec.levels, "Switch levels: 2 or 3")->capture_default_str();
  gen->add_option("--radix", o->spec.radix, "Ports per switch (even)")->capture_default_str();
  gen->add_option("--remove-switch", o->remove_switch,
                  "LEVEL N (or LEVEL:N): leave N seeded-random whole switches of level 1 (leaf), 2 (spine) "
                  "or 3 (core) without links; repeatable, once per level")
      ->expected(1, 2)
      ->type_name("LEVEL N");
  gen->add_option("--remove-switch-links", o->spec.remove_switch_links,
                  "Leave N seeded-random switch-switch links uncabled");
  gen->add_option("--remove-links-at", o->remove_links_at,
                  "Tier --remove-switch-links draws from: all, leaf-spine or spine-core")
      ->check(CLI::IsMember({"all", "leaf-spine", "spine-core"}))
      ->capture_default_str();
  gen->add_option("--remove-ca-links", o->spec.remove_ca_links, "Leave N seeded-random CA links uncabled");
  gen->add_option("--remove-uplink-per-leaf", o->spec.remove_uplink_per_leaf,
                  "Leave N uplinks of every leaf uncabled");
  gen->add_option("--seed", o->spec.seed, "Seed of the removals")->capture_default_str();
  gen->add_option("--host-prefix", o->spec.host_prefix, "CA descriptions are \"<prefix>NNN mlx5_<rail>\"")
      ->capture_default_str();
  gen->add_flag("--assign-lids", o->spec.assign_lids, "Give every switch and CA port a LID");
  gen->add_option("-o,--output", o->output, "Output file; - is stdout")->capture_default_str();
  gen->callback([o] { run_gen(*o); });
}

struct ShowOptions {
  std::string file;
  std::string policy;
  bool json = false;
  bool long_form = false;
};

void run_show(const ShowOptions& o) {
  routing::Fabric f = load_fabric(o.file);
  policies::RailNaming naming = load_policy(o.policy).rails;
  routing::RailMap rails = routing::map_rails(f, naming);
  TopologyReport report = build_topology_report(f, rails, o.file);
  if (o.json) {
    std::cout << render_topology_json(f, rails, report).dump(2) << "\n";
  } else {
    std::cout << render_topology_text(f, rails, report, o.long_form);
  }
}

void add_show(CLI::App& topo) {
  auto o = std::make_shared<ShowOptions>();
  CLI::App* show = topo.add_subcommand("show", "Read a topology file and report levels, rails, links and odd links");
  show->footer(
      "Reads ibnetdiscover output or an ibsim net file. Reports switches per level\n"
      "(0 leaf, 1 spine, 2 core), CAs and hosts, each rail's CAs and leaves, links\n"
      "by level, and what looks missing: switches with fewer up-links than most of\n"
      "their level, switch ports unconnected although cabled elsewhere at that level,\n"
      "CAs without a cable, and rail misfits.\n\n"
      "Examples:\n"
      "  railyard topo show fabric.net\n"
      "  ibnetdiscover | railyard topo show - --policy policy.yaml\n"
      "  railyard topo show fabric.net --json | jq '.odd'\n\n" +
      std::string(kExitCodesHelp));
  show->add_option("file", o->file, "Topology file; - reads stdin")->required();
  show->add_option("--policy", o->policy, "Policy YAML whose rail naming maps CAs to hosts and rails");
  show->add_flag("--json", o->json, "Emit a JSON document instead of text");
  show->add_flag("--long", o->long_form, "List every switch, leaf and misfit");
  show->callback([o] { run_show(*o); });
}

struct TopoDiffOptions {
  std::string a, b;
  std::string policy;
  bool json = false;
};

void run_topo_diff(const TopoDiffOptions& o) {
  routing::Fabric a = load_fabric(o.a);
  routing::Fabric b = load_fabric(o.b);
  policies::RailNaming naming = load_policy(o.policy).rails;
  std::vector<TopologyDifference> diffs = diff_topologies(a, b, naming);
  if (o.json) {
    nlohmann::ordered_json j;
    j["a"] = o.a;
    j["b"] = o.b;
    j["equal"] = diffs.empty();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const TopologyDifference& d : diffs) {
      nlohmann::ordered_json dj = {{"kind", d.kind}, {"text", d.text}};
      for (const auto& [key, value] : d.detail.items()) dj[key] = value;
      list.push_back(dj);
    }
    j["differences"] = list;
    std::cout << j.dump(2) << "\n";
  } else if (diffs.empty()) {
    std::cout << "same fabric: " << a.switches().size() << " switches, " << a.cas().size() << " CAs, "
              << a.num_links() << " links, hosts and rails agree\n";
  } else {
    for (const TopologyDifference& d : diffs) std::cout << d.text << "\n";
    std::cout << diffs.size() << " difference" << (diffs.size() == 1 ? "" : "s") << " between " << o.a << " (A) and "
              << o.b << " (B)\n";
  }
  if (!diffs.empty()) throw CLI::RuntimeError(kExitFindings);
}

void add_diff(CLI::App& topo) {
  auto o = std::make_shared<TopoDiffOptions>();
  CLI::App* diff = topo.add_subcommand("diff", "Compare two topology files: did the cabling change?");
  diff->group("");  // listed in `topo --help`'s footer rather than the command list
  diff->footer(
      "Matches nodes by GUID and links by (GUID, port) at both ends, and checks every\n"
      "CA's host and rail; ignores LIDs, speeds, widths and record names. Prints one\n"
      "line per difference: '-' only in A, '+' only in B, '~' changed.\n\n"
      "Examples:\n"
      "  railyard topo diff plan.net discovered.net\n"
      "  ibnetdiscover > today.net; railyard topo diff yesterday.net today.net --json\n\n" +
      std::string(kExitCodesHelp));
  diff->add_option("a", o->a, "Topology file A (e.g. the plan)")->required();
  diff->add_option("b", o->b, "Topology file B (e.g. ibnetdiscover's output)")->required();
  diff->add_option("--policy", o->policy, "Policy YAML whose rail naming maps CAs to hosts and rails");
  diff->add_flag("--json", o->json, "Emit {equal, differences[]} as JSON");
  diff->callback([o] { run_topo_diff(*o); });
}

}  // namespace

void add_topo_commands(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Generate, inspect and compare topology files");
  topo->require_subcommand(1);
  topo->footer(
      "Also: railyard topo diff A B [--json]  compares two topology files by GUID, port,\n"
      "host and rail (did the cabling change?); exit 0 same, 1 different.\n\n" +
      std::string(kExitCodesHelp));
  add_gen(*topo);
  add_show(*topo);
  add_diff(*topo);
}

}  // namespace railyard::cli
