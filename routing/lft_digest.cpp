#include "routing/lft_digest.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "policies/policy_loader.h"

namespace railyard::routing {

namespace {

// A switch's digest up to its entries: the GUID and the entries' count
// (trailing "no path" left out, returned in *used), as the header defines.
Fnv1a64 switch_digest_head(Guid switch_guid, std::span<const uint8_t> entries, size_t* used) {
  size_t n = entries.size();
  while (n > 0 && entries[n - 1] == ForwardingTables::kNoPath) --n;
  Fnv1a64 f;
  f.word(switch_guid.value);
  f.word(n);
  *used = n;
  return f;
}

}  // namespace

uint64_t switch_lft_digest(Guid switch_guid, std::span<const uint8_t> entries) {
  size_t n = 0;
  Fnv1a64 f = switch_digest_head(switch_guid, entries, &n);
  f.bytes(entries.first(n));
  return f.h;
}

uint64_t total_lft_digest(std::vector<SwitchDigest>& switches) {
  std::sort(switches.begin(), switches.end(),
            [](const SwitchDigest& a, const SwitchDigest& b) { return a.guid.value < b.guid.value; });
  Fnv1a64 f;
  for (const SwitchDigest& s : switches) {
    f.word(s.guid.value);
    f.word(s.lft);
  }
  return f.h;
}

namespace {

// switch_lft_digest of kLanes rows at once: FNV-1a is one long chain of
// multiplies per row (about 4 cycles a byte), so the rows' bytes are
// interleaved, each row its own chain, and the multiplies overlap. The same
// digests, several times faster (23 MB of tables at 16k CAs).
constexpr size_t kLanes = 8;

void switch_digests_interleaved(const std::array<Guid, kLanes>& guids,
                                const std::array<std::span<const uint8_t>, kLanes>& rows, size_t count,
                                uint64_t* out) {
  std::array<Fnv1a64, kLanes> f;
  std::array<size_t, kLanes> n{};
  size_t common = SIZE_MAX;
  for (size_t j = 0; j < count; ++j) {
    f[j] = switch_digest_head(guids[j], rows[j], &n[j]);
    common = std::min(common, n[j]);
  }
  if (count == kLanes) {
    for (size_t i = 0; i < common; ++i) {
      for (size_t j = 0; j < kLanes; ++j) f[j].byte(rows[j][i]);
    }
  } else {
    common = 0;
  }
  for (size_t j = 0; j < count; ++j) {
    f[j].bytes(rows[j].subspan(common, n[j] - common));
    out[j] = f[j].h;
  }
}

}  // namespace

LftDigests lft_digests(const Fabric& fabric, const ForwardingTables& tables) {
  LftDigests d;
  const auto switches = fabric.switches();
  const size_t rows = std::min<size_t>(switches.size(), tables.num_switches());
  d.switches.resize(switches.size());
  for (size_t first = 0; first < switches.size(); first += kLanes) {
    const size_t count = std::min(kLanes, switches.size() - first);
    std::array<Guid, kLanes> guids{};
    std::array<std::span<const uint8_t>, kLanes> row{};
    std::array<uint64_t, kLanes> digest{};
    for (size_t j = 0; j < count; ++j) {
      const size_t i = first + j;
      guids[j] = fabric.node(switches[i]).guid;
      row[j] = i < rows ? tables.row(static_cast<uint32_t>(i)) : std::span<const uint8_t>{};
    }
    switch_digests_interleaved(guids, row, count, digest.data());
    for (size_t j = 0; j < count; ++j) d.switches[first + j] = {guids[j], digest[j]};
  }
  d.total = total_lft_digest(d.switches);
  return d;
}

uint64_t policy_digest(const policies::Policy& policy) {
  Fnv1a64 f;
  f.text(policies::render_policy_yaml(policy));
  return f.h;
}

std::string digest_text(uint64_t digest) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, digest);
  return buf;
}

}  // namespace railyard::routing
