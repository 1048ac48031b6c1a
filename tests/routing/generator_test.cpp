// Tests for the fabric generator: structure of every shape and size, port
// formulas, seeded removal (counts and determinism), LIDs and refusals.
#include "routing/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>
#include <string>

namespace railyard::routing {
namespace {

GeneratedFabric generate_ok(const GeneratorSpec& spec) {
  Result<GeneratedFabric> g = generate_fabric(spec);
  EXPECT_TRUE(g.ok()) << g.error().message;
  if (!g.ok()) return {};
  return std::move(g).value();
}

std::string error_of(const GeneratorSpec& spec) {
  Result<GeneratedFabric> g = generate_fabric(spec);
  EXPECT_FALSE(g.ok());
  return g.ok() ? std::string() : g.error().message;
}

GeneratorSpec spec_of(TopologyKind kind, uint32_t servers, uint32_t rails, uint32_t levels, uint32_t radix) {
  GeneratorSpec s;
  s.kind = kind;
  s.servers = servers;
  s.rails = rails;
  s.levels = levels;
  s.radix = radix;
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Rail of a CA from its "<host> mlx5_<r>" description.
int rail_of(const Fabric& f, NodeId ca) {
  std::string_view d = f.desc(ca);
  size_t at = d.rfind("mlx5_");
  if (at == std::string_view::npos) return -1;
  return std::stoi(std::string(d.substr(at + 5)));
}

std::string host_of(const Fabric& f, NodeId ca) {
  std::string_view d = f.desc(ca);
  return std::string(d.substr(0, d.find(' ')));
}

// What the structure checks need, gathered in one pass over the fabric.
struct Shape {
  size_t leaves = 0, spines = 0, cores = 0, switch_links = 0, ca_links = 0;
  std::map<uint32_t, std::vector<NodeId>> cas_of_leaf;  // by leaf node index
  std::map<uint32_t, size_t> switch_ports_of_switch;    // cabled switch-switch ports
  size_t max_parallel = 0;
  size_t min_parallel = SIZE_MAX;
};

Shape shape_of(const Fabric& f) {
  Shape s;
  for (NodeId sw : f.switches()) {
    std::string_view d = f.desc(sw);
    if (starts_with(d, "leaf ")) ++s.leaves;
    else if (starts_with(d, "spine ")) ++s.spines;
    else if (starts_with(d, "core ")) ++s.cores;
    else ADD_FAILURE() << "unexpected switch description " << d;
  }
  std::map<std::pair<uint32_t, uint32_t>, size_t> parallel;
  for (const Link& l : f.links()) {
    NodeId a = f.port(l.a).node, b = f.port(l.b).node;
    if (f.is_switch(a) && f.is_switch(b)) {
      ++s.switch_links;
      ++s.switch_ports_of_switch[a.value()];
      ++s.switch_ports_of_switch[b.value()];
      ++parallel[{std::min(a.value(), b.value()), std::max(a.value(), b.value())}];
    } else {
      ++s.ca_links;
      NodeId ca = f.is_switch(a) ? b : a;
      NodeId leaf = f.is_switch(a) ? a : b;
      s.cas_of_leaf[leaf.value()].push_back(ca);
    }
  }
  for (const auto& [pair, n] : parallel) {
    s.max_parallel = std::max(s.max_parallel, n);
    s.min_parallel = std::min(s.min_parallel, n);
  }
  return s;
}

// Number of connected components of the switch graph (switch-switch links only).
size_t switch_components(const Fabric& f) {
  std::vector<uint32_t> parent(f.num_nodes());
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const Link& l : f.links()) {
    NodeId a = f.port(l.a).node, b = f.port(l.b).node;
    if (f.is_switch(a) && f.is_switch(b)) parent[find(a.value())] = find(b.value());
  }
  std::set<uint32_t> roots;
  for (NodeId sw : f.switches()) roots.insert(find(sw.value()));
  return roots.size();
}

size_t uplinks_of(const Fabric& f, NodeId leaf) {
  size_t n = 0;
  const Node& nd = f.node(leaf);
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    NodeId r = f.remote_node(f.port_id(leaf, PortNum{static_cast<uint8_t>(p)}));
    if (r.valid() && f.is_switch(r) && starts_with(f.desc(r), "spine ")) ++n;
  }
  return n;
}

// Every leaf's CAs carry one rail (ROFT and rail-only).
void expect_single_rail_leaves(const Fabric& f, const Shape& s) {
  for (const auto& [leaf, cas] : s.cas_of_leaf) {
    std::set<int> rails;
    for (NodeId ca : cas) rails.insert(rail_of(f, ca));
    EXPECT_EQ(rails.size(), 1u) << f.desc(NodeId(leaf));
    std::string_view d = f.desc(NodeId(leaf));
    EXPECT_EQ(std::string(d.substr(d.rfind(" r") + 2)), std::to_string(*rails.begin())) << d;
  }
}

TEST(GeneratorRoft, TwoLevelsOneGroup) {
  // 32 servers x 8 rails, radix 64: one group, 8 leaves (one per rail), 32 spines.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRoft, 32, 8, 2, 64));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(f.cas().size(), 256u);
  EXPECT_EQ(s.leaves, 8u);
  EXPECT_EQ(s.spines, 32u);
  EXPECT_EQ(s.cores, 0u);
  EXPECT_EQ(s.ca_links, 256u);
  EXPECT_EQ(s.switch_links, 8u * 32u);
  EXPECT_EQ(f.num_links(), 512u);
  EXPECT_EQ(s.max_parallel, 1u);
  expect_single_rail_leaves(f, s);
  for (const auto& [sw, n] : s.switch_ports_of_switch) {
    // A leaf has 32 uplinks; a spine one link per leaf.
    EXPECT_EQ(n, starts_with(f.desc(NodeId(sw)), "leaf ") ? 32u : 8u) << f.desc(NodeId(sw));
  }
  EXPECT_TRUE(g.removed_links.empty());
}

TEST(GeneratorRoft, NamesGuidsAndCaPorts) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 40, 2, 2, 16);  // d = 8, 5 groups
  spec.host_prefix = "gpu";
  GeneratedFabric g = generate_ok(spec);
  const Fabric& f = g.fabric;

  NodeId ca = f.find_name("gpu001 mlx5_0");
  ASSERT_TRUE(ca.valid());
  EXPECT_TRUE(f.find_name("gpu040 mlx5_1").valid());
  EXPECT_FALSE(f.find_name("gpu041 mlx5_0").valid());
  EXPECT_FALSE(f.find_name("gpu000 mlx5_0").valid());
  const Node& n = f.node(ca);
  EXPECT_EQ(n.num_ports, 1);
  EXPECT_EQ(n.system_guid, n.guid);  // each HCA its own system image
  EXPECT_EQ(f.port(f.port_id(ca, PortNum{1})).guid.value, n.guid.value + 1);
  char buf[32];
  std::snprintf(buf, sizeof buf, "H-%016llx", static_cast<unsigned long long>(n.guid.value));
  EXPECT_EQ(f.name(ca), buf);
  EXPECT_EQ(n.guid.value >> 32, 0xe41d2d03u);

  // CA descriptions of one server share a host; each CA has its own GUID.
  std::set<uint64_t> guids;
  for (NodeId c : f.cas()) guids.insert(f.node(c).guid.value);
  EXPECT_EQ(guids.size(), f.cas().size());

  NodeId leaf = f.find_name("leaf g004 r1");
  ASSERT_TRUE(leaf.valid());
  std::snprintf(buf, sizeof buf, "S-%016llx", static_cast<unsigned long long>(f.node(leaf).guid.value));
  EXPECT_EQ(f.name(leaf), buf);
  EXPECT_EQ(f.node(leaf).num_ports, 16);
  // gpu033 is server 32: group 4, position 0 -> rail-1 leaf g004 port 1.
  EXPECT_EQ(f.remote_node(f.port_id(leaf, PortNum{1})), f.find_name("gpu033 mlx5_1"));
  EXPECT_TRUE(f.find_name("spine s07").valid());

  // Links carry the spec's width and speed.
  for (const Link& l : f.links()) {
    EXPECT_EQ(l.width, LinkWidth::k4x);
    EXPECT_EQ(l.speed, LinkSpeed::kHdr);
    EXPECT_EQ(l.state, PortState::kActive);
  }
}

TEST(GeneratorRoft, TwoLevelPortFormulas) {
  // 50 servers, 2 rails, radix 16: d = 8, 7 groups (the last with 2 servers), 14 leaves.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRoft, 50, 2, 2, 16));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(s.leaves, 14u);
  EXPECT_EQ(s.spines, 8u);
  EXPECT_EQ(f.cas().size(), 100u);
  EXPECT_EQ(s.cas_of_leaf[f.find_name("leaf g006 r0").value()].size(), 2u);
  expect_single_rail_leaves(f, s);
  // Leaf index (rail-major) r * 7 + g: port 9 + j <-> spine j port index + 1.
  for (uint32_t r = 0; r < 2; ++r) {
    for (uint32_t grp = 0; grp < 7; ++grp) {
      char name[32];
      std::snprintf(name, sizeof name, "leaf g%03u r%u", grp, r);
      NodeId leaf = f.find_name(name);
      ASSERT_TRUE(leaf.valid()) << name;
      for (uint32_t j = 0; j < 8; ++j) {
        PortId up = f.port_id(leaf, PortNum{static_cast<uint8_t>(9 + j)});
        PortId remote = f.port(up).remote;
        ASSERT_TRUE(remote.valid());
        char spine[32];
        std::snprintf(spine, sizeof spine, "spine s%02u", j);
        EXPECT_EQ(f.port(remote).node, f.find_name(spine));
        EXPECT_EQ(f.port(remote).num.value, r * 7 + grp + 1);
      }
    }
  }
}

TEST(GeneratorRoft, ThreeLevels2048ServersRadix64) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 2048, 8, 3, 64);
  auto t0 = std::chrono::steady_clock::now();
  GeneratedFabric g = generate_ok(spec);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("generate_ms", std::to_string(ms));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(f.cas().size(), 16384u);
  EXPECT_EQ(s.leaves, 512u);
  EXPECT_EQ(s.spines, 512u);
  EXPECT_EQ(s.cores, 256u);
  EXPECT_EQ(f.switches().size(), 1280u);
  EXPECT_EQ(s.ca_links, 16384u);
  EXPECT_EQ(s.switch_links, 512u * 32u + 512u * 32u);
  // 16 pods: m = 64 / 16 = 4 parallel links between a core and each pod's spine.
  EXPECT_EQ(s.max_parallel, 4u);
  EXPECT_EQ(s.min_parallel, 1u);  // leaf-spine
  // Full radix everywhere: every port of every switch is cabled.
  for (NodeId sw : f.switches()) {
    auto cas = s.cas_of_leaf.find(sw.value());
    size_t cabled = s.switch_ports_of_switch[sw.value()] + (cas == s.cas_of_leaf.end() ? 0 : cas->second.size());
    EXPECT_EQ(cabled, 64u) << f.desc(sw);
  }
  expect_single_rail_leaves(f, s);
  EXPECT_EQ(switch_components(f), 1u);
  EXPECT_TRUE(f.find_name("spine p15 s31").valid());
  EXPECT_TRUE(f.find_name("core p31 c07").valid());
  EXPECT_TRUE(f.find_name("leaf g063 r7").valid());
  EXPECT_TRUE(f.find_name("node2048 mlx5_7").valid());
}

TEST(GeneratorRoft, ThreeLevelCoreFormulas) {
  // radix 12 (d = 6), 36 servers x 3 rails: 6 groups, 18 leaves, 3 pods.
  // K / pods = 4 is not a divisor of 6, so m = 3 and each plane has 2 cores.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRoft, 36, 3, 3, 12));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(s.leaves, 18u);
  EXPECT_EQ(s.spines, 18u);
  EXPECT_EQ(s.cores, 12u);
  EXPECT_EQ(s.max_parallel, 3u);
  for (uint32_t plane = 0; plane < 6; ++plane) {
    for (uint32_t c = 0; c < 2; ++c) {
      char core_name[32];
      std::snprintf(core_name, sizeof core_name, "core p%02u c%02u", plane, c);
      NodeId core = f.find_name(core_name);
      ASSERT_TRUE(core.valid()) << core_name;
      for (uint32_t pod = 0; pod < 3; ++pod) {
        char spine_name[32];
        std::snprintf(spine_name, sizeof spine_name, "spine p%02u s%02u", pod, plane);
        NodeId spine = f.find_name(spine_name);
        for (uint32_t t = 0; t < 3; ++t) {
          // spine up port d+1 + c*m + t <-> core port pod*m + t + 1.
          PortId sp = f.port_id(spine, PortNum{static_cast<uint8_t>(7 + c * 3 + t)});
          PortId remote = f.port(sp).remote;
          ASSERT_TRUE(remote.valid());
          EXPECT_EQ(f.port(remote).node, core);
          EXPECT_EQ(f.port(remote).num.value, pod * 3 + t + 1);
        }
      }
      EXPECT_EQ(s.switch_ports_of_switch[core.value()], 9u);
    }
  }
  // Leaf at position l of pod p: up port 7 + j <-> spine j of pod p, port l + 1.
  // Rail-major leaf 13 is rail 2, group 1: pod 2, position 1.
  NodeId leaf = f.find_name("leaf g001 r2");
  PortId remote = f.port(f.port_id(leaf, PortNum{7 + 4})).remote;
  EXPECT_EQ(f.port(remote).node, f.find_name("spine p02 s04"));
  EXPECT_EQ(f.port(remote).num.value, 2);
  EXPECT_EQ(switch_components(f), 1u);
}

TEST(GeneratorRoft, ThreeLevelsOnePortPerPod) {
  // radix 8 (d = 4), 40 servers x 2 rails: 20 leaves, 5 pods, m = 8 / 5 = 1.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRoft, 40, 2, 3, 8));
  Shape s = shape_of(g.fabric);
  EXPECT_EQ(s.leaves, 20u);
  EXPECT_EQ(s.spines, 20u);
  EXPECT_EQ(s.cores, 16u);
  EXPECT_EQ(s.max_parallel, 1u);
  EXPECT_EQ(s.switch_links, 20u * 4u + 20u * 4u);
}

TEST(GeneratorFatTree, ServersOnOneLeaf) {
  // radix 16 (d = 8), 4 rails: 2 servers per leaf, 8 leaves for 16 servers.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kFatTree, 16, 4, 2, 16));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(s.leaves, 8u);
  EXPECT_EQ(s.spines, 8u);
  EXPECT_EQ(s.switch_links, 64u);
  std::map<std::string, std::set<uint32_t>> leaves_of_host;
  for (const auto& [leaf, cas] : s.cas_of_leaf) {
    EXPECT_EQ(cas.size(), 8u);
    for (NodeId ca : cas) leaves_of_host[host_of(f, ca)].insert(leaf);
  }
  EXPECT_EQ(leaves_of_host.size(), 16u);
  for (const auto& [host, leaves] : leaves_of_host) EXPECT_EQ(leaves.size(), 1u) << host;
  // node003 is server 2: leaf 1, slot 0, rail r on port r + 1.
  NodeId leaf = f.find_name("leaf g001");
  ASSERT_TRUE(leaf.valid());
  EXPECT_EQ(f.remote_node(f.port_id(leaf, PortNum{3})), f.find_name("node003 mlx5_2"));
}

TEST(GeneratorFatTree, ThreeLevels) {
  // radix 8, 2 rails: 2 servers per leaf; 30 servers -> 15 leaves -> 4 pods; m = 2.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kFatTree, 30, 2, 3, 8));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(f.cas().size(), 60u);
  EXPECT_EQ(s.leaves, 15u);
  EXPECT_EQ(s.spines, 16u);
  EXPECT_EQ(s.cores, 8u);
  EXPECT_EQ(s.max_parallel, 2u);
  EXPECT_EQ(s.switch_links, 15u * 4u + 16u * 4u);
  EXPECT_EQ(switch_components(f), 1u);
}

TEST(GeneratorRailOnly, OneLeafPerRail) {
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRailOnly, 16, 4, 2, 32));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(s.leaves, 4u);
  EXPECT_EQ(s.spines, 0u);
  EXPECT_EQ(s.switch_links, 0u);
  EXPECT_EQ(f.cas().size(), 64u);
  expect_single_rail_leaves(f, s);
  EXPECT_EQ(switch_components(f), 4u);
}

TEST(GeneratorRailOnly, TwoLevelsPerRailNoPathBetweenRails) {
  // radix 16 (d = 8), 100 servers: 13 leaves per rail, 8 spines per rail.
  GeneratedFabric g = generate_ok(spec_of(TopologyKind::kRailOnly, 100, 4, 2, 16));
  const Fabric& f = g.fabric;
  Shape s = shape_of(f);
  EXPECT_EQ(s.leaves, 52u);
  EXPECT_EQ(s.spines, 32u);
  EXPECT_EQ(s.switch_links, 52u * 8u);
  expect_single_rail_leaves(f, s);
  EXPECT_EQ(switch_components(f), 4u);
  // Spines connect only to leaves of their own rail.
  for (NodeId sw : f.switches()) {
    std::string_view d = f.desc(sw);
    if (!starts_with(d, "spine ")) continue;
    std::string rail(d.substr(7, d.find(' ', 6) - 7));
    for (uint32_t p = 1; p <= 16; ++p) {
      NodeId r = f.remote_node(f.port_id(sw, PortNum{static_cast<uint8_t>(p)}));
      if (!r.valid()) continue;
      std::string_view rd = f.desc(r);
      EXPECT_EQ(std::string(rd.substr(rd.rfind(" r") + 2)), rail) << d << " -> " << rd;
    }
  }
  EXPECT_TRUE(f.find_name("spine r3 s07").valid());
}

// Invariants over a sweep of shapes and sizes.
TEST(GeneratorProperties, EveryShapeIsWellFormed) {
  struct Case {
    TopologyKind kind;
    uint32_t servers, rails, levels, radix;
  };
  const Case cases[] = {
      {TopologyKind::kRoft, 1, 1, 2, 4},     {TopologyKind::kRoft, 7, 3, 2, 8},
      {TopologyKind::kRoft, 27, 3, 3, 8},    {TopologyKind::kRoft, 128, 8, 3, 16},
      {TopologyKind::kRoft, 129, 8, 2, 128}, {TopologyKind::kFatTree, 1, 2, 2, 4},
      {TopologyKind::kFatTree, 17, 3, 3, 8}, {TopologyKind::kRailOnly, 3, 2, 2, 4},
      {TopologyKind::kRailOnly, 8, 2, 2, 4}, {TopologyKind::kRoft, 100, 2, 3, 254},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.kind)) + " servers=" + std::to_string(c.servers) +
                 " rails=" + std::to_string(c.rails) + " levels=" + std::to_string(c.levels) +
                 " radix=" + std::to_string(c.radix));
    GeneratedFabric g = generate_ok(spec_of(c.kind, c.servers, c.rails, c.levels, c.radix));
    const Fabric& f = g.fabric;
    Shape s = shape_of(f);
    EXPECT_EQ(f.cas().size(), size_t{c.servers} * c.rails);
    EXPECT_EQ(s.ca_links, f.cas().size());
    for (NodeId ca : f.cas()) EXPECT_TRUE(f.port(f.port_id(ca, PortNum{1})).remote.valid());
    for (NodeId sw : f.switches()) EXPECT_EQ(f.node(sw).num_ports, c.radix);
    if (c.kind != TopologyKind::kFatTree) expect_single_rail_leaves(f, s);
    EXPECT_EQ(switch_components(f), c.kind == TopologyKind::kRailOnly ? c.rails : 1u);
  }
}

TEST(GeneratorRemoval, CountsAndListing) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);  // d = 8: 32 leaves, 4 pods
  GeneratedFabric full = generate_ok(spec);
  spec.remove_switch_links = 10;
  spec.remove_ca_links = 5;
  spec.seed = 42;
  GeneratedFabric g = generate_ok(spec);
  EXPECT_EQ(g.fabric.num_links(), full.fabric.num_links() - 15);
  ASSERT_EQ(g.removed_links.size(), 15u);
  Shape fs = shape_of(full.fabric), gs = shape_of(g.fabric);
  EXPECT_EQ(gs.switch_links, fs.switch_links - 10);
  EXPECT_EQ(gs.ca_links, fs.ca_links - 5);
  // Every listed link exists in the full fabric and is missing here.
  for (const std::string& r : g.removed_links) {
    size_t sep = r.find(" <-> ");
    ASSERT_NE(sep, std::string::npos) << r;
    auto end = [&](std::string_view e) {
      size_t open = e.rfind('[');
      return std::pair{std::string(e.substr(0, open)),
                       static_cast<uint8_t>(std::stoi(std::string(e.substr(open + 1))))};
    };
    auto [na, pa] = end(std::string_view(r).substr(0, sep));
    auto [nb, pb] = end(std::string_view(r).substr(sep + 5));
    NodeId fa = full.fabric.find_name(na), fb = full.fabric.find_name(nb);
    ASSERT_TRUE(fa.valid() && fb.valid()) << r;
    EXPECT_EQ(full.fabric.port(full.fabric.port_id(fa, PortNum{pa})).remote, full.fabric.port_id(fb, PortNum{pb})) << r;
    NodeId ga = g.fabric.find_name(na);
    EXPECT_FALSE(g.fabric.port(g.fabric.port_id(ga, PortNum{pa})).remote.valid()) << r;
  }
  // CA links are listed CA end first.
  size_t ca_entries = std::count_if(g.removed_links.begin(), g.removed_links.end(),
                                    [](const std::string& r) { return starts_with(r, "node"); });
  EXPECT_EQ(ca_entries, 5u);
}

std::vector<std::tuple<uint32_t, uint32_t>> link_ends(const Fabric& f) {
  std::vector<std::tuple<uint32_t, uint32_t>> out;
  for (const Link& l : f.links()) out.emplace_back(l.a.value(), l.b.value());
  return out;
}

TEST(GeneratorRemoval, SameSeedSameFabricOtherSeedOther) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 2, 32);
  spec.remove_switch_links = 20;
  spec.remove_ca_links = 8;
  spec.remove_uplink_per_leaf = 2;
  spec.seed = 7;
  GeneratedFabric a = generate_ok(spec);
  GeneratedFabric b = generate_ok(spec);
  EXPECT_EQ(a.removed_links, b.removed_links);
  EXPECT_EQ(link_ends(a.fabric), link_ends(b.fabric));
  spec.seed = 8;
  GeneratedFabric c = generate_ok(spec);
  EXPECT_NE(a.removed_links, c.removed_links);
  EXPECT_EQ(c.removed_links.size(), a.removed_links.size());
  EXPECT_NE(link_ends(a.fabric), link_ends(c.fabric));
}

TEST(GeneratorRemoval, SeedIsPortable) {
  // Pinned so a change of the random streams (or a platform's std library)
  // cannot silently change which links a seed removes.
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 16, 2, 2, 8);
  spec.remove_switch_links = 2;
  spec.remove_ca_links = 1;
  spec.seed = 1;
  GeneratedFabric g = generate_ok(spec);
  // Listed in link order: CA links come before switch links.
  EXPECT_EQ(g.removed_links, (std::vector<std::string>{
                                 "node008 mlx5_1[1] <-> leaf g001 r1[4]",
                                 "leaf g000 r1[7] <-> spine s02[5]",
                                 "leaf g001 r1[6] <-> spine s01[6]",
                             }));
}

TEST(GeneratorRemoval, OneUplinkPerLeaf) {
  for (uint32_t levels : {2u, 3u}) {
    GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, levels, 16);  // 32 leaves
    if (levels == 2) spec.servers = 32;  // 16 leaves fit 2 levels
    spec.remove_uplink_per_leaf = 1;
    spec.remove_switch_links = 3;
    GeneratedFabric full_spec = generate_ok(spec_of(TopologyKind::kRoft, spec.servers, 4, levels, 16));
    GeneratedFabric g = generate_ok(spec);
    const Fabric& f = g.fabric;
    size_t leaves = 0, total_uplinks = 0;
    for (NodeId sw : f.switches()) {
      if (!starts_with(f.desc(sw), "leaf ")) continue;
      ++leaves;
      size_t up = uplinks_of(f, sw);
      // Per-leaf removal takes exactly one; the 3 extra may hit leaves too.
      EXPECT_LE(up, 7u) << f.desc(sw);
      EXPECT_GE(up, 4u) << f.desc(sw);
      total_uplinks += up;
    }
    EXPECT_EQ(g.removed_links.size(), leaves + 3);
    EXPECT_EQ(f.num_links(), full_spec.fabric.num_links() - leaves - 3);
    EXPECT_LE(total_uplinks, leaves * 7);
  }
  // Without extra removals every leaf has exactly d - 1 uplinks.
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);
  spec.remove_uplink_per_leaf = 1;
  GeneratedFabric g = generate_ok(spec);
  for (NodeId sw : g.fabric.switches()) {
    if (starts_with(g.fabric.desc(sw), "leaf ")) {
      EXPECT_EQ(uplinks_of(g.fabric, sw), 7u) << g.fabric.desc(sw);
    }
  }
  EXPECT_EQ(g.removed_links.size(), 32u);
}

// Cabled ports of a node (port 0 of a switch is not a cable).
size_t cabled_ports(const Fabric& f, NodeId n) {
  size_t cabled = 0;
  for (uint32_t p = 1; p <= f.node(n).num_ports; ++p) {
    if (f.port(f.port_id(n, PortNum{static_cast<uint8_t>(p)})).remote.valid()) ++cabled;
  }
  return cabled;
}

// "<a>[pa] <-> <b>[pb]" -> the two node descriptions.
std::pair<std::string, std::string> removed_ends(const std::string& r) {
  size_t sep = r.find(" <-> ");
  std::string a = r.substr(0, sep), b = r.substr(sep + 5);
  return {a.substr(0, a.rfind('[')), b.substr(0, b.rfind('['))};
}

TEST(GeneratorRemoval, WholeSwitchesPerLevel) {
  // 64 servers x 4 rails, radix 16: 32 leaves, 32 spines, 16 cores (16 links each).
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);
  GeneratedFabric full = generate_ok(spec);
  spec.remove_switches = {1, 2, 1};
  spec.seed = 5;
  GeneratedFabric g = generate_ok(spec);
  const Fabric& f = g.fabric;
  ASSERT_EQ(g.removed_switches.size(), 4u);
  // Listed in node order: leaves, spines, cores.
  EXPECT_TRUE(starts_with(g.removed_switches[0], "leaf "));
  EXPECT_TRUE(starts_with(g.removed_switches[1], "spine "));
  EXPECT_TRUE(starts_with(g.removed_switches[2], "spine "));
  EXPECT_TRUE(starts_with(g.removed_switches[3], "core "));

  // The nodes stay (same numbering, same GUIDs), with no cable at all.
  EXPECT_EQ(f.num_nodes(), full.fabric.num_nodes());
  std::set<std::string> gone(g.removed_switches.begin(), g.removed_switches.end());
  for (const std::string& d : g.removed_switches) {
    NodeId n = f.find_name(d);
    ASSERT_TRUE(n.valid()) << d;
    EXPECT_EQ(f.node(n).guid, full.fabric.node(full.fabric.find_name(d)).guid) << d;
    EXPECT_EQ(cabled_ports(f, n), 0u) << d;
  }
  // Exactly the links of the full fabric with a removed end are gone, each
  // listed once.
  size_t touching = 0;
  for (const Link& l : full.fabric.links()) {
    std::string a(full.fabric.desc(full.fabric.port(l.a).node)), b(full.fabric.desc(full.fabric.port(l.b).node));
    touching += gone.count(a) || gone.count(b);
  }
  EXPECT_EQ(g.removed_links.size(), touching);
  EXPECT_EQ(f.num_links(), full.fabric.num_links() - touching);
  for (const std::string& r : g.removed_links) {
    auto [a, b] = removed_ends(r);
    EXPECT_TRUE(gone.count(a) || gone.count(b)) << r;
  }
  // The removed leaf took its CAs' links; the CAs stay, uncabled.
  NodeId leaf = full.fabric.find_name(g.removed_switches[0]);
  size_t uncabled_cas = 0;
  for (NodeId ca : f.cas()) uncabled_cas += cabled_ports(f, ca) == 0;
  EXPECT_EQ(uncabled_cas, 8u);
  EXPECT_EQ(f.cas().size(), full.fabric.cas().size());
  Shape fs = shape_of(full.fabric);
  EXPECT_EQ(fs.cas_of_leaf.at(leaf.value()).size(), 8u);
  // Every other switch keeps at least one link, and the rest of the shape holds.
  for (NodeId sw : f.switches()) {
    if (!gone.count(std::string(f.desc(sw)))) {
      EXPECT_GT(cabled_ports(f, sw), 0u) << f.desc(sw);
    }
  }

  // Deterministic per seed; another seed picks other switches.
  EXPECT_EQ(generate_ok(spec).removed_switches, g.removed_switches);
  EXPECT_EQ(link_ends(generate_ok(spec).fabric), link_ends(f));
  spec.seed = 6;
  EXPECT_NE(generate_ok(spec).removed_switches, g.removed_switches);
}

TEST(GeneratorRemoval, OneCoreSwitchTakesAllItsLinks) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 128, 8, 3, 16);  // 64 cores of 16 links
  spec.remove_switches[2] = 1;
  GeneratedFabric g = generate_ok(spec);
  ASSERT_EQ(g.removed_switches.size(), 1u);
  EXPECT_TRUE(starts_with(g.removed_switches[0], "core p"));
  EXPECT_EQ(g.removed_links.size(), 16u);
  for (const std::string& r : g.removed_links) {
    auto [a, b] = removed_ends(r);
    EXPECT_TRUE(starts_with(a, "spine ")) << r;
    EXPECT_EQ(b, g.removed_switches[0]) << r;
  }
  EXPECT_EQ(g.fabric.num_links(), 3072u - 16u);
  EXPECT_EQ(switch_components(g.fabric), 2u);  // the core alone, and the rest
}

TEST(GeneratorRemoval, SwitchRemovalSeedIsPortable) {
  // Pinned like SeedIsPortable, for the whole-switch streams.
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 16, 2, 3, 8);  // 8 leaves, 8 spines, 4 cores
  spec.remove_switches = {1, 1, 1};
  spec.seed = 1;
  GeneratedFabric g = generate_ok(spec);
  EXPECT_EQ(g.removed_switches, (std::vector<std::string>{"leaf g002 r0", "spine p00 s00", "core p03 c00"}));
}

TEST(GeneratorRemoval, LinksOfOneTier) {
  for (LinkTier tier : {LinkTier::kLeafSpine, LinkTier::kSpineCore}) {
    GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);
    spec.remove_switch_links = 40;
    spec.remove_links_at = tier;
    spec.seed = 3;
    GeneratedFabric g = generate_ok(spec);
    ASSERT_EQ(g.removed_links.size(), 40u) << to_string(tier);
    const char* lower = tier == LinkTier::kLeafSpine ? "leaf " : "spine ";
    const char* upper = tier == LinkTier::kLeafSpine ? "spine " : "core ";
    for (const std::string& r : g.removed_links) {
      auto [a, b] = removed_ends(r);
      EXPECT_TRUE(starts_with(a, lower) && starts_with(b, upper)) << to_string(tier) << ": " << r;
    }
    EXPECT_EQ(generate_ok(spec).removed_links, g.removed_links);
  }
  // All of a tier can go; one more is refused with the tier's size.
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);  // 256 leaf-spine, 256 spine-core links
  spec.remove_links_at = LinkTier::kSpineCore;
  spec.remove_switch_links = 256;
  GeneratedFabric g = generate_ok(spec);
  EXPECT_EQ(g.removed_links.size(), 256u);
  EXPECT_EQ(shape_of(g.fabric).switch_links, 256u);  // only leaf-spine links left
}

TEST(GeneratorRemoval, OldSpecsDrawWhatTheyDrew) {
  // Printed by `railyard topo gen` at 9fd1930, before whole-switch and per-tier
  // removal existed: specs that do not use them must keep their fabrics (tests
  // and recorded comparisons name seeds). All three older kinds at once.
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 16, 2, 3, 8);
  spec.remove_uplink_per_leaf = 1;
  spec.remove_switch_links = 2;
  spec.remove_ca_links = 1;
  spec.seed = 4;
  EXPECT_EQ(generate_ok(spec).removed_links, (std::vector<std::string>{
                                                 "node001 mlx5_1[1] <-> leaf g000 r1[1]",
                                                 "leaf g000 r0[7] <-> spine p00 s02[1]",
                                                 "leaf g001 r0[6] <-> spine p00 s01[2]",
                                                 "leaf g002 r0[5] <-> spine p00 s00[3]",
                                                 "leaf g003 r0[7] <-> spine p00 s02[4]",
                                                 "leaf g000 r1[6] <-> spine p01 s01[1]",
                                                 "leaf g001 r1[8] <-> spine p01 s03[2]",
                                                 "leaf g002 r1[5] <-> spine p01 s00[3]",
                                                 "leaf g003 r1[5] <-> spine p01 s00[4]",
                                                 "spine p01 s00[7] <-> core p00 c00[7]",
                                                 "spine p01 s01[6] <-> core p01 c00[6]",
                                             }));
}

TEST(GeneratorRemoval, SwitchesThenOtherRemovalsAddUp) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);
  GeneratedFabric full = generate_ok(spec);
  spec.remove_switches = {1, 0, 1};  // a leaf: 8 CA links + 8 uplinks; a core: 16 links
  spec.remove_uplink_per_leaf = 1;   // 31 leaves left
  spec.remove_switch_links = 10;
  spec.remove_ca_links = 5;
  GeneratedFabric g = generate_ok(spec);
  EXPECT_EQ(g.removed_links.size(), 16u + 16u + 31u + 10u + 5u);
  EXPECT_EQ(g.fabric.num_links(), full.fabric.num_links() - g.removed_links.size());
  for (NodeId sw : g.fabric.switches()) {
    if (starts_with(g.fabric.desc(sw), "leaf ") && std::string(g.fabric.desc(sw)) != g.removed_switches[0]) {
      EXPECT_LE(uplinks_of(g.fabric, sw), 7u) << g.fabric.desc(sw);
    }
  }
}

TEST(GeneratorLids, SwitchesThenCaPortsInNodeOrder) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 16, 2, 2, 16);
  spec.assign_lids = true;
  GeneratedFabric g = generate_ok(spec);
  const Fabric& f = g.fabric;
  ASSERT_TRUE(f.has_lids());
  uint16_t next = 1;
  for (NodeId sw : f.switches()) {
    PortId p0 = f.port_id(sw, PortNum{0});
    EXPECT_EQ(f.port(p0).lid.value, next);
    EXPECT_EQ(f.lid_owner(Lid{next}), p0);
    ++next;
  }
  for (NodeId ca : f.cas()) {
    PortId p1 = f.port_id(ca, PortNum{1});
    EXPECT_EQ(f.port(p1).lid.value, next);
    EXPECT_EQ(f.port(p1).lmc, 0);
    ++next;
  }
  EXPECT_EQ(f.max_lid().value, next - 1);
  EXPECT_FALSE(generate_ok(spec_of(TopologyKind::kRoft, 16, 2, 2, 16)).fabric.has_lids());
}

TEST(GeneratorErrors, BadSpecs) {
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 0, 8, 2, 64)), "servers must be at least 1");
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 8, 0, 2, 64)), "rails must be at least 1");
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 8, 8, 2, 63)),
            "radix 63 is not supported: it must be even and between 4 and 254 (half the ports go down, half up)");
  EXPECT_NE(error_of(spec_of(TopologyKind::kRoft, 8, 8, 2, 2)).find("radix 2 is not supported"), std::string::npos);
  EXPECT_NE(error_of(spec_of(TopologyKind::kRoft, 8, 8, 2, 256)).find("radix 256 is not supported"),
            std::string::npos);
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 8, 8, 4, 64)),
            "levels 4 is not supported: the generator builds 2 or 3 levels");
  GeneratorSpec blank = spec_of(TopologyKind::kRoft, 8, 8, 2, 64);
  blank.host_prefix = "my node";
  EXPECT_EQ(error_of(blank), "host_prefix \"my node\" must not contain blanks or quotes");
}

TEST(GeneratorErrors, TooBigForLevels) {
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 2048, 8, 2, 64)),
            "2 levels with radix 64 hold at most 64 leaves (256 servers with 8 rails); 2048 servers with 8 rails "
            "need 512 leaves; use levels=3");
  EXPECT_TRUE(generate_fabric(spec_of(TopologyKind::kRoft, 256, 8, 2, 64)).ok());
  EXPECT_FALSE(generate_fabric(spec_of(TopologyKind::kRoft, 257, 8, 2, 64)).ok());
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRoft, 257, 8, 3, 8)),
            "3 levels with radix 8 hold at most 8 pods of 4 leaves (16 servers with 8 rails); 257 servers with 8 "
            "rails need 130 pods, which would take 4 levels (not generated); use a larger radix");
  EXPECT_TRUE(generate_fabric(spec_of(TopologyKind::kRoft, 16, 8, 3, 8)).ok());
  EXPECT_FALSE(generate_fabric(spec_of(TopologyKind::kRoft, 17, 8, 3, 8)).ok());
  EXPECT_EQ(error_of(spec_of(TopologyKind::kFatTree, 8, 5, 2, 8)),
            "a fat-tree leaf holds all CAs of a server on its 4 down ports, so rails (5) must be at most radix/2; "
            "use kind roft");
  EXPECT_EQ(error_of(spec_of(TopologyKind::kFatTree, 17, 2, 2, 8)),
            "2 levels with radix 8 hold at most 8 leaves (16 servers with 2 rails); 17 servers with 2 rails need 9 "
            "leaves; use levels=3");
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRailOnly, 17, 2, 2, 4)),
            "a rail-only rail with radix 4 holds at most 4 leaves (8 servers); 17 servers need 9 leaves per rail; "
            "use kind roft with levels=3");
  EXPECT_EQ(error_of(spec_of(TopologyKind::kRailOnly, 8, 2, 3, 64)),
            "a rail-only fabric has at most 2 levels per rail (a leaf, or leaves under spines); use levels=2");
}

TEST(GeneratorErrors, RemovingMoreThanExists) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 8, 2, 2, 8);  // 2 groups, 4 leaves x 4 uplinks
  spec.remove_switch_links = 17;
  EXPECT_EQ(error_of(spec), "remove_switch_links=17 but the fabric has only 16 switch-switch links");
  spec.remove_switch_links = 16;
  EXPECT_TRUE(generate_fabric(spec).ok());
  spec.remove_uplink_per_leaf = 1;
  spec.remove_switch_links = 13;
  EXPECT_EQ(error_of(spec),
            "remove_switch_links=13 but the fabric has only 12 switch-switch links left after removing 1 uplinks per "
            "leaf");
  spec.remove_switch_links = 0;
  spec.remove_uplink_per_leaf = 5;
  EXPECT_EQ(error_of(spec), "remove_uplink_per_leaf=5 but each leaf has only 4 uplinks");
  spec.remove_uplink_per_leaf = 0;
  spec.remove_ca_links = 17;
  EXPECT_EQ(error_of(spec), "remove_ca_links=17 but the fabric has only 16 CA links");
  GeneratorSpec rail_only = spec_of(TopologyKind::kRailOnly, 2, 2, 2, 8);
  rail_only.remove_uplink_per_leaf = 1;
  EXPECT_EQ(error_of(rail_only), "remove_uplink_per_leaf=1 but each leaf has only 0 uplinks (one leaf per rail, no spines)");
}

TEST(GeneratorErrors, RemovingMoreSwitchesThanALevelHas) {
  GeneratorSpec spec = spec_of(TopologyKind::kRoft, 64, 4, 3, 16);  // 32 leaves, 32 spines, 16 cores
  spec.remove_switches = {0, 0, 17};
  EXPECT_EQ(error_of(spec), "remove_switches at level 3 (core)=17 but the fabric has only 16 core switches");
  spec.remove_switches = {0, 33, 0};
  EXPECT_EQ(error_of(spec), "remove_switches at level 2 (spine)=33 but the fabric has only 32 spine switches");
  spec.remove_switches = {33, 0, 0};
  EXPECT_EQ(error_of(spec), "remove_switches at level 1 (leaf)=33 but the fabric has only 32 leaf switches");
  spec.remove_switches = {32, 32, 16};  // everything may go
  EXPECT_TRUE(generate_fabric(spec).ok());

  GeneratorSpec two = spec_of(TopologyKind::kRoft, 8, 2, 2, 8);
  two.remove_switches[2] = 1;
  EXPECT_EQ(error_of(two),
            "remove_switches at level 3 (core)=1 but the fabric has only 0 core switches (core switches exist only "
            "with 3 levels)");
  GeneratorSpec rail_only = spec_of(TopologyKind::kRailOnly, 2, 2, 2, 8);
  rail_only.remove_switches[1] = 1;
  EXPECT_EQ(error_of(rail_only),
            "remove_switches at level 2 (spine)=1 but the fabric has only 0 spine switches (one leaf per rail, no "
            "spines)");

  // Later removals are counted among what the switches left.
  spec.remove_switches = {0, 1, 0};  // a spine: 8 leaf-spine and 8 spine-core links
  spec.remove_links_at = LinkTier::kSpineCore;
  spec.remove_switch_links = 249;
  EXPECT_EQ(error_of(spec), "remove_switch_links=249 but the fabric has only 248 spine-core links left after "
                            "removing 1 switch");
  spec.remove_links_at = LinkTier::kLeafSpine;
  spec.remove_uplink_per_leaf = 1;
  spec.remove_switch_links = 217;
  EXPECT_EQ(error_of(spec), "remove_switch_links=217 but the fabric has only 216 leaf-spine links left after "
                            "removing 1 switch and 1 uplinks per leaf");
  spec.remove_switch_links = 0;
  spec.remove_uplink_per_leaf = 8;
  std::string e = error_of(spec);
  EXPECT_TRUE(starts_with(e, "remove_uplink_per_leaf=8 but \"leaf g")) << e;
  EXPECT_NE(e.find("\" has only 7 uplinks left after removing 1 switch"), std::string::npos) << e;
  spec.remove_uplink_per_leaf = 0;
  spec.remove_switches = {2, 0, 0};
  spec.remove_ca_links = 241;
  EXPECT_EQ(error_of(spec), "remove_ca_links=241 but the fabric has only 240 CA links left after removing 2 leaves");
}

TEST(GeneratorErrors, TierWithoutLinks) {
  GeneratorSpec two = spec_of(TopologyKind::kRoft, 8, 2, 2, 8);
  two.remove_links_at = LinkTier::kSpineCore;
  EXPECT_TRUE(generate_fabric(two).ok());  // nothing to remove, nothing refused
  two.remove_switch_links = 1;
  EXPECT_EQ(error_of(two), "remove_switch_links=1 but the fabric has only 0 spine-core links (no cores: 2 levels)");
  GeneratorSpec rail_only = spec_of(TopologyKind::kRailOnly, 2, 2, 2, 8);
  rail_only.remove_links_at = LinkTier::kLeafSpine;
  rail_only.remove_switch_links = 1;
  EXPECT_EQ(error_of(rail_only),
            "remove_switch_links=1 but the fabric has only 0 leaf-spine links (one leaf per rail, no spines)");
  EXPECT_EQ(to_string(LinkTier::kAll), "all");
  EXPECT_EQ(to_string(LinkTier::kLeafSpine), "leaf-spine");
  EXPECT_EQ(to_string(LinkTier::kSpineCore), "spine-core");
  EXPECT_EQ(switch_level_name(1), "leaf");
  EXPECT_EQ(switch_level_name(3), "core");
}

}  // namespace
}  // namespace railyard::routing
