#include "sm_plugin/subnet_snapshot.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <cstdint>
#include <vector>

#include "routing/fabric.h"

namespace railyard::sm_plugin {

namespace {

using routing::LinkSpeed;
using routing::LinkWidth;
using routing::NodeType;
using routing::PortState;

uint64_t host_guid(ib_net64_t g) { return cl_ntoh64(g); }

PortState port_state(const osm_physp_t* p) {
  switch (osm_physp_get_port_state(p)) {
    case IB_LINK_DOWN: return PortState::kDown;
    case IB_LINK_INIT: return PortState::kInit;
    case IB_LINK_ARMED: return PortState::kArmed;
    case IB_LINK_ACTIVE:
    case IB_LINK_ACT_DEFER: return PortState::kActive;
    default: return PortState::kUnknown;
  }
}

LinkWidth link_width(const ib_port_info_t& pi) {
  switch (pi.link_width_active) {
    case IB_LINK_WIDTH_ACTIVE_1X: return LinkWidth::k1x;
    case IB_LINK_WIDTH_ACTIVE_2X: return LinkWidth::k2x;
    case IB_LINK_WIDTH_ACTIVE_4X: return LinkWidth::k4x;
    case IB_LINK_WIDTH_ACTIVE_8X: return LinkWidth::k8x;
    case IB_LINK_WIDTH_ACTIVE_12X: return LinkWidth::k12x;
    default: return LinkWidth::kUnknown;
  }
}

LinkSpeed link_speed(const ib_port_info_t& pi) {
  // The extended field, when set, supersedes the base one (IBA 14.2.5.6).
  switch (ib_port_info_get_link_speed_ext_active(&pi)) {
    case IB_LINK_SPEED_EXT_ACTIVE_14: return LinkSpeed::kFdr;
    case IB_LINK_SPEED_EXT_ACTIVE_25: return LinkSpeed::kEdr;
    case IB_LINK_SPEED_EXT_ACTIVE_50: return LinkSpeed::kHdr;
    default: break;
  }
  switch (ib_port_info_get_link_speed_active(&pi)) {
    case IB_LINK_SPEED_ACTIVE_2_5: return LinkSpeed::kSdr;
    case IB_LINK_SPEED_ACTIVE_5: return LinkSpeed::kDdr;
    case IB_LINK_SPEED_ACTIVE_10: return LinkSpeed::kQdr;
    default: return LinkSpeed::kUnknown;
  }
}

// The link's state: DOWN if either end is down, else the less advanced end.
PortState link_state(PortState a, PortState b) {
  if (a == PortState::kDown || b == PortState::kDown) return PortState::kDown;
  if (a == PortState::kUnknown) return b == PortState::kUnknown ? PortState::kActive : b;
  if (b == PortState::kUnknown) return a;
  return std::min(a, b);
}

std::string record_name(NodeType type, uint64_t guid) {
  char buf[24];
  const char prefix = type == NodeType::kSwitch ? 'S' : type == NodeType::kRouter ? 'R' : 'H';
  std::snprintf(buf, sizeof buf, "%c-%016llx", prefix, static_cast<unsigned long long>(guid));
  return buf;
}


template <class T, class F>
void for_each_item(cl_qmap_t& map, F&& f) {
  for (cl_map_item_t* it = cl_qmap_head(&map); it != cl_qmap_end(&map); it = cl_qmap_next(it)) {
    // Every table here keeps its cl_map_item_t as the first member (OpenSM's
    // own convention, "MUST BE FIRST MEMBER"), so the item is the object.
    f(reinterpret_cast<T*>(it));
  }
}

// OpenSM's node objects -> their fabric ids: looked up once or twice per
// port of the subnet (~150,000 times at 16k CAs). Open addressing over a flat
// array: std::unordered_map's chained nodes, a cache miss or two per lookup,
// were a fifth of the fast path's read of the subnet.
class NodeIds {
 public:
  explicit NodeIds(size_t count) {
    size_t slots = 16;
    while (slots < 2 * count) slots *= 2;
    mask_ = slots - 1;
    keys_.assign(slots, nullptr);
    ids_.resize(slots);
  }
  // The first id given for a node stays.
  void insert(const osm_node_t* key, NodeId id) {
    size_t i = slot(key);
    while (keys_[i] != nullptr && keys_[i] != key) i = (i + 1) & mask_;
    if (keys_[i] == key) return;
    keys_[i] = key;
    ids_[i] = id;
  }
  // nullptr when the node is not in the table.
  const NodeId* find(const osm_node_t* key) const {
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &ids_[i];
      if (keys_[i] == nullptr) return nullptr;
    }
  }

 private:
  size_t slot(const osm_node_t* key) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask_;
  }
  size_t mask_ = 0;
  std::vector<const osm_node_t*> keys_;
  std::vector<NodeId> ids_;
};

}  // namespace

Result<SubnetSnapshot> take_snapshot(osm_subn_t& subn) {
  // Nodes: switches first, then CAs and routers, each by ascending GUID.
  std::vector<osm_node_t*> nodes;
  nodes.reserve(cl_qmap_count(&subn.node_guid_tbl));
  for_each_item<osm_switch_t>(subn.sw_guid_tbl, [&](osm_switch_t* sw) {
    if (sw->p_node != nullptr) nodes.push_back(sw->p_node);
  });
  const size_t num_switches = nodes.size();
  for_each_item<osm_node_t>(subn.node_guid_tbl, [&](osm_node_t* n) {
    if (osm_node_get_type(n) != IB_NODE_TYPE_SWITCH) nodes.push_back(n);
  });
  auto by_guid = [](const osm_node_t* a, const osm_node_t* b) {
    return host_guid(osm_node_get_node_guid(a)) < host_guid(osm_node_get_node_guid(b));
  };
  std::sort(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(num_switches), by_guid);
  std::sort(nodes.begin() + static_cast<std::ptrdiff_t>(num_switches), nodes.end(), by_guid);

  routing::FabricBuilder b;
  size_t num_physp = 0;
  for (const osm_node_t* n : nodes) num_physp += n->physp_tbl_size;
  b.reserve(nodes.size(), num_physp, num_physp / 2);

  NodeIds id_of(nodes.size());
  SubnetSnapshot snap;
  std::vector<osm_switch_t*> switch_of_node;
  for (osm_node_t* n : nodes) {
    const uint8_t type_code = osm_node_get_type(n);
    const NodeType type = type_code == IB_NODE_TYPE_SWITCH   ? NodeType::kSwitch
                          : type_code == IB_NODE_TYPE_ROUTER ? NodeType::kRouter
                                                             : NodeType::kCa;
    const uint64_t guid = host_guid(osm_node_get_node_guid(n));
    const char* raw = reinterpret_cast<const char*>(n->node_desc.description);
    std::string_view desc(raw, strnlen(raw, IB_NODE_DESCRIPTION_SIZE));
    if (n->physp_tbl_size == 0 || n->physp_tbl_size > 255) {
      return Error{"node " + routing::to_string(Guid{guid}) + " reports " + std::to_string(n->physp_tbl_size) + " port slots"};
    }
    const auto num_ports = static_cast<uint8_t>(n->physp_tbl_size - 1);
    NodeId id = b.add_node(type, num_ports, Guid{guid}, Guid{host_guid(n->node_info.sys_guid)}, desc,
                           record_name(type, guid));
    id_of.insert(n, id);
    switch_of_node.push_back(type == NodeType::kSwitch ? n->sw : nullptr);
  }

  // Addresses: every port OpenSM knows by GUID (switch port 0, CA/router ports).
  Status status;
  for_each_item<osm_port_t>(subn.port_guid_tbl, [&](osm_port_t* port) {
    if (!status.ok() || port->p_node == nullptr || port->p_physp == nullptr) return;
    const NodeId* it = id_of.find(port->p_node);
    if (it == nullptr) return;  // a node outside the node table: not routable
    uint16_t min_lid = 0, max_lid = 0;
    osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
    uint8_t lmc = 0;
    while (lmc < 7 && (1u << lmc) < static_cast<uint32_t>(max_lid - min_lid + 1)) ++lmc;
    const uint8_t num = osm_physp_get_port_num(port->p_physp);
    status = b.set_port(*it, PortNum{num}, Guid{host_guid(port->guid)}, Lid{min_lid}, lmc,
                        port_state(port->p_physp));
    if (!status.ok()) status = Error{"port " + routing::to_string(Guid{host_guid(port->guid)}) + ": " + status.error().message};
  });
  if (!status.ok()) return status.error();

  // Port states and cables. Each cable is seen from both ends; it is added
  // from the end with the lower (node id, port).
  for (osm_node_t* n : nodes) {
    const NodeId id = *id_of.find(n);  // every node of `nodes` is in it
    for (uint32_t p = 1; p < n->physp_tbl_size; ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(n, p);
      if (physp == nullptr) continue;
      const PortState state = port_state(physp);
      const auto num = PortNum{static_cast<uint8_t>(p)};
      if (b.port(id, num).state == PortState::kUnknown) {
        if (Status s = b.set_port(id, num, Guid{}, b.port(id, num).lid, b.port(id, num).lmc, state); !s) return s.error();
      }
      osm_physp_t* remote = osm_physp_get_remote(physp);
      if (remote == nullptr || !osm_physp_is_valid(remote)) continue;
      const NodeId* rit = id_of.find(osm_physp_get_node_ptr(remote));
      if (rit == nullptr) continue;
      const NodeId rid = *rit;
      const uint8_t rp = osm_physp_get_port_num(remote);
      if (std::pair{rid.value(), rp} < std::pair{id.value(), static_cast<uint8_t>(p)}) continue;
      const PortState ls = link_state(state, port_state(remote));
      if (ls == PortState::kDown) ++snap.down_links;
      auto linked = b.connect(id, num, rid, PortNum{rp}, link_width(physp->port_info), link_speed(physp->port_info), ls);
      if (!linked) return linked.error();
    }
  }

  auto fabric = b.build();
  if (!fabric) return fabric.error();
  snap.fabric = std::move(fabric).value();
  snap.switches.reserve(snap.fabric.switches().size());
  for (NodeId s : snap.fabric.switches()) snap.switches.push_back(switch_of_node[s.value()]);
  return snap;
}

}  // namespace railyard::sm_plugin
