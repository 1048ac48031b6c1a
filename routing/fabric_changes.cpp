#include "routing/fabric_changes.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace railyard::routing {

namespace {

LinkEnd end_of(const Fabric& f, PortId p) {
  const Port& port = f.port(p);
  return LinkEnd{f.node(port.node).guid, port.num.value};
}

std::unordered_map<Guid, NodeId> nodes_by_guid(const Fabric& f) {
  std::unordered_map<Guid, NodeId> out;
  out.reserve(f.num_nodes());
  for (uint32_t i = 0; i < f.num_nodes(); ++i) out.emplace(f.node(NodeId(i)).guid, NodeId(i));
  return out;
}

std::map<LinkEnd, LinkRecord> links_by_end(const Fabric& f) {
  std::map<LinkEnd, LinkRecord> out;
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    LinkRecord r = link_record(f, LinkId(i));
    out.emplace(r.a, std::move(r));
  }
  return out;
}

std::string end_text(const LinkEnd& e) { return to_string(e.node) + "[" + std::to_string(e.port) + "]"; }

}  // namespace

NodeRecord node_record(const Fabric& f, NodeId id) {
  const Node& n = f.node(id);
  NodeRecord r{n.type, n.num_ports, n.guid, n.system_guid, std::string(f.desc(id)), std::string(f.name(id)), {}};
  r.ports.reserve(n.num_ports + 1u);
  for (uint32_t p = 0; p <= n.num_ports; ++p) {
    const Port& port = f.port(f.port_id(id, PortNum{static_cast<uint8_t>(p)}));
    r.ports.push_back(PortRecord{static_cast<uint8_t>(p), port.guid, port.lid, port.lmc, port.state});
  }
  return r;
}

LinkRecord link_record(const Fabric& f, LinkId id) {
  const Link& l = f.link(id);
  LinkEnd a = end_of(f, l.a), b = end_of(f, l.b);
  if (b < a) std::swap(a, b);
  return LinkRecord{a, b, l.width, l.speed, l.state};
}

FabricChanges fabric_changes(const Fabric& before, const Fabric& after) {
  FabricChanges c;
  const auto old_nodes = nodes_by_guid(before);
  const auto new_nodes = nodes_by_guid(after);
  for (const auto& [guid, id] : old_nodes) {
    if (!new_nodes.contains(guid)) c.nodes_removed.push_back(guid);
  }
  for (const auto& [guid, id] : new_nodes) {
    NodeRecord now = node_record(after, id);
    auto it = old_nodes.find(guid);
    if (it == old_nodes.end() || node_record(before, it->second) != now) c.nodes.push_back(std::move(now));
  }
  std::sort(c.nodes_removed.begin(), c.nodes_removed.end());
  std::sort(c.nodes.begin(), c.nodes.end(), [](const NodeRecord& a, const NodeRecord& b) { return a.guid < b.guid; });

  const auto old_links = links_by_end(before);
  const auto new_links = links_by_end(after);
  for (const auto& [end, rec] : old_links) {
    if (!new_links.contains(end)) c.links_removed.push_back(end);
  }
  for (const auto& [end, rec] : new_links) {
    auto it = old_links.find(end);
    if (it == old_links.end() || it->second != rec) c.links.push_back(rec);
  }
  return c;
}

FabricChanges full_changes(const Fabric& fabric) { return fabric_changes(Fabric{}, fabric); }

Result<Fabric> apply_changes(const Fabric& base, const FabricChanges& changes) {
  // The result as records, by GUID (ordered maps: the snapshot order below).
  std::map<Guid, NodeRecord> nodes;
  for (uint32_t i = 0; i < base.num_nodes(); ++i) {
    NodeRecord r = node_record(base, NodeId(i));
    nodes.emplace(r.guid, std::move(r));
  }
  const std::unordered_set<Guid> removed(changes.nodes_removed.begin(), changes.nodes_removed.end());
  for (const Guid g : changes.nodes_removed) nodes.erase(g);
  for (const NodeRecord& r : changes.nodes) {
    if (r.ports.size() != r.num_ports + 1u) {
      return Error{"node " + to_string(r.guid) + ": " + std::to_string(r.ports.size()) + " port records for " +
                   std::to_string(r.num_ports) + " ports"};
    }
    nodes.insert_or_assign(r.guid, r);
  }
  std::map<LinkEnd, LinkRecord> links = links_by_end(base);
  for (const LinkEnd& e : changes.links_removed) links.erase(e);
  for (const LinkRecord& r : changes.links) links.insert_or_assign(r.a, r);

  FabricBuilder b;
  size_t ports = 0;
  for (const auto& [g, r] : nodes) ports += r.ports.size();
  b.reserve(nodes.size(), ports, links.size());
  std::unordered_map<Guid, NodeId> ids;
  ids.reserve(nodes.size());
  for (const bool switches : {true, false}) {
    for (const auto& [g, r] : nodes) {
      if ((r.type == NodeType::kSwitch) != switches) continue;
      ids.emplace(g, b.add_node(r.type, r.num_ports, r.guid, r.system_guid, r.desc, r.name));
    }
  }
  for (const auto& [g, r] : nodes) {
    const NodeId id = ids.at(g);
    for (const PortRecord& p : r.ports) {
      if (p == PortRecord{p.num}) continue;  // nothing set
      if (Status s = b.set_port(id, PortNum{p.num}, p.guid, p.lid, p.lmc, p.state); !s) {
        return Error{"node " + to_string(g) + ": " + s.error().message};
      }
    }
  }
  // Links from their end with the lower (node index, port), in that order.
  struct Cable {
    NodeId a, b;
    uint8_t pa, pb;
    const LinkRecord* rec;
  };
  std::vector<Cable> cables;
  cables.reserve(links.size());
  for (const auto& [end, r] : links) {
    auto ia = ids.find(r.a.node), ib = ids.find(r.b.node);
    if (ia == ids.end() || ib == ids.end()) {
      const Guid missing = ia == ids.end() ? r.a.node : r.b.node;
      if (removed.contains(missing)) continue;  // its node's removal took it
      return Error{"link " + end_text(r.a) + " - " + end_text(r.b) + ": no node " + to_string(missing)};
    }
    Cable c{ia->second, ib->second, r.a.port, r.b.port, &r};
    if (std::pair{c.b.value(), c.pb} < std::pair{c.a.value(), c.pa}) {
      std::swap(c.a, c.b);
      std::swap(c.pa, c.pb);
    }
    cables.push_back(c);
  }
  std::sort(cables.begin(), cables.end(), [](const Cable& x, const Cable& y) {
    return std::pair{x.a.value(), x.pa} < std::pair{y.a.value(), y.pa};
  });
  for (const Cable& c : cables) {
    auto linked = b.connect(c.a, PortNum{c.pa}, c.b, PortNum{c.pb}, c.rec->width, c.rec->speed, c.rec->state);
    if (!linked) return Error{"link " + end_text(c.rec->a) + " - " + end_text(c.rec->b) + ": " + linked.error().message};
  }
  return b.build();
}

}  // namespace railyard::routing
