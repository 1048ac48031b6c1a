// Internal to the unicast engine: the pass over shifts (shift_repair.h),
// split by concept: shift_repair.cpp counts the shifts' loads and bounds and
// runs the rounds; shift_moves.cpp judges and makes the moves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "routing/unicast_engine/shift_bounds.h"
#include "routing/unicast_engine/shift_repair.h"

namespace railyard::routing::unicast {

class ShiftRepairPass {
 public:
  static constexpr uint32_t kMaxHops = 16;
  static constexpr uint64_t kMaxCells = uint64_t{1} << 24;
  static constexpr uint64_t kMaxSteps = uint64_t{1} << 23;
  // The rounds with wide swaps (below) walk at most 2^21 more: the tests'
  // targets and the worst shifts of the 195 scenarios of docs/routing.md
  // are the same with 2^19 as with 2^23, and on 2,048 CAs at 5% cut the
  // wide rounds use the whole budget.
  static constexpr uint64_t kMaxWideSteps = uint64_t{1} << 21;
  static constexpr std::ptrdiff_t kMaxLeaves = 2048;

  // `records`, `guid_rank`: the engines' (per entry its direction and
  // drain, per port its entry; per switch its GUID's rank).
  ShiftRepairPass(const Fabric& fabric, const SwitchGraph& graph, const Ranking& ranking, const EntryRecords& records,
                  std::span<const uint32_t> guid_rank, const RoutingOptions& options, ForwardingTables& tables,
                  std::vector<uint16_t>* storage)
      : f_(fabric), g_(graph), rk_(ranking), rec_(records), guid_rank_(guid_rank), o_(options), t_(tables),
        storage_(storage) {}

  ShiftRepair run(std::vector<TableMove>& moves);
  // The loads' storage back to the caller's, for the next route.
  void keep_storage() {
    if (storage_ != nullptr && load_.capacity() > storage_->capacity()) storage_->swap(load_);
  }

 private:
  // The grid and its shifts.
  struct Pattern {
    uint32_t k = 0;
    bool cross = false;
  };
  uint32_t dst_of(uint32_t src, const Pattern& p) const {
    const uint32_t h = src / rails_, r = src % rails_;
    return ((h + p.k) % hosts_) * rails_ + (p.cross ? (r + 1) % rails_ : r);
  }
  uint32_t src_of(uint32_t dst, const Pattern& p) const {
    const uint32_t h = dst / rails_, r = dst % rails_;
    return ((h + hosts_ - p.k % hosts_) % hosts_) * rails_ + (p.cross ? (r + rails_ - 1) % rails_ : r);
  }
  // visit(src, dst) for every cell of the grid and its destination in the
  // shift (no division per flow: this is the pass's inner loop).
  template <class Visit>
  void for_each_flow(const Pattern& p, Visit&& visit) const {
    uint32_t hd = p.k % hosts_;
    for (uint32_t h = 0; h < hosts_; ++h) {
      for (uint32_t r = 0; r < rails_; ++r) {
        const uint32_t rd = p.cross ? (r + 1 == rails_ ? 0 : r + 1) : r;
        visit(h * rails_ + r, hd * rails_ + rd);
      }
      hd = hd + 1 == hosts_ ? 0 : hd + 1;
    }
  }
  // The flow's ends (switches), or false when it is not a flow: a cell
  // absent, or (`cabled` false) a CA whose cable is down. The bounds count
  // the flows of the grid as cabled, so that a CA leaving lowers no bound
  // (and moves no entry); the loads, the flows that run.
  bool ends(uint32_t src, uint32_t dst, uint32_t& a, uint32_t& t, bool cabled = false) const {
    if (src == dst || lid_[src] == 0 || lid_[dst] == 0 || (!cabled && !(live_[src] && live_[dst]))) return false;
    a = at_[src];
    t = at_[dst];
    return a != kNone && t != kNone;
  }

  bool walk(uint32_t x, uint32_t lid, uint32_t t, std::vector<uint32_t>& out) const;
  uint32_t entry_at(uint32_t s, uint8_t port) const {
    return port < rec_.port_stride ? rec_.port_entry[static_cast<size_t>(s) * rec_.port_stride + port] : kNone;
  }
  void cache_paths();
  void load_shifts(uint32_t from, uint32_t to, ShiftBounds::Counts* counts, bool store, uint64_t& excess);
  void all_to_all_loads();
  const std::vector<uint32_t>& flows_through(uint32_t lid, uint32_t t);
  void add(uint32_t p, uint32_t e, int d);
  // One destination's flows over every shift: per shift, the path from its
  // source switch (src kNone: none).
  struct Column {
    uint32_t dst = 0, lid = 0, t = 0;
    std::vector<uint32_t> paths, begin, src;
  };
  void load_column(uint32_t dst, Column& col);
  void shifts_via(const Column& col, uint32_t x, std::vector<uint32_t>& out) const;
  void shifts_from(uint32_t x, uint32_t dst, std::vector<uint32_t>& out);
  // x's entry toward `lid` from the path `old` to the path `now` (x's own,
  // to the target), which `flows` all-to-all flows take.
  struct Move {
    uint32_t x = 0, lid = 0;
    std::vector<uint32_t> old, now;
    uint64_t flows = 0;
  };
  bool make_move(const Column& col, uint32_t x, const std::vector<uint32_t>& old, uint32_t c, Move& m);
  bool a2a_fits(const Move& m) const;
  int64_t delta(const std::vector<uint32_t>& via, const Move& m) const;
  void apply(const std::vector<uint32_t>& via, const Move& m, bool forward);
  void record(const Move& m, std::vector<TableMove>& moves) const;
  bool improve(uint32_t p, uint32_t src, std::vector<TableMove>& moves);
  bool swap(uint32_t p, uint32_t a, size_t last, std::vector<TableMove>& moves);
  void shift_partners(const Pattern& pattern, uint32_t x);
  void wide_partners(uint32_t x);
  void partner_column(uint32_t dst2, uint32_t x);
  void partner_shifts(uint32_t x);
  void rounds(std::vector<TableMove>& moves, uint64_t budget);

  const Fabric& f_;
  const SwitchGraph& g_;
  const Ranking& rk_;
  const EntryRecords& rec_;
  std::span<const uint32_t> guid_rank_;
  const RoutingOptions& o_;
  ForwardingTables& t_;
  std::vector<uint16_t>* storage_;

  uint32_t n_ = 0, entries_ = 0;
  uint32_t hosts_ = 0, rails_ = 0;
  std::vector<uint32_t> lid_, at_;  // per grid cell: CA LID (0 absent), the switch it is cabled to
  std::vector<uint8_t> live_;       // per grid cell: its cable is up
  std::vector<Pattern> patterns_;
  std::vector<uint16_t> load_;  // [pattern * entries + entry]
  std::vector<uint32_t> bound_, hot_;
  uint64_t excess_ = 0;
  std::vector<uint64_t> a2a_;
  uint64_t a2a_limit_ = 0;
  std::optional<ShiftBounds> bounds_;
  // cache_paths': per switch its index among the flows' sources; per
  // (source, destination cell) the first of its path's entries in cached_.
  std::vector<uint32_t> source_of_, cache_at_, cached_;
  // The tables as entries, by LID: [LID * switches + switch] (a walk toward
  // one LID reads one column; a shift's flows go to consecutive LIDs),
  // kNone where no switch link.
  std::vector<uint32_t> next_;
  uint32_t lids_ = 0;
  std::vector<uint32_t> through_;  // flows_through's counts
  uint32_t through_lid_ = 0;
  uint64_t steps_ = 0;
  std::vector<uint32_t> path_, hop_, alt_, old_, old2_, hot_path_, via_, via2_;
  // swap's partners: the destination cells of the shift's other flows
  // through x; in the wide rounds, of every flow through x of a shift whose
  // flow toward this destination crosses x (wide_partners).
  std::vector<uint32_t> partners_;
  bool wide_ = false;
  uint64_t budget_ = kMaxSteps;
  std::vector<uint32_t> cells_begin_, cells_;  // grid cells by the switch they are cabled to
  std::vector<uint8_t> up_only_;                // per switch: every link of it goes up
  std::vector<uint32_t> partner_stamp_;
  uint32_t stamp_ = 0;
  Column col_, col2_;
  Move best_move_;
};

inline bool on_path(const std::vector<uint32_t>& v, uint32_t e) { return std::find(v.begin(), v.end(), e) != v.end(); }

}  // namespace railyard::routing::unicast
