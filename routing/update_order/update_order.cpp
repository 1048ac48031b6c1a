// The public entry points of routing/update_order.h: checks, the diff of the
// tables in tiles, one planner pass per block index, the rounds of all.
#include "routing/update_order.h"

#include <algorithm>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "routing/update_order/planner.h"

namespace railyard::routing {

namespace {

using ordering::BlockPlanner;
using ordering::ChangedBlock;
using ordering::StagedStep;

// Bit i set where the 64 (or n < 64) bytes differ.
uint64_t diff_mask(const uint8_t* a, const uint8_t* b, uint32_t n) {
#if defined(__SSE2__)
  if (n == kLftBlockLids) {
    uint64_t equal = 0;
    for (uint32_t q = 0; q < 4; ++q) {
      const __m128i u = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16 * q));
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * q));
      equal |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(u, v)))) << (16 * q);
    }
    return ~equal;
  }
#endif
  uint64_t mask = 0;
  for (uint32_t i = 0; i < n; ++i) mask |= static_cast<uint64_t>(a[i] != b[i]) << i;
  return mask;
}

// Rounds: counting sort by round, stable (block index, then the order in
// which the block index's planner sent them).
UpdateOrder finish(UpdateOrder order, const std::vector<StagedStep>& staged) {
  uint32_t rounds = 0;
  for (const StagedStep& s : staged) rounds = std::max(rounds, s.round + 1);
  order.round_begin.assign(rounds + 1, 0);
  for (const StagedStep& s : staged) ++order.round_begin[s.round + 1];
  for (uint32_t r = 0; r < rounds; ++r) order.round_begin[r + 1] += order.round_begin[r];
  order.steps.resize(staged.size());
  std::vector<uint32_t> slot(order.round_begin.begin(), order.round_begin.end() - 1);
  for (const StagedStep& s : staged) order.steps[slot[s.round]++] = s.step;
  return order;
}

}  // namespace

Result<UpdateOrder> plan_update_order(const Fabric& fabric, const ForwardingTables& before,
                                      const ForwardingTables& after, const UpdateOrderOptions& options) {
  if (before.num_switches() != after.num_switches() || before.num_lids() != after.num_lids()) {
    return Error{"update order: tables of different sizes: before " + std::to_string(before.num_switches()) +
                 " switches x " + std::to_string(before.num_lids()) + " LIDs, after " +
                 std::to_string(after.num_switches()) + " x " + std::to_string(after.num_lids())};
  }
  if (before.num_switches() != fabric.switches().size()) {
    return Error{"update order: the tables have " + std::to_string(before.num_switches()) + " switches, the fabric " +
                 std::to_string(fabric.switches().size())};
  }
  const uint32_t num_lids = before.num_lids();
  const uint32_t num_blocks = (num_lids + kLftBlockLids - 1) / kLftBlockLids;

  UpdateOrder order;
  std::vector<StagedStep> staged;
  BlockPlanner planner(fabric, before, after);
  if (!options.blocks.empty()) {
    // Only the pairs given: sorted by block index, then switch, and diffed.
    std::vector<ChangedBlock> changed;
    changed.reserve(options.blocks.size());
    for (const SwitchBlock& sb : options.blocks) {
      if (sb.switch_index >= before.num_switches() || sb.block >= num_blocks) {
        return Error{"update order: block " + std::to_string(sb.block) + " of switch " +
                     std::to_string(sb.switch_index) + " is beyond the tables (" +
                     std::to_string(before.num_switches()) + " switches x " + std::to_string(num_blocks) + " blocks)"};
      }
      const uint32_t off = sb.block * kLftBlockLids;
      const uint64_t mask = diff_mask(before.row(sb.switch_index).data() + off, after.row(sb.switch_index).data() + off,
                                      std::min(kLftBlockLids, num_lids - off));
      if (mask != 0) changed.push_back({sb.switch_index, sb.block, mask});
    }
    // By block index (counting), then switch within each (small) bucket.
    std::vector<uint32_t> bucket(num_blocks + 1, 0);
    for (const ChangedBlock& c : changed) ++bucket[c.block + 1];
    for (uint32_t b = 0; b < num_blocks; ++b) bucket[b + 1] += bucket[b];
    std::vector<ChangedBlock> sorted(changed.size());
    {
      std::vector<uint32_t> next(bucket.begin(), bucket.end() - 1);
      for (const ChangedBlock& c : changed) sorted[next[c.block]++] = c;
    }
    for (uint32_t b = 0; b < num_blocks; ++b) {
      std::sort(sorted.begin() + bucket[b], sorted.begin() + bucket[b + 1],
                [](const ChangedBlock& x, const ChangedBlock& y) { return x.sw < y.sw; });
    }
    changed.clear();
    for (const ChangedBlock& c : sorted) {
      if (changed.empty() || changed.back().block != c.block || changed.back().sw != c.sw) changed.push_back(c);
    }
    for (const ChangedBlock& c : changed) {
      order.entries_changed += static_cast<uint64_t>(__builtin_popcountll(c.changed));
    }
    order.blocks_changed = changed.size();
    for (size_t g = 0; g < changed.size();) {
      size_t h = g;
      while (h < changed.size() && changed[h].block == changed[g].block) ++h;
      const std::span<const ChangedBlock> group(changed.data() + g, h - g);
      Status st = planner.plan(changed[g].block, group, staged, order);
      if (!st.ok()) return st.error();
      g = h;
    }
    return finish(std::move(order), staged);
  }

  // The block indices to compare.
  std::vector<uint32_t> blocks;
  if (options.lids.empty()) {
    blocks.resize(num_blocks);
    for (uint32_t b = 0; b < num_blocks; ++b) blocks[b] = b;
  } else {
    blocks.reserve(options.lids.size());
    for (Lid l : options.lids) {
      if (l.value >= num_lids) {
        return Error{"update order: LID " + std::to_string(l.value) + " is beyond the tables (" +
                     std::to_string(num_lids) + " LIDs)"};
      }
      blocks.push_back(l.value / kLftBlockLids);
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  }

  // Tiles of block indices, each diffed switch by switch and then planned
  // block index by block index while the tile's part of both tables (~8 MB)
  // is still in cache: the walks read entries of other switches in the same
  // blocks. At least 64 blocks (4 KB of a row): a narrower tile would start
  // a page (a TLB miss, no prefetch) per row for less work.
  const uint32_t num_switches = before.num_switches();
  const uint32_t tile = static_cast<uint32_t>(std::max<size_t>(
      4096 / kLftBlockLids, (size_t{8} << 20) / (2 * kLftBlockLids * std::max<size_t>(num_switches, 1))));
  constexpr uint32_t kPrefetchRows = 4;
  std::vector<ChangedBlock> changed, by_block;
  std::vector<uint32_t> tile_begin(tile + 1), fill(tile);
  for (size_t t0 = 0; t0 < blocks.size(); t0 += tile) {
    const uint32_t width = static_cast<uint32_t>(std::min<size_t>(tile, blocks.size() - t0));
    // Contiguous blocks (no hint): a row's part of the tile is first
    // compared whole, at memory speed; most rows are equal there.
    const bool contiguous = blocks[t0 + width - 1] - blocks[t0] == width - 1;
    const uint32_t span_begin = blocks[t0] * kLftBlockLids;
    const uint32_t span_bytes = std::min(num_lids, (blocks[t0 + width - 1] + 1) * kLftBlockLids) - span_begin;
    changed.clear();
    std::fill(tile_begin.begin(), tile_begin.end(), 0);
    for (uint32_t s = 0; s < num_switches; ++s) {
      const uint8_t* a = before.row(s).data();
      const uint8_t* b = after.row(s).data();
      if (contiguous && std::memcmp(a + span_begin, b + span_begin, span_bytes) == 0) continue;
      // Hinted blocks are scattered over a row and the next row is a page
      // or more away, where no hardware prefetcher goes: ask for them a few
      // rows ahead, or every block costs a trip to memory.
      if (!contiguous && s + kPrefetchRows < num_switches) {
        const uint8_t* pa = before.row(s + kPrefetchRows).data();
        const uint8_t* pb = after.row(s + kPrefetchRows).data();
        for (uint32_t j = 0; j < width; ++j) {
          const uint32_t off = blocks[t0 + j] * kLftBlockLids;
          __builtin_prefetch(pa + off);
          __builtin_prefetch(pb + off);
        }
      }
      for (uint32_t j = 0; j < width; ++j) {
        const uint32_t off = blocks[t0 + j] * kLftBlockLids;
        const uint64_t mask = diff_mask(a + off, b + off, std::min(kLftBlockLids, num_lids - off));
        if (mask == 0) continue;
        changed.push_back({s, j, mask});  // block: position in the tile, for now
        ++tile_begin[j + 1];
        order.entries_changed += static_cast<uint64_t>(__builtin_popcountll(mask));
      }
    }
    if (changed.empty()) continue;
    order.blocks_changed += changed.size();
    for (uint32_t j = 0; j < width; ++j) tile_begin[j + 1] += tile_begin[j];
    by_block.resize(changed.size());
    std::copy(tile_begin.begin(), tile_begin.begin() + width, fill.begin());
    for (const ChangedBlock& c : changed) {
      by_block[fill[c.block]++] = {c.sw, blocks[t0 + c.block], c.changed};  // stays in switch order
    }
    for (uint32_t j = 0; j < width; ++j) {
      if (tile_begin[j] == tile_begin[j + 1]) continue;
      std::span<const ChangedBlock> group(by_block.data() + tile_begin[j], tile_begin[j + 1] - tile_begin[j]);
      Status st = planner.plan(blocks[t0 + j], group, staged, order);
      if (!st.ok()) return st.error();
    }
  }

  return finish(std::move(order), staged);
}

void step_entries(const ForwardingTables& before, const ForwardingTables& after, const UpdateStep& step,
                  std::span<uint8_t, kLftBlockLids> out) {
  const uint32_t base = step.block * kLftBlockLids;
  for (uint32_t i = 0; i < kLftBlockLids; ++i) {
    const uint32_t lid = base + i;
    const ForwardingTables& t = ((step.new_lids >> i) & 1) ? after : before;
    const bool inside = step.switch_index < t.num_switches() && lid < t.num_lids();
    out[i] = inside ? t.row(step.switch_index)[lid] : ForwardingTables::kNoPath;
  }
}

}  // namespace railyard::routing
