// Fabric: an immutable snapshot of an InfiniBand subnet.
//
// One model for every entry point (OpenSM's subnet, a topology file, the
// generator). Nodes, ports and links live in flat arrays addressed by 32-bit
// typed indices; every node owns a contiguous run of ports 0..num_ports (port 0
// is the switch management port; CAs keep an unused slot so that
// port_id(node, n) is one addition). Built in O(size) by FabricBuilder and never
// changed afterwards, so it can be shared across threads without locks.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "routing/result.h"
#include "routing/types.h"

namespace railyard::routing {

enum class NodeType : uint8_t { kSwitch, kCa, kRouter };
enum class LinkWidth : uint8_t { kUnknown, k1x, k2x, k4x, k8x, k12x };
enum class LinkSpeed : uint8_t { kUnknown, kSdr, kDdr, kQdr, kFdr10, kFdr, kEdr, kHdr, kNdr, kXdr };
enum class PortState : uint8_t { kUnknown, kDown, kInit, kArmed, kActive };

std::string_view to_string(NodeType t);
std::string_view to_string(LinkWidth w);
std::string_view to_string(LinkSpeed s);
std::string_view to_string(PortState s);
// "0x" and 16 lower-case hex digits: how GUIDs are written everywhere.
std::string to_string(Guid guid);

struct Node {
  NodeType type = NodeType::kCa;
  uint8_t num_ports = 0;  // physical ports are 1..num_ports
  Guid guid;
  Guid system_guid;
  PortId first_port;  // the id of port 0; port n is first_port + n
  uint32_t desc_offset = 0;
  uint32_t desc_len = 0;
  uint32_t name_offset = 0;
  uint32_t name_len = 0;
};

struct Port {
  NodeId node;
  PortNum num;
  uint8_t lmc = 0;
  PortState state = PortState::kUnknown;
  Lid lid;       // base LID: a CA port's own, or a switch's on port 0
  Guid guid;     // port GUID (switch port 0 and CA ports)
  PortId remote; // the other end, invalid when nothing is connected
  LinkId link;
};

struct Link {
  PortId a;
  PortId b;
  LinkWidth width = LinkWidth::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;
  PortState state = PortState::kActive;
};

class FabricBuilder;

class Fabric {
 public:
  Fabric() = default;
  // names_ holds views into strings_; a moved short string (SSO) or a copy
  // lives at a new address, so these re-point the views.
  Fabric(const Fabric& other);
  Fabric(Fabric&& other) noexcept;
  Fabric& operator=(const Fabric& other);
  Fabric& operator=(Fabric&& other) noexcept;
  ~Fabric() = default;

  size_t num_nodes() const { return nodes_.size(); }
  size_t num_ports() const { return ports_.size(); }
  size_t num_links() const { return links_.size(); }

  const Node& node(NodeId n) const { return nodes_[n.value()]; }
  const Port& port(PortId p) const { return ports_[p.value()]; }
  const Link& link(LinkId l) const { return links_[l.value()]; }
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const Port> ports() const { return ports_; }
  std::span<const Link> links() const { return links_; }

  // Switches and CAs (routers count as CAs for routing), in node order.
  std::span<const NodeId> switches() const { return switches_; }
  std::span<const NodeId> cas() const { return cas_; }

  bool is_switch(NodeId n) const { return node(n).type == NodeType::kSwitch; }
  PortId port_id(NodeId n, PortNum p) const { return PortId(node(n).first_port.value() + p.value); }
  // The node on the other end of port p, invalid if unconnected.
  NodeId remote_node(PortId p) const {
    PortId r = port(p).remote;
    return r.valid() ? port(r).node : NodeId();
  }

  std::string_view desc(NodeId n) const;  // node description
  std::string_view name(NodeId n) const;  // record id in the source file ("S-..."), or desc

  // Lookups; invalid ids when absent.
  NodeId find_node_guid(Guid g) const;
  PortId find_port_guid(Guid g) const;
  NodeId find_name(std::string_view name) const;  // by record name or node description
  // The port answering to `lid` (with LMC ranges), invalid if none.
  PortId lid_owner(Lid lid) const {
    return lid.value < lid_owner_.size() ? lid_owner_[lid.value] : PortId();
  }
  Lid max_lid() const { return Lid{static_cast<uint16_t>(lid_owner_.empty() ? 0 : lid_owner_.size() - 1)}; }
  bool has_lids() const { return !lid_owner_.empty(); }

  // The addressable port of a node: port 0 for a switch, else its first
  // connected port (then its first port).
  PortId primary_port(NodeId n) const;

  // Approximate heap bytes held by this snapshot.
  size_t memory_bytes() const;

  // Whether `other` has the same nodes, ports, LIDs and cables as this one,
  // known without comparing them: one was built from the other (or both from
  // a third) by FabricBuilder(base) changing nothing but link states. False
  // says nothing (compare them).
  bool same_cabling(const Fabric& other) const { return cabling_ != 0 && cabling_ == other.cabling_; }

 private:
  friend class FabricBuilder;
  void rebase_names(const char* old_base);
  std::vector<Node> nodes_;
  std::vector<Port> ports_;
  std::vector<Link> links_;
  std::vector<NodeId> switches_;
  std::vector<NodeId> cas_;
  std::string strings_;
  std::vector<std::pair<Guid, NodeId>> node_guids_;  // sorted
  std::vector<std::pair<Guid, PortId>> port_guids_;  // sorted
  std::vector<std::pair<std::string_view, NodeId>> names_;  // sorted; views into strings_
  std::vector<PortId> lid_owner_;  // indexed by LID
  uint64_t cabling_ = 0;  // same_cabling(): set by build(), 0 before
};

// Builds a Fabric in O(size). Errors (a port beyond the node's count, a port
// cabled twice, duplicate GUIDs or LIDs) are reported as values with the
// offending node named, never asserted: the input may come from a file or a
// live subnet.
class FabricBuilder {
 public:
  FabricBuilder() = default;
  // Starts from a copy of `base`'s nodes, ports and links (lookups are rebuilt
  // by build()), so a variant of a fabric, e.g. with LIDs assigned, can be made
  // with set_port() without going back to its source.
  explicit FabricBuilder(const Fabric& base);
  void reserve(size_t nodes, size_t ports, size_t links);

  NodeId add_node(NodeType type, uint8_t num_ports, Guid guid, Guid system_guid,
                  std::string_view desc, std::string_view name = {});
  // Sets a port's GUID, base LID and LMC. LID 0 leaves it unassigned.
  Status set_port(NodeId n, PortNum p, Guid guid, Lid lid, uint8_t lmc = 0,
                  PortState state = PortState::kUnknown);
  // Cables port pa of a to port pb of b.
  Result<LinkId> connect(NodeId a, PortNum pa, NodeId b, PortNum pb,
                         LinkWidth width = LinkWidth::kUnknown,
                         LinkSpeed speed = LinkSpeed::kUnknown,
                         PortState state = PortState::kActive);

  // The state of a link already connected (e.g. kDown for a link reported
  // dead: routing ignores it). Out-of-range ids are an error.
  Status set_link_state(LinkId link, PortState state);

  size_t num_nodes() const { return f_.nodes_.size(); }
  const Node& node(NodeId n) const { return f_.nodes_[n.value()]; }
  const Port& port(NodeId n, PortNum p) const { return f_.ports_[f_.nodes_[n.value()].first_port.value() + p.value]; }
  std::string_view node_label(NodeId n) const;

  // Validates and finishes. The builder is left empty.
  Result<Fabric> build();

 private:
  Fabric f_;
  bool cabling_kept_ = false;  // from a base, only link states set since
};

}  // namespace railyard::routing
