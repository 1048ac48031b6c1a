// Safe update order (routing/update_order.h) on the fabric of issue 11: a
// 3-level ROFT of radix 40, 2,000 servers x 8 rails = 16,000 CAs on 2,000
// switches, its CA LIDs spread over the whole unicast range so that the
// tables are 49,152 LIDs wide (768 blocks a switch, 98 MB a table). Old
// tables: the engine on the fabric; new: the engine after one leaf-spine
// link down, one spine down, or 1% of the switch links cut. Timed: the
// order from the whole tables, from the hint of the changed LIDs, and from
// the changed (switch, block) pairs; and the diff of the tables alone
// (ForwardingTables::changed_blocks), which any push of changed blocks
// pays unless it knows them. Counters: entries changed (% of the
// table), changed blocks, steps, partial steps, rounds. --skip_large (or
// RAILYARD_BENCH_SKIP_LARGE=1) uses 256 servers (2,048 CAs) instead.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "bench/bench_support.h"
#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/update_order.h"

namespace {

using namespace railyard;
using namespace railyard::routing;

Fabric spread_lids(const Fabric& base) {
  FabricBuilder b(base);
  const auto cas = base.cas();
  const uint32_t first = static_cast<uint32_t>(base.switches().size()) + 1;
  const uint32_t last = Lid::kMaxUnicast;
  const uint32_t n = static_cast<uint32_t>(cas.size());
  for (uint32_t k = 0; k < n; ++k) {
    const NodeId c = cas[k];
    const Port& p = b.port(c, PortNum{1});
    const uint32_t lid = first + static_cast<uint32_t>(uint64_t{k} * (last - first) / (n - 1));
    Status st = b.set_port(c, PortNum{1}, p.guid, Lid{static_cast<uint16_t>(lid)}, 0, p.state);
    (void)st;
  }
  return std::move(b.build()).value();
}

const Fabric& fabric() {
  static const Fabric f = [] {
    GeneratorSpec spec;
    spec.servers = railyard::bench::skip_large() ? 256 : 2000;
    spec.rails = 8;
    spec.levels = 3;
    spec.radix = 40;
    spec.assign_lids = true;
    return spread_lids(generate_fabric(spec).value().fabric);
  }();
  return f;
}

ForwardingTables route(const Fabric& f) {
  return route_unicast(f, plan_routing(f, {}, map_rails(f, {})).value()).value().tables;
}

// The changed fabric: kind 0 one leaf-spine link down, 1 one spine down
// (every link of it), 2 1% of the switch-switch links down.
struct Change {
  Fabric fabric;
  ForwardingTables before;
  ForwardingTables after;
  std::vector<Lid> changed_lids;
  std::vector<SwitchBlock> changed_blocks;
};

const Change& change(int kind) {
  static std::map<int, Change> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  const Fabric& f = fabric();
  std::vector<LinkId> switch_links;
  for (uint32_t l = 0; l < f.num_links(); ++l) {
    const Link& link = f.link(LinkId(l));
    if (f.is_switch(f.port(link.a).node) && f.is_switch(f.port(link.b).node)) switch_links.push_back(LinkId(l));
  }
  std::vector<LinkId> down;
  std::mt19937_64 rng(7);
  if (kind == 0) {
    std::vector<LinkId> leaf_links;
    for (LinkId l : switch_links) {
      const Link& link = f.link(l);
      if (f.desc(f.port(link.a).node).starts_with("leaf") || f.desc(f.port(link.b).node).starts_with("leaf")) {
        leaf_links.push_back(l);
      }
    }
    down.push_back(leaf_links[rng() % leaf_links.size()]);
  } else if (kind == 1) {
    // A spine of the first leaf.
    const Link& link = f.link(switch_links[0]);
    NodeId spine = f.port(link.a).node;
    if (f.desc(spine).starts_with("leaf")) spine = f.port(link.b).node;
    const Node& nd = f.node(spine);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      LinkId l = f.port(f.port_id(spine, PortNum{static_cast<uint8_t>(p)})).link;
      if (l.valid()) down.push_back(l);
    }
  } else {
    for (size_t i = 0; i < switch_links.size() / 100; ++i) {
      std::swap(switch_links[i], switch_links[i + rng() % (switch_links.size() - i)]);
      down.push_back(switch_links[i]);
    }
  }
  FabricBuilder b(f);
  for (LinkId l : down) (void)b.set_link_state(l, PortState::kDown);
  Change c{std::move(b.build()).value(), route(f), {}, {}, {}};
  c.after = route(c.fabric);
  for (uint32_t l = 0; l < c.before.num_lids(); ++l) {
    for (uint32_t s = 0; s < c.before.num_switches(); ++s) {
      if (c.before.row(s)[l] != c.after.row(s)[l]) {
        c.changed_lids.push_back(Lid{static_cast<uint16_t>(l)});
        break;
      }
    }
  }
  for (uint32_t s = 0; s < c.before.num_switches(); ++s) {
    for (uint32_t blk = 0; blk * kLftBlockLids < c.before.num_lids(); ++blk) {
      const uint32_t off = blk * kLftBlockLids;
      const uint32_t n = std::min(kLftBlockLids, c.before.num_lids() - off);
      if (std::memcmp(c.before.row(s).data() + off, c.after.row(s).data() + off, n) != 0) {
        c.changed_blocks.push_back({s, blk});
      }
    }
  }
  return cache.emplace(kind, std::move(c)).first->second;
}

// range(0): the change; range(1): the hint, 0 none, 1 the changed LIDs,
// 2 the changed (switch, block) pairs.
void BM_UpdateOrder(benchmark::State& state) {
  const Change& c = change(static_cast<int>(state.range(0)));
  UpdateOrderOptions options;
  if (state.range(1) == 1) options.lids = c.changed_lids;
  if (state.range(1) == 2) options.blocks = c.changed_blocks;
  Result<UpdateOrder> order = Error{"not run"};
  for (auto _ : state) {
    order = plan_update_order(c.fabric, c.before, c.after, options);
    benchmark::DoNotOptimize(order);
  }
  if (!order.ok()) {
    state.SkipWithError(order.error().message.c_str());
    return;
  }
  const double entries = static_cast<double>(c.before.num_switches()) * c.before.num_lids();
  state.counters["switches"] = c.before.num_switches();
  state.counters["lids"] = c.before.num_lids();
  state.counters["changed_pct"] = 100.0 * static_cast<double>(order->entries_changed) / entries;
  state.counters["blocks"] = static_cast<double>(order->blocks_changed);
  state.counters["steps"] = static_cast<double>(order->steps.size());
  state.counters["partial"] = static_cast<double>(order->partial_steps);
  state.counters["rounds"] = order->rounds();
  state.counters["cut"] = static_cast<double>(order->entries_cut);
  std::vector<uint32_t> hint_blocks;
  for (Lid l : c.changed_lids) hint_blocks.push_back(l.value / kLftBlockLids);
  hint_blocks.erase(std::unique(hint_blocks.begin(), hint_blocks.end()), hint_blocks.end());
  state.counters["hint_blocks"] = static_cast<double>(hint_blocks.size());
}

// The diff alone (ForwardingTables::changed_blocks: both tables whole).
void BM_ChangedBlocks(benchmark::State& state) {
  const Change& c = change(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ForwardingTables::changed_blocks(c.before, c.after));
}

}  // namespace

int main(int argc, char** argv) {
  return railyard::bench::run(argc, argv, [] {
    auto* b = benchmark::RegisterBenchmark("update_order/roft_r40", BM_UpdateOrder);
    for (int kind : {0, 1, 2}) {
      for (int hint : {0, 1, 2}) b->Args({kind, hint});
    }
    // What any push of changed blocks pays first: finding them.
    benchmark::RegisterBenchmark("changed_blocks/roft_r40", BM_ChangedBlocks)
        ->Arg(0)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
    b->ArgNames({"change", "hint"})->Unit(benchmark::kMillisecond)->MinTime(0.5);
  });
}
