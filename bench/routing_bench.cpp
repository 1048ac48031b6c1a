// Routing and verification time vs fabric size, on generated 3-level ROFTs
// (8 rails, radix 64) up to 2,048 servers x 8 rails = 16,384 CAs, 1,280
// switches. Peak RSS is reported as a counter. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) drops the 16k size.
#include <benchmark/benchmark.h>
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

const Fabric& fabric_for(int servers) {
  static std::map<int, Fabric> cache;
  auto it = cache.find(servers);
  if (it == cache.end()) {
    GeneratorSpec spec;
    spec.servers = static_cast<uint32_t>(servers);
    spec.rails = 8;
    spec.levels = 3;
    spec.radix = 64;
    spec.assign_lids = true;
    it = cache.emplace(servers, std::move(generate_fabric(spec).value().fabric)).first;
  }
  return it->second;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void BM_Route(benchmark::State& state) {
  const Fabric& f = fabric_for(static_cast<int>(state.range(0)));
  RoutingOptions options = plan_routing(f, {}, map_rails(f, {})).value();
  for (auto _ : state) {
    auto r = route_unicast(f, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["switches"] = static_cast<double>(f.switches().size());
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void BM_Verify(benchmark::State& state) {
  const Fabric& f = fabric_for(static_cast<int>(state.range(0)));
  auto r = route_unicast(f, plan_routing(f, {}, map_rails(f, {})).value()).value();
  for (auto _ : state) {
    auto v = verify_tables(f, r.tables);
    benchmark::DoNotOptimize(v);
  }
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

bool skip_large = false;

void sizes(benchmark::internal::Benchmark* b) {
  for (int servers : {256, 512, 1024, 2048}) {
    if (servers == 2048 && skip_large) continue;
    b->Arg(servers);
  }
  b->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip_large") == 0) skip_large = true;
    else args.push_back(argv[i]);
  }
  if (const char* e = std::getenv("RAILYARD_BENCH_SKIP_LARGE"); e && *e == '1') skip_large = true;
  benchmark::RegisterBenchmark("route/3level_roft", BM_Route)->Apply(sizes);
  benchmark::RegisterBenchmark("verify/3level_roft", BM_Verify)->Apply(sizes);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
