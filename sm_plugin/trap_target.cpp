#include "sm_plugin/trap_target.h"

namespace railyard::sm_plugin {

Result<TrapTarget> read_trap_target(osm_opensm_t* osm, uint16_t lid) {
  struct Unlock {
    osm_opensm_t* osm;
    ~Unlock() { cl_plock_release(&osm->lock); }
  };
  cl_plock_acquire(&osm->lock);
  Unlock unlock{osm};
  osm_port_t* port = osm_get_port_by_lid_ho(&osm->subn, lid);
  if (port == nullptr || port->p_node == nullptr) return Error{"LID " + std::to_string(lid) + " is nobody's"};
  osm_node_t* node = port->p_node;
  if (osm_node_get_type(node) != IB_NODE_TYPE_SWITCH) return Error{"LID " + std::to_string(lid) + " is not a switch's"};
  osm_physp_t* port0 = osm_node_get_physp_ptr(node, 0);
  if (port0 == nullptr) return Error{"switch of LID " + std::to_string(lid) + " has no port 0"};
  const osm_dr_path_t* dr = osm_physp_get_dr_path_ptr(port0);
  if (dr == nullptr || dr->hop_count >= IB_SUBNET_PATH_HOPS_MAX) {
    return Error{"no directed route to the switch of LID " + std::to_string(lid)};
  }
  TrapTarget t;
  t.node_guid = cl_ntoh64(osm_node_get_node_guid(node));
  t.dr_path = "0";
  for (uint8_t h = 1; h <= dr->hop_count; ++h) t.dr_path += "," + std::to_string(dr->path[h]);
  t.m_key = cl_ntoh64(ib_port_info_get_m_key(&port0->port_info));
  const uint8_t n = osm_node_get_num_physp(node);
  for (uint8_t p = 1; p < n; ++p) {
    osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
    if (physp != nullptr && osm_physp_get_remote(physp) != nullptr) t.ports.push_back(p);
  }
  return t;
}

}  // namespace railyard::sm_plugin
