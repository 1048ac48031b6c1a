// Reading topology files and mapping rails, over fabric sizes up to the
// 16,384-CA 3-level ROFT (2,048 servers x 8 rails, radix 64).
//
// Each size is generated once and written to ibnetdiscover-dialect text once
// (outside the timed loops); the benchmarks then time read_topology, map_rails
// and the two together. Counters: CAs, text size, the fabric's own heap bytes
// and the process's peak RSS (getrusage) after the run. Sizes run smallest
// first, so the peak RSS reported for a size is the peak up to and including it.
//
//   topology_bench                      all sizes
//   topology_bench --skip_large         (or RAILYARD_BENCH_SKIP_LARGE=1) without 16k
//   topology_bench --benchmark_filter=read/3L_16k
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "policies/policy.h"
#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/topology_reader.h"
#include "routing/topology_writer.h"

namespace {

using railyard::routing::Fabric;

struct Size {
  const char* name;
  uint32_t levels, servers, rails, radix;
  bool large;
};

// 1k and 4k CAs in 2 and 3 levels, then the 16k target.
constexpr Size kSizes[] = {
    {"2L_1k", 2, 128, 8, 64, false},  {"3L_1k", 3, 128, 8, 64, false}, {"2L_4k", 2, 512, 8, 128, false},
    {"3L_4k", 3, 512, 8, 64, false},  {"3L_16k", 3, 2048, 8, 64, true},
};

// One generated fabric as text, made on first use and kept for all benchmarks of that size.
struct Case {
  Size size;
  std::string text;
  std::unique_ptr<Fabric> fabric;  // parsed once, for the map_rails-only benchmark

  const std::string& get_text() {
    if (text.empty()) {
      railyard::routing::GeneratorSpec spec;
      spec.kind = railyard::routing::TopologyKind::kRoft;
      spec.levels = size.levels;
      spec.servers = size.servers;
      spec.rails = size.rails;
      spec.radix = size.radix;
      auto g = railyard::routing::generate_fabric(spec);
      if (!g) {
        std::fprintf(stderr, "generate %s: %s\n", size.name, g.error().message.c_str());
        std::exit(1);
      }
      text = railyard::routing::write_topology(g->fabric);
    }
    return text;
  }
  const Fabric& get_fabric() {
    if (!fabric) {
      auto f = railyard::routing::read_topology(get_text(), size.name);
      if (!f) {
        std::fprintf(stderr, "read %s: %s\n", size.name, f.error().message.c_str());
        std::exit(1);
      }
      fabric = std::make_unique<Fabric>(std::move(f).value());
    }
    return *fabric;
  }
};

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void add_counters(benchmark::State& state, Case& c, const Fabric& f) {
  state.counters["CAs"] = static_cast<double>(f.cas().size());
  state.counters["switches"] = static_cast<double>(f.switches().size());
  state.counters["text_MB"] = static_cast<double>(c.get_text().size()) / 1e6;
  state.counters["fabric_MB"] = static_cast<double>(f.memory_bytes()) / 1e6;
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void bm_read(benchmark::State& state, Case* c) {
  const std::string& text = c->get_text();
  for (auto _ : state) {
    auto f = railyard::routing::read_topology(text, c->size.name);
    if (!f) state.SkipWithError(f.error().message.c_str());
    benchmark::DoNotOptimize(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  add_counters(state, *c, c->get_fabric());
}

void bm_map_rails(benchmark::State& state, Case* c) {
  const Fabric& f = c->get_fabric();
  railyard::policies::RailNaming naming;
  for (auto _ : state) {
    auto rails = railyard::routing::map_rails(f, naming);
    benchmark::DoNotOptimize(rails);
  }
  add_counters(state, *c, f);
}

void bm_read_and_map(benchmark::State& state, Case* c) {
  const std::string& text = c->get_text();
  railyard::policies::RailNaming naming;
  for (auto _ : state) {
    auto f = railyard::routing::read_topology(text, c->size.name);
    if (!f) {
      state.SkipWithError(f.error().message.c_str());
      break;
    }
    auto rails = railyard::routing::map_rails(*f, naming);
    benchmark::DoNotOptimize(rails);
  }
  add_counters(state, *c, c->get_fabric());
}

}  // namespace

int main(int argc, char** argv) {
  bool skip_large = false;
  if (const char* env = std::getenv("RAILYARD_BENCH_SKIP_LARGE")) skip_large = *env && std::strcmp(env, "0") != 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--skip_large") == 0) {
      skip_large = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());

  // Cases live until main returns; each benchmark holds a pointer to its size's case.
  std::vector<std::unique_ptr<Case>> cases;
  for (const Size& s : kSizes) {
    if (s.large && skip_large) continue;
    cases.push_back(std::make_unique<Case>(Case{s, {}, nullptr}));
    Case* c = cases.back().get();
    std::string suffix = std::string("/") + s.name;
    benchmark::RegisterBenchmark(("read" + suffix).c_str(), bm_read, c)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("map_rails" + suffix).c_str(), bm_map_rails, c)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("read_and_map" + suffix).c_str(), bm_read_and_map, c)
        ->Unit(benchmark::kMillisecond);
  }
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
