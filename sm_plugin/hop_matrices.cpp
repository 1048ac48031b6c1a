#include "sm_plugin/hop_matrices.h"

#include <algorithm>
#include <functional>
#include <queue>
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
      physp->hop_wf = 1;  // as OpenSM's set_default_hop_wf, so its state is the same
      if (physp->p_remote_physp == nullptr) continue;
      auto it = index.find(physp->p_remote_physp->p_node);
      if (it == index.end() || it->second == s) continue;  // not a switch, or a loopback cable
      const bool healthy = osm_link_is_healthy(physp);
      out[s].push_back({it->second, static_cast<uint8_t>(p), physp->hop_wf, healthy});
      in[it->second].push_back({s, static_cast<uint8_t>(p), physp->hop_wf, healthy});
    }
  }

  // dist[t * n + r] = D(r, t): Dijkstra from t over reversed edges. An
  // unhealthy edge counts only as the last hop into t itself.
  std::vector<uint32_t> dist(static_cast<size_t>(n) * n, kInf);
  using Item = std::pair<uint32_t, uint32_t>;  // (distance, switch)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t* d = dist.data() + static_cast<size_t>(t) * n;
    d[t] = 0;
    queue.push({0, t});
    while (!queue.empty()) {
      auto [dx, x] = queue.top();
      queue.pop();
      if (dx != d[x]) continue;
      for (const Edge& e : in[x]) {
        if (!e.healthy && x != t) continue;
        const uint32_t nd = dx + e.weight;
        if (nd < d[e.to]) {
          d[e.to] = nd;
          queue.push({nd, e.to});
        }
      }
    }
  }

  HopStats stats;
  stats.switches = n;
  for (uint32_t s = 0; s < n; ++s) {
    osm_switch_t* p_sw = sw[s];
    auto set = [&](uint16_t l, uint8_t port, uint32_t hops) -> Status {
      if (l == 0) return {};  // a switch without a LID: nothing to reach
      if (osm_switch_set_hops(p_sw, l, port, static_cast<uint8_t>(std::min<uint32_t>(hops, OSM_NO_PATH - 1))) != 0) {
        return Error{"OpenSM refused hop count for LID " + std::to_string(l) + " port " + std::to_string(port)};
      }
      ++stats.entries;
      return {};
    };
    if (Status st = set(lid[s], 0, 0); !st) return st.error();
    for (const Edge& e : out[s]) {
      if (e.healthy) continue;
      if (Status st = set(lid[e.to], e.port, e.weight); !st) return st.error();
    }
    // Destination-major: each LID's row of this switch is filled in one go.
    for (uint32_t t = 0; t < n; ++t) {
      const uint32_t* d = dist.data() + static_cast<size_t>(t) * n;
      for (const Edge& e : out[s]) {
        if (!e.healthy || d[e.to] == kInf) continue;
        if (Status st = set(lid[t], e.port, e.weight + d[e.to]); !st) return st.error();
      }
    }
  }
  return stats;
}

}  // namespace railyard::sm_plugin
