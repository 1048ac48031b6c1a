// Hosts, rails and switch levels of a fabric.
//
// Each CA gets a host and a rail from its node description (policy patterns,
// default "<host> mlx5_<n>" and "<host>-mlx5_<n>"); a CA whose description has a
// host but no rail gets its rank among that host's CAs (by GUID). A switch's
// level is its distance in switch hops from the nearest CA-bearing switch
// (0 leaf, 1 spine, 2 core, ...). A leaf's rail is the rail most of its CAs
// carry. Misfits (a CA whose rail disagrees with its leaf's, a leaf serving
// several rails, a CA with no rail) are reported, not fatal.
//
// Rules, in the order they apply to a CA's description:
//  1. The patterns, in order (ECMAScript, std::regex_search): the first whose
//     group 1 is non-empty and group 2 is a decimal number 0..kMaxRail gives
//     host and rail. The default pattern family ("^(.+?)[ -]mlx5_([0-9]+)$" and
//     its " "-only and "-"-only forms) is matched by hand, with the same
//     results, because std::regex costs microseconds per CA.
//  2. Otherwise the host is the first word (the description matches
//     "^(\S+)\s"), or, with infer_from_structure, the whole description.
//     With infer_from_structure the rail is the CA's rank by node GUID among
//     all CAs of that host; without it the CA has no rail (kCaWithoutRail).
//     A "host" with more than kMaxCasPerInferredHost CAs is not believed
//     (factory descriptions such as "MT4129 ConnectX7 ..." all share a first
//     word): its rail-less CAs get no host and no rail.
//  3. An empty description names no host: no rail (kCaWithoutRail).
//
// Structure comes from cabling; port and link states are ignored (a down cable
// still shows where a CA belongs; SwitchGraph decides what routing may use).
// A CA cabled to several switches is counted on each; `leaf` keeps the first
// (lowest port). Complexity O(nodes + ports), plus one regex search per CA and
// pattern outside the default family.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policies/policy.h"
#include "routing/fabric.h"

namespace railyard::routing {

inline constexpr int32_t kNoRail = -1;
inline constexpr int32_t kNoLevel = -1;
inline constexpr uint32_t kNoHost = UINT32_MAX;
// Rail numbers above this are not believed (a typo would size every per-rail
// array downstream); the pattern then counts as not matching.
inline constexpr int32_t kMaxRail = 1023;
inline constexpr uint32_t kMaxCasPerInferredHost = 64;

struct Misfit {
  enum class Kind : uint8_t { kCaRailDiffersFromLeaf, kLeafServesSeveralRails, kCaWithoutRail, kCaWithoutLeaf };
  Kind kind;
  NodeId node;
  std::string detail;  // human-readable explanation
};

struct RailMap {
  // Indexed by NodeId value (num_nodes entries).
  std::vector<int32_t> rail;    // CA: its rail; leaf switch: its majority rail
  std::vector<uint32_t> host;   // CA: index into hosts
  std::vector<int32_t> level;   // switch: 0 leaf, 1 spine, 2 core...; CAs kNoLevel
  std::vector<NodeId> leaf;     // CA: the switch on its lowest cabled port; else invalid
  std::vector<std::string> hosts;  // in order of first CA
  uint32_t num_rails = 0;       // 1 + highest rail seen on a CA
  int32_t max_level = kNoLevel;
  // Sorted by kind, then node.
  std::vector<Misfit> misfits;
};

RailMap map_rails(const Fabric& fabric, const policies::RailNaming& naming);

// The host x rail grid of CA ports, hosts in natural name order: the
// rail-aligned shift k sends from [h][r] to [h + k][r], the cross-rail
// shift k to [h + k][r + 1] (NCCL's patterns over rails).
struct HostGrid {
  uint32_t hosts = 0;
  uint32_t rails = 0;
  std::vector<PortId> port;  // [host * rails + rail]: the CA's primary port with a LID, invalid when absent
};
HostGrid host_grid(const Fabric& fabric, const RailMap& rails);

}  // namespace railyard::routing
