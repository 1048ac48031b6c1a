// The endpoint table: the one list of what /api/v1 offers. Each row names its
// handler, the statuses that handler answers and the shapes of its request
// body and response; routing, the role each call needs, `GET /api/v1` (help)
// and the OpenAPI document (`GET /api/v1/openapi.json`) are all read from it,
// so they cannot disagree (Envoy's admin table, source/server/admin/admin.cc).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_types.h"
#include "api/schema.h"
#include "controller/config.h"

namespace railyard::api {

class Api;
struct Call;

enum class EndpointId {
  kIndex, kOpenApi, kHealth, kFabric, kSwitches, kHosts, kLinks, kRoute, kEvents, kSlurm, kMetrics,
  kDrainsList, kDrainCreate, kDrainDelete, kReroute, kReroutesList, kRerouteGet, kLinkEvent,
  kAr, kArSummary, kJobsList, kJobCreate, kJobGet, kJobDelete, kKubernetes, kHostRails, kRailEvents, kWhoami, kGrid, kEventStream,
  kIsolation, kIsolationReset, kIsolationExclude, kIsolationUnexclude,
  kHotspots, kLinkCounters,
  kCount,  // not an endpoint: how many there are
};

struct QueryParam {
  std::string_view name;
  std::string_view description;
};

// A set of the HTTP statuses /api/v1 answers. Built at compile time: a status
// outside kKnown does not compile, so OpenAPI can describe every one.
class Statuses {
 public:
  static constexpr int kKnown[] = {200, 201, 202, 400, 401, 403, 404, 409, 429, 500, 503};
  constexpr Statuses(std::initializer_list<int> codes) {
    for (int code : codes) bits_ |= bit(code);
  }
  constexpr bool contains(int code) const {
    for (size_t i = 0; i < std::size(kKnown); ++i) {
      if (kKnown[i] == code) return bits_ & (1u << i);
    }
    return false;
  }
  constexpr Statuses with(int code) const {
    Statuses s = *this;
    s.bits_ |= bit(code);
    return s;
  }
  std::vector<int> list() const;  // ascending

 private:
  static constexpr uint16_t bit(int code) {
    for (size_t i = 0; i < std::size(kKnown); ++i) {
      if (kKnown[i] == code) return static_cast<uint16_t>(1u << i);
    }
    throw "not a status in Statuses::kKnown";
  }
  uint16_t bits_ = 0;
};

// The handler of an endpoint: parses the call, asks the controller, renders.
// It may throw a controller::Failure, which Api::handle answers through
// status_codes.h.
using Handler = HttpResponse (Api::*)(Call& call);

struct Endpoint {
  EndpointId id;
  std::string_view method;
  std::string_view pattern;  // "/api/v1/routes/{src}/{dst}"
  controller::Role role;     // the least role allowed
  bool mutation;             // audited; POST/DELETE
  std::string_view summary;
  std::span<const QueryParam> query;
  std::string_view body;     // an example request body, for help ("" = none)
  Handler handler;
  // What the handler answers, failures it throws included. Api::handle adds
  // the statuses of every endpoint (answered(): 400, 401/403, 500).
  Statuses statuses;
  const Schema* request;   // the body's fields (request_bodies.h); null: no body
  const Schema* response;  // the 2xx document's top level; null: not described
};

std::span<const Endpoint> endpoints();

// Every status the endpoint can answer: its handler's, 400 for an unknown
// query parameter, 401 and 403 where a role is needed, 500 for an internal
// error.
Statuses answered(const Endpoint& endpoint);

struct Match {
  const Endpoint* endpoint = nullptr;
  std::map<std::string, std::string> params;  // {src} -> value
  bool path_known = false;                     // some method matches the path (405 vs 404)
};
Match match(std::string_view method, std::string_view path);

}  // namespace railyard::api
