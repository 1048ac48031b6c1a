#include "sm_plugin/hop_matrices.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <sys/mman.h>
#include <unistd.h>

#include "routing/byte_transpose.h"
#include "sm_plugin/elapsed.h"

namespace railyard::sm_plugin {

namespace {

// CPU time of the calling thread: on a loaded machine the wall time also
// counts the time others had the core.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Longest count a row holds: OSM_NO_PATH means "no path".
constexpr uint8_t kMaxHops = OSM_NO_PATH - 1;
// Targets per block of rows, and the widest row (num_ports is a uint8_t).
constexpr uint32_t kChunk = 64;
constexpr uint32_t kMaxPorts = 256;

// col[j] = 1 + d[j] for j < kChunk; OSM_NO_PATH stays, the rest is capped at
// kMaxHops.
void cable_column(const uint8_t* d, uint8_t* col) {
#if defined(__SSE2__)
  const __m128i one = _mm_set1_epi8(1);
  const __m128i cap = _mm_set1_epi8(static_cast<char>(kMaxHops));
  for (uint32_t j = 0; j < kChunk; j += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + j));
    // adds saturates at 0xFF; max(v, cap) keeps OSM_NO_PATH and caps the rest.
    _mm_store_si128(reinterpret_cast<__m128i*>(col + j), _mm_min_epu8(_mm_adds_epu8(v, one), _mm_max_epu8(v, cap)));
  }
#else
  for (uint32_t j = 0; j < kChunk; ++j) col[j] = static_cast<uint8_t>(d[j] + (d[j] < kMaxHops ? 1 : 0));
#endif
}

void min_into(uint8_t* least, const uint8_t* col) {
#if defined(__SSE2__)
  for (uint32_t j = 0; j < kChunk; j += 16) {
    auto* l = reinterpret_cast<__m128i*>(least + j);
    _mm_store_si128(l, _mm_min_epu8(_mm_load_si128(l), _mm_load_si128(reinterpret_cast<const __m128i*>(col + j))));
  }
#else
  for (uint32_t j = 0; j < kChunk; ++j) least[j] = std::min(least[j], col[j]);
#endif
}

// block[j][p] = columns[p][j] for p < padded (a multiple of 16), in 16 x 16
// tiles.
void transpose(const uint8_t (*columns)[kChunk], uint32_t padded, uint8_t (*block)[kMaxPorts]) {
  const uint8_t* src[16];
  uint8_t* dst[16];
  for (uint32_t p0 = 0; p0 < padded; p0 += 16) {
    for (uint32_t j0 = 0; j0 < kChunk; j0 += 16) {
      for (uint32_t i = 0; i < 16; ++i) {
        src[i] = columns[p0 + i] + j0;
        dst[i] = block[j0 + i] + p0;
      }
      routing::transpose16x16(src, dst);
    }
  }
}

// dst[0, width) = row[0, width): OpenSM's row is exactly num_ports bytes.
void store_row(const uint8_t* row, uint32_t width, uint8_t* dst) {
#if defined(__SSE2__)
  if (width >= 16) {
    uint32_t o = 0;
    for (; o + 16 <= width; o += 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + o), _mm_load_si128(reinterpret_cast<const __m128i*>(row + o)));
    }
    if (o < width) {  // the last 16 bytes, overlapping what is already stored
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + width - 16),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + width - 16)));
    }
    return;
  }
#endif
  std::memcpy(dst, row, width);
}

// Faults a switch's new hops[] array in for writing, in one call. OpenSM
// allocates it with malloc and a memset to 0, which the compiler makes a
// calloc, and on fresh pages glibc skips the zeroing: the array's pages are
// then first touched by write_rows reading hops[lid] (the kernel maps its
// zero page) and then by OpenSM writing the row pointer, a copy-on-write
// fault that flushes the TLB of every CPU the process runs on. On the first
// sweep of a 2,000-switch fabric those faults took more than half of the
// time (perf). MADV_POPULATE_WRITE maps the pages writable up front and
// leaves their contents alone; a kernel without it (before 5.14) just says
// EINVAL and the faults happen as before.
void prefault_for_writing(uint8_t** array, uint32_t length) {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (array == nullptr || length == 0 || page == 0) return;
  const auto begin = reinterpret_cast<uintptr_t>(array) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(array + length) + page - 1) & ~(page - 1);
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

// Grows the calling thread's malloc arena ahead of OpenSM's row allocations,
// a block at a time, with its pages faulted in. Each row is a malloc of
// num_ports bytes (41 at radix 40: 4 million of them, ~190 MB, on the first
// sweep of a 2,000-switch fabric). glibc grows a thread's arena (the plugin's
// two writer threads each have their own) only by what the request needs,
// page-aligned: one mprotect(2) every 64 rows (a page of 64-byte chunks),
// each changing the process's mappings under the mm lock the other thread's
// page faults also take, and one page fault per page after it. Taking and
// freeing one block of kReserveBytes makes it one mprotect and one populate
// call per 15 pages: the block borders the arena's top, so the free merges
// it back there, where the next rows are carved. The top then stays far
// below glibc's trim threshold (128 KiB and up), so nothing is given back;
// the free may consolidate the fast bins first (glibc does when the merged
// chunk reaches 64 KiB), which costs little: the writer threads free
// nothing else. Under another allocator it is a harmless malloc/free pair.
class ArenaReserve {
 public:
  // Before a row of `width` bytes is allocated.
  void before_row(uint32_t width) {
    const size_t chunk = std::max<size_t>(32, (width + 8 + 15) / 16 * 16);  // glibc's chunk of it
    if (left_ < chunk) refill();
    left_ = left_ >= chunk ? left_ - chunk : 0;
  }

 private:
  static constexpr size_t kReserveBytes = 60 * 1024;
  void refill() {
    static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    void* block = std::malloc(kReserveBytes);
    if (block == nullptr) {
      left_ = 0;
      return;
    }
    if (page != 0) {
      const uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + page - 1) & ~(page - 1);
      const uintptr_t end = (reinterpret_cast<uintptr_t>(block) + kReserveBytes) & ~(page - 1);
      if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
    }
    std::free(block);
    left_ = kReserveBytes - 64;  // the chunk headers around it
  }
  size_t left_ = 0;
};

}  // namespace

bool HopMatrices::read_graph(osm_subn_t& subn) {
  std::swap(switches_, prev_switches_);
  std::swap(lids_, prev_lids_);
  std::swap(edge_begin_, prev_edge_begin_);
  std::swap(edges_, prev_edges_);

  switches_.clear();
  for (cl_map_item_t* it = cl_qmap_head(&subn.sw_guid_tbl); it != cl_qmap_end(&subn.sw_guid_tbl);
       it = cl_qmap_next(it)) {
    // cl_map_item_t is osm_switch_t's first member (OpenSM's convention).
    osm_switch_t* s = reinterpret_cast<osm_switch_t*>(it);
    if (s->p_node != nullptr) switches_.push_back(s);
  }
  // LID order: a chunk of 64 targets is then a short stretch of each
  // switch's hops[] array (indexed by LID), and the rows allocated for it lie
  // next to each other. Switches without a LID go last (they are no target).
  auto lid_of = [](const osm_switch_t* s) { return cl_ntoh16(osm_node_get_base_lid(s->p_node, 0)); };
  std::stable_sort(switches_.begin(), switches_.end(), [&](const osm_switch_t* a, const osm_switch_t* b) {
    const uint32_t la = lid_of(a), lb = lid_of(b);
    return (la == 0 ? 0x10000u : la) < (lb == 0 ? 0x10000u : lb);
  });
  const auto n = static_cast<uint32_t>(switches_.size());
  std::unordered_map<const osm_node_t*, uint32_t> index;
  index.reserve(n);
  lids_.resize(n);
  guids_.resize(n);
  index_.clear();
  index_.reserve(n);
  uint16_t max_lid = 0;
  for (uint32_t i = 0; i < n; ++i) {
    index.emplace(switches_[i]->p_node, i);
    index_.emplace(switches_[i], i);
    lids_[i] = lid_of(switches_[i]);
    guids_[i] = osm_node_get_node_guid(switches_[i]->p_node);
    max_lid = std::max(max_lid, lids_[i]);
  }
  index_by_lid_.assign(static_cast<size_t>(max_lid) + 1, kNoIndex);
  for (uint32_t i = 0; i < n; ++i) {
    if (lids_[i] != 0) index_by_lid_[lids_[i]] = i;  // shared LIDs: build() declines
  }

  edge_begin_.assign(1, 0);
  edges_.clear();
  for (uint32_t s = 0; s < n; ++s) {
    osm_switch_t* sw = switches_[s];
    osm_node_t* node = sw->p_node;
    for (uint32_t p = 1; p < sw->num_ports && p < node->physp_tbl_size; ++p) {
      osm_physp_t* physp = osm_node_get_physp_ptr(node, p);
      if (physp == nullptr) continue;
      physp->hop_wf = 1;  // as OpenSM's set_default_hop_wf: every weight is 1
      if (physp->p_remote_physp == nullptr) continue;
      auto it = index.find(physp->p_remote_physp->p_node);
      if (it == index.end() || it->second == s) continue;  // not a switch, or a loopback cable
      edges_.push_back({it->second, static_cast<uint8_t>(p), osm_link_is_healthy(physp) != 0});
    }
    edge_begin_.push_back(static_cast<uint32_t>(edges_.size()));
  }
  return !(switches_ == prev_switches_ && lids_ == prev_lids_ && edge_begin_ == prev_edge_begin_ &&
           edges_ == prev_edges_);
}

// All-pairs D by bit-parallel breadth-first search (see the header): every
// weight is 1, so level k of the search is "k hops". reach_ holds R_k, next_
// R_{k+1}; a pair found at level k gets D = k (capped at kMaxHops).
void HopMatrices::compute_distances() {
  const auto n = static_cast<uint32_t>(switches_.size());
  const size_t words = (n + 63) / 64;
  stride_ = words * 64;  // whole 64-target chunks per row, OSM_NO_PATH beyond n
  dist_.assign(n * stride_, OSM_NO_PATH);
  reach_.assign(n * words, 0);
  next_.resize(n * words);

  // Level 0 and 1: a switch itself, and every switch cabled to it (any
  // health, OpenSM's hop 0/1 step). Healthy neighbours, once each, for the
  // levels after.
  neighbours_begin_.assign(1, 0);
  neighbours_.clear();
  for (uint32_t x = 0; x < n; ++x) {
    uint64_t* rx = reach_.data() + x * words;
    uint8_t* dx = dist_.data() + x * stride_;
    rx[x / 64] |= uint64_t{1} << (x % 64);
    dx[x] = 0;
    const size_t first = neighbours_.size();
    for (uint32_t e = edge_begin_[x]; e < edge_begin_[x + 1]; ++e) {
      const uint32_t y = edges_[e].to;
      rx[y / 64] |= uint64_t{1} << (y % 64);
      dx[y] = 1;
      if (edges_[e].healthy) neighbours_.push_back(y);
    }
    std::sort(neighbours_.begin() + first, neighbours_.end());
    neighbours_.erase(std::unique(neighbours_.begin() + first, neighbours_.end()), neighbours_.end());
    neighbours_begin_.push_back(static_cast<uint32_t>(neighbours_.size()));
  }

  for (uint32_t level = 2; level <= n; ++level) {
    bool grew = false;
    const auto d = static_cast<uint8_t>(std::min<uint32_t>(level, kMaxHops));
    for (uint32_t x = 0; x < n; ++x) {
      const uint64_t* rx = reach_.data() + x * words;
      uint64_t* nx = next_.data() + x * words;
      std::copy(rx, rx + words, nx);
      for (uint32_t i = neighbours_begin_[x]; i < neighbours_begin_[x + 1]; ++i) {
        const uint64_t* ry = reach_.data() + neighbours_[i] * words;
        for (size_t w = 0; w < words; ++w) nx[w] |= ry[w];
      }
      uint8_t* dx = dist_.data() + x * stride_;
      for (size_t w = 0; w < words; ++w) {
        uint64_t fresh = nx[w] & ~rx[w];
        if (fresh != 0) grew = true;
        while (fresh != 0) {
          dx[w * 64 + static_cast<size_t>(__builtin_ctzll(fresh))] = d;
          fresh &= fresh - 1;
        }
      }
    }
    if (!grew) break;
    std::swap(reach_, next_);
  }

  // Targets each switch reaches among those with a LID (the first ones).
  uint32_t targets = 0;
  while (targets < n && lids_[targets] != 0) ++targets;
  reach_count_.assign(n, 0);
  for (uint32_t x = 0; x < n; ++x) {
    const uint8_t* dx = dist_.data() + x * stride_;
    reach_count_[x] = static_cast<uint32_t>(std::count_if(dx, dx + targets, [](uint8_t d) { return d != OSM_NO_PATH; }));
  }
}

// Rows of switches [first, last) for every target with a LID, chunk by
// chunk (see build). Returns the rows allocated.
Result<uint64_t> HopMatrices::write_rows(uint32_t first, uint32_t last, uint32_t targets) const {
  uint64_t allocated = 0;
  ArenaReserve reserve;
  for (uint32_t s = first; s < last; ++s) {
    if (row_arrays_[s].fresh) prefault_for_writing(row_arrays_[s].hops, row_arrays_[s].length);
  }
  alignas(16) uint8_t columns[kMaxPorts][kChunk];
  alignas(16) uint8_t block[kChunk][kMaxPorts];
  for (uint32_t t0 = 0; t0 < targets; t0 += kChunk) {
    const uint32_t c = std::min(kChunk, targets - t0);
    const uint16_t* chunk_lids = lids_.data() + t0;
    for (uint32_t j = 0; j < c; ++j) __builtin_prefetch(row_arrays_[first].hops + chunk_lids[j]);
    for (uint32_t s = first; s < last; ++s) {
      uint8_t** hops = row_arrays_[s].hops;
      if (s + 1 < last) {
        uint8_t** next_hops = row_arrays_[s + 1].hops;
        for (uint32_t j = 0; j < c; ++j) __builtin_prefetch(next_hops + chunk_lids[j]);
      }
      const uint32_t width = row_arrays_[s].width;
      const uint32_t padded = (width + 15) / 16 * 16;
      std::memset(columns, OSM_NO_PATH, static_cast<size_t>(padded) * kChunk);  // ports with no switch: no path
      uint8_t* least = columns[0];
      for (uint32_t e = edge_begin_[s]; e < edge_begin_[s + 1]; ++e) {
        const Edge& edge = edges_[e];
        uint8_t* col = columns[edge.port];
        if (edge.healthy) {
          cable_column(dist_.data() + edge.to * stride_ + t0, col);
        } else if (edge.to >= t0 && edge.to - t0 < kChunk) {  // only the hop to the neighbour itself
          col[edge.to - t0] = 1;
        }
        min_into(least, col);
      }
      if (s >= t0 && s - t0 < kChunk) least[s - t0] = 0;
      transpose(columns, padded, block);
      for (uint32_t j = 0; j < c; ++j) {
        const uint16_t lid = chunk_lids[j];
        uint8_t* dst = hops[lid];
        if (dst == nullptr) {
          if (block[j][0] == OSM_NO_PATH) continue;  // no path, no row: as OpenSM leaves it
          // OpenSM's own allocation, as osm_switch_set_hops makes it
          // (malloc of num_ports bytes; OpenSM frees it with the switch),
          // without its memset: the row is stored whole just below. Only on
          // the first sweep or for a new LID (build() checked the LIDs).
          reserve.before_row(width);
          dst = static_cast<uint8_t*>(std::malloc(width));
          if (dst == nullptr) return Error{"no memory for the hop row of LID " + std::to_string(lid)};
          hops[lid] = dst;
          ++allocated;
        }
        store_row(block[j], width, dst);
      }
    }
  }
  return allocated;
}

// The rows of different switches are different memory and OpenSM allocates
// them with malloc, which is thread-safe: two halves of the switches at once,
// the calling thread taking the first. On the first sweep of a 2,000-switch
// fabric most of the time is OpenSM's 4 million row allocations and the page
// faults of their ~190 MB, which two threads share. If no thread can be
// started, the caller writes everything. Nothing may escape into OpenSM: the
// worker catches all and reports it as an error.
Result<uint64_t> HopMatrices::write_all_rows(uint32_t n, uint32_t targets, double* worker_cpu_ms) const {
  const uint32_t half = n / 2;
  if (half == 0) return write_rows(0, n, targets);
  std::optional<Result<uint64_t>> second;
  double cpu = 0;
  std::thread worker;
  try {
    worker = std::thread([&] {
      const double start = thread_cpu_ms();
      try {
        second.emplace(write_rows(half, n, targets));
      } catch (...) {
        second.emplace(Error{"writing hop rows failed (out of memory?)"});
      }
      cpu = thread_cpu_ms() - start;
    });
  } catch (const std::system_error&) {
    return write_rows(0, n, targets);
  }
  auto first = write_rows(0, half, targets);
  worker.join();
  *worker_cpu_ms = cpu;
  if (!first) return first.error();
  if (!*second) return second->error();
  return *first + **second;
}

uint32_t HopMatrices::index_of(const osm_switch_t* sw) const {
  const auto it = index_.find(sw);
  if (it == index_.end()) return kNoIndex;
  // The same object may be a new switch since the last build (OpenSM freed
  // the old one and allocated this at its address): only its GUID tells.
  const uint32_t s = it->second;
  return sw->p_node != nullptr && osm_node_get_node_guid(sw->p_node) == guids_[s] ? s : kNoIndex;
}

// The count a row holds at the port of `edge` toward switch t: as
// cable_column and the unhealthy case of write_rows.
uint8_t HopMatrices::edge_hops(const Edge& edge, uint32_t t) const {
  if (!edge.healthy) return edge.to == t ? 1 : OSM_NO_PATH;
  const uint8_t d = dist_[edge.to * stride_ + t];
  return d == OSM_NO_PATH ? OSM_NO_PATH : static_cast<uint8_t>(std::min<uint32_t>(d + 1u, kMaxHops));
}

uint8_t HopMatrices::least_hops(const osm_switch_t* sw, uint16_t lid) const {
  if (!have_distances_) return OSM_NO_PATH;
  const uint32_t s = index_of(sw), t = index_of_lid(lid);
  if (s == kNoIndex || t == kNoIndex) return OSM_NO_PATH;
  // D(s, t) is the least over s's ports (hop_matrices.h): a direct cable of
  // any health is 1, else 1 + D(y, t) over healthy neighbours y.
  return least_hops_between(s, t);
}

uint8_t HopMatrices::hop_count(const osm_switch_t* sw, uint16_t lid, uint8_t port) const {
  if (port == 0) return least_hops(sw, lid);
  if (!have_distances_) return OSM_NO_PATH;
  const uint32_t s = index_of(sw), t = index_of_lid(lid);
  if (s == kNoIndex || t == kNoIndex) return OSM_NO_PATH;
  for (uint32_t e = edge_begin_[s]; e < edge_begin_[s + 1]; ++e) {
    if (edges_[e].port == port) return edge_hops(edges_[e], t);
  }
  return OSM_NO_PATH;  // no cable to a switch on this port
}

uint8_t HopMatrices::first_least_port(const osm_switch_t* sw, uint16_t lid) const {
  const uint8_t least = least_hops(sw, lid);
  if (least == OSM_NO_PATH || least == 0) return OSM_NO_PATH;
  const uint32_t s = index_of(sw), t = index_of_lid(lid);
  // Edges are in port order (read_graph): the first that matches is the
  // lowest port.
  for (uint32_t e = edge_begin_[s]; e < edge_begin_[s + 1]; ++e) {
    if (edge_hops(edges_[e], t) == least) return edges_[e].port;
  }
  return OSM_NO_PATH;
}

Result<HopStats> HopMatrices::build(osm_subn_t& subn, bool rows) {
  // OpenSM sets every switch port's hop weight (hop_wf) inside its own matrix
  // builder: 1, or from hop_weights_file, which only OpenSM parses.
  if (subn.opt.hop_weights_file != nullptr && *subn.opt.hop_weights_file != '\0') {
    return Error{std::string("hop_weights_file ") + subn.opt.hop_weights_file + " is set"};
  }
  const auto t_dist = Clock::now();
  const double cpu_start = thread_cpu_ms();
  const bool changed = read_graph(subn);
  const auto n = static_cast<uint32_t>(switches_.size());

  // Every LID must fit every switch's arrays, once: OpenSM's arrays are
  // sized from the same LID table for all switches (prepare_path_rebuild),
  // so a LID that does not fit is a subnet OpenSM should judge itself.
  uint32_t max_lid = 0;
  for (uint32_t t = 1; t < n; ++t) {
    if (lids_[t] != 0 && lids_[t] == lids_[t - 1]) {
      have_distances_ = false;
      return Error{"switches share LID " + std::to_string(lids_[t])};
    }
  }
  for (uint32_t t = 0; t < n; ++t) max_lid = std::max<uint32_t>(max_lid, lids_[t]);
  for (const osm_switch_t* sw : switches_) {
    if (sw->hops == nullptr || max_lid > sw->max_lid_ho || max_lid >= sw->num_hops) {
      have_distances_ = false;
      return Error{"switch LID " + std::to_string(max_lid) + " beyond OpenSM's hop arrays (max LID " +
                   std::to_string(sw->max_lid_ho) + ")"};
    }
  }

  HopStats stats;
  stats.switches = n;
  stats.distances_reused = have_distances_ && !changed;
  if (!stats.distances_reused) {
    have_distances_ = false;
    compute_distances();
    have_distances_ = true;
  }
  stats.distances_ms = ms_since(t_dist);

  // The rows: for switch s and target t, port p of each cable s -> y holds
  // 1 + D(y, t) (healthy) or 1 if y is t (unhealthy), [0] the least. For
  // kChunk targets at a time (their D for every switch, 64 x n bytes, stays
  // in L2) and switch by switch: one column per port (64 bytes of D(y, .) per
  // cable), transposed into rows in a block that stays in L1, then each row
  // stored whole over OpenSM's (all OSM_NO_PATH after prepare_path_rebuild;
  // written whole all the same, so that nothing another engine left in it
  // survives). The row pointers are scattered over each switch's hops[]
  // array (indexed by LID): the next switch's are prefetched while this one's
  // rows are built. Two threads take half of the switches each
  // (write_all_rows).
  if (!rows) {
    stats.cpu_ms = thread_cpu_ms() - cpu_start;
    return stats;
  }
  stats.rows_written = true;
  const auto t_rows = Clock::now();
  uint32_t targets = 0;  // switches with a LID: the first ones (LID order)
  while (targets < n && lids_[targets] != 0) ++targets;
  for (uint32_t s = 0; s < n; ++s) {
    // Entries written for s: its own LID, every target each healthy cable's
    // far end reaches, and the far end of each unhealthy cable.
    stats.entries += s < targets ? 1 : 0;
    for (uint32_t e = edge_begin_[s]; e < edge_begin_[s + 1]; ++e) {
      stats.entries += edges_[e].healthy ? reach_count_[edges_[e].to] : (edges_[e].to < targets ? 1 : 0);
    }
  }
  row_arrays_.resize(n);
  std::unordered_map<uint8_t**, uint32_t> seen;
  seen.reserve(n);
  for (uint32_t s = 0; s < n; ++s) {
    osm_switch_t* sw = switches_[s];
    const auto it = seen_arrays_.find(sw->hops);
    const bool fresh = it == seen_arrays_.end() || it->second < sw->num_hops;
    row_arrays_[s] = {sw->hops, sw->num_ports, sw->num_hops, fresh};
    stats.arrays_prefaulted += fresh ? 1 : 0;
    seen.emplace(sw->hops, sw->num_hops);
  }
  seen_arrays_ = std::move(seen);
  double worker_cpu_ms = 0;
  auto written = write_all_rows(n, targets, &worker_cpu_ms);
  if (!written) return written.error();
  stats.rows_allocated = *written;
  stats.rows_ms = ms_since(t_rows);
  stats.cpu_ms = thread_cpu_ms() - cpu_start + worker_cpu_ms;
  return stats;
}

}  // namespace railyard::sm_plugin
