// SHARP tree time on generated 3-level ROFTs (8 rails, radix 64). Target of
// issue 6: the trees of a 2,048-server x 8-rail job (16,384 CAs, 8 trees) in
// under 20 ms.
//  sharp_allocate/roft2048/<servers>: a job of the first <servers> hosts of
//    the 16k-CA fabric on a ready allocator: allocate (resolve hosts, search
//    roots, build 8 trees) + release.
//  sharp_plan/3level_roft/<servers>: plan_sharp_trees for a whole-fabric job,
//    one shot, including the switch graph and host index it builds.
// Peak RSS is reported as a counter. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) drops the 16k-CA fabric.
#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "routing/rails.h"
#include "routing/sharp_allocator.h"
#include "routing/sharp_trees.h"

namespace {

using namespace railyard::routing;

constexpr uint32_t kTreesPerSwitch = 4;  // policies::Sharp's default

SharpJob first_hosts(const RailMap& rails, int servers) {
  SharpJob job{"bench", {}, {}, {}};
  job.hosts.assign(rails.hosts.begin(), rails.hosts.begin() + std::min<size_t>(servers, rails.hosts.size()));
  return job;
}

void counters(benchmark::State& state, const Fabric& f, const std::vector<SharpTree>& trees) {
  uint32_t cas = 0, height = 0, switches = 0;
  for (const auto& t : trees) {
    cas += t.num_cas();
    height = std::max(height, t.height);
    switches += static_cast<uint32_t>(t.switches.size());
  }
  state.counters["fabric_CAs"] = static_cast<double>(f.cas().size());
  state.counters["job_CAs"] = cas;
  state.counters["trees"] = static_cast<double>(trees.size());
  state.counters["height"] = height;
  state.counters["tree_switches"] = switches;
  state.counters["peak_rss_MB"] = railyard::bench::peak_rss_mb();
}

void BM_SharpAllocate(benchmark::State& state) {
  const Fabric& f = railyard::bench::roft(2048);
  static SharpAllocator* alloc = [&] {
    auto a = SharpAllocator::create(f, map_rails(f, {}), {}, kTreesPerSwitch);
    return new SharpAllocator(std::move(a).value());  // lives for the program
  }();
  SharpJob job = first_hosts(alloc->rails(), static_cast<int>(state.range(0)));
  std::vector<SharpTree> trees;
  for (auto _ : state) {
    auto got = alloc->allocate(job);
    if (!got.ok()) {
      state.SkipWithError(got.error().message.c_str());
      return;
    }
    trees = std::move(got->trees);
    (void)alloc->release(job.id);
  }
  counters(state, f, trees);
}

void BM_SharpPlan(benchmark::State& state) {
  const Fabric& f = railyard::bench::roft(static_cast<int>(state.range(0)));
  RailMap rails = map_rails(f, {});
  SharpJob job = first_hosts(rails, static_cast<int>(state.range(0)));
  std::vector<SharpTree> trees;
  for (auto _ : state) {
    auto got = plan_sharp_trees(f, rails, job, {}, kTreesPerSwitch);
    if (!got.ok()) {
      state.SkipWithError(got.error().message.c_str());
      return;
    }
    trees = std::move(got).value();
  }
  counters(state, f, trees);
}

}  // namespace

int main(int argc, char** argv) {
  return railyard::bench::run(argc, argv, [] {
    if (!railyard::bench::skip_large()) {
      benchmark::RegisterBenchmark("sharp_allocate/roft2048", BM_SharpAllocate)
          ->Arg(256)
          ->Arg(2048)
          ->Unit(benchmark::kMillisecond);
    }
    auto* plan = benchmark::RegisterBenchmark("sharp_plan/3level_roft", BM_SharpPlan);
    for (int servers : {256, 512, 1024, 2048}) {
      if (servers == 2048 && railyard::bench::skip_large()) continue;
      plan->Arg(servers);
    }
    plan->Unit(benchmark::kMillisecond);
  });
}
