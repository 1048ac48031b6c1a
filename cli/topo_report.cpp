#include "cli/topo_report.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <sstream>

namespace railyard::cli {
namespace {

using routing::Fabric;
using routing::RailMap;

constexpr int32_t kCaLevel = -1;       // a CA end of a link
constexpr int32_t kUnleveled = -2;     // a switch map_rails gave no level
constexpr size_t kSample = 6;          // names listed before "..." in short form

int32_t level_of(const Fabric& f, const RailMap& rails, NodeId n) {
  if (!f.is_switch(n)) return kCaLevel;
  int32_t l = rails.level[n.value()];
  return l == routing::kNoLevel ? kUnleveled : l;
}

// "1-16,33" for a sorted list of port numbers.
std::string ranges(const std::vector<uint8_t>& ports) {
  std::string out;
  for (size_t i = 0; i < ports.size();) {
    size_t j = i;
    while (j + 1 < ports.size() && ports[j + 1] == ports[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ports[i]);
    if (j > i) out += '-' + std::to_string(ports[j]);
    i = j + 1;
  }
  return out;
}

// "1 switch", "3 switches".
std::string count(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string min_max(uint32_t lo, uint32_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

std::string_view odd_kind_name(OddLink::Kind k) {
  switch (k) {
    case OddLink::Kind::kFewerUplinks: return "fewer_uplinks";
    case OddLink::Kind::kUnconnectedPort: return "unconnected_port";
    case OddLink::Kind::kCaNotCabled: return "ca_not_cabled";
    case OddLink::Kind::kSwitchWithoutLevel: return "switch_without_level";
    case OddLink::Kind::kSameLevelLink: return "same_level_link";
  }
  return "?";
}

std::string_view misfit_kind_name(routing::Misfit::Kind k) {
  switch (k) {
    case routing::Misfit::Kind::kCaRailDiffersFromLeaf: return "ca_rail_differs_from_leaf";
    case routing::Misfit::Kind::kLeafServesSeveralRails: return "leaf_serves_several_rails";
    case routing::Misfit::Kind::kCaWithoutRail: return "ca_without_rail";
    case routing::Misfit::Kind::kCaWithoutLeaf: return "ca_without_leaf";
  }
  return "?";
}

std::string names_of(const Fabric& f, const std::vector<NodeId>& nodes, bool long_form) {
  std::string out;
  size_t shown = long_form ? nodes.size() : std::min(nodes.size(), kSample);
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += f.desc(nodes[i]);
  }
  if (shown < nodes.size()) out += ", ... (" + std::to_string(nodes.size() - shown) + " more)";
  return out;
}

}  // namespace

std::string guid_string(Guid g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, g.value);
  return buf;
}

std::string level_name(int32_t level) {
  switch (level) {
    case kCaLevel: return "CA";
    case kUnleveled: return "unleveled";
    case 0: return "leaf";
    case 1: return "spine";
    case 2: return "core";
    default: return "level " + std::to_string(level);
  }
}

std::string port_label(const Fabric& fabric, NodeId n, uint8_t port) {
  return "\"" + std::string(fabric.desc(n)) + "\"[" + std::to_string(port) + "]";
}

TopologyReport build_topology_report(const Fabric& f, const RailMap& rails, std::string source) {
  TopologyReport r;
  r.source = std::move(source);
  r.levels.resize(rails.max_level >= 0 ? rails.max_level + 1 : 0);
  for (size_t l = 0; l < r.levels.size(); ++l) r.levels[l].level = static_cast<int32_t>(l);

  // Per switch: up and down link counts and which port numbers are cabled.
  struct SwitchCounts {
    uint32_t up = 0, down = 0;
  };
  std::vector<SwitchCounts> counts(f.num_nodes());
  std::vector<std::array<uint32_t, 256>> port_use(r.levels.size(), std::array<uint32_t, 256>{});
  std::vector<NodeId> neighbours;
  for (NodeId s : f.switches()) {
    int32_t lvl = level_of(f, rails, s);
    if (lvl == kUnleveled) {
      r.unleveled.push_back(s);
      r.odd.push_back({OddLink::Kind::kSwitchWithoutLevel, s, 0,
                       "switch \"" + std::string(f.desc(s)) + "\" is not connected to any CA-bearing switch"});
    } else {
      r.levels[lvl].switches.push_back(s);
    }
    neighbours.clear();
    const routing::Node& nd = f.node(s);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid = f.port_id(s, PortNum{static_cast<uint8_t>(p)});
      NodeId peer = f.remote_node(pid);
      if (!peer.valid()) continue;
      if (lvl >= 0) ++port_use[lvl][p];
      int32_t pl = level_of(f, rails, peer);
      if (pl == kCaLevel) {
        ++counts[s.value()].down;
        continue;
      }
      neighbours.push_back(peer);
      if (lvl < 0 || pl < 0) continue;
      if (pl == lvl + 1) ++counts[s.value()].up;
      else if (pl == lvl - 1) ++counts[s.value()].down;
      else if (pl == lvl && s < peer) {
        r.odd.push_back({OddLink::Kind::kSameLevelLink, s, static_cast<uint8_t>(p),
                         "link between two " + level_name(lvl) + " switches: " +
                             port_label(f, s, static_cast<uint8_t>(p)) + " <-> " +
                             port_label(f, peer, f.port(f.port(pid).remote).num.value)});
      }
    }
    std::sort(neighbours.begin(), neighbours.end());
    for (size_t i = 1; i < neighbours.size(); ++i) {
      if (neighbours[i] == neighbours[i - 1] && s < neighbours[i]) ++r.parallel_links;
    }
  }

  // Listed by description (ibnetdiscover prints nodes in discovery order).
  auto by_desc = [&f](NodeId x, NodeId y) {
    return std::pair(f.desc(x), f.node(x).guid) < std::pair(f.desc(y), f.node(y).guid);
  };
  for (LevelSummary& lv : r.levels) std::sort(lv.switches.begin(), lv.switches.end(), by_desc);
  std::sort(r.unleveled.begin(), r.unleveled.end(), by_desc);

  // Per level: the usual up-link count, and the ports cabled anywhere at the level.
  for (LevelSummary& lv : r.levels) {
    if (lv.switches.empty()) continue;
    std::map<uint32_t, uint32_t> up_hist;
    lv.min_up = lv.min_down = UINT32_MAX;
    for (NodeId s : lv.switches) {
      const SwitchCounts& c = counts[s.value()];
      ++up_hist[c.up];
      lv.min_up = std::min(lv.min_up, c.up);
      lv.max_up = std::max(lv.max_up, c.up);
      lv.min_down = std::min(lv.min_down, c.down);
      lv.max_down = std::max(lv.max_down, c.down);
    }
    // The most common count; on a tie the larger one (the fabric as built).
    uint32_t best = 0;
    for (auto [up, n] : up_hist) {
      if (n >= best) {
        best = n;
        lv.common_up = up;
      }
    }
    const auto& use = port_use[lv.level];
    for (uint32_t p = 1; p < 256; ++p) {
      if (use[p]) lv.ports_in_use.push_back(static_cast<uint8_t>(p));
    }
    for (NodeId s : lv.switches) {
      const SwitchCounts& c = counts[s.value()];
      if (c.up < lv.common_up) {
        r.odd.push_back({OddLink::Kind::kFewerUplinks, s, 0,
                         "\"" + std::string(f.desc(s)) + "\" has " + std::to_string(c.up) +
                             " up-links, most " + level_name(lv.level) + " switches have " +
                             std::to_string(lv.common_up)});
      }
      const routing::Node& nd = f.node(s);
      for (uint8_t p : lv.ports_in_use) {
        if (p > nd.num_ports) continue;
        if (f.port(f.port_id(s, PortNum{p})).remote.valid()) continue;
        r.odd.push_back({OddLink::Kind::kUnconnectedPort, s, p,
                         port_label(f, s, p) + " is unconnected; port " + std::to_string(p) + " is cabled on " +
                             std::to_string(use[p]) + " of " + std::to_string(lv.switches.size()) + " " +
                             level_name(lv.level) + " switches"});
      }
    }
  }

  // Links by the levels of their ends.
  for (const routing::Link& l : f.links()) {
    int32_t a = level_of(f, rails, f.port(l.a).node);
    int32_t b = level_of(f, rails, f.port(l.b).node);
    ++r.links_by_level[{std::min(a, b), std::max(a, b)}];
  }

  // CAs, hosts, rails.
  r.rails.resize(rails.num_rails);
  for (uint32_t i = 0; i < rails.num_rails; ++i) r.rails[i].rail = static_cast<int32_t>(i);
  std::vector<uint32_t> cas_per_host(rails.hosts.size(), 0);
  for (NodeId c : f.cas()) {
    ++r.cas;
    bool cabled = false;
    const routing::Node& nd = f.node(c);
    for (uint32_t p = 1; p <= nd.num_ports && !cabled; ++p) {
      cabled = f.port(f.port_id(c, PortNum{static_cast<uint8_t>(p)})).remote.valid();
    }
    if (cabled) {
      ++r.cas_cabled;
    } else {
      r.odd.push_back({OddLink::Kind::kCaNotCabled, c, 0, "CA \"" + std::string(f.desc(c)) + "\" has no cabled port"});
    }
    uint32_t h = rails.host[c.value()];
    if (h != routing::kNoHost && h < cas_per_host.size()) ++cas_per_host[h];
    int32_t rail = rails.rail[c.value()];
    if (rail >= 0 && static_cast<uint32_t>(rail) < rails.num_rails) r.rails[rail].cas.push_back(c);
    else ++r.cas_without_rail;
  }
  for (uint32_t n : cas_per_host) ++r.hosts_by_ca_count[n];
  // Leaves come from the sorted level 0, so each rail's list is sorted too.
  if (!r.levels.empty()) {
    for (NodeId s : r.levels[0].switches) {
      int32_t rail = rails.rail[s.value()];
      if (rail >= 0 && static_cast<uint32_t>(rail) < rails.num_rails) r.rails[rail].leaves.push_back(s);
    }
  }
  return r;
}

std::string render_topology_text(const Fabric& f, const RailMap& rails, const TopologyReport& r, bool long_form) {
  std::ostringstream o;
  size_t switch_links = 0, ca_links = 0;
  for (const auto& [key, n] : r.links_by_level) (key.first == kCaLevel ? ca_links : switch_links) += n;

  o << r.source << ": " << count(f.switches().size(), "switch", "switches") << " in "
    << count(r.levels.size(), "level", "levels") << ", " << count(r.cas, "CA", "CAs") << " on "
    << count(rails.hosts.size(), "host", "hosts") << ", " << count(rails.num_rails, "rail", "rails") << ", "
    << count(switch_links, "switch link", "switch links") << ", " << count(ca_links, "CA link", "CA links") << "\n";

  o << "\nswitches\n";
  for (const LevelSummary& lv : r.levels) {
    o << "  level " << lv.level << " (" << level_name(lv.level) << "): " << count(lv.switches.size(), "switch", "switches")
      << ", ports "
      << (lv.ports_in_use.empty() ? "none" : ranges(lv.ports_in_use)) << " in use, "
      << min_max(lv.min_down, lv.max_down) << (lv.level == 0 ? " CA" : " down") << " links";
    if (static_cast<int32_t>(lv.level) < rails.max_level) o << ", " << min_max(lv.min_up, lv.max_up) << " up";
    o << "\n";
    if (long_form) {
      for (NodeId s : lv.switches) o << "    " << guid_string(f.node(s).guid) << "  " << f.desc(s) << "\n";
    } else {
      o << "    " << names_of(f, lv.switches, false) << "\n";
    }
  }
  if (!r.unleveled.empty()) o << "  without level: " << names_of(f, r.unleveled, long_form) << "\n";

  o << "\nCAs: " << r.cas << " (" << r.cas_cabled << " cabled)\n";
  o << "hosts: " << rails.hosts.size();
  if (!r.hosts_by_ca_count.empty()) {
    o << " (";
    bool first = true;
    for (auto it = r.hosts_by_ca_count.rbegin(); it != r.hosts_by_ca_count.rend(); ++it) {
      o << (first ? "" : ", ") << it->second << " with " << it->first << " CA" << (it->first == 1 ? "" : "s");
      first = false;
    }
    o << ")";
  }
  o << "\n";

  o << "\nrails\n";
  for (const RailSummary& rs : r.rails) {
    o << "  rail " << rs.rail << ": " << count(rs.cas.size(), "CA", "CAs") << " on "
      << count(rs.leaves.size(), "leaf", "leaves") << " ("
      << names_of(f, rs.leaves, long_form) << ")\n";
  }
  if (r.cas_without_rail) o << "  without rail: " << r.cas_without_rail << " CAs\n";

  o << "\nlinks\n";
  for (const auto& [key, n] : r.links_by_level) {
    o << "  " << level_name(key.first) << " - " << level_name(key.second) << ": " << n << "\n";
  }
  if (r.parallel_links) o << "  parallel (extra cables between one switch pair): " << r.parallel_links << "\n";

  o << "\nmissing or odd links: " << (r.odd.empty() ? "none" : std::to_string(r.odd.size())) << "\n";
  // Grouped by node so a leaf with a dozen free ports is one line.
  for (size_t i = 0; i < r.odd.size();) {
    const OddLink& odd = r.odd[i];
    if (odd.kind == OddLink::Kind::kUnconnectedPort) {
      std::vector<uint8_t> ports;
      size_t j = i;
      while (j < r.odd.size() && r.odd[j].kind == odd.kind && r.odd[j].node == odd.node) ports.push_back(r.odd[j++].port);
      o << "  unconnected: \"" << f.desc(odd.node) << "\" port" << (ports.size() > 1 ? "s " : " ") << ranges(ports)
        << " (cabled on other " << level_name(level_of(f, rails, odd.node)) << " switches)\n";
      i = j;
    } else {
      o << "  " << odd.detail << "\n";
      ++i;
    }
  }
  o << "misfits: " << (rails.misfits.empty() ? "none" : std::to_string(rails.misfits.size())) << "\n";
  size_t shown = long_form ? rails.misfits.size() : std::min<size_t>(rails.misfits.size(), 20);
  for (size_t i = 0; i < shown; ++i) o << "  " << rails.misfits[i].detail << "\n";
  if (shown < rails.misfits.size()) o << "  ... (" << rails.misfits.size() - shown << " more; --long lists all)\n";
  return o.str();
}

nlohmann::ordered_json render_topology_json(const Fabric& f, const RailMap& rails, const TopologyReport& r) {
  using json = nlohmann::ordered_json;
  auto node_ref = [&](NodeId n) {
    return json{{"guid", guid_string(f.node(n).guid)}, {"desc", std::string(f.desc(n))}, {"name", std::string(f.name(n))}};
  };
  json j;
  j["source"] = r.source;
  size_t switch_links = 0, ca_links = 0;
  for (const auto& [key, n] : r.links_by_level) (key.first == kCaLevel ? ca_links : switch_links) += n;
  j["summary"] = {{"switches", f.switches().size()}, {"levels", r.levels.size()},  {"cas", r.cas},
                  {"cas_cabled", r.cas_cabled},      {"hosts", rails.hosts.size()}, {"rails", rails.num_rails},
                  {"switch_links", switch_links},    {"ca_links", ca_links},       {"parallel_links", r.parallel_links},
                  {"odd", r.odd.size()},             {"misfits", rails.misfits.size()}};

  json levels = json::array();
  for (const LevelSummary& lv : r.levels) {
    json sw = json::array();
    for (NodeId s : lv.switches) sw.push_back(node_ref(s));
    levels.push_back({{"level", lv.level},
                      {"name", level_name(lv.level)},
                      {"ports_in_use", lv.ports_in_use},
                      {"down_links", {{"min", lv.min_down}, {"max", lv.max_down}}},
                      {"up_links", {{"min", lv.min_up}, {"max", lv.max_up}, {"common", lv.common_up}}},
                      {"switches", sw}});
  }
  j["levels"] = levels;
  json unleveled = json::array();
  for (NodeId s : r.unleveled) unleveled.push_back(node_ref(s));
  j["unleveled_switches"] = unleveled;

  json hosts = json::array();
  for (const std::string& h : rails.hosts) hosts.push_back(h);
  j["hosts"] = hosts;

  json cas = json::array();
  for (NodeId c : f.cas()) {
    json cj = node_ref(c);
    uint32_t h = rails.host[c.value()];
    cj["host"] = h != routing::kNoHost && h < rails.hosts.size() ? json(rails.hosts[h]) : json(nullptr);
    int32_t rail = rails.rail[c.value()];
    cj["rail"] = rail >= 0 ? json(rail) : json(nullptr);
    json ports = json::array();
    const routing::Node& nd = f.node(c);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      const routing::Port& pt = f.port(f.port_id(c, PortNum{static_cast<uint8_t>(p)}));
      if (!pt.remote.valid()) continue;
      const routing::Port& rp = f.port(pt.remote);
      ports.push_back({{"port", p}, {"switch", guid_string(f.node(rp.node).guid)}, {"switch_port", rp.num.value}});
    }
    cj["links"] = ports;
    cas.push_back(cj);
  }
  j["cas"] = cas;

  json rj = json::array();
  for (const RailSummary& rs : r.rails) {
    json leaves = json::array();
    for (NodeId s : rs.leaves) leaves.push_back(node_ref(s));
    rj.push_back({{"rail", rs.rail}, {"cas", rs.cas.size()}, {"leaves", leaves}});
  }
  j["rails"] = rj;
  j["cas_without_rail"] = r.cas_without_rail;

  json by_level = json::array();
  for (const auto& [key, n] : r.links_by_level) {
    by_level.push_back({{"from", level_name(key.first)}, {"to", level_name(key.second)}, {"count", n}});
  }
  json links = json::array();
  for (const routing::Link& l : f.links()) {
    const routing::Port& a = f.port(l.a);
    const routing::Port& b = f.port(l.b);
    links.push_back({{"a", guid_string(f.node(a.node).guid)}, {"a_port", a.num.value},
                     {"b", guid_string(f.node(b.node).guid)}, {"b_port", b.num.value}});
  }
  j["links"] = {{"by_level", by_level}, {"parallel", r.parallel_links}, {"all", links}};

  json odd = json::array();
  for (const OddLink& o : r.odd) {
    json oj = {{"kind", odd_kind_name(o.kind)}, {"node", node_ref(o.node)}, {"detail", o.detail}};
    if (o.port) oj["port"] = o.port;
    odd.push_back(oj);
  }
  j["odd"] = odd;
  json misfits = json::array();
  for (const routing::Misfit& m : rails.misfits) {
    misfits.push_back({{"kind", misfit_kind_name(m.kind)},
                       {"node", m.node.valid() ? node_ref(m.node) : json(nullptr)},
                       {"detail", m.detail}});
  }
  j["misfits"] = misfits;
  return j;
}

}  // namespace railyard::cli
