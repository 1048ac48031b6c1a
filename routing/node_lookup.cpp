#include "routing/node_lookup.h"

#include <optional>
#include <string>

namespace railyard::routing {

namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

NodeId resolve_node(const Fabric& fabric, std::string_view ref) {
  if (std::optional<uint64_t> guid = policies::parse_guid_ref(ref)) {
    NodeId n = fabric.find_node_guid(Guid{*guid});
    if (n.valid()) return n;
    PortId p = fabric.find_port_guid(Guid{*guid});
    if (p.valid()) return fabric.port(p).node;
  }
  // Falls through for "0x..." that is no GUID here: a description may start so.
  return fabric.find_name(ref);
}

Result<NodeId> find_node(const Fabric& fabric, std::string_view ref) {
  NodeId n = resolve_node(fabric, ref);
  if (!n.valid()) return Error{"unknown node " + quoted(ref)};
  // A GUID names one node by construction (the builder refuses duplicates), as
  // does a record name; descriptions are free text and repeat, e.g. factory
  // defaults. Only the text lookup can be ambiguous.
  bool by_guid = policies::parse_guid_ref(ref) && fabric.desc(n) != ref && fabric.name(n) != ref;
  if (by_guid) return n;
  size_t matches = 0;
  for (size_t i = 0; i < fabric.num_nodes(); ++i) {
    NodeId m(static_cast<uint32_t>(i));
    if (fabric.name(m) == ref || fabric.desc(m) == ref) ++matches;
  }
  if (matches > 1) {
    return Error{"node " + quoted(ref) + " is ambiguous: " + std::to_string(matches) +
                 " nodes have that name or description"};
  }
  return n;
}

Result<PortId> resolve_port(const Fabric& fabric, const policies::PortRef& ref) {
  Result<NodeId> n = find_node(fabric, ref.node);
  if (!n.ok()) return n.error();
  const Node& nd = fabric.node(*n);
  if (ref.port == 0) return Error{"port 0 of " + quoted(ref.node) + " is not a physical port"};
  if (ref.port > nd.num_ports) {
    return Error{"port " + std::to_string(ref.port) + " is beyond " + quoted(ref.node) + "'s " +
                 std::to_string(nd.num_ports) + " ports"};
  }
  return fabric.port_id(*n, PortNum{ref.port});
}

}  // namespace railyard::routing
