// AR group computation and verification time vs fabric size, on generated
// 3-level ROFTs (8 rails, radix 64) up to 2,048 servers x 8 rails = 16,384
// CAs. Peak RSS is reported as a counter. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) drops the 16k size.
#include <benchmark/benchmark.h>
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
    GeneratorSpec spec;
    spec.servers = static_cast<uint32_t>(servers);
    spec.rails = 8;
    spec.levels = 3;
    spec.radix = 64;
    spec.assign_lids = true;
    Routed r;
    r.fabric = std::move(generate_fabric(spec).value().fabric);
    r.options = plan_routing(r.fabric, {}, map_rails(r.fabric, {})).value();
    r.tables = std::move(route_unicast(r.fabric, r.options).value().tables);
    it = cache.emplace(servers, std::move(r)).first;
  }
  return it->second;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void BM_ArGroups(benchmark::State& state) {
  const Routed& r = routed_for(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto ar = compute_ar_groups(r.fabric, r.tables, r.options, 64);
    benchmark::DoNotOptimize(ar);
  }
  state.counters["CAs"] = static_cast<double>(r.fabric.cas().size());
  state.counters["switches"] = static_cast<double>(r.fabric.switches().size());
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void BM_ArVerify(benchmark::State& state) {
  const Routed& r = routed_for(static_cast<int>(state.range(0)));
  ArTables ar = compute_ar_groups(r.fabric, r.tables, r.options, 64).value();
  for (auto _ : state) {
    auto c = verify_ar_groups(r.fabric, ar);
    benchmark::DoNotOptimize(c);
  }
  state.counters["CAs"] = static_cast<double>(r.fabric.cas().size());
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
  benchmark::RegisterBenchmark("ar_groups/3level_roft", BM_ArGroups)->Apply(sizes);
  benchmark::RegisterBenchmark("ar_verify/3level_roft", BM_ArVerify)->Apply(sizes);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
