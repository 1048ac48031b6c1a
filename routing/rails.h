// Hosts, rails and switch levels of a fabric.
//
// Each CA gets a host and a rail from its node description (policy patterns,
// default "<host> mlx5_<n>" and "<host>-mlx5_<n>"); a CA whose description has a
// host but no rail gets its rank among that host's CAs (by GUID). A switch's
// level is its distance in switch hops from the nearest CA-bearing switch
// (0 leaf, 1 spine, 2 core, ...). A leaf's rail is the rail most of its CAs
// carry. Misfits (a CA whose rail disagrees with its leaf's, a leaf serving
// several rails, a CA with no rail) are reported, not fatal.
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
  std::vector<std::string> hosts;
  uint32_t num_rails = 0;       // 1 + highest rail seen
  int32_t max_level = kNoLevel;
  std::vector<Misfit> misfits;
};

RailMap map_rails(const Fabric& fabric, const policies::RailNaming& naming);

}  // namespace railyard::routing
