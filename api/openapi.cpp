#include "api/openapi.h"

#include <string>

#include "api/endpoints.h"

namespace railyard::api {

using nlohmann::json;

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
    json responses = {{"200", {{"description", "OK"}}},
                      {"400", {{"description", "Bad request: the message says what is wrong"}}},
                      {"404", {{"description", "Unknown node, drain or request"}}}};
    if (e.role != controller::Role::kNone) {
      responses["401"] = {{"description", "No or invalid bearer token"}};
      responses["403"] = {{"description", "The token's role is too low"}};
    }
    if (e.mutation) {
      responses["409"] = {{"description", "Conflict (already drained, or the drain would cut CA pairs)"}};
      responses["429"] = {{"description", "Rate limited (Retry-After)"}};
    }
    json op = {{"summary", e.summary},
               {"operationId", method + pattern},
               {"x-railyard-role", controller::to_string(e.role)},
               {"parameters", params},
               {"responses", responses}};
    if (e.role != controller::Role::kNone) op["security"] = json::array({{{"bearer", json::array()}}});
    if (!e.body.empty()) {
      op["requestBody"] = {{"required", true},
                           {"content", {{"application/json", {{"schema", {{"type", "object"}}},
                                                              {"example", std::string(e.body)}}}}}};
    }
    paths[pattern][method] = op;
  }
  return {{"openapi", "3.0.3"},
          {"info", {{"title", "railyard controller API"}, {"version", "1"}}},
          {"components", {{"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
          {"paths", paths}};
}

}  // namespace railyard::api
