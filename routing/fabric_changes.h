// FabricChanges: what changed between two fabrics, as values keyed by GUID,
// so that one side can send a fabric once and then only its changes, and the
// other side rebuild the same Fabric (docs/plugin_protocol.md,
// `fabric_changes`).
//
// A node is identified by its node GUID, a link by its end with the lower
// (node GUID, port). A node whose record differs in anything (type, ports,
// GUIDs, description, name, any port's GUID, LID, LMC or state) is sent
// whole; a link whose other end, width, speed or state differs is sent
// whole. A removed node takes its links with it.
//
// The fabric apply_changes() builds has the order OpenSM's snapshot has
// (sm_plugin/subnet_snapshot.h): switches by ascending node GUID, then CAs
// and routers by ascending node GUID; links in the order of their end with
// the lower (node index, port), that end first. So a fabric in that order,
// sent as full_changes() or as changes from a fabric in that order, comes
// back identical (equal fabric_fingerprint), and routes to the same tables.
//
// Pure: no I/O. O(nodes + ports + links) with hashing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

struct PortRecord {
  uint8_t num = 0;
  Guid guid;
  Lid lid;
  uint8_t lmc = 0;
  PortState state = PortState::kUnknown;
  bool operator==(const PortRecord&) const = default;
};

struct NodeRecord {
  NodeType type = NodeType::kCa;
  uint8_t num_ports = 0;
  Guid guid;
  Guid system_guid;
  std::string desc;
  std::string name;
  std::vector<PortRecord> ports;  // 0..num_ports, every one
  bool operator==(const NodeRecord&) const = default;
};

struct LinkEnd {
  Guid node;
  uint8_t port = 0;
  auto operator<=>(const LinkEnd&) const = default;
};

struct LinkRecord {
  LinkEnd a;  // the end with the lower (node GUID, port)
  LinkEnd b;
  LinkWidth width = LinkWidth::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;
  PortState state = PortState::kActive;
  bool operator==(const LinkRecord&) const = default;
};

struct FabricChanges {
  std::vector<Guid> nodes_removed;
  std::vector<NodeRecord> nodes;         // added or changed, whole
  std::vector<LinkEnd> links_removed;    // by their `a` end
  std::vector<LinkRecord> links;         // added or changed, whole
  bool empty() const { return nodes_removed.empty() && nodes.empty() && links_removed.empty() && links.empty(); }
  bool operator==(const FabricChanges&) const = default;
};

NodeRecord node_record(const Fabric& fabric, NodeId node);
LinkRecord link_record(const Fabric& fabric, LinkId link);

// What turns `before` into `after` (both in any order); sorted by GUID.
FabricChanges fabric_changes(const Fabric& before, const Fabric& after);
// Every node and link of `fabric`: its changes from an empty fabric.
FabricChanges full_changes(const Fabric& fabric);

// `base` with `changes` applied, in snapshot order (above). Errors: a change
// that does not fit (a link to a node that is not there, a port beyond the
// node's, a port cabled twice, duplicate LIDs), named.
Result<Fabric> apply_changes(const Fabric& base, const FabricChanges& changes);

}  // namespace railyard::routing
