#include "api/openapi.h"

#include <string>

#include "api/endpoints.h"
#include "api/schema.h"

namespace railyard::api {

using nlohmann::json;

namespace {

// What a status means on /api/v1; the error's message says the particulars.
const char* describe(int status) {
  switch (status) {
    case 200: return "OK (a change: a dry run, or one that was already made)";
    case 201: return "Created";
    case 202: return "Accepted: the reroute request is pending (GET /api/v1/reroutes/{id})";
    case 400: return "Bad request: a body, field, path segment or query parameter is not valid; the message names it";
    case 401: return "No or invalid bearer token";
    case 403: return "The token's role is too low";
    case 404: return "Not found: the message names the node, host, drain, job or request";
    case 409: return "Conflict: already done, or the change would cut CA pairs (force to do it anyway)";
    case 429: return "Rate limited: Retry-After says when to try again";
    case 500: return "Internal error";
    case 503: return "Unavailable: no fabric yet, the database or policy file cannot be written, or the service is "
                     "not running (health: degraded); with ha:, a mutation on a member that does not lead "
                     "(error.leader and error.leader_url, header X-Railyard-Leader, name the leader)";
  }
  return "";
}

}  // namespace

json openapi_document() {
  json paths = json::object();
  for (const Endpoint& e : endpoints()) {
    std::string method(e.method);
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    json params = json::array();
    const std::string pattern(e.pattern);
    for (size_t open = pattern.find('{'); open != std::string::npos; open = pattern.find('{', open + 1)) {
      const size_t close = pattern.find('}', open);
      params.push_back({{"name", pattern.substr(open + 1, close - open - 1)},
                        {"in", "path"},
                        {"required", true},
                        {"schema", {{"type", "string"}}}});
    }
    for (const QueryParam& q : e.query) {
      params.push_back({{"name", q.name}, {"in", "query"}, {"required", false}, {"description", q.description},
                        {"schema", {{"type", "string"}}}});
    }
    if (e.mutation) {
      params.push_back({{"name", "Idempotency-Key"},
                        {"in", "header"},
                        {"required", false},
                        {"description", "1 to 128 visible ASCII characters: a retry with the same key is answered "
                                        "from the first request's record (header Idempotent-Replayed), never made "
                                        "twice (docs/ha.md)"},
                        {"schema", {{"type", "string"}}}});
    }
    json responses = json::object();
    for (const int status : answered(e).list()) {
      json r = {{"description", describe(status)}};
      // /health answers its own document when degraded (503), not an error.
      const bool document = status < 400 || (e.id == EndpointId::kHealth && status == 503);
      if (!document) {
        r["content"] = {{"application/json", {{"schema", json_schema(kErrorDocument, false)}}}};
      } else if (e.response) {
        r["content"] = {{"application/json", {{"schema", json_schema(*e.response, false)}}}};
      }
      json headers = {{"X-Railyard-View-Version",
                       {{"description", "with ha: the replicated log entry this member's answer reflects"},
                        {"schema", {{"type", "integer"}}}}}};
      if (e.mutation && status == 200) {
        headers["Idempotent-Replayed"] = {{"description", "true: the answer of an earlier request with this "
                                                          "Idempotency-Key"},
                                          {"schema", {{"type", "string"}}}};
      }
      if (e.mutation && status == 503) {
        headers["X-Railyard-Leader"] = {{"description", "with ha: the API URL of the member that leads"},
                                        {"schema", {{"type", "string"}}}};
        headers["Retry-After"] = {{"description", "seconds"}, {"schema", {{"type", "integer"}}}};
      }
      r["headers"] = headers;
      responses[std::to_string(status)] = r;
    }
    json op = {{"summary", e.summary},
               {"operationId", method + pattern},
               {"x-railyard-role", controller::to_string(e.role)},
               {"parameters", params},
               {"responses", responses}};
    if (e.role != controller::Role::kNone) op["security"] = json::array({{{"bearer", json::array()}}});
    if (e.request) {
      json media = {{"schema", json_schema(*e.request, true)}};
      // The help's example body, where it is JSON (reroute's says "(optional)").
      if (json example = json::parse(e.body, nullptr, false); !example.is_discarded()) {
        media["example"] = example;
      }
      op["requestBody"] = {{"required", !e.request->optional}, {"content", {{"application/json", media}}}};
    }
    paths[pattern][method] = op;
  }
  return {{"openapi", "3.0.3"},
          {"info", {{"title", "railyard controller API"}, {"version", "1"}}},
          {"components", {{"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
          {"paths", paths}};
}

}  // namespace railyard::api
