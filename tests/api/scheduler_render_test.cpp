// The scheduler documents, parsed back and checked against their formats:
// topology.conf as topology.conf(5) describes it, topology.yaml as
// topology.yaml(5) of Slurm 25.05 does (a list of topologies, `topology` the
// first key, exactly one of tree/block/flat, at most one cluster default;
// tree: switches with nodes or children, names of at most 64 characters;
// block: block_sizes ascending by powers of two, every block at least the
// base size), and the Kubernetes YAML (a Kueue Topology whose levels are node
// labels each Node carries; label values valid).
#include "api/scheduler_render.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "routing/generator.h"
#include "routing/node_lookup.h"

namespace railyard::api {
namespace {

namespace ctl = railyard::controller;

struct Fixture {
  std::shared_ptr<const ctl::FabricView> view;
  ctl::SchedulerTopology topo;
  ctl::RailHealthMap health;
};

// 32 servers x 2 rails; levels 3 (radix 8: groups of 4 servers, leaves in
// rail-major pods of 4, so groups 0-3 and 4-7 share pods) or 2 (radix 16). With
// `broken`, node003's rail-1 cable is down.
Fixture make(uint32_t levels, bool broken) {
  routing::GeneratorSpec spec;
  spec.servers = 32;
  spec.rails = 2;
  spec.levels = levels;
  spec.radix = levels == 3 ? 8 : 16;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  EXPECT_TRUE(g.ok());
  routing::Fabric f = std::move(g->fabric);
  if (broken) {
    const NodeId ca = *routing::find_node(f, "node003 mlx5_1");
    f = ctl::with_links_down(f, {ctl::port_key(f, f.primary_port(ca))});
  }
  Fixture x;
  x.view = *ctl::build_view(std::move(f), policies::Policy{}, "test", 1);
  x.topo = ctl::scheduler_topology(*x.view);
  x.health = ctl::rail_health(*x.view, {});
  return x;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

TEST(SlurmConf, EveryHostOnceUnderATreeOfSwitches) {
  const Fixture x = make(3, true);
  const std::string conf = render_slurm_conf(x.topo, x.health);
  std::map<std::string, std::vector<std::string>> nodes, switches;
  std::string exclude;
  bool saw_exclude = false;
  for (const std::string& line : split(conf, '\n')) {
    if (line.rfind("# RailyardExclude=", 0) == 0) {
      exclude = line.substr(18);
      saw_exclude = true;
    }
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, std::regex("SwitchName=([A-Za-z0-9_.-]+) (Nodes|Switches)=(\\S+)"))) << line;
    ASSERT_FALSE(nodes.contains(m[1]) || switches.contains(m[1])) << "switch defined twice: " << m[1];
    (m[2] == "Nodes" ? nodes : switches)[m[1]] = split(m[3], ',');
  }
  EXPECT_TRUE(saw_exclude);
  EXPECT_EQ(exclude, "node003");
  EXPECT_NE(conf.find("#   node003: rail 1 down"), std::string::npos) << conf;
  std::map<std::string, int> seen;
  for (auto& [sw, hosts] : nodes) {
    for (const std::string& h : hosts) ++seen[h];
  }
  ASSERT_EQ(seen.size(), 32u);
  for (auto& [h, n] : seen) EXPECT_EQ(n, 1) << h;
  // A tree: every switch but one root has exactly one parent, children exist.
  std::map<std::string, int> parents;
  for (auto& [sw, children] : switches) {
    for (const std::string& c : children) {
      EXPECT_TRUE(nodes.contains(c) || switches.contains(c)) << c;
      ++parents[c];
    }
  }
  int roots = 0;
  for (auto& [sw, n] : nodes) EXPECT_EQ(parents[sw], 1) << sw;
  for (auto& [sw, n] : switches) roots += parents[sw] == 0;
  EXPECT_EQ(roots, 1);
  EXPECT_EQ(nodes.size(), 8u);     // one block per group of 4 servers
  EXPECT_EQ(switches.size(), 3u);  // two pods and the fabric
  // The same model and health give the same bytes; health changes them.
  EXPECT_EQ(render_slurm_conf(x.topo, x.health), conf);
  const Fixture healthy = make(3, false);
  const std::string clean = render_slurm_conf(healthy.topo, healthy.health);
  EXPECT_NE(clean, conf);
  EXPECT_NE(clean.find("# RailyardExclude=\n"), std::string::npos) << clean;
}

TEST(SlurmYaml, FollowsTopologyYamlFive) {
  const Fixture x = make(3, false);
  const std::string text = render_slurm_yaml(x.topo, x.health);
  EXPECT_NE(text.find("\n# RailyardExclude=\n"), std::string::npos) << "each comment on its own line:\n" << text;
  const YAML::Node doc = YAML::Load(text);
  ASSERT_TRUE(doc.IsSequence());
  int defaults = 0;
  std::set<std::string> names, kinds;
  for (const YAML::Node& t : doc) {
    ASSERT_TRUE(t.IsMap());
    EXPECT_EQ(t.begin()->first.as<std::string>(), "topology") << "topology must be the first attribute";
    EXPECT_TRUE(names.insert(t["topology"].as<std::string>()).second);
    defaults += t["cluster_default"] && t["cluster_default"].as<bool>();
    int types = 0;
    for (const char* k : {"tree", "block", "flat"}) types += bool(t[k]);
    ASSERT_EQ(types, 1);
    if (t["tree"]) {
      kinds.insert("tree");
      std::map<std::string, std::vector<std::string>> leaves;
      std::set<std::string> defined;
      for (const YAML::Node& s : t["tree"]["switches"]) {
        const std::string n = s["switch"].as<std::string>();
        EXPECT_LE(n.size(), 64u);
        EXPECT_TRUE(defined.insert(n).second) << n;
        EXPECT_NE(bool(s["nodes"]), bool(s["children"])) << n;
        if (s["nodes"]) leaves[n] = split(s["nodes"].as<std::string>(), ',');
        if (s["children"]) {
          for (const std::string& c : split(s["children"].as<std::string>(), ',')) EXPECT_TRUE(defined.contains(c)) << c;
        }
      }
      std::map<std::string, int> seen;
      for (auto& [sw, hosts] : leaves) {
        for (const std::string& h : hosts) ++seen[h];
      }
      EXPECT_EQ(seen.size(), 32u);
      for (auto& [h, n] : seen) EXPECT_EQ(n, 1) << h;
    }
    if (t["block"]) {
      kinds.insert("block");
      std::vector<size_t> sizes;
      for (const YAML::Node& s : t["block"]["block_sizes"]) sizes.push_back(s.as<size_t>());
      // 8 blocks of 4 hosts; 2 pods of 4 blocks = 16 hosts = 4 * 2^2; the
      // fabric, 32 hosts = 16 * 2.
      EXPECT_EQ(sizes, (std::vector<size_t>{4, 16, 32}));
      for (size_t i = 1; i < sizes.size(); ++i) {
        ASSERT_EQ(sizes[i] % sizes[i - 1], 0u);
        const size_t r = sizes[i] / sizes[i - 1];
        EXPECT_TRUE(r > 1 && (r & (r - 1)) == 0);
      }
      std::map<std::string, int> seen;
      for (const YAML::Node& b : t["block"]["blocks"]) {
        const auto hosts = split(b["nodes"].as<std::string>(), ',');
        EXPECT_GE(hosts.size(), sizes[0]);
        for (const std::string& h : hosts) ++seen[h];
      }
      EXPECT_EQ(seen.size(), 32u);
      for (auto& [h, n] : seen) EXPECT_EQ(n, 1) << h;
    }
  }
  EXPECT_EQ(defaults, 1);
  EXPECT_EQ(kinds, (std::set<std::string>{"tree", "block"}));
}

TEST(Kubernetes, KueueTopologyAndNodeLabels) {
  const Fixture x = make(3, true);
  const std::vector<YAML::Node> docs = YAML::LoadAll(render_kubernetes(x.topo, x.health));
  ASSERT_EQ(docs.size(), 1u + 32u);
  const YAML::Node& topo = docs[0];
  EXPECT_EQ(topo["apiVersion"].as<std::string>(), "kueue.x-k8s.io/v1alpha1");
  EXPECT_EQ(topo["kind"].as<std::string>(), "Topology");
  EXPECT_FALSE(topo["metadata"]["name"].as<std::string>().empty());
  std::vector<std::string> levels;
  for (const YAML::Node& l : topo["spec"]["levels"]) levels.push_back(l["nodeLabel"].as<std::string>());
  EXPECT_EQ(levels, (std::vector<std::string>{"network.topology.nvidia.com/core", "network.topology.nvidia.com/spine",
                                              "network.topology.nvidia.com/leaf", "kubernetes.io/hostname"}));
  const std::regex value("([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?");
  std::map<std::string, std::set<std::string>> per_level;
  for (size_t i = 1; i < docs.size(); ++i) {
    const YAML::Node& n = docs[i];
    EXPECT_EQ(n["apiVersion"].as<std::string>(), "v1");
    EXPECT_EQ(n["kind"].as<std::string>(), "Node");
    const std::string name = n["metadata"]["name"].as<std::string>();
    const YAML::Node labels = n["metadata"]["labels"];
    for (size_t l = 0; l + 1 < levels.size(); ++l) {
      ASSERT_TRUE(labels[levels[l]]) << name << " lacks " << levels[l];
      const std::string v = labels[levels[l]].as<std::string>();
      EXPECT_TRUE(std::regex_match(v, value)) << v;
      per_level[levels[l]].insert(v);
    }
    for (int r = 0; r < 2; ++r) {
      const std::string key = std::string(kRailLabelPrefix) + std::to_string(r);
      ASSERT_TRUE(labels[key]) << name;
      EXPECT_EQ(labels[key].as<std::string>(), name == "node003" && r == 1 ? "down" : "healthy") << name;
    }
  }
  EXPECT_EQ(per_level["network.topology.nvidia.com/core"].size(), 1u);
  EXPECT_EQ(per_level["network.topology.nvidia.com/spine"].size(), 2u);
  EXPECT_EQ(per_level["network.topology.nvidia.com/leaf"].size(), 8u);
}

TEST(Kubernetes, TwoLevelFabricHasNoCoreLevel) {
  const Fixture x = make(2, false);
  const std::vector<YAML::Node> docs = YAML::LoadAll(render_kubernetes(x.topo, x.health));
  std::vector<std::string> levels;
  for (const YAML::Node& l : docs.at(0)["spec"]["levels"]) levels.push_back(l["nodeLabel"].as<std::string>());
  EXPECT_EQ(levels, (std::vector<std::string>{"network.topology.nvidia.com/spine", "network.topology.nvidia.com/leaf",
                                              "kubernetes.io/hostname"}));
}

}  // namespace
}  // namespace railyard::api
