// Internal to the unicast engine: what a route keeps for an incremental one
// (RouteMemo, routing/reroute.h), what an incremental route is given
// (Prior), and the engine's per-switch and per-entry types the memo holds.
// incremental.cpp says how they are used.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "routing/lft.h"
#include "routing/ranking.h"
#include "routing/switch_graph.h"
#include "routing/types.h"

namespace railyard::routing {

namespace unicast {

inline constexpr uint16_t kInf = 0xFFFF;
inline constexpr uint32_t kNone = SwitchGraph::kNone;

// How a switch forwards toward the current target switch.
enum class Mode : uint8_t {
  kUnreachable,
  kDown,       // tier 1: can reach the target going only down, without drained links
  kUp,         // tier 1: climbs first, without drained links
  kDownDrain,  // tier 2: only through drained links, going down
  kUpDrain,    // tier 2: only through drained links, climbing first
};

inline bool is_down(Mode m) { return m == Mode::kDown || m == Mode::kDownDrain; }
inline bool is_up_mode(Mode m) { return m == Mode::kUp || m == Mode::kUpDrain; }
inline bool is_tier1(Mode m) { return m == Mode::kDown || m == Mode::kUp; }

// Per switch, toward the current target.
struct SwitchState {
  uint16_t val = kInf;  // up*/down* distance to the target
  Mode mode = Mode::kUnreachable;
  uint8_t clean_only = 0;  // tier 2: skip drained candidates
  friend bool operator==(const SwitchState&, const SwitchState&) = default;
};

// An allocator whose resize() leaves new bytes as they are (not zeroed):
// for arrays every byte of which is written before it is read.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialized
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// Whether a switch in state ss may forward toward the target over a link
// (going up or not, drained or not) to a switch in state sr: a legal
// shortest next hop (Engine::cand_ok).
inline bool link_ok(SwitchState ss, SwitchState sr, uint8_t up, uint8_t drained) {
  if (ss.mode == Mode::kUnreachable) return false;
  const bool down = is_down(ss.mode);
  if (up == down) return false;  // wrong direction
  const bool tier1 = is_tier1(ss.mode);
  if (tier1 && (drained || !is_tier1(sr.mode))) return false;  // tier 1 stays clean
  if (sr.val == kInf || sr.val + 1 != ss.val) return false;
  if (down && !is_down(sr.mode)) return false;  // entering going down: it must go down too
  if (!tier1 && ss.clean_only && drained) return false;
  return true;
}

// One climb from a switch by one of its up slots (set_digits): the parent,
// its entry back down (rev), that entry's down slot and flags.
struct UpHop {
  uint32_t parent = kNone;
  uint32_t back = kNone;
  uint16_t down_slot = 0;
  uint8_t back_up = 0, back_drained = 0;
};

// Per entry (SwitchGraph entry index): the graph's fields plus direction
// and drain, and the port at the far end.
struct Entry {
  uint32_t remote = 0;
  uint32_t rev = 0;
  uint8_t port = 0;
  uint8_t rport = 0;    // port(rev): the far switch's port back
  uint8_t up = 0;       // 1 = toward a higher switch
  uint8_t drained = 0;
};

// The switch graph as the engines read it, a function of the graph, the
// ranking, the drains and the cabling alone, the same in every lane: built
// once per route, half by each lane at the same time (Engine::build_records),
// then read by both. Kept from one route to the next (RouteMemo::records)
// as storage.
struct EntryRecords {
  // Part 0 (engine.cpp): one record per entry, so the hot loops touch one
  // array, not five; the up and down entries of every switch, each
  // contiguous (CSR), as entry ids and as records.
  std::vector<Entry> ent;
  bool has_drains = false;
  uint32_t drained_entries = 0;  // entries of drained links (two a link)
  std::vector<uint32_t> down_begin, down_entries, up_begin, up_entries;
  std::vector<Entry> down_rec, up_rec;
  // Per up entry (up_rec's order): the parent, or the number of switches
  // (dist1_'s spare last slot, always kInf) if the link is drained, so that
  // prepare_target's nearest parent is a branch-free minimum.
  std::vector<uint32_t> up_clean;
  std::vector<uint8_t> leaf_children;  // per switch: has a leaf below it (ranked from the CAs, else empty)
  std::vector<uint8_t> feeds_climber;  // per switch: a switch above it has up links (may wait: Engine::wait)
  uint64_t capacity = 0;               // the leaf cut bound of all-to-all
  // Part 1 (flow_walk.cpp), balanced by flows: per switch x slot_stride up
  // slots, the up entry in that slot (or kNone) and the climb by it; per
  // switch x port_stride ports (the most any switch has, and port 0) the
  // entry of that port (or kNone).
  uint32_t slot_stride = 0, port_stride = 0;
  std::vector<uint32_t> up_slot_entry, port_entry;
  std::vector<UpHop> up_hop;
  // Leaves (with CAs, rank 0) in ring order, per leaf (leaf_id) its ring
  // neighbours and ring number.
  uint32_t num_leaves = 0, rings = 0;
  std::vector<uint32_t> ring_leaves, leaf_id, ring_prev, ring_next, ring_id;
  std::vector<uint32_t> order;  // switches top-down: the ranking's, or by GUID within a rank
  std::vector<uint32_t> pod;    // per switch: its pod (three levels and more), else empty
  uint32_t pods = 0, ranks = 0; // pod numbers in pod (the switches above the pods last), ranks
  std::vector<uint32_t> seq;    // per switch: its sequence among switches of its rank (GUID order)
};

// The largest arrays of one lane's Engine, kept from one route to the next
// (RouteMemo::lanes): storage only, the Engine sets every value again. A
// route at 16k CAs would otherwise map ~10 MB per lane afresh, and on a VM
// each page fault costs ~10 us (docs/routing.md, Incremental reroute).
struct EngineBuffers {
  std::vector<uint32_t> cnt, cnt2, sec;
  std::vector<uint64_t> load, old_load;
  std::vector<uint64_t> extras, ring_extra;
  std::vector<std::tuple<uint32_t, uint8_t, bool>> slot_cables;
  std::deque<std::vector<SwitchState>> modes;     // phase B's snapshots of the modes, per target
  std::vector<std::unique_ptr<uint8_t[]>> chunks;  // column batch chunks
  size_t chunk_bytes = 0;                           // of each chunk
};

// What an Engine works out from the cabling alone, the same in every lane
// and, while no switch dies or comes alive, in every route of the fabric:
// an incremental route takes them from the memo (route_lanes says when).
// The CA ports by switch (build_ca_lists), the nominal slots
// (compute_slots), the leaves' digit offsets (set_leaf_offsets) and the
// switches in GUID order.
// A CA port as the loops over a target's destinations read it: its LIDs,
// the leaf port it hangs off and its link (one record, not three lookups
// into the fabric).
struct CaPort {
  Lid lid;
  uint8_t lmc = 0;
  uint8_t leaf_port = 0;
  LinkId link;
};

struct EngineStatics {
  bool valid = false;
  std::vector<uint32_t> ca_begin;
  std::vector<PortId> ca_ports, detached;
  std::vector<CaPort> ca_info;  // as ca_ports
  uint32_t total_ca_ports = 0;
  std::vector<uint32_t> base_up, base_down, slots_up, leaf_offset, by_guid, guid_rank;
};

// What the switch turns (switch_turns.cpp) saw and did, for the next
// incremental route: which rows reached each switch LID before the fills
// (the fills are the entries of the other rows that are not empty), the
// scores and the turn switches they chose, and the fills per column. A
// route that keeps a switch-LID column keeps its fills with it, as long as
// the turn switches and every switch's way toward its own stay.
struct TurnsMemo {
  bool valid = false;
  std::vector<uint16_t> lids;       // every switch's LIDs, in LID order (the columns)
  std::vector<uint32_t> owner;      // per column: its switch
  std::vector<uint8_t> leaf;        // per column: a leaf's LID (filled, not scored)
  std::vector<uint8_t> base;        // per column: its switch's base LID (scored for the switch)
  std::vector<uint32_t> column_of;  // per LID: its column, or kNone
  size_t words = 0;                 // 64-bit words per column of `reached`
  std::vector<uint64_t> reached;    // bit s of column i: row s had an entry before the fills
  std::vector<uint64_t> score;      // per switch: the LIDs it reaches plus the switches reaching it
  uint64_t missing = 0;             // entries empty before the fills, not a switch's own
  std::vector<uint32_t> component;  // per switch: its piece of the switch graph
  bool pieces_now = false;          // component is this route's (turn_columns worked it out)
  bool tree_now = false;            // toward is this route's tree (turn_columns), toward_before the last
  std::vector<uint32_t> turn;       // per piece: its turn switch, or kNone (empty: none chosen)
  std::vector<uint8_t> toward;      // per switch: its entry toward its turn switch (turn_trees)
  std::vector<uint64_t> fillable;   // per piece x column words: the columns its turn switch fills
  // A refill after turn_columns: the columns the route wrote, each row's
  // way before, and whether only rows whose way moved, those columns and
  // those whose fillable bit moved need writing (the pieces stayed).
  std::vector<uint32_t> written;
  std::vector<uint8_t> toward_before;
  bool partial = false;
  bool any_left = false;  // the last fills left entries empty (the repair may have filled them)
  std::vector<uint32_t> fills, left;  // per column: entries filled, entries left empty
  std::vector<uint32_t> turn_switches;
  size_t row_words = 0;          // 64-bit words per row of `by_row`
  std::vector<uint64_t> by_row;  // `reached` by rows: bit i of row s, row s had an entry in column i
  std::vector<uint8_t> run8;     // per 8 columns: their LIDs are 8 in a row (fill_all writes them at once)
};

}  // namespace unicast

// One entry of the tables moved after phase B (hot_links.cpp), with the
// port it had before.
struct TableMove {
  uint32_t sw = 0;
  uint16_t lid = 0;
  uint8_t port = 0;
};

struct RouteMemo {
  uint32_t switches = 0;
  Ranking ranking;  // the route's (an incremental route's kept: rerank)
  std::vector<uint32_t> base_up, base_down, slots_up;  // per rank (Engine::compute_slots)
  // Per switch: the modes of every switch toward it (Engine::prepare_target),
  // at modes_at[target] * switches. An incremental route reads a target's
  // row in place (Engine::st_) when the change cannot have moved it.
  std::vector<uint32_t> modes_at;  // per switch: kNoModes unless a target
  std::vector<unicast::SwitchState> modes;
  // Per target, as modes_at: how the switches reach it.
  enum Reach : uint8_t { kAllTier1, kSomeUnreachable, kSomeTier2 };
  std::vector<Reach> reach;
  static constexpr uint32_t kNoModes = UINT32_MAX;
  // Loads phase A left (all-to-all flows per switch port, at switch * 256 +
  // port), before phase B.
  std::vector<uint64_t> phase_a_load;
  // Destinations phase B finished: their column as phase A left it and the
  // switches phase A left to phase B (bottom-up), at deferred_at[lid].
  std::vector<uint8_t> deferred;  // per LID: 1 = deferred
  std::vector<uint32_t> deferred_at;  // per LID: offset / switches in deferred_columns
  // Every byte written before it is read (export_memo): not zeroed when it grows.
  std::vector<uint8_t, unicast::UninitializedAllocator<uint8_t>> deferred_columns;
  // Every CA LID's column as phases A and B left it (the tables before the
  // moves off the busiest links), column by column at lid * switches: the
  // old flows of a re-walked column are summed down its column, not
  // gathered from the rows of the tables (a cache miss per switch). Read
  // only at CA LIDs (a switch LID's column there may be out of date).
  // Not zeroed when sized (22.6 MB at 16k CAs): the full route's flush
  // writes every column.
  std::vector<uint8_t, unicast::UninitializedAllocator<uint8_t>> columns;
  std::vector<uint32_t> broken_begin;  // per deferred column, and one past the last
  std::vector<uint32_t> broken;
  bool flows = false;
  // The moves that relieved the busiest links, in order: an incremental
  // route undoes them first, so that it starts from the tables phases A and
  // B left, and makes them again at the end as a full route would.
  std::vector<TableMove> moves;
  // The pass over shifts' loads (storage only: its pages stay mapped for the
  // next route; 8 MB at 2,048 CAs, none where the pass does not run).
  std::vector<uint16_t> shift_loads;
  // Per switch x 256 ports: the switch at the far end of the cable, in any
  // state (kNone: none); cable_map().
  std::vector<uint32_t> cable;
  // Leaves with CAs and CA LIDs (RerouteStats::targets, columns).
  std::pair<uint32_t, uint32_t> ca_count{0, 0};
  // The route's switch graph, for the next reroute to derive its own from
  // (SwitchGraph(like, ...)); the fabric it was built from may be gone: only
  // its arrays are read.
  std::shared_ptr<const SwitchGraph> graph;
  std::shared_ptr<SwitchGraph> spare_graph;  // the one before, as storage
  // What the switch turns saw and filled.
  unicast::TurnsMemo turns;
  unicast::EngineStatics statics;
  // The lanes' arrays, for the next route that updates this memo in place.
  std::deque<unicast::EngineBuffers> lanes;  // a deque: EngineBuffers need not move
  unicast::EntryRecords records;             // storage, as lanes
};

namespace unicast {

// A switch link whose state or drain differs between the fabric routed
// before and the one routed now.
struct ChangedLink {
  uint32_t lower = 0, upper = 0;  // switch indices, by rank (lower first)
  uint8_t lower_port = 0, upper_port = 0;
  bool up_before = false, up_now = false;            // its state is not down
  bool drained_before = false, drained_now = false;
  // Whether tier 1 may use it: up and not drained.
  bool usable_before() const { return up_before && !drained_before; }
  bool usable_now() const { return up_now && !drained_now; }
};

// Given to the engines of an incremental route.
struct Prior {
  const RouteMemo* memo = nullptr;
  // The route before; route_lanes moves them into its result and writes
  // the re-walked columns over them once every lane has read them.
  ForwardingTables* tables = nullptr;
  std::vector<ChangedLink> changed;
  bool had_drains = false;  // any link drained in the route before
  // Per switch x 256 ports: the switch at the far end of the cable, in any
  // state (kNone: none), to walk old columns over links now down
  // (RouteMemo::cable).
  const uint32_t* cable = nullptr;
};

}  // namespace unicast
}  // namespace railyard::routing
