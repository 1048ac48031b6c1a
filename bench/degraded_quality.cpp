// degraded_quality: routing quality on degraded fat trees (issue 10), judged
// by the tests' own oracle (tests/routing/cut_oracle.h), not by the engine's
// report or routing/congestion.cpp's bound.
//
// For one generated fabric and each scenario x seed: degrade it
// (tests/routing/degradations.h), route it (plan_routing + route_unicast, the
// route timed alone), and print one row as soon as it is done: live CA ports,
// all-to-all max / cut bound / ratio, the worst rail-aligned and cross-rail
// shift (largest max - bound, with its k), pairs not delivered (and of those,
// pairs up*/down* could connect), table entries changed against the healthy
// tables, entries whose healthy route crossed a failed link, route wall ms.
//
//   degraded_quality --levels 3 --servers 128 --rails 8 --radix 16
//       --scenario link-spine-core,cut:5 --seeds 1-3 [--json] [--shift-stride 4]
//
// Scenarios: healthy, link-leaf-spine, link-spine-core, leaf, spine, core,
// cut:PCT, cut-tier:leaf-spine|spine-core:PCT, drain:PCT,
// drain-tier:TIER:PCT, cut-drain:PCT:PCT.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/path_stability.h"
#include "tests/routing/degradations.h"

namespace {

using namespace railyard;
using namespace railyard::routing;
using namespace railyard::routing::test;

struct Args {
  GeneratorSpec spec;
  std::vector<std::string> scenarios;
  uint64_t seed_first = 1, seed_last = 1;
  bool json = false;
  uint32_t shift_stride = 1;
  bool shifts = true;
  bool stability = true;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "degraded_quality: %s\n"
               "usage: degraded_quality [--levels 2|3] [--servers N] [--rails N] [--radix N]\n"
               "         [--kind roft|fat-tree|rail-only] [--scenario S[,S...]]... [--seed N | --seeds A-B]\n"
               "         [--shift-stride N] [--no-shifts] [--no-stability] [--json]\n"
               "scenarios: healthy link-leaf-spine link-spine-core leaf spine core cut:PCT\n"
               "           cut-tier:leaf-spine|spine-core:PCT drain:PCT drain-tier:TIER:PCT cut-drain:PCT:PCT\n",
               why);
  std::exit(2);
}

uint64_t number(const char* s, const char* flag) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (!*s || *end) usage((std::string("bad number for ") + flag + ": " + s).c_str());
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  a.spec.levels = 3;
  a.spec.servers = 128;
  a.spec.rails = 8;
  a.spec.radix = 16;
  a.spec.assign_lids = true;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage((f + " needs a value").c_str());
      return argv[++i];
    };
    if (f == "--levels") a.spec.levels = static_cast<uint32_t>(number(value(), "--levels"));
    else if (f == "--servers") a.spec.servers = static_cast<uint32_t>(number(value(), "--servers"));
    else if (f == "--rails") a.spec.rails = static_cast<uint32_t>(number(value(), "--rails"));
    else if (f == "--radix") a.spec.radix = static_cast<uint32_t>(number(value(), "--radix"));
    else if (f == "--kind") {
      std::string k = value();
      if (k == "roft") a.spec.kind = TopologyKind::kRoft;
      else if (k == "fat-tree") a.spec.kind = TopologyKind::kFatTree;
      else if (k == "rail-only") a.spec.kind = TopologyKind::kRailOnly;
      else usage(("unknown kind " + k).c_str());
    } else if (f == "--scenario") {
      std::string list = value();
      for (size_t p = 0; p <= list.size();) {
        size_t c = list.find(',', p);
        if (c == std::string::npos) c = list.size();
        if (c > p) a.scenarios.push_back(list.substr(p, c - p));
        p = c + 1;
      }
    } else if (f == "--seed") {
      a.seed_first = a.seed_last = number(value(), "--seed");
    } else if (f == "--seeds") {
      std::string r = value();
      size_t dash = r.find('-');
      if (dash == std::string::npos) usage("--seeds wants A-B");
      a.seed_first = number(r.substr(0, dash).c_str(), "--seeds");
      a.seed_last = number(r.substr(dash + 1).c_str(), "--seeds");
      if (a.seed_last < a.seed_first) usage("--seeds A-B with A > B");
    } else if (f == "--shift-stride") {
      a.shift_stride = static_cast<uint32_t>(number(value(), "--shift-stride"));
    } else if (f == "--no-shifts") {
      a.shifts = false;
    } else if (f == "--no-stability") {
      a.stability = false;
    } else if (f == "--json") {
      a.json = true;
    } else if (f == "--help" || f == "-h") {
      usage("help");
    } else {
      usage(("unknown flag " + f).c_str());
    }
  }
  if (a.scenarios.empty()) a.scenarios.push_back("healthy");
  return a;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  for (;;) {
    size_t c = s.find(':', p);
    out.push_back(s.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) return out;
    p = c + 1;
  }
}

double percent(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || v < 0 || v > 100) usage(("bad percentage " + s).c_str());
  return v;
}

Tier tier(const std::string& s) {
  if (s == "leaf-spine") return Tier::kLeafSpine;
  if (s == "spine-core") return Tier::kSpineCore;
  if (s == "any") return Tier::kAny;
  usage(("unknown tier " + s).c_str());
}

Degraded degrade(const Degrader& d, const std::string& scenario, uint64_t seed) {
  std::vector<std::string> w = split(scenario);
  const std::string& k = w[0];
  if (k == "healthy" && w.size() == 1) return d.healthy();
  if (k == "link-leaf-spine" && w.size() == 1) return d.link_down(Tier::kLeafSpine, seed);
  if (k == "link-spine-core" && w.size() == 1) return d.link_down(Tier::kSpineCore, seed);
  if (k == "leaf" && w.size() == 1) return d.switch_down(1, seed);
  if (k == "spine" && w.size() == 1) return d.switch_down(2, seed);
  if (k == "core" && w.size() == 1) return d.switch_down(3, seed);
  if (k == "cut" && w.size() == 2) return d.cut(percent(w[1]), Tier::kAny, seed);
  if (k == "cut-tier" && w.size() == 3) return d.cut(percent(w[2]), tier(w[1]), seed);
  if (k == "drain" && w.size() == 2) return d.drain(percent(w[1]), Tier::kAny, seed);
  if (k == "drain-tier" && w.size() == 3) return d.drain(percent(w[2]), tier(w[1]), seed);
  if (k == "cut-drain" && w.size() == 3) return d.cut_and_drain(percent(w[1]), percent(w[2]), Tier::kAny, seed);
  usage(("unknown scenario " + scenario).c_str());
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  auto generated = generate_fabric(args.spec);
  if (!generated.ok()) {
    std::fprintf(stderr, "degraded_quality: %s\n", generated.error().message.c_str());
    return 1;
  }
  const Fabric base = std::move(generated).value().fabric;
  std::string label = fabric_label(base);
  if (args.spec.kind != TopologyKind::kRoft) label += " " + std::string(to_string(args.spec.kind));
  Degrader degrader(base, label);
  const RailMap rails = map_rails(base, {});

  auto route = [&](const Degraded& d, double* ms) -> std::optional<RoutingResult> {
    auto options = plan_routing(d.fabric, {}, rails);
    if (!options.ok()) {
      std::fprintf(stderr, "degraded_quality: %s: %s\n", d.name.c_str(), options.error().message.c_str());
      return std::nullopt;
    }
    options->drained = d.drained;
    auto t0 = std::chrono::steady_clock::now();
    auto r = route_unicast(d.fabric, *options);
    auto t1 = std::chrono::steady_clock::now();
    if (ms) *ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (!r.ok()) {
      std::fprintf(stderr, "degraded_quality: %s: %s\n", d.name.c_str(), r.error().message.c_str());
      return std::nullopt;
    }
    return std::move(r).value();
  };

  // The flows of every shift (sampled by --shift-stride), kept for every row
  // when they fit in ~128 MB (16k CAs, every k: 0.5 GB; then per row).
  std::vector<std::vector<Flow>> rail_shifts, cross_shifts;
  const uint64_t pattern_bytes = (rails.hosts.size() / std::max(1u, args.shift_stride) + 1) * base.cas().size() *
                                 sizeof(Flow) * 2;
  const bool keep_patterns = pattern_bytes <= (uint64_t{128} << 20);
  if (args.shifts && keep_patterns) {
    rail_shifts = CutOracle::shift_patterns(base, rails, false, args.shift_stride);
    if (rails.num_rails > 1) cross_shifts = CutOracle::shift_patterns(base, rails, true, args.shift_stride);
  }

  // The healthy tables, for path stability.
  std::optional<RoutingResult> healthy;
  if (args.stability) {
    healthy = route(degrader.healthy(), nullptr);
    if (!healthy) return 1;
  }

  if (!args.json) {
    std::printf("%-44s %6s %7s %7s %6s %13s %13s %8s %6s %8s %8s %9s\n", "scenario", "CAs", "a2a", "bound", "ratio",
                "rail max/bnd", "cross max/bnd", "unreach", "lost", "changed", "crossed", "route_ms");
    std::fflush(stdout);
  }
  int failures = 0;
  for (const std::string& scenario : args.scenarios) {
    for (uint64_t seed = args.seed_first; seed <= args.seed_last; ++seed) {
      Degraded d = degrade(degrader, scenario, seed);
      double ms = 0;
      std::optional<RoutingResult> r = route(d, &ms);
      if (!r) {
        ++failures;
        continue;
      }
      CutOracle oracle(d.fabric, d.drained);
      AllToAllLoad a2a = oracle.all_to_all(r->tables);
      ShiftSweep rail, cross;
      if (args.shifts && keep_patterns) {
        rail = oracle.shifts(r->tables, rail_shifts);
        cross = oracle.shifts(r->tables, cross_shifts);
      } else if (args.shifts) {
        rail = oracle.shifts(r->tables, rails, false, args.shift_stride);
        if (rails.num_rails > 1) cross = oracle.shifts(r->tables, rails, true, args.shift_stride);
      }
      PathStability st;
      if (args.stability) st = path_stability(base, healthy->tables, d.fabric, d.drained, r->tables);
      uint64_t unreach = a2a.pairs - a2a.delivered;
      if (args.json) {
        std::printf(
            "{\"scenario\":%s,\"kind\":%s,\"seed\":%llu,\"cas\":%llu,\"dead_cas\":%llu,\"links_down\":%zu,"
            "\"links_drained\":%zu,\"a2a_max\":%llu,\"a2a_bound\":%llu,\"a2a_ratio\":%.4f,"
            "\"a2a_max_switch_link\":%llu,\"rail_shifts\":%u,\"rail_worst_k\":%d,\"rail_max\":%llu,"
            "\"rail_bound\":%llu,\"cross_shifts\":%u,\"cross_worst_k\":%d,\"cross_max\":%llu,\"cross_bound\":%llu,"
            "\"unreachable_pairs\":%llu,\"lost_connectable_pairs\":%llu,\"looped_pairs\":%llu,"
            "\"shift_lost_connectable\":%llu,\"entries_compared\":%llu,\"changed_entries\":%llu,"
            "\"crossed_entries\":%llu,\"route_ms\":%.2f}\n",
            json_string(d.name).c_str(), json_string(scenario).c_str(), static_cast<unsigned long long>(seed),
            static_cast<unsigned long long>(a2a.live_cas), static_cast<unsigned long long>(a2a.dead_cas),
            d.down.size(), d.drained_links.size(), static_cast<unsigned long long>(a2a.max_load),
            static_cast<unsigned long long>(a2a.bound), a2a.ratio(),
            static_cast<unsigned long long>(a2a.max_switch_load), rail.shifts, rail.worst_k,
            static_cast<unsigned long long>(rail.worst_max), static_cast<unsigned long long>(rail.worst_bound),
            cross.shifts, cross.worst_k, static_cast<unsigned long long>(cross.worst_max),
            static_cast<unsigned long long>(cross.worst_bound), static_cast<unsigned long long>(unreach),
            static_cast<unsigned long long>(a2a.lost_connectable), static_cast<unsigned long long>(a2a.looped),
            static_cast<unsigned long long>(rail.lost_connectable + cross.lost_connectable),
            static_cast<unsigned long long>(st.entries), static_cast<unsigned long long>(st.changed),
            static_cast<unsigned long long>(st.crossed), ms);
      } else {
        char rs[32], cs[32];
        std::snprintf(rs, sizeof rs, "%llu/%llu@%d", static_cast<unsigned long long>(rail.worst_max),
                      static_cast<unsigned long long>(rail.worst_bound), rail.worst_k);
        std::snprintf(cs, sizeof cs, "%llu/%llu@%d", static_cast<unsigned long long>(cross.worst_max),
                      static_cast<unsigned long long>(cross.worst_bound), cross.worst_k);
        std::printf("%-44s %6llu %7llu %7llu %6.3f %13s %13s %8llu %6llu %8llu %8llu %9.1f\n", d.name.c_str(),
                    static_cast<unsigned long long>(a2a.live_cas), static_cast<unsigned long long>(a2a.max_load),
                    static_cast<unsigned long long>(a2a.bound), a2a.ratio(), rs, cs,
                    static_cast<unsigned long long>(unreach), static_cast<unsigned long long>(a2a.lost_connectable),
                    static_cast<unsigned long long>(st.changed), static_cast<unsigned long long>(st.crossed), ms);
      }
      std::fflush(stdout);
    }
  }
  return failures ? 1 : 0;
}
