#include "sm_plugin/hop_matrices.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace railyard::sm_plugin {

namespace {

constexpr uint32_t kInf = UINT32_MAX;

struct Edge {
  uint32_t to;    // switch index at the far end (out edges) or near end (in edges)
  uint8_t port;   // the near switch's port (out edges)
  uint8_t weight; // hop_wf of the near switch's port
  bool healthy;
};

}  // namespace

Result<HopStats> build_hop_matrices(osm_subn_t& subn) {
  // OpenSM sets every switch port's hop weight (hop_wf) inside its own matrix
  // builder: 1, or from hop_weights_file, which only OpenSM parses.
  if (subn.opt.hop_weights_file != nullptr && *subn.opt.hop_weights_file != '\0') {
    return Error{std::string("hop_weights_file ") + subn.opt.hop_weights_file + " is set"};
  }
  std::vector<osm_switch_t*> sw;
  sw.reserve(cl_qmap_count(&subn.sw_guid_tbl));
  for (cl_map_item_t* it = cl_qmap_head(&subn.sw_guid_tbl); it != cl_qmap_end(&subn.sw_guid_tbl);
       it = cl_qmap_next(it)) {
    // cl_map_item_t is osm_switch_t's first member (OpenSM's convention).
    osm_switch_t* s = reinterpret_cast<osm_switch_t*>(it);
    if (s->p_node != nullptr) sw.push_back(s);
  }
  const auto n = static_cast<uint32_t>(sw.size());
  std::unordered_map<const osm_node_t*, uint32_t> index;
  index.reserve(n);
  for (uint32_t i = 0; i < n; ++i) index.emplace(sw[i]->p_node, i);

  std::vector<uint16_t> lid(n);
  std::vector<std::vector<Edge>> out(n), in(n);
  for (uint32_t s = 0; s < n; ++s) {
    osm_node_t* node = sw[s]->p_node;
    lid[s] = cl_ntoh16(osm_node_get_base_lid(node, 0));
    for (uint32_t p = 1; p < sw[s]->num_ports && p < node->physp_tbl_size; ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
      if (physp == nullptr) continue;
      physp->hop_wf = 1;  // as OpenSM's set_default_hop_wf: every weight is 1
      if (physp->p_remote_physp == nullptr) continue;
      auto it = index.find(physp->p_remote_physp->p_node);
      if (it == index.end() || it->second == s) continue;  // not a switch, or a loopback cable
      const bool healthy = osm_link_is_healthy(physp);
      out[s].push_back({it->second, static_cast<uint8_t>(p), physp->hop_wf, healthy});
      in[it->second].push_back({s, static_cast<uint8_t>(p), physp->hop_wf, healthy});
    }
  }

  // dist[t * n + r] = D(r, t): a breadth-first search from t over reversed
  // edges (every weight is 1, see above). An unhealthy edge counts only as
  // the last hop into t itself.
  std::vector<uint32_t> dist(static_cast<size_t>(n) * n, kInf);
  std::vector<uint32_t> frontier;
  frontier.reserve(n);
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t* d = dist.data() + static_cast<size_t>(t) * n;
    d[t] = 0;
    frontier.assign(1, t);
    for (size_t head = 0; head < frontier.size(); ++head) {
      const uint32_t x = frontier[head];
      for (const Edge& e : in[x]) {
        if (!e.healthy && x != t) continue;
        if (d[e.to] != kInf) continue;
        d[e.to] = d[x] + 1;
        frontier.push_back(e.to);
      }
    }
  }

  // Each (switch, LID) row is computed in a buffer and stored at once:
  // osm_switch_set_hops allocates the row (and checks the LID), then the row
  // is copied over. Rows hold num_ports bytes, OSM_NO_PATH where no port
  // leads, [0] the least — exactly what one osm_switch_set_hops call per
  // entry would leave, without ~64 calls per row.
  HopStats stats;
  stats.switches = n;
  std::vector<uint8_t> row;
  for (uint32_t s = 0; s < n; ++s) {
    osm_switch_t* p_sw = sw[s];
    row.assign(p_sw->num_ports, OSM_NO_PATH);
    for (uint32_t t = 0; t < n; ++t) {
      if (lid[t] == 0) continue;  // a switch without a LID: nothing to reach
      const uint32_t* d = dist.data() + static_cast<size_t>(t) * n;
      std::fill(row.begin(), row.end(), OSM_NO_PATH);
      uint32_t least = t == s ? 0 : kInf;
      uint32_t written = t == s ? 1 : 0;
      for (const Edge& e : out[s]) {
        uint32_t hops;
        if (e.healthy) {
          if (d[e.to] == kInf) continue;
          hops = e.weight + d[e.to];
        } else {
          if (e.to != t) continue;  // unhealthy: only the hop to the neighbour itself
          hops = e.weight;
        }
        hops = std::min<uint32_t>(hops, OSM_NO_PATH - 1);
        row[e.port] = static_cast<uint8_t>(hops);
        least = std::min(least, hops);
        ++written;
      }
      if (written == 0) continue;
      row[0] = static_cast<uint8_t>(least);
      if (osm_switch_set_hops(p_sw, lid[t], 0, row[0]) != 0 || p_sw->hops[lid[t]] == nullptr) {
        return Error{"OpenSM refused hop counts for LID " + std::to_string(lid[t])};
      }
      std::memcpy(p_sw->hops[lid[t]], row.data(), row.size());
      stats.entries += written;
    }
  }
  return stats;
}

}  // namespace railyard::sm_plugin
