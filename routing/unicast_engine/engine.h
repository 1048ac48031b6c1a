// Internal to the unicast engine (routing/unicast_engine.h): the Engine class
// one routing lane runs, split by concept over this folder:
//   engine.cpp             setup (CA lists, slots) and the order in which
//                          destinations are taken; report accounting
//   entry_records.cpp      the switch graph's records the lanes share
//   target_modes.cpp       per target switch: modes, distances, candidates
//   flow_walk.cpp          per CA destination: balancing by all-to-all flows,
//                          setup, digits and phase A (the nominal paths)
//   flow_choice.cpp        phase B: the displaced flows choose their paths
//   phase_b_lanes.cpp      phase B split between two lanes when it is long
//   chains.cpp             per destination: the primary and secondary chains
//   destination_walk.cpp   per destination: chain cones, the other switches,
//                          and the destination-major table batch
//   substitute_spines.cpp  trees whose leaves miss one uplink: a plane per
//                          (source leaf, destination) instead of chains
//   incremental.cpp        an incremental route: which columns a change
//                          touches, the old flows, the memo
//   column_patches.cpp     an incremental route: columns patched, not walked
//   hot_links.cpp          after the lanes: single choices moved off the
//                          busiest links
//   shift_repair.cpp       then, the rail-aligned and cross-rail shifts
//                          within their bounds (shift_repair.h; with
//                          shift_moves.cpp, shift_bounds.h, outside Engine)
//   switch_turns.cpp       after the lanes: switch LIDs up*/down* cannot
//                          reach, through one designated turn switch
//                          (switch_lids.h, with switch_repair.cpp)
//   route_unicast.cpp      the public entry point: checks, ranking, lanes
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/ranking.h"
#include "routing/reroute.h"
#include "routing/switch_graph.h"
#include "routing/unicast_engine.h"
#include "routing/unicast_engine/incremental.h"
#include "routing/unicast_engine/substitute_spines.h"
#include "routing/unicast_engine/switch_lids.h"

namespace railyard::routing::unicast {

// The all-to-all load a path would reach: its busiest link first, then the
// sum over its links (which tells apart paths that share their busiest link).
struct PathCost {
  uint64_t max = 0;
  uint64_t sum = 0;
  void add(uint64_t load) {
    max = std::max(max, load);
    sum += load;
  }
  bool operator<(const PathCost& o) const { return max != o.max ? max < o.max : sum < o.sum; }
  bool operator==(const PathCost& o) const = default;
};

class Engine {
 public:
  // `records`: shared by the lanes; each builds its part of them
  // (build_records), and none runs before all have.
  // `recycled`: the arrays of an engine of an earlier route (its storage
  // only, every value is set again), so that their pages are not mapped and
  // faulted in afresh; give_back() returns them at the end of a route.
  // `statics`: what an Engine of an earlier route of the same cabling,
  // with the same switches alive, worked out (EngineStatics), else null.
  Engine(const Fabric& fabric, const RoutingOptions& options, const SwitchGraph& graph, const Ranking& ranking,
         const SubstituteSpines& substitutes, ForwardingTables& tables, RoutingReport& report, EntryRecords& records,
         EngineBuffers* recycled = nullptr, const EngineStatics* statics = nullptr);
  // Part `part` (0 or 1) of the records: entries (engine.cpp) or, balanced
  // by flows, hops, rings and orders (flow_walk.cpp). Reads neither part.
  void build_records(const RoutingOptions& options, uint32_t part);
  // Once every part is built, before anything else: the engine's views of them.
  void bind_records();
  void export_statics(EngineStatics& out) const;
  void give_back(EngineBuffers& out);

  // Routes the leaves of one lane (a contiguous share of the leaf order) and
  // every lanes-th switch LID. Lanes share nothing but the table, where they
  // write disjoint LIDs.
  void run(const RoutingOptions& options, uint32_t lane, uint32_t lanes);

  // Writes the batched columns into the tables.
  void flush();
  // Whether the switch turns fill every column again after the flush
  // (refill_turns): flush then writes a patched switch column's one row.
  void set_turns_refilled(bool refilled) { turns_refilled_ = refilled; }
  // The batch's columns whose LID has a column in `column_of` (switch LIDs:
  // TurnsMemo), appended to `out`.
  void switch_lid_columns(const std::vector<uint32_t>& column_of, std::vector<std::pair<Lid, uint8_t*>>& out);

  // Balancing by flows: phase A runs in every lane (run), phase B in the
  // lane that absorbed the others (flow_walk.cpp), or split again between
  // two (split_phase_b).
  void absorb(Engine& other);
  // `sync`: called after each round of a split phase B, in both lanes.
  void route_deferred(const std::function<void()>& sync = {});
  // Phase B in two lanes (phase_b_lanes.cpp, route_phase_b): after
  // absorb(), hands the destinations from a ring boundary near the middle
  // of the work to `other` (false: too little work to split; this lane runs
  // them all). Both then run route_deferred() at once, with a sync() that
  // calls merge_round() between two barriers; end_split() once both are
  // done. copy_leaf_columns() then completes the leaf LIDs' columns.
  bool split_phase_b(Engine& other);
  size_t phase_b_waiting() const { return broken_.size(); }
  void merge_round(Engine& other, uint32_t lane, uint32_t lanes);
  void end_split();
  void copy_leaf_columns();

  // Incremental reroute (incremental.cpp). Before run(): `prior` makes run()
  // re-walk only the columns the change can touch; `memo` receives what the
  // next incremental route needs. After absorb(): take_prior_loads() turns
  // phase A's loads into those of the whole fabric (false: the change
  // touched a column it should not have, route in full instead);
  // export_memo() stores them and the deferred columns. `memo` may be the
  // prior's own (the caller gave it up): it is then updated in place.
  void set_incremental(const Prior* prior, RouteMemo* memo) {
    prior_ = prior;
    memo_ = memo;
    memo_in_place_ = prior != nullptr && memo != nullptr && prior->memo == memo;
  }
  bool take_prior_loads(const std::vector<const Engine*>& lanes);
  bool old_columns_ordered() const { return !disordered_; }
  void export_memo();
  // The nominal slots (positions as cabled) against the memo's / into it.
  bool same_slots(const RouteMemo& memo) const;
  void export_slots(RouteMemo& memo) const;
  // After flush(): moves single (switch, destination) choices off the
  // busiest links while that lowers them (hot_links.cpp); appends each move.
  void relieve_hot_links(std::vector<TableMove>& moves);
  // Per switch: the rank of its GUID (ties the passes break without the node order).
  std::span<const uint32_t> guid_ranks() const { return guid_rank_; }
  uint32_t targets_touched() const { return targets_touched_; }
  uint32_t columns_recomputed() const { return columns_recomputed_; }
  uint32_t columns_patched() const { return columns_patched_; }
  uint32_t targets_prepared() const { return targets_prepared_; }

 private:
  // engine.cpp
  void build_ca_lists();
  void compute_slots();
  NodeId first_other_ca(PortId not_this) const;
  void account_ca_destination(Lid lid, PortId dest_port, bool last_hop_drained);

  // target_modes.cpp
  void prepare_target(uint32_t t);
  void prepare_tier2();
  void list_down_candidates();

  // chains.cpp
  void climb(uint32_t x0, uint32_t pref, bool primary, std::vector<uint32_t>& chain);
  bool preferred_present(uint32_t x, uint32_t pref) const;

  // flow_walk.cpp
  void setup_flows(const RoutingOptions& options);
  void set_leaf_offsets(const RoutingOptions& options);
  static uint64_t ring_of(const RoutingOptions& options, uint32_t s);
  void sort_into_rings(const RoutingOptions& options, std::vector<uint32_t>& leaves) const;
  void route_destination_flows(uint32_t t, uint32_t slot);
  void defer_or_route(uint32_t x);
  void wait(uint32_t x);
  void mark_nominal(uint32_t x);
  void prepare_template();
  void route_leaves(uint32_t t, uint32_t slot);
  void set_digits(uint32_t t, uint32_t slot);
  // set_digits is a function of the target's modes and the cabling: it
  // records what it set (the nominal down entries it stamped, in pairs) for
  // the destination deferred next, and phase B replays that.
  struct DigitsOf {
    uint32_t t = kNone, slot = 0, stamp = 0;
  } digits_of_;
  std::vector<uint32_t> digits_rec_;   // (switch, down entry) pairs of the last set_digits
  std::vector<uint32_t> digits_pool_;  // per deferred destination: digit_, digit_slot_, count, pairs
  void replay_digits(const std::vector<uint32_t>& pool, uint32_t at);
  uint32_t next_entry(uint32_t s) const;
  uint32_t down_pick(uint32_t y);
  uint32_t nominal_down(uint32_t y) const;
  uint32_t nominal_up(uint32_t x) const;
  void push_flows(uint32_t y, uint32_t add);
  uint32_t choose_up(uint32_t x, uint32_t f);
  uint32_t slot_rank(uint32_t x, uint32_t slot, uint32_t a, uint32_t b) const;
  uint32_t middle_from(uint32_t x, uint32_t k) const;
  void route_flows_of(uint32_t x);
  static constexpr uint64_t kExact = UINT64_MAX;
  PathCost path_cost(uint32_t y, uint32_t add, uint32_t depth, uint64_t fit);
  // path_cost's first candidate of a switch still to choose that may be
  // within fit, for the pass over one destination (fit_epoch_), with at
  // least `extra` flows.
  struct FitFrom {
    uint32_t epoch = 0, depth = 0, extra = 0, index = 0;
    uint64_t fit = 0;
  };
  std::vector<FitFrom> fit_from_;
  uint32_t fit_epoch_ = 0;
  bool table_path(uint32_t x, uint32_t t, Lid lid, std::vector<uint32_t>& out) const;
  PathCost down_chain(uint32_t y, uint32_t add);

  // incremental.cpp
  void save_modes(uint32_t t);
  bool modes_kept(uint32_t t) const;
  bool modes_patched(uint32_t t);
  void add_prior_loads();
  bool prior_loads_added_ = false;  // add_prior_loads ran on this lane
  bool patch_switch_column(uint32_t t);
  bool one_way_up(uint32_t t) const;
  // Its columns in the batch and the one row each emptied, in batch order:
  // flush writes only that row of such a column.
  std::vector<std::pair<size_t, uint32_t>> point_columns_;
  // The old columns deferred to phase B (defer_old_column), in the batch,
  // and the rows each emptied, in batch order: phase B routes those rows
  // alone (the others kept their entries), so flush compares only them.
  std::vector<std::pair<size_t, uint32_t>> old_rows_emptied_;
  bool turns_refilled_ = false;  // the switch turns fill every column again after the flush (refill_turns)
  void load_modes(uint32_t t);
  void list_modes(uint32_t t);
  bool mark_dirty(uint32_t t);
  void chain_digits(uint32_t t, uint32_t slot, uint32_t top);
  void subtract_old_columns();
  void sort_by_distance(uint32_t t);
  void subtract_column(uint32_t t, const uint8_t* column, size_t stride);
  uint32_t old_dist(uint32_t s) const { return old_distance_[s].val; }
  void reuse_deferred(Lid lid, uint32_t t, uint32_t slot);
  uint32_t begin_patch(Lid lid, uint32_t t, uint32_t slot);
  uint32_t leaf_nominal_up(uint32_t x) const;
  bool leaves_climbing_to(uint32_t u);
  bool path_through(const uint8_t* column, uint32_t e, uint32_t t);
  bool patch_leaf(Lid lid, uint32_t t, uint32_t slot);
  bool patch_leaf_back(Lid lid, uint32_t t, uint32_t slot);
  bool patch_spine_back(Lid lid, uint32_t t, uint32_t slot);
  bool alone_waiting(Lid lid, uint32_t u) const;
  int patch_spine(Lid lid, uint32_t t, uint32_t slot);
  void subtract_path(const uint8_t* old, uint32_t x, uint32_t t);
  void defer_old_column(Lid lid, uint32_t t, uint32_t slot, const uint8_t* old, std::span<const uint32_t> leaves,
                        uint32_t above);
  bool keep_with_entry(Lid lid, uint32_t s, uint8_t now, uint8_t* old);
  // The entries the current column's patch wrote (keep_with_entry): (switch, port).
  std::vector<std::pair<uint32_t, uint8_t>> kept_now_;
  std::vector<uint32_t> waiting_;  // patch_spine's leaves
  std::vector<uint32_t> path_;     // patch_leaf_back's: u's nominal path, by entry
  bool patch_down(Lid lid, uint32_t t, uint32_t slot);
  void planes_down(uint32_t t);
  // planes_down's result and what it was walked for.
  uint32_t planes_for_ = 0, planes_t_ = kNone, planes_reach_ = kNone;
  bool planes_hit_ = false;
  std::vector<uint32_t> plane_slots_, plane_slots_now_, plane_mark_;
  uint32_t plane_epoch_ = 0;
  uint32_t down_link_ = kNone;
  // run(): the target's CA columns (by index) whose entry patch_down wrote.
  std::vector<std::pair<size_t, std::pair<uint32_t, uint8_t>>> kept_entries_;  // mark_dirty: the one changed link below a switch going down toward t
  // set_digits' watch (patch_down): whether the chain or a plane looked at
  // the up slot watch_slot_ of switch watch_lower_.
  uint32_t watch_lower_ = kNone, watch_slot_ = 0;
  bool watch_hit_ = false;
  bool nominal_whole(uint32_t x) const;
  std::vector<uint32_t> patch_at_;  // per LID dirty_ 2, 4, 5 or 6: the switch that lost (5, 6: got back) its nominal up link
  // A target whose modes are the memo's is read from the memo's row in
  // place (st_ points there): most targets of a reroute keep every column.
  // lazy_modes_ says, until load_modes, that nothing but mark_dirty and the
  // patches has read them (begin_lazy).
  bool begin_lazy(uint32_t t);
  bool switch_column_kept(uint32_t t);
  const SwitchState* lazy_modes_ = nullptr;
  SwitchState state(uint32_t s) const { return st_[s]; }
  // Target t's modes are `modes` from now on (the memo's row when
  // from_memo; `lazy` as begin_lazy leaves it): candidate lists start afresh.
  void begin_target(uint32_t t, const SwitchState* modes, bool from_memo, const SwitchState* lazy) {
    st_ = modes;
    ++target_stamp_;
    cand_.clear();
    target_ = t;
    modes_from_memo_ = from_memo;
    lazy_modes_ = lazy;
  }

  // destination_walk.cpp
  void route_destination(Lid lid, uint32_t t, uint8_t port_at_target, uint32_t slot);
  void finish_columns(size_t first);
  void reserve_columns(size_t count);
  void push_cone(const std::vector<uint32_t>& chain, std::vector<uint32_t>& load);
  // The chains' and cones' counters (cnt_, sec_, cnt2_, cursor_). Balanced
  // by flows, only switch LIDs use them, and each target counts only its
  // own routes: clear_counters() before each, so that a switch LID's column
  // is a function of the fabric and its target alone, as a CA column's
  // phase A is, and a reroute can keep it (run()). Else (chains and cones
  // for every destination) they balance across destinations.
  void bump(std::vector<uint32_t>& counter, uint32_t e) {
    ++counter[e];
    if (flows_) counted_entries_.push_back(e);
  }
  void clear_counters();
  std::vector<uint32_t> counted_entries_, counted_switches_;
  void begin_column(Lid lid);

  // Whether entry x (a record of ent_) of switch s is a legal shortest next
  // hop toward the target.
  bool cand_ok(uint32_t s, const Entry& x) const { return cand_ok(st_[s], st_[x.remote], x); }
  // The same from the states of the switch (ss) and of x's far end (sr).
  static bool cand_ok(SwitchState ss, SwitchState sr, const Entry& x) { return link_ok(ss, sr, x.up, x.drained); }
  bool cand_ok(uint32_t s, uint32_t e) const { return cand_ok(s, ent_[e]); }

  // The candidate list of s for the current target: [first, first + count) of cand_.
  std::pair<uint32_t, uint32_t> candidates(uint32_t s) {
    if (cand_stamp_[s] != target_stamp_) {
      cand_stamp_[s] = target_stamp_;
      cand_first_[s] = static_cast<uint32_t>(cand_.size());
      bool down = is_down(st_[s].mode);
      uint32_t b = down ? down_begin_[s] : up_begin_[s], end = down ? down_begin_[s + 1] : up_begin_[s + 1];
      const std::span<const Entry> rec = down ? down_rec_ : up_rec_;
      const std::span<const uint32_t> ids = down ? down_entries_ : up_entries_;
      for (uint32_t i = b; i < end; ++i) {
        if (cand_ok(s, rec[i])) cand_.push_back(ids[i]);
      }
      cand_count_[s] = static_cast<uint32_t>(cand_.size()) - cand_first_[s];
    }
    return {cand_first_[s], cand_count_[s]};
  }

  // Slot of an entry of switch x: its port number counted from the lowest up
  // (or down) port of x's rank, so a missing cable leaves a gap instead of
  // shifting every later port (the nominal D-mod-K position).
  uint32_t up_slot(uint32_t x, uint32_t e) const { return port(e) - base_up_[rk_.rank[x]]; }
  uint32_t down_slot(uint32_t x, uint32_t e) const { return port(e) - base_down_[rk_.rank[x]]; }

  // Entries of one destination are produced switch by switch, i.e. one byte
  // in every row of the table: written directly that is a cache (and TLB)
  // miss per entry. They go to a destination-major batch instead, flushed
  // row by row.
  size_t batch_cap_ = 128;  // columns; more when one target has more LIDs
  void put(uint32_t s, uint8_t port) { column_[s] = port; }
  bool routed(uint32_t s) const { return column_[s] != ForwardingTables::kNoPath; }

  uint32_t remote(uint32_t e) const { return ent_[e].remote; }
  uint32_t rev(uint32_t e) const { return ent_[e].rev; }
  uint8_t port(uint32_t e) const { return ent_[e].port; }
  // Switch owning entry e.
  uint32_t owner(uint32_t e) const { return ent_[ent_[e].rev].remote; }

  const Fabric& fabric_;
  const SwitchGraph& g_;
  const Ranking& rk_;
  const SubstituteSpines& substitutes_;
  ForwardingTables& tables_;
  RoutingReport& report_;
  const EngineStatics* statics_ = nullptr;  // the memo's, when they hold (the constructor)
  // The lanes' shared records (EntryRecords says what each is), read here
  // by the names the engine had for them: views (bind_records), one load
  // from `this` each, as a member array's.
  EntryRecords& rec_;
  void build_entries(const RoutingOptions& options);
  void build_hops(const RoutingOptions& options);

  bool has_drains_ = false;
  uint32_t drained_entries_ = 0;
  std::vector<uint8_t> drained_links_;
  std::span<const Entry> ent_;
  std::vector<uint32_t> cnt_;   // per entry: destinations routed out of it by chain and cone
  std::vector<uint32_t> cnt2_;  // per entry: backup down routes
  std::vector<uint32_t> sec_;   // per entry: secondary-chain destinations
  std::vector<uint32_t> base_up_, base_down_, slots_up_;  // per rank
  std::vector<std::tuple<uint32_t, uint8_t, bool>> slot_cables_;  // compute_slots' scratch
  std::span<const uint32_t> down_begin_;
  std::span<const uint32_t> down_entries_;
  std::span<const uint32_t> up_begin_;
  std::span<const uint32_t> up_entries_;
  std::span<const Entry> down_rec_;
  std::span<const Entry> up_rec_;
  std::span<const uint32_t> up_clean_;
  Lid lid_;
  uint32_t target_seq_ = 0;
  std::vector<uint32_t> guid_rank_;  // per switch: rank of its GUID
  std::vector<uint32_t> by_guid_;    // switches in GUID order
  // The batch in chunks of kChunk columns, so a column stays put while the
  // batch grows (phase B and the leaf copies hold pointers to columns).
  static constexpr size_t kChunk = 128;
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
  uint8_t* column_at(size_t b) { return chunks_[b / kChunk].get() + (b % kChunk) * g_.num_switches(); }
  std::vector<Lid> batch_lids_;
  std::vector<uint32_t> flush_order_;  // flush's scratch: the batch's columns by LID
  std::vector<uint8_t> ca_lid_;        // flush's: per LID, a CA's
  uint8_t* column_ = nullptr;
  std::vector<uint32_t> cursor_;

  // Per target.
  uint32_t target_ = kNone;
  // The modes toward it: own_st_ (prepare_target's), or a row of the
  // route before's memo in place (load_modes, begin_lazy), or phase B's
  // snapshot of a deferred destination's. Never written through.
  const SwitchState* st_ = nullptr;
  std::vector<SwitchState> own_st_;
  std::vector<uint16_t> dd1_, dist1_, ddx_;
  uint32_t target_stamp_ = 0;
  std::vector<uint32_t> cand_stamp_, cand_first_, cand_count_, cand_;
  std::vector<uint32_t> down_list_, up_list_;
  uint32_t down_lists_stamp_ = 0;  // target_stamp_ list_down_candidates ran for
  std::vector<std::pair<uint32_t, uint32_t>> offers_;  // its scratch: (switch, entry)
  std::vector<uint32_t> offer_stamp_, offer_fill_;     // per switch: offered this target; next slot in cand_

  // CA sources of the current target by reachability (report entries).
  struct ReachSummary {
    uint32_t stamp = 0;  // target_stamp_ it was counted for
    uint32_t unreachable = 0, reachable = 0, tier2 = 0;
    NodeId example_unreachable, example_reachable, example_tier2;
  };
  ReachSummary reach_;
  ReachSummary all_tier1_;  // the summary when every switch reaches the target in tier 1 (begin_lazy)
  template <class ModeOf>
  ReachSummary count_reach(ModeOf&& mode_of) const;

  // Per destination. A switch is routed once its entry in the column is set.
  uint32_t stamp_ = 0;
  std::vector<uint32_t> mark_stamp_, best_;
  std::vector<uint32_t> queue_, chain_, chain2_, fresh_;
  // Phase B: the order of one destination's waiting switches (a counting
  // sort: per waiting switch its bucket, and the buckets' starts).
  std::vector<uint32_t> sort_keys_, sort_starts_, sorted_;

  // Flow balancing (flow_walk.cpp). Per entry: all-to-all flows routed out
  // of it so far (one per source CA port and destination LID).
  bool flows_ = false;
  std::vector<uint64_t> load_;           // per entry
  // Per entry: how many phase B lanes' destinations it may carry flows to
  // (1, or 2 once phase B is split); a lane counts its own displaced flows
  // that many times, as if the other lane sent as many (phase_b_lanes.cpp).
  std::vector<uint8_t> share_;
  uint64_t with(uint32_t e, uint64_t f) const { return load_[e] + f * share_[e]; }
  std::vector<uint64_t> split_load_;     // the loads at the start of the round (lane 0 keeps them)
  std::vector<uint32_t> round_begin_;    // the lane's rounds: first destination of each, and the end
  void set_rounds();
  std::vector<uint32_t> flow_;           // per switch: flows of this destination arrived, not yet sent on
  std::vector<uint8_t> valid_;           // per switch: its nominal path is whole (this destination)
  std::vector<uint32_t> down_stamp_, down_nom_;  // per switch: the chain's down entry (stamp_)
  std::vector<uint32_t> nom_;                     // per switch: nominal_up (this destination)
  std::vector<PathCost> cost_;                    // choose_up's scratch: per candidate
  std::vector<uint32_t> fed_;  // per switch: a waiting switch may send it flows (stamp_)
  std::span<const uint8_t> feeds_climber_;
  std::vector<uint32_t> leaf_waits_;     // per leaf: it waits for phase B (stamp_; ranked from the CAs)
  std::span<const uint8_t> leaf_children_;
  bool fed(uint32_t x) const;
  std::span<const uint32_t> up_slot_entry_;
  std::span<const UpHop> up_hop_;  // the same hops as records (set_digits climbs by them)
  // Whether x may climb by hop h toward the target (cand_ok of its parent's
  // entry back down, as set_digits asks it).
  bool hop_ok(uint32_t x, const UpHop& h) const {
    return h.parent != kNone && link_ok(st_[h.parent], st_[x], h.back_up, h.back_drained);
  }
  uint32_t slot_stride_ = 0;
  std::span<const uint32_t> port_entry_;
  uint32_t port_stride_ = 0;
  uint32_t entry_of_port(uint32_t s, uint32_t p) const {
    return p < port_stride_ ? port_entry_[static_cast<size_t>(s) * port_stride_ + p] : kNone;
  }
  std::vector<uint32_t> digit_;          // per rank: the destination's nominal up slot (D-mod-K digit)
  std::vector<uint32_t> digit_slot_;     // per rank: that digit modulo the rank's up slots (set_digits)
  std::vector<uint32_t> leaf_offset_;    // per leaf: cabled CA ports of the leaves before it
  std::span<const uint32_t> order_;
  std::span<const uint32_t> pod_;
  uint32_t pods_ = 0;
  uint32_t ranks_ = 0;
  std::span<const uint32_t> seq_;
  std::vector<uint32_t> leaf_pos_;       // per switch: its position in the order leaves are taken (run)
  // Destinations with switches left for phase B: their column, leaf, slot
  // and first switch in broken_ (bottom-up).
  struct Deferred {
    uint8_t* column;  // in the batch of the lane that took it
    Lid lid;
    uint32_t t, slot, first_broken;
    const SwitchState* modes = nullptr;  // toward t: in modes_ of that lane, or the memo's row
    // What set_digits left for it in phase A (digits_of_), in that lane's
    // digits_pool_ at digits_at: phase B sets them again from there.
    const std::vector<uint32_t>* digits_pool = nullptr;
    uint32_t digits_at = 0;
  };
  void defer(Deferred d);
  std::deque<std::vector<SwitchState>> modes_;  // per target with deferred destinations (recycled beyond modes_used_)
  size_t modes_used_ = 0;
  uint32_t modes_stamp_ = 0;                    // target_stamp_ of modes_[modes_used_ - 1]
  const SwitchState* modes_of_ = nullptr;       // phase B: the modes st_ holds
  std::vector<Deferred> deferred_;
  enum class Pass : uint8_t { kNeighbours, kSameRing, kAll };
  void route_deferred_of(const Deferred& d, uint32_t first, uint32_t last, Pass pass);
  std::vector<uint32_t> broken_;
  // Ranked from the CAs: the entries above the leaves, per target (route_leaves).
  std::vector<uint8_t> template_;
  uint32_t template_stamp_ = 0;        // target_stamp_ it was made for
  std::vector<uint32_t> template_digits_;
  std::vector<uint32_t> leaves_up_;     // leaves that climb, bottom-up order
  std::vector<uint32_t> upper_broken_;  // switches above them with a broken nominal path, bottom-up
  uint64_t capacity_ = 0;
  // Leaves by ring (EntryRecords), and per (source leaf, destination leaf)
  // the up slots their extra flows took.
  uint32_t num_leaves_ = 0;
  std::span<const uint32_t> ring_leaves_;
  std::span<const uint32_t> leaf_id_;
  std::span<const uint32_t> ring_prev_;
  std::span<const uint32_t> ring_next_;
  std::span<const uint32_t> ring_id_;
  uint32_t rings_ = 0;
  std::vector<uint64_t> ring_extra_;  // per entry: flows of one ring that a switch above the leaves took off their slot
  std::vector<uint32_t> ring_extra_touched_;  // ring_extra_ made nonzero (give_back empties them)
  bool same_ring_pass_ = false;    // phase B routes the flows of one ring (route_deferred_of)
  // Whether the flows of a ring go first, their excess over the bound left
  // to the flows between rings: with two rings or more.
  bool rings_first() const { return rings_ >= 2; }
  // Whether switches x and y are leaves of one ring.
  bool same_ring(uint32_t x, uint32_t y) const {
    const uint32_t a = leaf_id_[x], b = leaf_id_[y];
    return a != kNone && b != kNone && ring_id_[a] == ring_id_[b];
  }
  std::vector<uint64_t> extras_;
  std::vector<size_t> extras_touched_;  // extras_ made nonzero (give_back empties them)
  uint64_t& extra(uint32_t a, uint32_t b) { return extras_[static_cast<size_t>(a) * num_leaves_ + b]; }
  void mark_extra(uint32_t a, uint32_t b, uint32_t slot) {
    uint64_t& x = extra(a, b);
    if (x == 0) extras_touched_.push_back(static_cast<size_t>(a) * num_leaves_ + b);
    x |= uint64_t{1} << (slot % 64);
  }
  std::vector<std::pair<uint8_t*, const uint8_t*>> leaf_copies_;  // (leaf LID column, CA column it copies)

  // Incremental reroute (incremental.cpp).
  const Prior* prior_ = nullptr;
  RouteMemo* memo_ = nullptr;
  void swap_buffers(EngineBuffers& b);
  // memo_ is prior_->memo: a target's modes are written over the route
  // before's, and rows that changed are kept here first, for the old flows
  // (sort_by_distance): old_rows_[old_row_at_[t] * switches].
  bool memo_in_place_ = false;
  std::vector<uint32_t> old_row_at_;
  std::vector<SwitchState> old_rows_;
  // Per LID of the current target: re-walk its column (1), or patch it
  // (2: patch_leaf, 3: patch_down, 4: patch_spine, 5: patch_leaf_back,
  // 6: patch_spine_back).
  std::vector<uint8_t> dirty_;
  std::vector<uint64_t> old_load_;     // per switch x 256 ports: phase A loads of the re-walked columns before
  std::vector<size_t> old_touched_;    // old_load_ made nonzero (give_back empties them)
  void add_old(size_t i, uint64_t f) {
    if (old_load_[i] == 0) old_touched_.push_back(i);
    old_load_[i] += f;
  }
  std::vector<std::pair<Lid, uint32_t>> old_columns_to_subtract_;  // the re-walked CA columns and their targets
  std::vector<uint32_t> by_distance_;    // switches, farthest from the target first (sort_by_distance)
  std::vector<uint32_t> distance_count_;  // and their counting sort
  const SwitchState* old_distance_ = nullptr;  // the memo's modes toward that target
  std::vector<uint32_t> carried_;        // flows per switch, in one column
  bool disordered_ = false;              // a column had a hop that did not come nearer its target
  std::vector<uint32_t> up_changed_;   // changed links that are up candidates toward the current target
  std::vector<uint32_t> chain_digit_;  // per rank: chain_digits' result
  bool modes_from_memo_ = false;       // st_ is the memo's (load_modes), not prepared
  uint32_t targets_touched_ = 0, columns_recomputed_ = 0, columns_patched_ = 0, targets_prepared_ = 0;

  // CA ports by switch.
  std::vector<uint32_t> ca_begin_;
  std::vector<PortId> ca_ports_;
  std::vector<CaPort> ca_info_;  // as ca_ports_
  std::vector<PortId> detached_;
  uint32_t total_ca_ports_ = 0;
};

// Per switch x 256 ports: the switch at the far end of the cable, in any
// state (kNone: none). Depends on the cabling alone (RouteMemo::cable).
std::vector<uint32_t> cable_map(const Fabric& fabric, const SwitchGraph& graph);

// The route itself (route_unicast.cpp): route_unicast without `prior` and
// `memo`; an incremental one (reroute.cpp) with them. With `prior`, falls
// back to a full route when the change is beyond what it can take (stats
// says why). Takes the prior's cable map (moved, not copied). `graph`: the
// fabric's switch graph if the caller has it, else built here.
Result<RoutingResult> route_lanes(const Fabric& fabric, const RoutingOptions& options, Prior* prior,
                                  RouteMemo* memo, RerouteStats* stats, const SwitchGraph* graph = nullptr);

// Phase B of `first`, the lane that absorbed the others, in one lane or,
// when it is long, split with `second`; then the leaf LIDs' columns. Sets
// the report's phase_b_waiting and phase_b_lanes (phase_b_lanes.cpp).
void route_phase_b(Engine& first, Engine& second, RoutingReport& report);

}  // namespace railyard::routing::unicast
