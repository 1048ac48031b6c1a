// Phase B in two lanes. Phase B (flow_choice.cpp) takes the destinations
// one after the other, each seeing the displaced flows of those before; at
// 16k CAs with 5% of the links cut it is 2 million waiting switches and
// ~190 ms, the largest serial part of a route. Split at a destination, the
// two halves run at once, in rounds: kRounds per pass, of about equal work.
// Between two rounds both lanes stop (a barrier) and take each other's
// displaced flows of the round (merge_round), so within a round a lane sees
// phase A's loads, every displaced flow of the rounds before, and its own of
// this round, but not the other's. So that the two do not both fill the
// same spare capacity within a round, a lane counts its own displaced flows
// on a link twice where the other lane's destinations may use that link too
// (share_ = 2: every up link, and a down link with leaves of both halves
// below it): each keeps to half of what is left free, and where both keep to
// the leaf cut bound, so does the sum. Down links into one half's leaves
// count once: only that half's flows come down them. Without the shares,
// all-to-all at 16k CAs went from 1.001-1.016x the bound to 1.07-1.13x;
// without the rounds (the shares alone) half the spare capacity is often too
// little, and the slower lane's fallbacks took 135-149 ms where the rounds
// take 100-110 (one lane: 190).
//
// The cut falls between two rings of leaves where one is near the middle of
// the work (the extra-flow slots of a shift, extras_, stay within a ring),
// else at the leaf boundary that halves the work. It depends on the
// deferred destinations only, as do the rounds and all of phase B: tables
// stay deterministic whichever thread runs first, and a reroute, which
// rebuilds the same list, gets the full route's tables.
#include <algorithm>
#include <barrier>
#include <bit>
#include <exception>
#include <thread>

#include "routing/unicast_engine/engine.h"

namespace railyard::routing::unicast {

namespace {

// Below this many waiting switches phase B takes a few ms at most: one lane,
// every destination seeing every displaced flow.
constexpr size_t kSplitMinWaiting = 1u << 16;
// Rounds per pass: a lane sees the other's displaced flows of the rounds
// before; within a round it counts its own twice on shared links.
constexpr size_t kRounds = 8;

}  // namespace

bool Engine::split_phase_b(Engine& other) {
  const size_t count = deferred_.size();
  if (broken_.size() < kSplitMinWaiting || count < 2) return false;
  auto begin_of = [&](size_t i) -> size_t { return i < count ? deferred_[i].first_broken : broken_.size(); };
  // Each leaf's ring, as its first leaf (rings are contiguous in leaf ids).
  std::vector<uint32_t> ring(num_leaves_, 0);
  for (uint32_t a = 0; a < num_leaves_; ++a) ring[a] = ring_prev_[a] >= a ? a : ring[a - 1];
  auto ring_of = [&](size_t i) -> uint32_t {
    const uint32_t a = leaf_id_[deferred_[i].t];
    return a == kNone ? kNone : ring[a];
  };
  // The last destination of each ring; a cut before i is clean when every
  // ring seen before i ends before i.
  std::vector<size_t> last_of(num_leaves_ + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t r = ring_of(i);
    last_of[r == kNone ? num_leaves_ : r] = i;
  }
  // How far a cut before destination i is from halving the work (0: none).
  const size_t half = broken_.size() / 2;
  auto off = [&](size_t i) { return i == 0 ? SIZE_MAX : std::max(begin_of(i), half) - std::min(begin_of(i), half); };
  size_t clean = 0, any = 0;  // the best cuts so far
  size_t reach = 0;           // the last destination of the rings seen so far
  for (size_t i = 1; i < count; ++i) {
    const uint32_t r = ring_of(i - 1);
    reach = std::max(reach, last_of[r == kNone ? num_leaves_ : r]);
    if (deferred_[i].t == deferred_[i - 1].t) continue;  // a leaf's destinations stay together
    if (off(i) < off(any)) any = i;
    if (reach < i && off(i) < off(clean)) clean = i;
  }
  // A clean cut if it leaves each lane at least a third of the work.
  size_t cut = clean != 0 && std::min(begin_of(clean), broken_.size() - begin_of(clean)) >= broken_.size() / 3 ? clean : any;
  if (cut == 0) return false;
  // Per switch, which halves' destination leaves lie below it (bit 0: this
  // lane's, bit 1: the other's), bottom-up.
  std::vector<uint8_t> below(g_.num_switches(), 0);
  for (size_t i = 0; i < count; ++i) below[deferred_[i].t] |= i < cut ? 1 : 2;
  for (auto x = rk_.order.rbegin(); x != rk_.order.rend(); ++x) {  // the ranking's order, reversed
    for (uint32_t i = down_begin_[*x]; i < down_begin_[*x + 1]; ++i) below[*x] |= below[down_rec_[i].remote];
  }
  for (uint32_t e = 0; e < ent_.size(); ++e) {
    share_[e] = ent_[e].up || std::popcount(below[ent_[e].remote]) == 2 ? 2 : 1;
  }
  other.share_ = share_;
  other.load_ = load_;
  split_load_ = load_;
  // The destinations from the cut on, with their waiting switches.
  const uint32_t first = deferred_[cut].first_broken;
  other.deferred_.assign(deferred_.begin() + static_cast<std::ptrdiff_t>(cut), deferred_.end());
  for (Deferred& d : other.deferred_) d.first_broken -= first;
  other.broken_.assign(broken_.begin() + first, broken_.end());
  deferred_.resize(cut);
  broken_.resize(first);
  set_rounds();
  other.set_rounds();
  return true;
}

// kRounds rounds of about equal work (waiting switches), by destination.
void Engine::set_rounds() {
  round_begin_.assign(kRounds + 1, static_cast<uint32_t>(deferred_.size()));
  round_begin_[0] = 0;
  const size_t work = broken_.size();
  size_t r = 1;
  for (size_t i = 0; i < deferred_.size() && r < kRounds; ++i) {
    while (r < kRounds && deferred_[i].first_broken * kRounds >= r * work) round_begin_[r++] = static_cast<uint32_t>(i);
  }
}

// Between two rounds (both lanes are here, between two barriers): this
// lane's share of the entries takes both lanes' displaced flows of the
// round, counted once, and both lanes start the next round from them.
void Engine::merge_round(Engine& other, uint32_t lane, uint32_t lanes) {
  const size_t m = load_.size();
  for (size_t e = m * lane / lanes; e < m * (lane + 1) / lanes; ++e) {
    const uint64_t base = split_load_[e];
    const uint32_t shift = share_[e] - 1u;  // share_ is 1 or 2
    const uint64_t now = base + ((load_[e] - base) >> shift) + ((other.load_[e] - base) >> shift);
    split_load_[e] = now;
    load_[e] = now;
    other.load_[e] = now;
  }
}

// After the last round (merged): every flow counts once again.
void Engine::end_split() { std::fill(share_.begin(), share_.end(), 1); }

void route_phase_b(Engine& first, Engine& second, RoutingReport& report) {
  report.phase_b_waiting = first.phase_b_waiting();
  report.phase_b_lanes = report.phase_b_waiting == 0 ? 0 : 1;
  if (!first.split_phase_b(second)) {
    first.route_deferred();
  } else {
    report.phase_b_lanes = 2;
    std::barrier sync(2);
    std::exception_ptr failure[2];
    auto lane = [&](Engine& engine, uint32_t index) {
      try {
        engine.route_deferred([&] {
          sync.arrive_and_wait();
          first.merge_round(second, index, 2);
          sync.arrive_and_wait();
        });
      } catch (...) {
        failure[index] = std::current_exception();
        sync.arrive_and_drop();  // the other lane goes on alone
      }
    };
    std::thread other([&] { lane(second, 1); });
    lane(first, 0);
    other.join();
    for (const std::exception_ptr& f : failure) {
      if (f) std::rethrow_exception(f);
    }
    first.end_split();
  }
  first.copy_leaf_columns();
}

}  // namespace railyard::routing::unicast
