// AR group computation and verification time vs fabric size, on generated
// 3-level ROFTs (8 rails, radix 64) up to 2,048 servers x 8 rails = 16,384
// CAs. Peak RSS is reported as a counter. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) drops the 16k size.
#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "routing/ar_groups.h"
#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"

namespace {

using namespace railyard::routing;

struct Routed {
  Fabric fabric;
  RoutingOptions options;
  ForwardingTables tables;
};

const Routed& routed_for(int servers) {
  static std::map<int, Routed> cache;
  auto it = cache.find(servers);
  if (it == cache.end()) {
    Routed r;
    r.fabric = railyard::bench::roft(servers);
    r.options = plan_routing(r.fabric, {}, map_rails(r.fabric, {})).value();
    r.tables = std::move(route_unicast(r.fabric, r.options).value().tables);
    it = cache.emplace(servers, std::move(r)).first;
  }
  return it->second;
}

void BM_ArGroups(benchmark::State& state) {
  const Routed& r = routed_for(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto ar = compute_ar_groups(r.fabric, r.tables, r.options, 64);
    benchmark::DoNotOptimize(ar);
  }
  state.counters["CAs"] = static_cast<double>(r.fabric.cas().size());
  state.counters["switches"] = static_cast<double>(r.fabric.switches().size());
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

void BM_ArVerify(benchmark::State& state) {
  const Routed& r = routed_for(static_cast<int>(state.range(0)));
  ArTables ar = compute_ar_groups(r.fabric, r.tables, r.options, 64).value();
  for (auto _ : state) {
    auto c = verify_ar_groups(r.fabric, ar);
    benchmark::DoNotOptimize(c);
  }
  state.counters["CAs"] = static_cast<double>(r.fabric.cas().size());
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

}  // namespace

int main(int argc, char** argv) {
  return railyard::bench::run(argc, argv, [] {
    benchmark::RegisterBenchmark("ar_groups/3level_roft", BM_ArGroups)->Apply(railyard::bench::sizes);
    benchmark::RegisterBenchmark("ar_verify/3level_roft", BM_ArVerify)->Apply(railyard::bench::sizes);
  });
}
