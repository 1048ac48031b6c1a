#include "api/scheduler_render.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace railyard::api {

namespace ctl = railyard::controller;

namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::vector<std::string> host_names(const ctl::SchedulerTopology& t, const std::vector<uint32_t>& hosts) {
  std::vector<std::string> out;
  out.reserve(hosts.size());
  for (uint32_t h : hosts) out.push_back(t.hosts[h]);
  return out;
}

std::vector<std::string> child_names(const ctl::SchedulerTopology& t, size_t tier, const ctl::TopologyGroup& g) {
  std::vector<std::string> out;
  for (uint32_t c : g.children) out.push_back(t.tiers[tier - 1][c].name);
  return out;
}

// Hosts with a broken rail, and why, in host order.
std::vector<std::pair<std::string, std::string>> unhealthy(const ctl::RailHealthMap& health) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ctl::HostRails& h : health.hosts) {
    std::string why = ctl::broken_rails_text(h);
    if (!why.empty()) out.emplace_back(h.host, std::move(why));
  }
  return out;
}

// The comment block both Slurm files start with.
std::vector<std::string> slurm_header(const ctl::SchedulerTopology& t, const ctl::RailHealthMap& health,
                                      const char* what) {
  std::vector<std::string> lines;
  size_t placed = t.hosts.size() - t.unplaced.size();
  std::string shape = std::to_string(placed) + " hosts in " + std::to_string(t.tiers.empty() ? 0 : t.tiers[0].size()) +
                      " blocks (hosts sharing their rail leaves)";
  if (t.tiers.size() > 2) shape += ", " + std::to_string(t.tiers[1].size()) + " pods";
  lines.push_back(std::string("Slurm ") + what + " from railyard: " + shape + ".");
  lines.push_back("After it changed: scontrol reconfigure");
  const auto bad = unhealthy(health);
  std::vector<std::string> names;
  for (const auto& [host, why] : bad) names.push_back(host);
  lines.push_back("Hosts with a broken rail (down, drained or isolated); exclude them with sbatch --exclude:");
  lines.push_back("RailyardExclude=" + join(names, ","));
  for (const auto& [host, why] : bad) lines.push_back("  " + host + ": " + why);
  if (!t.unplaced.empty()) {
    lines.push_back("Hosts without a cabled CA (in no switch): " + join(host_names(t, t.unplaced), ","));
  }
  return lines;
}

}  // namespace

std::string render_slurm_conf(const ctl::SchedulerTopology& t, const ctl::RailHealthMap& health) {
  std::string out;
  for (const std::string& line : slurm_header(t, health, "topology.conf (TopologyPlugin=topology/tree)")) {
    out += "# " + line + "\n";
  }
  for (size_t tier = 0; tier < t.tiers.size(); ++tier) {
    for (const ctl::TopologyGroup& g : t.tiers[tier]) {
      out += "SwitchName=" + g.name;
      out += tier == 0 ? " Nodes=" + join(host_names(t, g.hosts), ",") : " Switches=" + join(child_names(t, tier, g), ",");
      out += "\n";
    }
  }
  return out;
}

std::string render_slurm_yaml(const ctl::SchedulerTopology& t, const ctl::RailHealthMap& health) {
  // The comment lines are written before the emitter's text: yaml-cpp puts
  // consecutive comments on one line.
  std::string header;
  for (const std::string& line : slurm_header(t, health, "topology.yaml (Slurm 25.05)")) header += "# " + line + "\n";
  YAML::Emitter out;
  out << YAML::BeginSeq;
  // The tree: every group a switch.
  out << YAML::BeginMap << YAML::Key << "topology" << YAML::Value << "railyard-tree";
  out << YAML::Key << "cluster_default" << YAML::Value << true;
  out << YAML::Key << "tree" << YAML::Value << YAML::BeginMap << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (size_t tier = 0; tier < t.tiers.size(); ++tier) {
    for (const ctl::TopologyGroup& g : t.tiers[tier]) {
      out << YAML::BeginMap << YAML::Key << "switch" << YAML::Value << g.name;
      if (tier == 0) {
        out << YAML::Key << "nodes" << YAML::Value << join(host_names(t, g.hosts), ",");
      } else {
        out << YAML::Key << "children" << YAML::Value << join(child_names(t, tier, g), ",");
      }
      out << YAML::EndMap;
    }
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  // The blocks: tier 0. The base block size is the smallest block (every
  // block must hold at least that many nodes); each tier above whose groups
  // all hold the same number of hosts, a power-of-two multiple of the last
  // size, is a larger size.
  if (!t.tiers.empty() && !t.tiers[0].empty()) {
    std::vector<size_t> sizes;
    size_t base = SIZE_MAX;
    for (const ctl::TopologyGroup& g : t.tiers[0]) base = std::min(base, g.hosts.size());
    sizes.push_back(base);
    for (size_t tier = 1; tier < t.tiers.size(); ++tier) {
      const size_t n = t.tiers[tier].front().hosts.size();
      const bool same = std::all_of(t.tiers[tier].begin(), t.tiers[tier].end(),
                                    [&](const ctl::TopologyGroup& g) { return g.hosts.size() == n; });
      const size_t last = sizes.back();
      if (!same || n <= last || n % last != 0) continue;
      const size_t ratio = n / last;
      if ((ratio & (ratio - 1)) == 0) sizes.push_back(n);
    }
    out << YAML::BeginMap << YAML::Key << "topology" << YAML::Value << "railyard-block";
    out << YAML::Key << "cluster_default" << YAML::Value << false;
    out << YAML::Key << "block" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "block_sizes" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (size_t s : sizes) out << s;
    out << YAML::EndSeq;
    out << YAML::Key << "blocks" << YAML::Value << YAML::BeginSeq;
    for (const ctl::TopologyGroup& g : t.tiers[0]) {
      out << YAML::BeginMap << YAML::Key << "block" << YAML::Value << g.name << YAML::Key << "nodes" << YAML::Value
          << join(host_names(t, g.hosts), ",") << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  return header + out.c_str() + "\n";
}

std::string render_kubernetes(const ctl::SchedulerTopology& t, const ctl::RailHealthMap& health) {
  const size_t tiers = std::min<size_t>(t.tiers.size(), std::size(kTopologyLabels));
  YAML::Emitter out;
  out << YAML::BeginDoc << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "kueue.x-k8s.io/v1alpha1";
  out << YAML::Key << "kind" << YAML::Value << "Topology";
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "railyard"
      << YAML::EndMap;
  out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap << YAML::Key << "levels" << YAML::Value << YAML::BeginSeq;
  for (size_t i = tiers; i-- > 0;) {
    out << YAML::BeginMap << YAML::Key << "nodeLabel" << YAML::Value << kTopologyLabels[i] << YAML::EndMap;
  }
  out << YAML::BeginMap << YAML::Key << "nodeLabel" << YAML::Value << "kubernetes.io/hostname" << YAML::EndMap;
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  for (uint32_t h = 0; h < t.hosts.size(); ++h) {
    out << YAML::BeginDoc << YAML::BeginMap;
    out << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind" << YAML::Value << "Node";
    out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.hosts[h];
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    const uint32_t block = t.host_block[h];
    if (block != ctl::SchedulerTopology::kUnplaced) {
      for (size_t i = 0; i < tiers; ++i) {
        out << YAML::Key << kTopologyLabels[i] << YAML::Value << t.tiers[i][t.group_of(block, i)].name;
      }
    }
    if (h < health.hosts.size()) {
      for (const ctl::RailState& r : health.hosts[h].rails) {
        if (r.rail < 0) continue;
        out << YAML::Key << kRailLabelPrefix + std::to_string(r.rail) << YAML::Value
            << std::string(ctl::to_string(r.health));
      }
    }
    out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  }
  return std::string("# Kubernetes node labels and a Kueue Topology from railyard (docs/kubernetes.md).\n"
                     "# Apply: kubectl apply --server-side --field-manager=railyard -f FILE\n") +
         out.c_str() + "\n";
}

}  // namespace railyard::api
