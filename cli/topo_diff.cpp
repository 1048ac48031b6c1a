#include "cli/topo_diff.h"

#include <algorithm>
#include <tuple>

#include "cli/topo_report.h"
#include "routing/rails.h"

namespace railyard::cli {
namespace {

using json = nlohmann::ordered_json;
using routing::Fabric;

// One end of a link, by node GUID and port; ordered so that a link has one key.
struct End {
  Guid node;
  uint8_t port = 0;
  auto operator<=>(const End&) const = default;
};
struct LinkKey {
  End lo, hi;
  auto operator<=>(const LinkKey&) const = default;
};

std::vector<LinkKey> link_keys(const Fabric& f) {
  std::vector<LinkKey> keys;
  keys.reserve(f.num_links());
  for (const routing::Link& l : f.links()) {
    End a{f.node(f.port(l.a).node).guid, f.port(l.a).num.value};
    End b{f.node(f.port(l.b).node).guid, f.port(l.b).num.value};
    keys.push_back(a < b ? LinkKey{a, b} : LinkKey{b, a});
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string end_text(const Fabric& f, End e) {
  NodeId n = f.find_node_guid(e.node);
  std::string desc = n.valid() ? std::string(f.desc(n)) : "?";
  return "\"" + desc + "\"[" + std::to_string(e.port) + "]";
}

json end_json(const Fabric& f, End e) {
  NodeId n = f.find_node_guid(e.node);
  return {{"guid", guid_string(e.node)}, {"port", e.port}, {"desc", n.valid() ? std::string(f.desc(n)) : ""}};
}

TopologyDifference link_difference(const Fabric& f, const LinkKey& k, bool only_in_a) {
  std::string side = only_in_a ? "A" : "B";
  TopologyDifference d;
  d.kind = only_in_a ? "link_only_in_a" : "link_only_in_b";
  d.text = std::string(only_in_a ? "- " : "+ ") + "link " + end_text(f, k.lo) + " <-> " + end_text(f, k.hi) +
           "  (" + guid_string(k.lo.node) + "[" + std::to_string(k.lo.port) + "] <-> " + guid_string(k.hi.node) +
           "[" + std::to_string(k.hi.port) + "]) only in " + side;
  d.detail = {{"a", end_json(f, k.lo)}, {"b", end_json(f, k.hi)}};
  return d;
}

std::string node_text(const Fabric& f, NodeId n) {
  return std::string(routing::to_string(f.node(n).type)) + " \"" + std::string(f.desc(n)) + "\" " +
         guid_string(f.node(n).guid);
}

}  // namespace

std::vector<TopologyDifference> diff_topologies(const Fabric& a, const Fabric& b, const policies::RailNaming& naming) {
  std::vector<TopologyDifference> out;

  // Nodes: presence, type and port count, CA port GUIDs.
  auto by_guid = [](const Fabric& f) {
    std::vector<std::pair<Guid, NodeId>> v;
    v.reserve(f.num_nodes());
    for (uint32_t i = 0; i < f.num_nodes(); ++i) v.emplace_back(f.node(NodeId(i)).guid, NodeId(i));
    std::sort(v.begin(), v.end());
    return v;
  };
  auto na = by_guid(a), nb = by_guid(b);
  std::vector<std::pair<NodeId, NodeId>> common;
  size_t i = 0, j = 0;
  while (i < na.size() || j < nb.size()) {
    if (j == nb.size() || (i < na.size() && na[i].first < nb[j].first)) {
      out.push_back({"node_only_in_a", "- node " + node_text(a, na[i].second) + " only in A",
                     {{"guid", guid_string(na[i].first)}, {"desc", std::string(a.desc(na[i].second))}}});
      ++i;
    } else if (i == na.size() || nb[j].first < na[i].first) {
      out.push_back({"node_only_in_b", "+ node " + node_text(b, nb[j].second) + " only in B",
                     {{"guid", guid_string(nb[j].first)}, {"desc", std::string(b.desc(nb[j].second))}}});
      ++j;
    } else {
      common.emplace_back(na[i].second, nb[j].second);
      ++i;
      ++j;
    }
  }
  for (auto [x, y] : common) {
    const routing::Node& nx = a.node(x);
    const routing::Node& ny = b.node(y);
    if (nx.type != ny.type || nx.num_ports != ny.num_ports) {
      out.push_back({"node_changed",
                     "~ node " + guid_string(nx.guid) + ": " + std::string(routing::to_string(nx.type)) + " with " +
                         std::to_string(nx.num_ports) + " ports in A, " + std::string(routing::to_string(ny.type)) +
                         " with " + std::to_string(ny.num_ports) + " ports in B",
                     {{"guid", guid_string(nx.guid)},
                      {"a", {{"type", routing::to_string(nx.type)}, {"ports", nx.num_ports}}},
                      {"b", {{"type", routing::to_string(ny.type)}, {"ports", ny.num_ports}}}}});
      continue;
    }
    if (nx.type == routing::NodeType::kSwitch) continue;
    for (uint32_t p = 1; p <= nx.num_ports; ++p) {
      Guid gx = a.port(a.port_id(x, PortNum{static_cast<uint8_t>(p)})).guid;
      Guid gy = b.port(b.port_id(y, PortNum{static_cast<uint8_t>(p)})).guid;
      if (gx.valid() && gy.valid() && gx != gy) {
        out.push_back({"port_guid_changed",
                       "~ port \"" + std::string(a.desc(x)) + "\"[" + std::to_string(p) + "]: GUID " +
                           guid_string(gx) + " in A, " + guid_string(gy) + " in B",
                       {{"node", guid_string(nx.guid)}, {"port", p}, {"a", guid_string(gx)}, {"b", guid_string(gy)}}});
      }
    }
  }

  // Links.
  auto la = link_keys(a), lb = link_keys(b);
  i = j = 0;
  while (i < la.size() || j < lb.size()) {
    if (j == lb.size() || (i < la.size() && la[i] < lb[j])) {
      out.push_back(link_difference(a, la[i++], true));
    } else if (i == la.size() || lb[j] < la[i]) {
      out.push_back(link_difference(b, lb[j++], false));
    } else {
      ++i;
      ++j;
    }
  }

  // Host and rail of every CA present in both.
  routing::RailMap ra = routing::map_rails(a, naming);
  routing::RailMap rb = routing::map_rails(b, naming);
  auto host_of = [](const routing::RailMap& r, NodeId n) {
    uint32_t h = r.host[n.value()];
    return h != routing::kNoHost && h < r.hosts.size() ? r.hosts[h] : std::string();
  };
  auto rail_json = [](int32_t rail) { return rail >= 0 ? json(rail) : json(nullptr); };
  for (auto [x, y] : common) {
    if (a.is_switch(x) || b.is_switch(y)) continue;
    std::string hx = host_of(ra, x), hy = host_of(rb, y);
    int32_t rx = ra.rail[x.value()], ry = rb.rail[y.value()];
    if (hx == hy && rx == ry) continue;
    auto show = [](const std::string& h, int32_t r) {
      return (h.empty() ? std::string("no host") : "host " + h) + " rail " + (r >= 0 ? std::to_string(r) : "none");
    };
    out.push_back({"ca_mapping_changed",
                   "~ CA " + guid_string(a.node(x).guid) + " (\"" + std::string(a.desc(x)) + "\"): " + show(hx, rx) +
                       " in A, " + show(hy, ry) + " in B (B's description \"" + std::string(b.desc(y)) + "\")",
                   {{"guid", guid_string(a.node(x).guid)},
                    {"a", {{"desc", std::string(a.desc(x))}, {"host", hx}, {"rail", rail_json(rx)}}},
                    {"b", {{"desc", std::string(b.desc(y))}, {"host", hy}, {"rail", rail_json(ry)}}}}});
  }
  return out;
}

}  // namespace railyard::cli
