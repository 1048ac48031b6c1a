// The fabric picture shared by railyardd's web console (GET /api/v1/grid) and
// `railyard verify --html`: switches with their level and rail, CA links
// aggregated per leaf (a 16,384-CA fabric is ~1,000 switches, not 16k rows),
// switch-switch links with their state and, when given, their predicted load.
// The browser lays it out (web/grid.js): rails x leaves below, spines and
// cores above.
//
// Document (JSON):
//   {"rails": R, "levels": L, "hosts": H, "cas": C,
//    "switches": [{"name", "guid", "lid", "level", "rail", "cas", "cas_down", "cas_drained"}],
//    "links": [[a, a_port, b, b_port, state], ...]   a, b index "switches"; state 0 up, 1 down, 2 drained
//    "keys": ["0x...[p]", ...]                        per link, when known (railyardd's link names)
//    "loads": [[a_to_b, b_to_a], ...], "load_max": N, "load_pattern": "all-to-all"   when loads are given}
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "routing/congestion.h"
#include "routing/fabric.h"
#include "routing/rails.h"

namespace railyard::console {

enum class GridLinkState : uint8_t { kUp = 0, kDown = 1, kDrained = 2 };

struct GridInput {
  const routing::Fabric* fabric = nullptr;
  const routing::RailMap* rails = nullptr;
  // Per LinkId; empty = the fabric's own states (kDown links down, others up).
  std::vector<GridLinkState> state;
  // Per LinkId, the canonical link names; empty = none in the document.
  std::vector<std::string> keys;
  // Per LinkId, all-to-all flows (routing::all_to_all_link_loads); null = none.
  const std::vector<routing::LinkLoad>* loads = nullptr;
};

nlohmann::json grid_json(const GridInput& input);

}  // namespace railyard::console
