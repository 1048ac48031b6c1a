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

#include "routing/generator.h"
#include "routing/rails.h"
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

// Degraded: range(1) = switch links cut, per mille (-1: one link).
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
    // One link down, 1% and 5% of the switch links cut, at 2k and 16k CAs.
    auto* degraded = benchmark::RegisterBenchmark("route_degraded/3level_roft", BM_RouteDegraded);
    for (int servers : {256, 2048}) {
      if (servers == 2048 && railyard::bench::skip_large()) continue;
      for (int cut : {-1, 10, 50}) degraded->Args({servers, cut});
    }
    degraded->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
  });
}
