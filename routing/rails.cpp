#include "routing/rails.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <optional>
#include <regex>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "routing/natural_order.h"

namespace railyard::routing {

namespace {

struct HostRail {
  std::string_view host;  // a view into the fabric's description
  int32_t rail;
};

// A decimal rail number 0..kMaxRail, or kNoRail.
int32_t parse_rail(std::string_view digits) {
  if (digits.empty() || digits.size() > 6) return kNoRail;
  int32_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return kNoRail;
    v = v * 10 + (c - '0');
  }
  return v <= kMaxRail ? v : kNoRail;
}

// One compiled rail pattern. Patterns of the default family are matched by
// hand: "^(.+?)<sep>mlx5_([0-9]+)$" with <sep> from `seps`. The rail is the
// run of digits that ends the description, and "mlx5_" must precede it, so
// there is exactly one candidate split and laziness does not matter. ECMAScript
// '.' does not match '\n' or '\r', so a host containing them is no match.
class RailPattern {
 public:
  explicit RailPattern(const std::string& pattern) {
    if (pattern == R"(^(.+?)[ -]mlx5_([0-9]+)$)") {
      seps_ = " -";
    } else if (pattern == R"(^(.+?) mlx5_([0-9]+)$)") {
      seps_ = " ";
    } else if (pattern == R"(^(.+?)-mlx5_([0-9]+)$)") {
      seps_ = "-";
    } else {
      try {
        re_.emplace(pattern, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error&) {
        // parse_policy_yaml refuses patterns that do not compile; a RailNaming
        // built in code with one is a caller bug. Release builds skip it.
        assert(false && "rail patterns are validated when the policy is loaded");
      }
    }
  }

  std::optional<HostRail> match(std::string_view desc) const {
    if (!seps_.empty()) return match_default(desc);
    if (!re_) return std::nullopt;
    std::cmatch m;
    try {
      if (!std::regex_search(desc.data(), desc.data() + desc.size(), m, *re_)) return std::nullopt;
    } catch (const std::regex_error&) {
      return std::nullopt;  // error_complexity / error_stack on a pathological description
    }
    if (m.size() < 3 || !m[1].matched || m[1].length() == 0 || !m[2].matched) return std::nullopt;
    int32_t rail = parse_rail(std::string_view(m[2].first, static_cast<size_t>(m[2].length())));
    if (rail == kNoRail) return std::nullopt;
    return HostRail{std::string_view(m[1].first, static_cast<size_t>(m[1].length())), rail};
  }

  // The same result as the regex for the default family (see the test
  // RailPatterns.FastPathMatchesStdRegex).
  std::optional<HostRail> match_default(std::string_view desc) const {
    size_t end = desc.size();
    size_t digits = end;
    while (digits > 0 && desc[digits - 1] >= '0' && desc[digits - 1] <= '9') --digits;
    constexpr std::string_view kMlx = "mlx5_";
    // host (>= 1 char) + separator + "mlx5_" + >= 1 digit
    if (digits == end || digits < kMlx.size() + 2) return std::nullopt;
    if (desc.substr(digits - kMlx.size(), kMlx.size()) != kMlx) return std::nullopt;
    size_t sep = digits - kMlx.size() - 1;
    if (seps_.find(desc[sep]) == std::string_view::npos) return std::nullopt;
    std::string_view host = desc.substr(0, sep);
    if (host.find_first_of("\n\r") != std::string_view::npos) return std::nullopt;
    int32_t rail = parse_rail(desc.substr(digits));
    if (rail == kNoRail) return std::nullopt;
    return HostRail{host, rail};
  }

 private:
  std::string_view seps_;
  std::optional<std::regex> re_;
};

bool is_desc_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The host of a description without a rail: its first word when a space
// follows it ("^(\S+)\s"), else with `whole` the entire description.
std::string_view inferred_host(std::string_view desc, bool whole) {
  size_t i = 0;
  while (i < desc.size() && !is_desc_space(desc[i])) ++i;
  if (i > 0 && i < desc.size()) return desc.substr(0, i);
  return whole ? desc : std::string_view();
}

std::string node_quoted(const Fabric& f, NodeId n) {
  std::string_view d = f.desc(n);
  if (d.empty()) d = f.name(n);
  if (!d.empty()) return "'" + std::string(d) + "'";
  return to_string(f.node(n).guid);
}

// Rail assignment for every CA (rules 1-3 of rails.h); fills rail, host, hosts
// and the kCaWithoutRail misfits.
void assign_hosts_and_rails(const Fabric& f, const policies::RailNaming& naming, RailMap& m) {
  // Compiled once per call: 16k CAs must not pay 16k regex compilations.
  std::vector<RailPattern> patterns;
  patterns.reserve(naming.patterns.size());
  for (const std::string& p : naming.patterns) patterns.emplace_back(p);

  std::vector<std::string_view> host_of(f.num_nodes());
  std::vector<uint8_t> needs_rank(f.num_nodes(), 0);
  for (NodeId ca : f.cas()) {
    std::string_view desc = f.desc(ca);
    std::optional<HostRail> hr;
    for (const RailPattern& p : patterns) {
      if ((hr = p.match(desc))) break;
    }
    if (hr) {
      host_of[ca.value()] = hr->host;
      m.rail[ca.value()] = hr->rail;
      continue;
    }
    host_of[ca.value()] = inferred_host(desc, naming.infer_from_structure);
    if (naming.infer_from_structure && !host_of[ca.value()].empty()) {
      needs_rank[ca.value()] = 1;
    } else {
      m.misfits.push_back({Misfit::Kind::kCaWithoutRail, ca,
                           "CA " + node_quoted(f, ca) + " has no rail: its description matches no rail pattern" +
                               (desc.empty() ? " and is empty" : " and rail inference is off")});
    }
  }

  // Group CAs by host, groups in order of first CA; views compare by content
  // and point into the fabric, which outlives this call.
  std::unordered_map<std::string_view, uint32_t> group_of;
  group_of.reserve(f.cas().size());
  std::vector<uint32_t> group(f.num_nodes(), kNoHost);
  std::vector<std::vector<NodeId>> groups;
  for (NodeId ca : f.cas()) {
    std::string_view h = host_of[ca.value()];
    if (h.empty()) continue;
    auto [it, fresh] = group_of.try_emplace(h, static_cast<uint32_t>(groups.size()));
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(ca);
    group[ca.value()] = it->second;
  }

  // Rule 2: rank by node GUID among all of the host's CAs.
  std::vector<uint8_t> disbelieved(groups.size(), 0);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<NodeId>& g = groups[gi];
    bool any = std::any_of(g.begin(), g.end(), [&](NodeId n) { return needs_rank[n.value()] != 0; });
    if (!any) continue;
    if (g.size() > kMaxCasPerInferredHost) {
      for (NodeId n : g) {
        if (!needs_rank[n.value()]) continue;
        m.misfits.push_back({Misfit::Kind::kCaWithoutRail, n,
                             "CA " + node_quoted(f, n) + " has no rail: its description matches no rail pattern and '" +
                                 std::string(host_of[n.value()]) + "' starts " + std::to_string(g.size()) +
                                 " descriptions, too many to be a host"});
        group[n.value()] = kNoHost;
      }
      // Pattern-matched CAs keep the host; it disappears if none is left.
      disbelieved[gi] = std::none_of(g.begin(), g.end(), [&](NodeId n) { return group[n.value()] != kNoHost; });
      continue;
    }
    std::vector<NodeId> by_guid = g;
    std::sort(by_guid.begin(), by_guid.end(),
              [&](NodeId a, NodeId b) { return std::pair(f.node(a).guid, a) < std::pair(f.node(b).guid, b); });
    for (size_t r = 0; r < by_guid.size(); ++r) {
      if (needs_rank[by_guid[r].value()]) m.rail[by_guid[r].value()] = static_cast<int32_t>(r);
    }
  }

  // Host indices follow group order, without the disbelieved groups.
  std::vector<uint32_t> host_index(groups.size(), kNoHost);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (disbelieved[gi]) continue;
    host_index[gi] = static_cast<uint32_t>(m.hosts.size());
    m.hosts.emplace_back(host_of[groups[gi].front().value()]);
  }
  for (NodeId ca : f.cas()) {
    uint32_t g = group[ca.value()];
    if (g != kNoHost) m.host[ca.value()] = host_index[g];
    m.num_rails = std::max<uint32_t>(m.num_rails, static_cast<uint32_t>(m.rail[ca.value()] + 1));
  }
}

// Leaves, their majority rails and the CA/leaf misfits. Walks each switch's
// ports, so the votes of a leaf arrive together and need no sorting.
void assign_leaves(const Fabric& f, RailMap& m) {
  for (NodeId ca : f.cas()) {
    const Node& nd = f.node(ca);
    for (uint32_t p = 1; p <= nd.num_ports && !m.leaf[ca.value()].valid(); ++p) {
      NodeId sw = f.remote_node(f.port_id(ca, PortNum{static_cast<uint8_t>(p)}));
      if (sw.valid() && f.is_switch(sw)) m.leaf[ca.value()] = sw;
    }
    if (!m.leaf[ca.value()].valid()) {
      m.misfits.push_back({Misfit::Kind::kCaWithoutLeaf, ca, "CA " + node_quoted(f, ca) + " is not cabled to a switch"});
    }
  }

  // A CA cabled twice to one leaf votes once: `seen_on` remembers the last
  // leaf that counted it.
  std::vector<NodeId> seen_on(f.num_nodes());
  std::vector<std::pair<int32_t, uint32_t>> counts;  // (rail, CAs), few entries
  std::vector<NodeId> cas;
  for (NodeId sw : f.switches()) {
    const Node& nd = f.node(sw);
    counts.clear();
    cas.clear();
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      NodeId ca = f.remote_node(f.port_id(sw, PortNum{static_cast<uint8_t>(p)}));
      if (!ca.valid() || f.is_switch(ca) || seen_on[ca.value()] == sw) continue;
      seen_on[ca.value()] = sw;
      cas.push_back(ca);
      int32_t rail = m.rail[ca.value()];
      if (rail == kNoRail) continue;
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == rail; });
      if (it == counts.end()) {
        counts.emplace_back(rail, 1);
      } else {
        ++it->second;
      }
    }
    if (cas.empty()) continue;
    m.level[sw.value()] = 0;
    if (counts.empty()) continue;
    // Majority; ties go to the lowest rail.
    std::sort(counts.begin(), counts.end());
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    int32_t leaf_rail = best->first;
    m.rail[sw.value()] = leaf_rail;
    if (counts.size() > 1) {
      std::string list;
      for (const auto& [rail, n] : counts) {
        if (!list.empty()) list += ", ";
        list += std::to_string(rail) + " (" + std::to_string(n) + (n == 1 ? " CA)" : " CAs)");
      }
      m.misfits.push_back({Misfit::Kind::kLeafServesSeveralRails, sw,
                           "leaf " + node_quoted(f, sw) + " serves rails " + list + "; its rail is " +
                               std::to_string(leaf_rail)});
      for (NodeId ca : cas) {
        int32_t rail = m.rail[ca.value()];
        if (rail == kNoRail || rail == leaf_rail) continue;
        m.misfits.push_back({Misfit::Kind::kCaRailDiffersFromLeaf, ca,
                             "CA " + node_quoted(f, ca) + " (rail " + std::to_string(rail) + ") is on leaf " +
                                 node_quoted(f, sw) + " of rail " + std::to_string(leaf_rail)});
      }
    }
  }
}

// Breadth-first search over switch-to-switch cables from every leaf at once:
// a switch's level is its hop distance to the nearest leaf.
void assign_levels(const Fabric& f, RailMap& m) {
  std::vector<NodeId> frontier;
  for (NodeId sw : f.switches()) {
    if (m.level[sw.value()] == 0) frontier.push_back(sw);
  }
  int32_t level = 0;
  if (!frontier.empty()) m.max_level = 0;
  std::vector<NodeId> next;
  while (!frontier.empty()) {
    next.clear();
    for (NodeId sw : frontier) {
      const Node& nd = f.node(sw);
      for (uint32_t p = 1; p <= nd.num_ports; ++p) {
        NodeId r = f.remote_node(f.port_id(sw, PortNum{static_cast<uint8_t>(p)}));
        if (!r.valid() || !f.is_switch(r) || m.level[r.value()] != kNoLevel) continue;
        m.level[r.value()] = level + 1;
        next.push_back(r);
      }
    }
    if (!next.empty()) m.max_level = ++level;
    std::swap(frontier, next);
  }
}

}  // namespace

RailMap map_rails(const Fabric& fabric, const policies::RailNaming& naming) {
  RailMap m;
  size_t n = fabric.num_nodes();
  m.rail.assign(n, kNoRail);
  m.host.assign(n, kNoHost);
  m.level.assign(n, kNoLevel);
  m.leaf.assign(n, NodeId());
  assign_hosts_and_rails(fabric, naming, m);
  assign_leaves(fabric, m);
  assign_levels(fabric, m);
  std::stable_sort(m.misfits.begin(), m.misfits.end(), [](const Misfit& a, const Misfit& b) {
    return std::pair(a.kind, a.node) < std::pair(b.kind, b.node);
  });
  return m;
}

HostGrid host_grid(const Fabric& f, const RailMap& rm) {
  HostGrid g;
  g.rails = rm.num_rails;
  std::vector<uint32_t> order(rm.hosts.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return natural_less(rm.hosts[a], rm.hosts[b]); });
  std::vector<uint32_t> pos(rm.hosts.size());
  for (uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  g.hosts = static_cast<uint32_t>(rm.hosts.size());
  g.port.assign(static_cast<size_t>(g.hosts) * g.rails, PortId());
  for (NodeId ca : f.cas()) {
    uint32_t h = ca.value() < rm.host.size() ? rm.host[ca.value()] : kNoHost;
    int32_t r = ca.value() < rm.rail.size() ? rm.rail[ca.value()] : kNoRail;
    if (h == kNoHost || r < 0 || static_cast<uint32_t>(r) >= g.rails) continue;
    PortId p = f.primary_port(ca);
    if (!f.port(p).lid.valid()) continue;
    g.port[static_cast<size_t>(pos[h]) * g.rails + static_cast<uint32_t>(r)] = p;
  }
  return g;
}

}  // namespace railyard::routing
