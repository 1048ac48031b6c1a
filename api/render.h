// Rendering of the controller's state for /api/v1: JSON documents (and the
// Slurm text format; Prometheus in metrics.h). Pure functions of their inputs.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "controller/controller.h"
#include "controller/rail_health.h"
#include "routing/ar_groups.h"

namespace railyard::api {

nlohmann::json render_fabric_summary(const controller::FabricView& view, const std::vector<controller::LinkStatus>& links,
                                     size_t drains);
nlohmann::json render_switches(const controller::FabricView& view, const std::vector<controller::DrainRecord>& drains);
nlohmann::json render_hosts(const controller::FabricView& view, const controller::RailHealthMap& health);
// One host: {"host", "rails", "rails_healthy", "cas": [per rail: name, guid, lid, rail, health, leaf...]}.
nlohmann::json render_host_rails(const controller::FabricView& view, const controller::HostRails& host);
// Which links GET /links lists (its `state` query: up, down, drained).
enum class LinkFilter : uint8_t { kAll, kUp, kDown, kDrained };
std::optional<LinkFilter> parse_link_filter(std::string_view text);
nlohmann::json render_links(const controller::FabricView* view, const std::vector<controller::LinkStatus>& links,
                            LinkFilter filter);
nlohmann::json render_drain(const controller::DrainRecord& drain);
nlohmann::json render_reroute(const controller::RerouteRecord& reroute);
nlohmann::json render_event(const controller::EventRecord& event);
nlohmann::json render_impact(const controller::DrainImpact& impact);
nlohmann::json render_ar_summary(const controller::FabricView& view, const routing::ArTables& ar);
nlohmann::json render_ar_switch(const controller::FabricView& view, const routing::ArTables& ar, uint32_t sw, int lid);
nlohmann::json render_job(const controller::JobRecord& job);
struct LinkCounts {
  uint64_t up = 0, down = 0, drained = 0;
};
LinkCounts count_links(const std::vector<controller::LinkStatus>& links);

// A node of the view named by GUID, record name, description or LID (decimal
// or 0x hex); an invalid NodeId when none.
NodeId find_node_or_lid(const routing::Fabric& fabric, const std::string& ref, Lid* lid);

}  // namespace railyard::api
