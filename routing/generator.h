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
// CA node descriptions are "<host_prefix><NNN> mlx5_<rail>"; GUIDs are
// deterministic. Removed links are never cabled and are listed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

enum class TopologyKind : uint8_t { kRoft, kFatTree, kRailOnly };

struct GeneratorSpec {
  TopologyKind kind = TopologyKind::kRoft;
  uint32_t servers = 32;
  uint32_t rails = 8;
  uint32_t levels = 2;  // 2 or 3
  uint32_t radix = 64;  // ports per switch, even, >= 4
  uint32_t remove_switch_links = 0;  // seeded removal of N switch-switch links
  uint32_t remove_ca_links = 0;      // seeded removal of M CA last-hop links
  uint32_t remove_uplink_per_leaf = 0;  // remove this many uplinks from every leaf
  uint64_t seed = 1;
  std::string host_prefix = "node";
  LinkWidth width = LinkWidth::k4x;
  LinkSpeed speed = LinkSpeed::kHdr;
  bool assign_lids = false;  // give every switch and CA port a LID
};

struct GeneratedFabric {
  Fabric fabric;
  std::vector<std::string> removed_links;  // "<node>[port] <-> <node>[port]"
};

Result<GeneratedFabric> generate_fabric(const GeneratorSpec& spec);

}  // namespace railyard::routing
