// Engine setup (per-lane state, CA ports by switch, nominal slots), the
// order in which destinations are taken, and the per-destination report
// entries. The records the lanes share: entry_records.cpp.
#include "routing/unicast_engine/engine.h"

#include <algorithm>
#include <span>
#include <tuple>

namespace railyard::routing::unicast {

Engine::Engine(const Fabric& fabric, const RoutingOptions& options, const SwitchGraph& graph, const Ranking& ranking,
               const SubstituteSpines& substitutes, ForwardingTables& tables, RoutingReport& report,
               EntryRecords& records, EngineBuffers* recycled, const EngineStatics* statics)
    : fabric_(fabric),
      g_(graph),
      rk_(ranking),
      substitutes_(substitutes),
      tables_(tables),
      report_(report),
      statics_(statics != nullptr && statics->valid ? statics : nullptr),
      rec_(records) {
  const uint32_t n = g_.num_switches();
  const uint32_t m = g_.num_entries();
  if (recycled != nullptr) {
    // Chunks hold kChunk columns of one switch count.
    if (recycled->chunk_bytes != kChunk * n) recycled->chunks.clear();
    swap_buffers(*recycled);
    // Storage only: every array is set again below and where it is used;
    // phase B's mode snapshots are refilled from the front (defer). But the
    // counters of the chains (balanced by flows), the old flows, the extra
    // slots and a ring's extra flows, which give_back() leaves all zero, as
    // they are large and a route touches few of them.
    load_.clear(); slot_cables_.clear();
  }
  drained_links_ = options.drained;
  // Given back all zero or empty (give_back), as a fresh engine's: sized
  // only (a link more or less resizes them by two).
  cnt_.resize(m);
  cnt2_.resize(m);
  sec_.resize(m);
  cand_stamp_.assign(n, 0);
  cand_first_.assign(n, 0);
  cand_count_.assign(n, 0);
  offer_stamp_.assign(n, 0);
  offer_fill_.assign(n, 0);
  cursor_.assign(n, 0);
  dd1_.assign(n, kInf);
  dist1_.assign(n + 1, kInf);  // [n]: up_clean_'s drained entries
  ddx_.assign(n, kInf);
  own_st_.assign(n, SwitchState{});
  st_ = own_st_.data();
  mark_stamp_.assign(n, 0);
  best_.assign(n, 0);
  queue_.reserve(n);
  if (statics_ != nullptr) {
    ca_begin_ = statics_->ca_begin;
    ca_ports_ = statics_->ca_ports;
    ca_info_ = statics_->ca_info;
    detached_ = statics_->detached;
    total_ca_ports_ = statics_->total_ca_ports;
    all_tier1_ = count_reach([](uint32_t) { return Mode::kDown; });
    report_.ca_ports = total_ca_ports_;
    base_up_ = statics_->base_up;
    base_down_ = statics_->base_down;
    slots_up_ = statics_->slots_up;
    by_guid_ = statics_->by_guid;
    guid_rank_ = statics_->guid_rank;
  } else {
    build_ca_lists();
    compute_slots();
    by_guid_.resize(n);
    for (uint32_t s = 0; s < n; ++s) by_guid_[s] = s;
    std::sort(by_guid_.begin(), by_guid_.end(), [&](uint32_t a, uint32_t b) {
      return fabric_.node(g_.node(a)).guid < fabric_.node(g_.node(b)).guid;
    });
    guid_rank_.resize(n);
    for (uint32_t i = 0; i < n; ++i) guid_rank_[by_guid_[i]] = i;
  }
  setup_flows(options);
}

// The arrays the memo keeps (EngineBuffers), exchanged with the engine's.
void Engine::swap_buffers(EngineBuffers& b) {
  cnt_.swap(b.cnt); cnt2_.swap(b.cnt2); sec_.swap(b.sec);
  load_.swap(b.load); old_load_.swap(b.old_load);
  extras_.swap(b.extras); ring_extra_.swap(b.ring_extra); slot_cables_.swap(b.slot_cables);
  modes_.swap(b.modes); chunks_.swap(b.chunks);
}

void Engine::give_back(EngineBuffers& out) {
  const size_t n = g_.num_switches();
  // All zero again (the constructor takes them so): the counters of the
  // chains (balanced by flows, clear_counters() left them so; else counted
  // over every destination), the old flows and the extra slots. A full
  // route never subtracts old flows; the reroute that follows it does, at
  // once: their array is mapped now, off its path.
  if (!flows_) {
    cnt_.clear();
    cnt2_.clear();
    sec_.clear();
  }
  for (const size_t i : old_touched_) old_load_[i] = 0;
  old_touched_.clear();
  if (old_load_.size() != n * 256) old_load_.assign(n * 256, 0);
  for (const size_t i : extras_touched_) extras_[i] = 0;
  extras_touched_.clear();
  for (const uint32_t e : ring_extra_touched_) ring_extra_[e] = 0;
  ring_extra_touched_.clear();
  // Enough chunks for a reroute's columns; a full route's batch (every
  // column) is not worth keeping whole.
  constexpr size_t kKeepChunks = 64;
  if (chunks_.size() > kKeepChunks) chunks_.resize(kKeepChunks);
  swap_buffers(out);
  out.chunk_bytes = kChunk * n;
}

void Engine::run(const RoutingOptions& options, uint32_t lane, uint32_t lanes) {
  const uint32_t n = g_.num_switches();
  // Targets with CAs, in leaf order (rail, then leaf); their CAs in port order.
  std::vector<uint32_t> leaves;
  for (uint32_t s = 0; s < n; ++s) {
    if (ca_begin_[s] != ca_begin_[s + 1]) leaves.push_back(s);
  }
  if (!options.leaf_order_key.empty()) {
    std::stable_sort(leaves.begin(), leaves.end(), [&](uint32_t a, uint32_t b) {
      return options.leaf_order_key[a] < options.leaf_order_key[b];
    });
  }
  const size_t first = leaves.size() * lane / lanes, last = leaves.size() * (lane + 1) / lanes;
  // Phase B rewrites columns of every target: the batch keeps them all.
  if (flows_) batch_cap_ = SIZE_MAX;
  // Balanced by flows, phase A of a leaf reads nothing another leaf wrote:
  // the lanes take every lanes-th leaf (an incremental route's re-walked
  // leaves, often one pod's, then spread over both), and absorb() puts the
  // destinations left to phase B back in leaf order. Else (chains and cones,
  // balanced by counters per lane) each lane takes a contiguous share.
  leaf_pos_.assign(n, 0);
  for (size_t li = 0; li < leaves.size(); ++li) leaf_pos_[leaves[li]] = static_cast<uint32_t>(li);
  const size_t begin = flows_ ? lane : first, end = flows_ ? leaves.size() : last, step = flows_ ? lanes : 1;
  std::vector<Lid> ca_lids;        // the current target's CA LIDs, in order
  std::vector<size_t> ca_columns;  // their batch columns (kSkipped: not re-walked)
  constexpr size_t kSkipped = SIZE_MAX;
  // The old flows of the columns re-walked or patched, by switch port (all
  // zero when given back).
  if (prior_ != nullptr && old_load_.size() != static_cast<size_t>(n) * 256) old_load_.assign(static_cast<size_t>(n) * 256, 0);
  for (size_t li = begin; li < end; li += step) {
    uint32_t t = leaves[li];
    // An incremental route takes the modes from the memo when the change
    // cannot have moved them, and re-walks only the columns the change can
    // touch (dirty_); the others keep the tables they have.
    modes_from_memo_ = false;
    lazy_modes_ = nullptr;
    if (prior_ != nullptr && modes_kept(t)) {
      if (!begin_lazy(t)) load_modes(t);
    } else {
      prepare_target(t);
      targets_prepared_ += prior_ != nullptr ? 1 : 0;
    }
    target_seq_ = static_cast<uint32_t>(li + 1);
    const bool touched = prior_ == nullptr || mark_dirty(t);  // reads the memo's modes before save_modes
    if (touched && lazy_modes_ != nullptr) load_modes(t);     // a column is re-walked: it reads them
    if (memo_ != nullptr) save_modes(t);
    bool listed = !modes_from_memo_;  // the down and up lists, for a walk (not for a patch)
    uint32_t ca_lid_count = 0;
    for (uint32_t i = ca_begin_[t]; i < ca_begin_[t + 1]; ++i) ca_lid_count += 1u << ca_info_[i].lmc;
    const Port& p0 = fabric_.port(fabric_.node(g_.node(t)).first_port);
    const uint32_t own_lids = p0.lid.valid() ? 1u << p0.lmc : 0;
    reserve_columns(ca_lid_count + own_lids);
    const size_t first_col = batch_lids_.size();
    ca_lids.clear();
    ca_columns.clear();
    kept_entries_.clear();
    for (uint32_t i = ca_begin_[t]; i < ca_begin_[t + 1]; ++i) {
      const CaPort& p = ca_info_[i];
      const uint8_t leaf_port = p.leaf_port;
      bool last_hop_drained = !drained_links_.empty() && drained_links_[p.link.value()];
      for (uint32_t k = 0; k < (1u << p.lmc); ++k) {
        Lid lid{static_cast<uint16_t>(p.lid.value + k)};
        if (!lid.valid()) continue;
        ca_lids.push_back(lid);
        const uint32_t slot = (leaf_port - base_down_[rk_.rank[t]]) * (1u << p.lmc) + k;
        // What becomes of the column: the route before's (kept or deferred
        // again), a patch of it, or a walk.
        const uint8_t dirty = prior_ == nullptr ? 1 : touched ? dirty_[lid.value] : 0;
        if (dirty == 0) {
          if (prior_->memo->deferred[lid.value]) {
            ca_columns.push_back(batch_lids_.size());
            reuse_deferred(lid, t, slot);
          } else {
            ca_columns.push_back(kSkipped);
            ++report_.lids_routed;
          }
          account_ca_destination(lid, ca_ports_[i], last_hop_drained);
          continue;
        }
        // 0: walk; 1: kept, perhaps with entries written (kept_now_); 2: in the batch.
        kept_now_.clear();
        const size_t at = batch_lids_.size();
        const int patched = dirty == 2   ? (patch_leaf(lid, t, slot) ? 2 : 0)
                            : dirty == 3 ? (patch_down(lid, t, slot) ? 1 : 0)
                            : dirty == 4 ? patch_spine(lid, t, slot)
                            : dirty == 5 ? (patch_leaf_back(lid, t, slot) ? 1 : 0)
                            : dirty == 6 ? (patch_spine_back(lid, t, slot) ? 1 : 0)
                                         : 0;
        if (patched == 1) {
          ca_columns.push_back(kSkipped);
          for (const auto& entry : kept_now_) kept_entries_.emplace_back(ca_columns.size() - 1, entry);
          ++report_.lids_routed;
        } else if (patched == 2) {
          ca_columns.push_back(at);
        } else {
          if (prior_ != nullptr) old_columns_to_subtract_.emplace_back(lid, t);  // its old flows come out of the loads
          if (!listed) list_modes(t);
          listed = true;
          ca_columns.push_back(batch_lids_.size());
          route_destination(lid, t, leaf_port, slot);
        }
        columns_recomputed_ += prior_ != nullptr;
        columns_patched_ += patched != 0;
        account_ca_destination(lid, ca_ports_[i], last_hop_drained);
      }
    }
    if (!flows_) finish_columns(first_col);
    // The leaf's own LID follows the route of one of its CA LIDs (picked by
    // GUID rank, so switch-LID traffic spreads over the slots), ending at
    // port 0: the same up*/down* paths, without a walk of its own.
    const size_t routed_cas = ca_lids.size();
    for (uint32_t k = 0; k < own_lids; ++k) {
      Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
      if (!lid.valid()) continue;
      if (routed_cas == 0) {  // no CA LID was routed: a walk of its own
        if (lazy_modes_ != nullptr) load_modes(t);  // (not seen: a leaf with CAs has CA LIDs)
        if (!listed) list_modes(t);
        listed = true;
        const size_t col = batch_lids_.size();
        if (flows_ && k == 0) clear_counters();
        route_destination(lid, t, 0, guid_rank_[t] + k);
        finish_columns(col);
        continue;
      }
      const size_t copied = guid_rank_[t] % routed_cas;
      const size_t from_col = ca_columns[copied];
      if (from_col == kSkipped) {  // copies a column that did not change, but for the entries a patch wrote
        for (const auto& [i, entry] : kept_entries_) {
          if (i == copied) tables_.set(entry.first, lid, entry.second);
        }
        ++report_.lids_routed;
        continue;
      }
      const uint8_t* from = column_at(from_col);
      begin_column(lid);
      if (flows_) leaf_copies_.emplace_back(column_, from);
      std::copy(from, from + n, column_);
      put(t, 0);
      ++report_.lids_routed;
    }
  }
  if (prior_ != nullptr) subtract_old_columns();
  target_seq_ = static_cast<uint32_t>(last);  // the switch LIDs' chains read it
  // CA ports hanging off nothing: every other CA port misses them.
  for (PortId p : lane == 0 ? std::span<const PortId>(detached_) : std::span<const PortId>()) {
    const Port& port = fabric_.port(p);
    for (uint32_t k = 0; k < (1u << port.lmc); ++k) {
      Lid lid{static_cast<uint16_t>(port.lid.value + k)};
      if (!lid.valid()) continue;
      uint32_t sources = total_ca_ports_ - 1;
      if (sources == 0) continue;
      report_.unreachable_pairs += sources;
      report_.unreachable.push_back({lid, port.node, sources, first_other_ca(p)});
    }
  }
  // Other switch LIDs (management traffic) after all CAs, so they do not
  // disturb the CA balance; taken in GUID order, every lanes-th to this lane,
  // so the result does not depend on the order the fabric lists its nodes in.
  for (uint32_t r = lane; r < n; r += lanes) {
    const uint32_t t = by_guid_[r];
    if (ca_begin_[t] != ca_begin_[t + 1]) continue;  // a leaf: routed with its CAs
    const Port& p0 = fabric_.port(fabric_.node(g_.node(t)).first_port);
    if (!p0.lid.valid()) continue;
    // An incremental route keeps the column the tables have when the change
    // cannot have moved it, else takes the modes from the memo when it cannot
    // have moved them.
    modes_from_memo_ = false;
    lazy_modes_ = nullptr;
    if (prior_ != nullptr && modes_kept(t)) {
      if (switch_column_kept(t)) {
        if (memo_ != nullptr) save_modes(t);
        for (uint32_t k = 0; k < (1u << p0.lmc); ++k) report_.lids_routed += Lid{static_cast<uint16_t>(p0.lid.value + k)}.valid();
        continue;
      }
      load_modes(t);
      list_modes(t);
    } else if (prior_ != nullptr && modes_patched(t)) {
      if (patch_switch_column(t)) {
        if (memo_ != nullptr) save_modes(t);
        continue;
      }
      list_modes(t);
    } else {
      prepare_target(t);
    }
    if (memo_ != nullptr) save_modes(t);
    reserve_columns(1u << p0.lmc);
    if (flows_) clear_counters();
    const size_t first_col = batch_lids_.size();
    for (uint32_t k = 0; k < (1u << p0.lmc); ++k) {
      Lid lid{static_cast<uint16_t>(p0.lid.value + k)};
      // Slot from the switch's GUID rank, not its index: the same fabric read
      // in another node order (OpenSM's subnet vs ibnetdiscover's file) must
      // get the same tables.
      if (lid.valid()) route_destination(lid, t, 0, guid_rank_[t] + k);
    }
    finish_columns(first_col);
  }
  if (flows_) clear_counters();  // all zero again, for give_back()
  // The loads before, per live entry: added by the last lane while the
  // others finish (absorb brings them to lane 0; take_prior_loads takes the
  // old flows out).
  if (flows_ && prior_ != nullptr && lanes > 1 && lane + 1 == lanes) add_prior_loads();
}

void Engine::export_statics(EngineStatics& out) const {
  out.valid = true;
  out.ca_begin = ca_begin_;
  out.ca_ports = ca_ports_;
  out.ca_info = ca_info_;
  out.detached = detached_;
  out.total_ca_ports = total_ca_ports_;
  out.base_up = base_up_;
  out.base_down = base_down_;
  out.slots_up = slots_up_;
  out.leaf_offset = leaf_offset_;
  out.by_guid = by_guid_;
  out.guid_rank = guid_rank_;
}

void Engine::build_ca_lists() {
  const uint32_t n = g_.num_switches();
  ca_begin_.assign(n + 1, 0);
  std::vector<std::pair<uint32_t, PortId>> attached;
  for (NodeId ca : fabric_.cas()) {
    const Node& nd = fabric_.node(ca);
    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      PortId pid(nd.first_port.value() + p);
      const Port& port = fabric_.port(pid);
      if (!port.lid.valid()) continue;  // a port the SM never addressed
      ++total_ca_ports_;
      uint32_t sw = port.remote.valid() ? g_.attach_switch(pid) : kNone;
      if (sw == kNone) {
        detached_.push_back(pid);
      } else {
        attached.emplace_back(sw, pid);
      }
    }
  }
  // By switch, then by the switch's port number.
  std::stable_sort(attached.begin(), attached.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return g_.attach_port(a.second) < g_.attach_port(b.second);
  });
  ca_ports_.reserve(attached.size());
  for (auto& [sw, pid] : attached) {
    ++ca_begin_[sw + 1];
    ca_ports_.push_back(pid);
  }
  for (uint32_t s = 0; s < n; ++s) ca_begin_[s + 1] += ca_begin_[s];
  ca_info_.clear();
  ca_info_.reserve(ca_ports_.size());
  for (PortId pid : ca_ports_) {
    const Port& port = fabric_.port(pid);
    ca_info_.push_back({port.lid, port.lmc, g_.attach_port(pid), port.link});
  }
  all_tier1_ = count_reach([](uint32_t) { return Mode::kDown; });
  report_.ca_ports = total_ca_ports_;
}

// Lowest up and down port numbers per rank, and the number of up slots.
// Cables that are down count too (a cable to a dead switch, one without a
// live switch link or CA, counts as up): slots are positions in the tree as
// cabled, so that a failed link or switch leaves a gap instead of moving the
// slots of every other port.
void Engine::compute_slots() {
  uint32_t ranks = 0;
  for (uint32_t r : rk_.rank) ranks = std::max(ranks, r + 1);
  base_up_.assign(ranks, 255);
  base_down_.assign(ranks, 255);
  slots_up_.assign(ranks, 0);
  const uint32_t n = g_.num_switches();
  // A dead switch (no live link, no live CA) is above a live one unless CAs
  // are cabled to it (a leaf).
  std::vector<uint8_t> ca_cabled(n, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const Node& node = fabric_.node(g_.node(s));
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const NodeId far = fabric_.remote_node(PortId(node.first_port.value() + p));
      if (far.valid() && !fabric_.is_switch(far)) ca_cabled[s] = 1;
    }
  }
  auto dead = [&](uint32_t s) { return g_.begin(s) == g_.end(s) && g_.num_cas(s) == 0; };
  // (switch, port, up) of every switch-switch cable, any state.
  std::vector<std::tuple<uint32_t, uint8_t, bool>>& cables = slot_cables_;
  cables.clear();
  for (uint32_t s = 0; s < n; ++s) {
    if (dead(s)) continue;
    const Node& node = fabric_.node(g_.node(s));
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      const NodeId far = fabric_.remote_node(PortId(node.first_port.value() + p));
      if (!far.valid() || !fabric_.is_switch(far)) continue;
      const uint32_t r = g_.switch_index(far);
      if (r == kNone) continue;
      const bool up = dead(r) ? !ca_cabled[r] : rk_.up(s, r);
      cables.emplace_back(s, static_cast<uint8_t>(p), up);
    }
  }
  for (const auto& [s, p, up] : cables) {
    auto& base = up ? base_up_ : base_down_;
    base[rk_.rank[s]] = std::min<uint32_t>(base[rk_.rank[s]], p);
  }
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t i = ca_begin_[s]; i < ca_begin_[s + 1]; ++i) {
      base_down_[rk_.rank[s]] = std::min<uint32_t>(base_down_[rk_.rank[s]], g_.attach_port(ca_ports_[i]));
    }
  }
  for (const auto& [s, p, up] : cables) {
    const uint32_t r = rk_.rank[s];
    if (up && p >= base_up_[r]) slots_up_[r] = std::max<uint32_t>(slots_up_[r], p - base_up_[r] + 1);
  }
}

NodeId Engine::first_other_ca(PortId not_this) const {
  for (PortId p : ca_ports_) {
    if (p != not_this) return fabric_.port(p).node;
  }
  return NodeId();
}

// Sources of the current target by reachability, from each switch's mode.
template <class ModeOf>
Engine::ReachSummary Engine::count_reach(ModeOf&& mode_of) const {
  ReachSummary r;
  r.unreachable = static_cast<uint32_t>(detached_.size());
  if (!detached_.empty()) r.example_unreachable = fabric_.port(detached_.front()).node;
  const uint32_t n = g_.num_switches();
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t k = ca_begin_[s + 1] - ca_begin_[s];
    if (k == 0) continue;
    Mode m = mode_of(s);
    NodeId here = fabric_.port(ca_ports_[ca_begin_[s]]).node;
    if (m == Mode::kUnreachable) {
      r.unreachable += k;
      if (!r.example_unreachable.valid()) r.example_unreachable = here;
      continue;
    }
    r.reachable += k;
    if (!r.example_reachable.valid()) r.example_reachable = here;
    if (!is_tier1(m)) {
      r.tier2 += k;
      if (!r.example_tier2.valid()) r.example_tier2 = here;
    }
  }
  return r;
}

void Engine::account_ca_destination(Lid lid, PortId dest_port, bool last_hop_drained) {
  // Sources by mode are the same for every destination of the target: count once.
  if (reach_.stamp != target_stamp_) {
    reach_ = count_reach([&](uint32_t s) { return st_[s].mode; });
    reach_.stamp = target_stamp_;
  }
  // A drained last hop puts every reachable source through a drain.
  uint32_t drained = last_hop_drained ? reach_.reachable : reach_.tier2;
  NodeId example_drained = last_hop_drained ? reach_.example_reachable : reach_.example_tier2;
  NodeId dest = fabric_.port(dest_port).node;
  if (last_hop_drained && drained > 0) --drained;  // the destination itself
  if (last_hop_drained && example_drained == dest) {
    // The example must be another source: any reachable CA port but this one.
    example_drained = NodeId();
    for (uint32_t s = 0; s < g_.num_switches() && !example_drained.valid(); ++s) {
      if (st_[s].mode == Mode::kUnreachable) continue;
      for (uint32_t i = ca_begin_[s]; i < ca_begin_[s + 1]; ++i) {
        if (ca_ports_[i] != dest_port) {
          example_drained = fabric_.port(ca_ports_[i]).node;
          break;
        }
      }
    }
  }
  if (reach_.unreachable > 0) {
    report_.unreachable_pairs += reach_.unreachable;
    report_.unreachable.push_back({lid, dest, reach_.unreachable, reach_.example_unreachable});
  }
  if (drained > 0) {
    report_.drained_pairs += drained;
    report_.through_drained.push_back({lid, dest, drained, example_drained});
  }
}

}  // namespace railyard::routing::unicast
