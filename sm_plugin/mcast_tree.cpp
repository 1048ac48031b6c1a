#include "sm_plugin/mcast_tree.h"

#include <cinttypes>
#include <algorithm>
#include <exception>
#include <unordered_map>
#include <vector>

extern "C" {
#define delete delete_
#include <opensm/osm_mcast_mgr.h>
#include <opensm/osm_mcast_tbl.h>
#include <opensm/osm_multicast.h>
#undef delete
}

namespace railyard::sm_plugin {

namespace {

// OpenSM's bound on a tree's depth (mcast_mgr_branch: the spec's 64 hops).
constexpr uint8_t kMaxDepth = 64;

uint64_t guid_of(const osm_switch_t* sw) { return cl_ntoh64(osm_node_get_node_guid(sw->p_node)); }

class TreeBuilder {
 public:
  TreeBuilder(osm_sm_t& sm, uint16_t mlid, const HopMatrices& hops, const OsmLogger& log, McastTreeStats& stats)
      : sm_(sm), mlid_(mlid), hops_(hops), log_(log), stats_(stats) {}

  // The root: among multicast-capable switches in GUID order (sw_guid_tbl),
  // the first whose farthest member is nearest. A member switch counts its
  // least hops, a switch with member CAs behind it one more (unless the
  // switch itself is a member too), as mcast_mgr_compute_max_hops.
  osm_switch_t* find_root(const std::vector<osm_port_t*>& members) const {
    // Per member switch: 0 if the switch itself is a member, else 1.
    std::unordered_map<const osm_switch_t*, uint32_t> extra;
    for (const osm_port_t* port : members) {
      if (port->p_node->sw != nullptr) {
        extra[port->p_node->sw] = 0;
      } else if (port->p_physp != nullptr && port->p_physp->p_remote_physp != nullptr &&
                 port->p_physp->p_remote_physp->p_node->sw != nullptr) {  // not a CA behind a CA
        extra.emplace(port->p_physp->p_remote_physp->p_node->sw, 1);
      }
    }
    struct Target {
      uint32_t index;  // kNoIndex: a LID the distances do not know, OSM_NO_PATH from everywhere
      uint32_t extra;
    };
    std::vector<Target> targets;
    targets.reserve(extra.size());
    // By LID, as OpenSM reads hops[lid]: a switch without one is out of reach.
    for (const auto& [sw, e] : extra) {
      targets.push_back({hops_.index_of_lid(cl_ntoh16(osm_node_get_base_lid(sw->p_node, 0))), e});
    }

    osm_switch_t* best = nullptr;
    uint32_t best_hops = 10000;  // OpenSM's start: any count beats it
    cl_qmap_t& table = sm_.p_subn->sw_guid_tbl;
    for (cl_map_item_t* it = cl_qmap_head(&table); it != cl_qmap_end(&table); it = cl_qmap_next(it)) {
      auto* sw = reinterpret_cast<osm_switch_t*>(it);  // map_item is osm_switch_t's first member
      if (!osm_switch_supports_mcast(sw)) continue;
      const uint32_t c = hops_.index_of(sw);
      uint32_t farthest = 0;
      for (const Target& t : targets) {
        const uint32_t least = c == HopMatrices::kNoIndex || t.index == HopMatrices::kNoIndex
                                   ? OSM_NO_PATH
                                   : hops_.least_hops_between(c, t.index);
        farthest = std::max(farthest, least + t.extra);
      }
      if (farthest < best_hops) {
        best = sw;
        best_hops = farthest;
      }
    }
    return best;
  }

  // mcast_mgr_branch: the members `list` reached through `sw`, entered at
  // `upstream` (0 at the root) at `depth` switches from the root.
  void branch(osm_switch_t* sw, std::vector<osm_port_t*>& list, uint8_t depth, uint8_t upstream) {
    ++depth;
    if (depth >= kMaxDepth) {
      log_.log(LogLevel::kError, "multicast MLID 0x%X: tree deeper than %u switches at 0x%016" PRIx64
               "; %zu members left out", mlid_, kMaxDepth, guid_of(sw), list.size());
      stats_.unrouted += static_cast<uint32_t>(list.size());
      return;
    }
    if (depth > stats_.depth) stats_.depth = depth;
    if (!osm_switch_supports_mcast(sw)) {
      log_.log(LogLevel::kError, "multicast MLID 0x%X: switch 0x%016" PRIx64 " %s does not support multicast; "
               "%zu members left out", mlid_, guid_of(sw), sw->p_node->print_desc, list.size());
      stats_.unrouted += static_cast<uint32_t>(list.size());
      return;
    }
    ++stats_.switches;
    // Members by the port that leads to them (mcast_mgr_subdivide).
    const uint32_t ports = sw->num_ports;
    std::vector<std::vector<osm_port_t*>> by_port(ports);
    for (osm_port_t* member : list) {
      const uint8_t port = recommend(sw, member);
      if (port == OSM_NO_PATH || port >= ports) {
        log_.log(LogLevel::kError, "multicast MLID 0x%X: no path from switch 0x%016" PRIx64 " %s to port 0x%016" PRIx64
                 " (LID %u)", mlid_, guid_of(sw), sw->p_node->print_desc, cl_ntoh64(osm_port_get_guid(member)),
                 cl_ntoh16(osm_port_get_base_lid(member)));
        ++stats_.unrouted;
        continue;
      }
      by_port[port].push_back(member);
    }
    list.clear();
    list.shrink_to_fit();

    osm_mcast_tbl_t* table = osm_switch_get_mcast_tbl_ptr(sw);
    if (depth > 1) osm_mcast_tbl_set(table, mlid_, upstream);
    for (uint32_t p = 0; p < ports; ++p) {
      if (by_port[p].empty()) continue;
      if (p == 0) {  // the switch itself is a member
        osm_mcast_tbl_set(table, mlid_, 0);
        continue;
      }
      uint8_t remote_port = 0;
      osm_node_t* remote = osm_node_get_remote_node(sw->p_node, static_cast<uint8_t>(p), &remote_port);
      if (remote == nullptr) {
        log_.log(LogLevel::kError, "multicast MLID 0x%X: switch 0x%016" PRIx64 " port %u leads nowhere; "
                 "%zu members left out", mlid_, guid_of(sw), p, by_port[p].size());
        stats_.unrouted += static_cast<uint32_t>(by_port[p].size());
        continue;
      }
      osm_mcast_tbl_set(table, mlid_, static_cast<uint8_t>(p));
      if (remote->sw != nullptr) branch(remote->sw, by_port[p], depth, remote_port);
      // else: a CA on this port, a leaf of the tree
    }
  }

 private:
  // osm_switch_recommend_mcast_path with ignore_existing: 0 for the switch
  // itself, the CA's port on its own switch, else the first port with the
  // least hops toward the member's switch.
  uint8_t recommend(const osm_switch_t* sw, const osm_port_t* member) const {
    uint16_t lid = 0;
    if (member->p_node->sw != nullptr) {
      if (member->p_node->sw == sw) return 0;
      lid = cl_ntoh16(osm_port_get_base_lid(member));
    } else {
      const osm_physp_t* physp = member->p_physp;
      if (physp == nullptr || physp->p_remote_physp == nullptr || physp->p_remote_physp->p_node->sw == nullptr) {
        return OSM_NO_PATH;
      }
      if (physp->p_remote_physp->p_node->sw == sw) return physp->p_remote_physp->port_num;
      lid = cl_ntoh16(osm_node_get_base_lid(physp->p_remote_physp->p_node, 0));
    }
    return hops_.first_least_port(sw, lid);
  }

  osm_sm_t& sm_;
  const uint16_t mlid_;
  const HopMatrices& hops_;
  const OsmLogger& log_;
  McastTreeStats& stats_;
};

}  // namespace

ib_api_status_t build_mcast_tree(osm_sm_t& sm, osm_mgrp_box_t& mbox, const HopMatrices& hops, const OsmLogger& log,
                                 McastTreeStats* stats) {
  McastTreeStats local;
  McastTreeStats& st = stats != nullptr ? *stats : local;
  st = {};
  osm_purge_mtree(&sm, &mbox);  // a tree OpenSM's own builder left, before this engine was used

  // The members, each port once (OpenSM's own list: all groups of the MLID).
  cl_qlist_t list;
  cl_qmap_t map;
  const int made = osm_mcast_make_port_list_and_map(&list, &map, &mbox);
  std::vector<osm_port_t*> members;
  try {
    members.reserve(cl_qlist_count(&list));
    for (cl_list_item_t* it = cl_qlist_head(&list); it != cl_qlist_end(&list); it = cl_qlist_next(it)) {
      members.push_back(reinterpret_cast<osm_mcast_work_obj_t*>(it)->p_port);  // list_item is its first member
    }
  } catch (const std::exception&) {
    osm_mcast_drop_port_list(&list);
    throw;
  }
  osm_mcast_drop_port_list(&list);
  if (made != 0) {
    log.log(LogLevel::kError, "multicast MLID 0x%X: no memory for its member list", mbox.mlid);
    return IB_ERROR;
  }
  st.members = static_cast<uint32_t>(members.size());
  if (members.size() < 2) return IB_SUCCESS;  // nothing to connect

  TreeBuilder builder(sm, mbox.mlid, hops, log, st);
  osm_switch_t* root = builder.find_root(members);
  if (root == nullptr) {
    log.log(LogLevel::kError, "multicast MLID 0x%X: no multicast-capable switch for its tree", mbox.mlid);
    return IB_ERROR;
  }
  st.root_guid = guid_of(root);
  builder.branch(root, members, 0, 0);
  return IB_SUCCESS;
}

}  // namespace railyard::sm_plugin
