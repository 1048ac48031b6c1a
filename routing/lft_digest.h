// Digests of routing state, so that two programs that routed the same fabric
// can tell, with 8 bytes each, whether they wrote the same tables under the
// same policy: the plugin reports the digests of the LFTs it wrote and of the
// policy it planned with (docs/plugin_protocol.md, "Digests"), railyardd
// computes them from its own view and compares. Both call these functions.
//
// The hash is FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime
// 0x100000001b3), over bytes; integers are hashed as their 8 bytes, least
// significant first. Defined here once, so it is the same on both sides:
//
//  - a switch's LFT digest: FNV-1a over its node GUID, then the number of
//    entries n, then entries 0..n-1 (one byte each: the output port, 0xFF for
//    no path), where n is one past the last entry that is not 0xFF. Trailing
//    "no path" entries are left out, so a table and the same table padded to
//    OpenSM's LFT size (new_lft up to max_lid_ho) have the same digest;
//  - the total LFT digest: FNV-1a over (GUID, switch digest) of every switch,
//    in ascending GUID order (independent of the fabric's node order);
//  - the policy digest: FNV-1a over the policy's canonical YAML text
//    (policies::render_policy_yaml), so equal Policy values have equal
//    digests however their files were written.
//
// Pure: no I/O. O(size of the tables): ~23 MB at 16k CAs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policies/policy.h"
#include "routing/fabric.h"
#include "routing/lft.h"

namespace railyard::routing {

struct Fnv1a64 {
  uint64_t h = 0xcbf29ce484222325ull;
  void byte(uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  void word(uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(std::span<const uint8_t> s) {
    for (uint8_t b : s) byte(b);
  }
  void text(std::string_view s) {
    for (char c : s) byte(static_cast<uint8_t>(c));
  }
};

struct SwitchDigest {
  Guid guid;
  uint64_t lft = 0;
  bool operator==(const SwitchDigest&) const = default;
};

struct LftDigests {
  uint64_t total = 0;
  std::vector<SwitchDigest> switches;  // ascending GUID
  bool operator==(const LftDigests&) const = default;
};

// One switch's LFT: entries indexed by LID, as written to the switch.
uint64_t switch_lft_digest(Guid switch_guid, std::span<const uint8_t> entries);
// Sorts `switches` by GUID and returns the total over them.
uint64_t total_lft_digest(std::vector<SwitchDigest>& switches);
// Every switch of `fabric` (row i of `tables` is fabric.switches()[i]).
LftDigests lft_digests(const Fabric& fabric, const ForwardingTables& tables);

uint64_t policy_digest(const policies::Policy& policy);

// "0x" and 16 lower-case hex digits, as digests are written on the wire and
// in events.
std::string digest_text(uint64_t digest);

}  // namespace railyard::routing
