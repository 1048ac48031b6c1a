#include "routing/lft_digest.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "policies/policy_loader.h"

namespace railyard::routing {

uint64_t switch_lft_digest(Guid switch_guid, std::span<const uint8_t> entries) {
  size_t n = entries.size();
  while (n > 0 && entries[n - 1] == ForwardingTables::kNoPath) --n;
  Fnv1a64 f;
  f.word(switch_guid.value);
  f.word(n);
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

LftDigests lft_digests(const Fabric& fabric, const ForwardingTables& tables) {
  LftDigests d;
  const auto switches = fabric.switches();
  const size_t rows = std::min<size_t>(switches.size(), tables.num_switches());
  d.switches.reserve(switches.size());
  for (size_t i = 0; i < switches.size(); ++i) {
    const Guid guid = fabric.node(switches[i]).guid;
    d.switches.push_back({guid, switch_lft_digest(guid, i < rows ? tables.row(static_cast<uint32_t>(i))
                                                                 : std::span<const uint8_t>{})});
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
