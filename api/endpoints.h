// The endpoint table: the one list of what /api/v1 offers. Routing, the role
// each call needs, `GET /api/v1` (help) and the OpenAPI document
// (`GET /api/v1/openapi.json`) are all read from it, so they cannot disagree.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "controller/config.h"

namespace railyard::api {

enum class EndpointId {
  kIndex, kOpenApi, kHealth, kFabric, kSwitches, kHosts, kLinks, kRoute, kEvents, kSlurm, kMetrics,
  kDrainsList, kDrainCreate, kDrainDelete, kReroute, kReroutesList, kRerouteGet, kLinkEvent,
  kAr, kArSummary, kJobsList, kJobCreate, kJobGet, kJobDelete, kKubernetes, kHostRails, kRailEvents, kWhoami, kGrid, kEventStream,
  kIsolation, kIsolationReset, kIsolationExclude, kIsolationUnexclude,
  kHotspots, kLinkCounters,
};

struct QueryParam {
  std::string_view name;
  std::string_view description;
};

struct Endpoint {
  EndpointId id;
  std::string_view method;
  std::string_view pattern;  // "/api/v1/routes/{src}/{dst}"
  controller::Role role;     // the least role allowed
  bool mutation;             // audited; POST/DELETE
  std::string_view summary;
  std::span<const QueryParam> query;
  std::string_view body;     // the request body, for help/OpenAPI ("" = none)
};

std::span<const Endpoint> endpoints();

struct Match {
  const Endpoint* endpoint = nullptr;
  std::map<std::string, std::string> params;  // {src} -> value
  bool path_known = false;                     // some method matches the path (405 vs 404)
};
Match match(std::string_view method, std::string_view path);

}  // namespace railyard::api
