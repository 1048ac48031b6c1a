// UpdateOrder: the order in which to send a patch of forwarding tables, one
// LFT block (64 LIDs of one switch, what an SMP carries) at a time, so that
// the fabric stays safe while the patch is half on the switches.
//
// Guarantees, for every intermediate state, i.e. after any prefix of the
// steps, and also for any subset of a round sent on top of the rounds before
// it (the switches' tables mixing old and new entries):
//  - No forwarding loop for any (source switch, destination LID) pair.
//  - No new black hole: a pair whose walk does not reach its destination is
//    one that the old tables already lose on the changed fabric (the failure
//    cut it) or that the new tables lose (the patch cuts it anyway).
//  - The last state is `after`, and each step writes only old or new values.
// These hold when `before` has no loop on the fabric it was made for and
// `after` none on `fabric` (the fabric as it is now: links down are dead,
// drained links still carry packets). A loop in `after` is an error.
//
// Why (Reitblatt et al., SIGCOMM 2012, per destination; the LFT block is the
// atomic write): per LID, a switch whose entry changes is sent
//  (A) after every changed switch on its own new path. Then an updated switch
//      forwards onto a path whose changed switches are all updated: from the
//      first updated switch on it, a packet follows the new tables to the
//      end. Before that it follows the old tables. Old then new: no loop
//      (the new path cannot re-enter the old part without the new tables
//      looping), and it is lost only where the old path (the failure) or
//      the new path (the new tables) loses it.
//  (B) if its new route does not deliver (kNoPath, e.g. a CA whose last link
//      died): after every changed switch whose new route delivers and whose
//      old path runs through it and still delivers on the fabric now. So
//      traffic that both tables deliver is moved off a switch before that
//      switch starts dropping it. (An unchanged source follows the old path
//      to its first changed switch, which is on its new path too.)
// (A) orders switches that deliver among themselves and (B) puts those that
// do not after them, so per LID the order is a DAG. Switch LIDs are no
// different: port 0 at the switch itself delivers.
//
// Blocks: the entries of one (switch, block) go in one step when the
// per-LID constraints allow, so steps == blocks changed, the target of the
// fast path. Blocks of different indices are independent (a LID lives in
// one) and are ordered apart. When two LIDs of a block need their switches
// in opposite orders (a cycle between blocks, e.g. s0 must follow s1 for
// one LID and s1 follow s0 for another), whole blocks cannot do: the cycle
// is broken with partial steps, a block with the entries that wait for
// nothing set to new and the others left old, the rest later.
// `partial_steps` counts these extra sends: one block per group of blocks
// that wait on each other. None in the tests' single failures, drains and
// their reversals; 1-3 where 10% of a small tree's links went down at once;
// many (0.6 per changed block) with random spanning trees as tables.
//
// Rounds: steps are levelled by Kahn's algorithm on the blocks: a round's
// steps depend on none of each other, so the plugin may send a whole round
// at once and wait only between rounds. On fat trees the rounds follow the
// depth of the new trees (at most 7 in the tests); a cycle adds rounds.
//
// Cost: the diff of the tables (every block, or only those the options
// name), in tiles of block indices that stay in cache for the walks; then
// per changed entry a walk of its new path through unchanged switches,
// memoized per (switch, LID) because paths to a LID share their ends; old
// paths only for LIDs with a cut entry. Measured in
// bench/update_order_bench.cpp; numbers in docs/fast_path.md.
// Implementation: routing/update_order/ (planner.h lists its files).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/result.h"

namespace railyard::routing {

// LIDs per LFT block (IBA 14.2.5.10, LinearForwardingTable).
inline constexpr uint32_t kLftBlockLids = 64;

struct UpdateStep {
  uint32_t switch_index = 0;  // row of the tables: fabric.switches()[switch_index]
  uint32_t block = 0;         // LIDs 64 * block .. 64 * block + 63
  // Bit i set: LID 64 * block + i holds its new entry once this step is on
  // the switch; clear: its old one (equal to the new one if it did not
  // change). Cumulative over the block's steps.
  uint64_t new_lids = 0;
  // The block equals the new block after this step (its last step).
  bool complete = true;
};

struct SwitchBlock {
  uint32_t switch_index = 0;
  uint32_t block = 0;
};

// Hints that spare reading both tables whole (98 MB each at 2,000 switches
// x 49,152 LIDs: ~10 ms at memory speed). A change outside a hint is not in
// the order.
struct UpdateOrderOptions {
  // When not empty, the only LIDs whose entries may differ between the two
  // tables (e.g. the destination columns an incremental reroute re-decided):
  // only their blocks, on every switch, are compared.
  std::span<const Lid> lids;
  // When not empty (it then wins over `lids`), the only (switch, block)
  // pairs that may differ, e.g. those the caller wrote: only these are
  // compared, and the cost no longer depends on the size of the tables.
  std::span<const SwitchBlock> blocks;
};

struct UpdateOrder {
  // In a safe order: round by round, by block index then switch in a round.
  std::vector<UpdateStep> steps;
  // Round r is steps[round_begin[r] .. round_begin[r + 1]).
  std::vector<uint32_t> round_begin;
  uint64_t entries_changed = 0;
  uint64_t blocks_changed = 0;  // (switch, block) pairs that differ
  uint64_t partial_steps = 0;   // steps with complete == false: steps - blocks_changed
  // Changed entries whose new route does not deliver (rule B above).
  uint64_t entries_cut = 0;

  uint32_t rounds() const { return round_begin.empty() ? 0 : static_cast<uint32_t>(round_begin.size() - 1); }
};

// `before` and `after` are tables of `fabric`'s switches (same size, rows in
// fabric.switches() order); `fabric` is the subnet now. Errors: tables of
// different sizes or not of this fabric, a hint beyond the tables, a loop
// in `after`.
Result<UpdateOrder> plan_update_order(const Fabric& fabric, const ForwardingTables& before,
                                      const ForwardingTables& after, const UpdateOrderOptions& options = {});

// The 64 entries `step` writes, as the SM sends them: new or old per
// step.new_lids, kNoPath past the end of the tables.
void step_entries(const ForwardingTables& before, const ForwardingTables& after, const UpdateStep& step,
                  std::span<uint8_t, kLftBlockLids> out);

}  // namespace railyard::routing
