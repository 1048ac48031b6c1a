// Rendering of the perf-manager telemetry (controller/telemetry.h) for
// GET /api/v1/hotspots and GET /api/v1/links/{link}/counters: each port the
// perf manager names is placed in the current view (its label, its link's
// canonical name, the port at the other end). Pure functions of their inputs.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "controller/fabric_view.h"
#include "controller/telemetry.h"

namespace railyard::api {

// A reported port in the view: every field but `port` empty when the view
// does not have it (no fabric yet, or the port is not cabled).
struct PortPlace {
  std::string port;  // "0x<guid>[N]"
  std::string name;  // "leaf g000 r1[9]"; OpenSM's node name when not in the view
  std::string link;  // the link's canonical name
  std::string peer;  // the other end, "spine g000 r1 0[3]"
};
PortPlace place_port(const controller::FabricView* view, uint64_t node_guid, uint8_t port,
                     const std::string& node_name);

nlohmann::json render_hotspots(const controller::Telemetry& telemetry, const controller::FabricView* view,
                               double now);
// Both ends of `link` (a link of `view`): latest rates, totals, history.
nlohmann::json render_link_counters(const controller::Telemetry& telemetry, const controller::FabricView& view,
                                    LinkId link);

}  // namespace railyard::api
