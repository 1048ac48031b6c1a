// Hop matrices: OpenSM's min-hop tables (p_sw->hops), computed the fast way.
//
// OpenSM keeps, for every switch, the hop count to every switch LID through
// each of its ports (hops[lid][port], hops[lid][0] = the least). With
// build_lid_matrices NULL OpenSM fills them itself by Bellman-Ford-style
// rounds over all switch pairs through function calls, which measured ~8 s of
// the routing stage (OpenSM's lock held) at 640 switches / 8,192 CAs.
//
// What OpenSM reads (3.3.23): one row per (switch, switch LID) — CA LIDs are
// resolved through the switch they hang off — with every port, not only the
// least: multicast (osm_switch_recommend_mcast_path) takes the first port
// whose count equals hops[lid][0], its tree root search reads hops[lid][0],
// osm_switch_recommend_path (minhop, a fallback) and the lid-matrix / LFT
// dumps read every port. SA PathRecords walk the LFTs, not these matrices.
// A pair with no path leaves its row absent or all OSM_NO_PATH.
//
// What is written: after a railyard pass the multicast trees are the
// plugin's (mcast_tree.h, the same choices answered from the distances
// here: least_hops, hop_count, first_least_port), minhop's fallback builds
// its own matrices, so only the dumps would read the rows: build() writes
// them when asked to (the routing pass asks when OSM_LOG_ROUTING is on),
// else it works out the distances alone.
//
// Same values as osm_ucast_mgr_build_lid_matrices (OpenSM 3.3.23):
//  - a switch's own base LID: 0 hops at port 0;
//  - port p of switch s cabled to switch r (r != s), weight w = p's hop_wf,
//    which is 1 (set here, as OpenSM does); with a hop_weights_file the
//    plugin declines and OpenSM builds the matrices:
//    * healthy link (osm_link_is_healthy): hops[lid(t)][p] = w + D(r, t) for
//      every switch t that r reaches;
//    * unhealthy link: only hops[lid(r)][p] = w (OpenSM's hop 0/1 step does
//      not look at health; its propagation step skips unhealthy links);
//  - D(r, t) = least hops from r to t: 0 for t itself, w for a direct cable
//    to t of any health, else through healthy links only.
//
// How (O(levels x links x switches / 64) for the distances, then one pass
// over the rows; measured in docs/hop_matrices.md):
//  - D for all pairs at once by a bit-parallel breadth-first search: R_k[x],
//    the set of switches within k hops of x, is a bitset; R_{k+1}[x] = R_k[x]
//    | the R_k of x's healthy neighbours. A bit that appears at level k gives
//    D = k. Kept as one byte per pair, the source's row contiguous.
//  - Rows are built 64 targets at a time (their distances from every switch
//    stay in cache), switch by switch: one column per port, 1 + D(y, .) for
//    the cable to y, transposed into rows (SSE2 where there is SSE2), each
//    stored whole into OpenSM's array: num_ports bytes, OSM_NO_PATH where no
//    port leads, so nothing another engine left in a row survives.
//  - Allocated once: a row missing is allocated as osm_switch_set_hops does
//    it (malloc of num_ports bytes, which OpenSM frees with the switch; the
//    LIDs are checked against OpenSM's arrays first), without its memset,
//    since the row is then stored whole; later sweeps
//    find it (osm_switch_prepare_path_rebuild only clears rows) and overwrite
//    it in place. Nothing is allocated after the first sweep unless switches
//    or LIDs are new.
//  - Reused when unchanged: between sweeps the object keeps its buffers and
//    the switch graph it saw; when the graph (switches, LIDs, cables, link
//    health) is the same, the distances are reused and only the rows are
//    written again (OpenSM clears them before every routing pass).
// Runs under OpenSM's lock (exclusive, held by osm_ucast_mgr_process), on
// OpenSM's thread: single-threaded on purpose (the writes are memory-bound).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "routing/result.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

struct HopStats {
  uint32_t switches = 0;
  uint64_t entries = 0;         // (switch, LID, port) hop counts written
  uint64_t rows_allocated = 0;  // rows OpenSM did not have yet (first sweep, new switches)
  bool rows_written = false;    // false: distances only (build's `rows`)
  uint32_t arrays_prefaulted = 0;  // switches' hops[] arrays new since the last build, faulted in for writing
  bool distances_reused = false;
  double distances_ms = 0;      // switch graph + all-pairs distances
  double rows_ms = 0;           // writing OpenSM's rows
  double cpu_ms = 0;            // CPU time of the whole build, both threads (wall time beyond it: waiting for a core)
};

class HopMatrices {
 public:
  // Errors, before anything is written, when a hop_weights_file is configured
  // or the switches' LIDs do not fit OpenSM's arrays (a LID beyond max_lid_ho,
  // two switches on one LID); errors part-way only when OpenSM cannot
  // allocate a row. Either way the caller lets OpenSM build the matrices
  // (its builder only lowers counts, and every count written here is exact).
  // With `rows` false only the distances are worked out: OpenSM reads no
  // row when the plugin builds the multicast trees (mcast_tree.h) and no
  // dump is written (the dumps need OSM_LOG_ROUTING); the rows OpenSM has
  // stay as osm_switch_prepare_path_rebuild left them (absent or all
  // OSM_NO_PATH: "no path", which only the dumps would print).
  Result<HopStats> build(osm_subn_t& subn, bool rows = true);

  // What OpenSM's row hops[lid][port] holds (or would hold, when the rows
  // were not written) after the last successful build, answered from its
  // distances: port 0 the least over all ports, 0 at a switch's own LID,
  // OSM_NO_PATH where there is no row. OSM_NO_PATH too for a switch or a LID
  // that build() did not see (a switch is recognised by its object and node
  // GUID, never by its object alone). current() is false until a build
  // succeeds, and after one that failed.
  bool current() const { return have_distances_; }
  uint8_t least_hops(const osm_switch_t* sw, uint16_t lid) const;
  uint8_t hop_count(const osm_switch_t* sw, uint16_t lid, uint8_t port) const;
  // osm_switch_recommend_mcast_path's choice toward a switch LID: the
  // lowest port (1 and up) whose count equals the least; OSM_NO_PATH if
  // there is no path or `sw` is the LID's own switch.
  uint8_t first_least_port(const osm_switch_t* sw, uint16_t lid) const;

  // The same by switch index, for a search over many pairs: the index of a
  // switch object or of a switch LID in the last build (kNoIndex: none),
  // and least_hops between two indices (valid ones, current() true).
  static constexpr uint32_t kNoIndex = UINT32_MAX;
  uint32_t index_of(const osm_switch_t* sw) const;
  uint32_t index_of_lid(uint16_t lid) const {
    return lid < index_by_lid_.size() ? index_by_lid_[lid] : kNoIndex;
  }
  uint8_t least_hops_between(uint32_t s, uint32_t t) const { return dist_[s * stride_ + t]; }

 private:
  struct Edge {
    uint32_t to;    // switch index at the far end
    uint8_t port;   // the near switch's port
    bool healthy;
    bool operator==(const Edge&) const = default;
  };

  // Reads the switches and their cables into switches_/lids_/edge_begin_/
  // edges_ (switch indices in LID order). Returns false if unchanged since
  // the last call (same objects, LIDs, cables and health).
  bool read_graph(osm_subn_t& subn);
  void compute_distances();
  Result<uint64_t> write_rows(uint32_t first, uint32_t last, uint32_t targets) const;
  // write_rows of switches [0, n) in two halves at once; the worker's CPU
  // time goes to *worker_cpu_ms.
  Result<uint64_t> write_all_rows(uint32_t n, uint32_t targets, double* worker_cpu_ms) const;

  uint8_t edge_hops(const Edge& edge, uint32_t t) const;

  std::vector<osm_switch_t*> switches_;
  std::vector<uint16_t> lids_;          // per switch index; 0 = none
  std::vector<uint64_t> guids_;         // per switch index: its node GUID (network order)
  std::unordered_map<const osm_switch_t*, uint32_t> index_;  // switch object -> index
  std::vector<uint32_t> index_by_lid_;  // LID -> switch index, kNoIndex where no switch has it
  std::vector<uint32_t> edge_begin_;    // CSR: out edges of i in [edge_begin_[i], edge_begin_[i+1])
  std::vector<Edge> edges_;
  // The previous sweep's graph, for reuse.
  std::vector<osm_switch_t*> prev_switches_;
  std::vector<uint16_t> prev_lids_;
  std::vector<uint32_t> prev_edge_begin_;
  std::vector<Edge> prev_edges_;
  bool have_distances_ = false;
  // dist_[x * n + t] = D(x, t), OSM_NO_PATH if t is out of reach.
  std::vector<uint8_t> dist_;
  size_t stride_ = 0;  // of dist_: n rounded up to 64
  std::vector<uint32_t> reach_count_;   // per switch: targets with a LID it reaches
  std::vector<uint64_t> reach_, next_;  // bitsets, n x words
  std::vector<uint32_t> neighbours_begin_, neighbours_;  // healthy, deduplicated
  struct RowArray {
    uint8_t** hops;   // the switch's hops[], indexed by LID
    uint32_t width;   // num_ports
    uint32_t length;  // num_hops
    bool fresh;       // not seen by an earlier build: fault it in for writing first (write_rows)
  };
  std::vector<RowArray> row_arrays_;  // per switch, read once per build
  std::unordered_map<uint8_t**, uint32_t> seen_arrays_;  // hops[] arrays of the last build, and their length
};

}  // namespace railyard::sm_plugin
