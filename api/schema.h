// The shapes of /api/v1's JSON documents, for the OpenAPI document: a request
// body's fields (api/request_bodies.h parses bodies against these very lists,
// so what is documented is what is accepted) and the top-level properties of
// the main response documents (tests hold the renderers to them).
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string_view>

namespace railyard::api {

struct Schema;

struct Field {
  std::string_view name;
  // A JSON Schema type (string, integer, number, boolean, array, object);
  // "number|string": either; "string[]": an array of strings.
  std::string_view type;
  bool required;  // always present (a response) or needed (a request)
  std::string_view description;
  const Schema* nested = nullptr;  // an object's properties, or an array's items (objects)
};

struct Schema {
  std::span<const Field> fields;
  bool optional = false;  // a request body that may be left out
};

// JSON Schema (OpenAPI 3.0) of an object with these fields; a request body's
// refuses other fields (additionalProperties: false), as its parser does.
nlohmann::json json_schema(const Schema& schema, bool closed);

// The 2xx documents OpenAPI describes (render.h renders them).
extern const Schema kHealthDocument;      // GET /health
extern const Schema kFabricDocument;      // GET /fabric
extern const Schema kDrainsDocument;      // GET /drains
extern const Schema kDrainOutcomeDocument;  // POST /drains, DELETE /drains/{id}
extern const Schema kRerouteDocument;     // GET /reroutes/{id}; each of GET /reroutes
extern const Schema kReroutesDocument;    // GET /reroutes
extern const Schema kRerouteAccepted;     // POST /reroute
extern const Schema kErrorDocument;       // every 4xx and 5xx

}  // namespace railyard::api
