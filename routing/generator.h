// Fabric generator: rail-optimized fat trees, plain fat trees and rail-only
// fabrics, with seeded removal of links.
//
// Shapes (K = radix, d = K/2 CAs per leaf):
//  kRoft     servers x rails; servers in groups of d; leaf (g, r) holds rail r of
//            every server of group g, CA of server g*d+i on leaf port i+1.
//            2 levels: d spines, every leaf to every spine (leaf port d+1+j <->
//            spine j). 3 levels: leaves in rail-major order (r, g) cut into pods of
//            d leaves, d spines per pod, cores in d planes: plane j holds d/m cores
//            joined to spine j of every pod by m parallel links (m = K / pods,
//            reduced to a divisor of d).
//  kFatTree  like kRoft but all CAs of a server on one leaf (floor(d / rails)
//            servers per leaf).
//  kRailOnly one network per rail, no links between rails: a single leaf per rail
//            when one group, else a 2-level tree per rail.
// CA node descriptions are "<host_prefix><NNN> mlx5_<rail>" with 1-based,
// zero-padded host numbers ("node001 mlx5_0"); switch descriptions name the
// role with 0-based numbers: "leaf g003 r5" (kFatTree: "leaf g003"),
// "spine s07" (2 levels), "spine p01 s07" (pod 1), "core p07 c03" (plane 7,
// core 3; plane j joins spine sj of every pod), "spine r2 s05" (rail-only).
// Record names are "S-<guid16>" / "H-<guid16>" as ibnetdiscover prints them.
// Nodes are ordered leaves, spines, cores, CAs (server-major); GUIDs are
// deterministic, each CA its own system image. Removed links are never cabled
// and are listed. The same spec (seed included) gives the same fabric on every
// platform. Impossible requests (too big for the levels, more removals than
// links or switches) are Errors naming the limit.
//
// Removals, in the order they are drawn (each from its own seeded stream, each
// among what the earlier ones left):
//  1. remove_switches: whole switches per level. A removed switch stays in the
//     fabric as a node with no cable (ibsim loads it and the SM never discovers
//     it, as with a switch that is powered off; node numbering and GUIDs of the
//     others do not move). A removed leaf takes its CAs' links with it: those
//     CAs stay, uncabled, like the CAs of remove_ca_links.
//  2. remove_uplink_per_leaf on every leaf left;
//  3. remove_switch_links among the switch-switch links left, in the tier
//     remove_links_at names;
//  4. remove_ca_links among the CA links left.
// A spec without the newer options (remove_switches, remove_links_at) draws
// exactly what it drew before they existed: old seeds keep their fabrics.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

enum class TopologyKind : uint8_t { kRoft, kFatTree, kRailOnly };

// The switch-switch links remove_switch_links picks from.
enum class LinkTier : uint8_t { kAll, kLeafSpine, kSpineCore };

// Switch levels as operators count them: 1 = leaf, 2 = spine, 3 = core.
inline constexpr uint32_t kMaxSwitchLevel = 3;

struct GeneratorSpec {
  TopologyKind kind = TopologyKind::kRoft;
  uint32_t servers = 32;
  uint32_t rails = 8;
  uint32_t levels = 2;  // 2 or 3 (kRailOnly: 2)
  uint32_t radix = 64;  // ports per switch, even, 4..254
  // Seeded removals; they add up (see the order above): whole switches go
  // first, then per-leaf uplinks, then remove_switch_links picks among the
  // switch-switch links left, then remove_ca_links among the CA links left.
  uint32_t remove_switch_links = 0;  // seeded removal of N switch-switch links
  uint32_t remove_ca_links = 0;      // seeded removal of M CA last-hop links
  uint32_t remove_uplink_per_leaf = 0;  // remove this many uplinks from every leaf
  // Seeded removal of whole switches: remove_switches[level - 1] of that level
  // (leaves, spines, cores); every link of a removed switch is left uncabled.
  std::array<uint32_t, kMaxSwitchLevel> remove_switches{};
  LinkTier remove_links_at = LinkTier::kAll;  // tier remove_switch_links draws from
  uint64_t seed = 1;
  std::string host_prefix = "node";
  LinkWidth width = LinkWidth::k4x;
  LinkSpeed speed = LinkSpeed::kHdr;
  bool assign_lids = false;  // LMC 0: switches 1..#switches, then CA ports, in node order
};

struct GeneratedFabric {
  Fabric fabric;
  std::vector<std::string> removed_links;     // "<node>[port] <-> <node>[port]", in link order
  std::vector<std::string> removed_switches;  // descriptions ("core p03 c01"), in node order
};

std::string_view to_string(TopologyKind k);  // "roft", "fat-tree", "rail-only"
std::string_view to_string(LinkTier t);      // "all", "leaf-spine", "spine-core"
std::string_view switch_level_name(uint32_t level);  // 1 "leaf", 2 "spine", 3 "core"

Result<GeneratedFabric> generate_fabric(const GeneratorSpec& spec);

}  // namespace railyard::routing
