// What the routing benchmarks share: the generated 3-level ROFTs they run on
// (8 rails, radix 64, 256 to 2,048 servers), peak RSS, and a main() that
// honours --skip_large / RAILYARD_BENCH_SKIP_LARGE=1 (drops the 16k-CA size).
#pragma once

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "routing/generator.h"

namespace railyard::bench {

// The 3-level ROFT with `servers` x 8 rails, generated once per size; with
// `cut_permille` of its switch-switch links uncabled (seed 1), or exactly
// one when `cut_permille` is -1.
inline const routing::Fabric& roft(int servers, int cut_permille = 0) {
  static std::map<std::pair<int, int>, routing::Fabric> cache;
  auto it = cache.find({servers, cut_permille});
  if (it == cache.end()) {
    routing::GeneratorSpec spec;
    spec.servers = static_cast<uint32_t>(servers);
    spec.rails = 8;
    spec.levels = 3;
    spec.radix = 64;
    spec.assign_lids = true;
    // servers x 8 leaves' uplinks and as many spine-core links: 2 x 32 x (servers x 8 / 32).
    const uint32_t links = 2 * spec.servers * spec.rails;
    spec.remove_switch_links = cut_permille < 0 ? 1 : links * static_cast<uint32_t>(cut_permille) / 1000;
    it = cache.emplace(std::make_pair(servers, cut_permille), std::move(routing::generate_fabric(spec).value().fabric))
             .first;
  }
  return it->second;
}

inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

inline bool& skip_large() {
  static bool skip = false;
  return skip;
}

// The sizes, one iteration each (a 16k-CA run is seconds, not microseconds).
inline void sizes(benchmark::internal::Benchmark* b) {
  for (int servers : {256, 512, 1024, 2048}) {
    if (servers == 2048 && skip_large()) continue;
    b->Arg(servers);
  }
  b->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(1);
}

// main() of a benchmark program: `add` registers its benchmarks.
inline int run(int argc, char** argv, const std::function<void()>& add) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip_large") == 0) skip_large() = true;
    else args.push_back(argv[i]);
  }
  if (const char* e = std::getenv("RAILYARD_BENCH_SKIP_LARGE"); e && *e == '1') skip_large() = true;
  add();
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

}  // namespace railyard::bench
