// Routing and verification time vs fabric size, on generated 3-level ROFTs
// (8 rails, radix 64) up to 2,048 servers x 8 rails = 16,384 CAs, 1,280
// switches; routing also degraded (one link down, 1% and 5% of the switch
// links cut). Peak RSS is reported as a counter. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) drops the 16k size.
#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/reroute.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"

namespace {

using namespace railyard::routing;

void BM_Route(benchmark::State& state) {
  const Fabric& f = railyard::bench::roft(static_cast<int>(state.range(0)));
  RoutingOptions options = plan_routing(f, {}, map_rails(f, {})).value();
  for (auto _ : state) {
    auto r = route_unicast(f, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["switches"] = static_cast<double>(f.switches().size());
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

// Degraded: range(1) = switch links cut, per mille (-1: one link; 0: none,
// the healthy tree).
void BM_RouteDegraded(benchmark::State& state) {
  const Fabric& f = railyard::bench::roft(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  RoutingOptions options = plan_routing(f, {}, map_rails(f, {})).value();
  for (auto _ : state) {
    auto r = route_unicast(f, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

// Incremental reroute (routing/reroute.h) after one link goes down on the
// healthy tree: range(1) = 0 a leaf-spine link, 1 a spine-core link (the
// 7th of its tier in link order). Times reroute_unicast alone; the full route of the same change
// is route_degraded's (-1 row) for comparison.
// The link the reroute benchmarks fail: the 7th of its tier in link order
// (leaf-spine links join a switch with CAs to one without; tier 0), else
// spine-core (tier 1).
railyard::LinkId bench_link(const railyard::routing::Fabric& f, int64_t tier) {
  using namespace railyard;
  using namespace railyard::routing;
  auto has_cas = [&](NodeId n) {
    const Node& node = f.node(n);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const NodeId far = f.remote_node(PortId(node.first_port.value() + p));
      if (far.valid() && !f.is_switch(far)) return true;
    }
    return false;
  };
  int seen = 0;
  for (uint32_t l = 0; l < f.num_links(); ++l) {
    const NodeId a = f.port(f.link(LinkId(l)).a).node, b = f.port(f.link(LinkId(l)).b).node;
    if (!f.is_switch(a) || !f.is_switch(b)) continue;
    const bool leaf_spine = has_cas(a) || has_cas(b);
    if (leaf_spine == (tier == 0) && ++seen == 7) return LinkId(l);
  }
  return LinkId();
}

// One link down (reroute_one_link) or, from there, back up
// (reroute_link_back): the reroute alone is timed.
void BM_Reroute(benchmark::State& state, bool back) {
  using namespace railyard;
  using namespace railyard::routing;
  const Fabric& f = railyard::bench::roft(static_cast<int>(state.range(0)));
  const RoutingOptions options = plan_routing(f, {}, map_rails(f, {})).value();
  FabricBuilder builder(f);
  (void)builder.set_link_state(bench_link(f, state.range(1)), PortState::kDown);
  const Fabric after = builder.build().value();
  const RoutingOptions after_options = plan_routing(after, {}, map_rails(after, {})).value();
  RerouteStats stats;
  // As in the plugin: the route before is handed over (its tables and memo
  // become the new ones in place), and the result outlives the timing.
  std::optional<Result<TrackedRouting>> last;
  for (auto _ : state) {
    state.PauseTiming();
    last.reset();
    TrackedRouting given = route_unicast_tracked(f, options).value();
    if (back) given = reroute_unicast(f, options, std::move(given), after, after_options).value();
    state.ResumeTiming();
    if (back) {
      last.emplace(reroute_unicast(after, after_options, std::move(given), f, options));
    } else {
      last.emplace(reroute_unicast(f, options, std::move(given), after, after_options));
    }
    stats = last->value().stats;
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["incremental"] = stats.incremental ? 1 : 0;
  state.counters["columns_rewalked"] = stats.columns_recomputed;
  state.counters["columns_patched"] = stats.columns_patched;
  state.counters["memo_in_place"] = stats.memo_in_place ? 1 : 0;
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

void BM_Verify(benchmark::State& state) {
  const Fabric& f = railyard::bench::roft(static_cast<int>(state.range(0)));
  auto r = route_unicast(f, plan_routing(f, {}, map_rails(f, {})).value()).value();
  for (auto _ : state) {
    auto v = verify_tables(f, r.tables);
    benchmark::DoNotOptimize(v);
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

}  // namespace

int main(int argc, char** argv) {
  return railyard::bench::run(argc, argv, [] {
    benchmark::RegisterBenchmark("route/3level_roft", BM_Route)->Apply(railyard::bench::sizes);
    benchmark::RegisterBenchmark("verify/3level_roft", BM_Verify)->Apply(railyard::bench::sizes);
    // Healthy (0), one link down (-1), 1% and 5% of the switch links cut, at
    // 2k and 16k CAs; three runs each, for the median (route/ above runs
    // once, its first run in the process: page faults included).
    auto* degraded = benchmark::RegisterBenchmark("route_degraded/3level_roft", BM_RouteDegraded);
    for (int servers : {256, 2048}) {
      if (servers == 2048 && railyard::bench::skip_large()) continue;
      for (int cut : {0, -1, 10, 50}) degraded->Args({servers, cut});
    }
    degraded->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
    for (bool back : {false, true}) {
      auto* reroute = benchmark::RegisterBenchmark(back ? "reroute_link_back/3level_roft" : "reroute_one_link/3level_roft",
                                                   [back](benchmark::State& st) { BM_Reroute(st, back); });
      for (int servers : {256, 2048}) {
        if (servers == 2048 && railyard::bench::skip_large()) continue;
        for (int tier : {0, 1}) reroute->Args({servers, tier});
      }
      reroute->Unit(benchmark::kMillisecond)->Iterations(3)->Repetitions(3);
    }
  });
}
