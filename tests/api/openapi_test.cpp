// The endpoint table against its OpenAPI document, and the document against
// what railyardd really answers over HTTP: every status it returns for a bad
// request is one the document lists, every unknown request field is refused
// naming exactly the documented fields, and the main documents have the
// documented top-level properties. So the document cannot drift from
// behaviour.
#include <set>
#include <sstream>

#include "api/endpoints.h"
#include "api/openapi.h"
#include "tests/api/daemon.h"

namespace railyard::api {
namespace {

using namespace railyard::api::test_support;

std::string lower(std::string_view method) {
  std::string m(method);
  for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return m;
}

std::string verb_name(http::verb verb) {
  const auto name = http::to_string(verb);
  return std::string(name.data(), name.size());
}

// The operation of `method path` (a concrete path) in the document.
json operation(json& doc, std::string_view method, const std::string& path) {
  const Match m = match(method, path);
  EXPECT_NE(m.endpoint, nullptr) << method << " " << path;
  if (!m.endpoint) return json();
  return doc["paths"][std::string(m.endpoint->pattern)][lower(method)];
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

TEST(OpenApi, EveryEndpointIdHasExactlyOneRowAndAHandler) {
  std::vector<int> rows(static_cast<size_t>(EndpointId::kCount), 0);
  for (const Endpoint& e : endpoints()) {
    ASSERT_LT(static_cast<size_t>(e.id), rows.size()) << e.pattern;
    ++rows[static_cast<size_t>(e.id)];
    EXPECT_NE(e.handler, nullptr) << e.pattern;
  }
  for (size_t id = 0; id < rows.size(); ++id) EXPECT_EQ(rows[id], 1) << "EndpointId " << id;
}

TEST(OpenApi, ListsTheStatusesTheTableDeclares) {
  json doc = openapi_document();
  for (const Endpoint& e : endpoints()) {
    json& responses = doc["paths"][std::string(e.pattern)][lower(e.method)]["responses"];
    std::set<std::string> expected;
    for (const int status : answered(e).list()) expected.insert(std::to_string(status));
    EXPECT_EQ(keys(responses), expected) << e.method << " " << e.pattern;
    for (const int status : e.statuses.list()) {
      EXPECT_TRUE(responses.contains(std::to_string(status))) << e.method << " " << e.pattern << " " << status;
    }
    const bool needs_token = e.role != controller::Role::kNone;
    EXPECT_EQ(responses.contains("401"), needs_token) << e.pattern;
    EXPECT_EQ(responses.contains("403"), needs_token) << e.pattern;
    // Every endpoint answers something that is not an error.
    EXPECT_TRUE(e.statuses.contains(200) || e.statuses.contains(201) || e.statuses.contains(202)) << e.pattern;
    // A change that can be refused by the controller says how.
    if (e.mutation) {
      EXPECT_TRUE(e.statuses.contains(503)) << e.pattern;
    }
  }
}

// The HA headers (docs/ha.md): a mutation takes an Idempotency-Key; a
// refused one names the leader; every answer may carry the view version.
TEST(OpenApi, MutationsTakeAnIdempotencyKeyAndRefusalsNameTheLeader) {
  json doc = openapi_document();
  for (const Endpoint& e : endpoints()) {
    const json& op = doc["paths"][std::string(e.pattern)][lower(e.method)];
    bool key = false;
    for (const json& p : op["parameters"]) key |= p["in"] == "header" && p["name"] == "Idempotency-Key";
    EXPECT_EQ(key, e.mutation) << e.method << " " << e.pattern;
    for (const auto& [status, r] : op["responses"].items()) {
      EXPECT_TRUE(r["headers"].contains("X-Railyard-View-Version")) << e.pattern << " " << status;
    }
    if (e.mutation) {
      EXPECT_TRUE(op["responses"]["503"]["headers"].contains("X-Railyard-Leader")) << e.pattern;
    }
  }
}

TEST(OpenApi, RequestBodiesAreSchemasOfTheirFields) {
  json doc = openapi_document();
  for (const Endpoint& e : endpoints()) {
    json& op = doc["paths"][std::string(e.pattern)][lower(e.method)];
    if (!e.request) {
      EXPECT_FALSE(op.contains("requestBody")) << e.pattern;
      continue;
    }
    EXPECT_TRUE(e.mutation) << e.pattern;
    json& body = op["requestBody"];
    EXPECT_EQ(body["required"], !e.request->optional) << e.pattern;
    json& schema = body["content"]["application/json"]["schema"];
    EXPECT_EQ(schema["type"], "object");
    EXPECT_EQ(schema["additionalProperties"], false) << "unknown fields are refused: " << e.pattern;
    std::set<std::string> fields, required;
    for (const Field& f : e.request->fields) {
      fields.insert(std::string(f.name));
      if (f.required) required.insert(std::string(f.name));
      EXPECT_TRUE(schema["properties"][std::string(f.name)].contains("type") ||
                  schema["properties"][std::string(f.name)].contains("oneOf"))
          << e.pattern << " " << f.name;
    }
    EXPECT_EQ(keys(schema["properties"]), fields) << e.pattern;
    std::set<std::string> listed;
    for (const json& r : schema.value("required", json::array())) listed.insert(r.get<std::string>());
    EXPECT_EQ(listed, required) << e.pattern;
    // The example (help's body) is valid against the schema's field names.
    if (body["content"]["application/json"].contains("example")) {
      for (const auto& [key, value] : body["content"]["application/json"]["example"].items()) {
        EXPECT_TRUE(fields.contains(key)) << e.pattern << " example field " << key;
      }
    }
  }
  json& drain = doc["paths"]["/api/v1/drains"]["post"]["requestBody"]["content"]["application/json"]["schema"];
  EXPECT_EQ(drain["properties"]["port"]["type"], "integer");
  EXPECT_EQ(drain["properties"]["expires"]["oneOf"].size(), 2u);
  json& job = doc["paths"]["/api/v1/jobs"]["post"]["requestBody"]["content"]["application/json"]["schema"];
  EXPECT_EQ(job["properties"]["hosts"]["items"]["type"], "string");
}


TEST_F(ApiTest, BadRequestsAnswerStatusesOpenApiLists) {
  Daemon d(dir_, 1);  // one reroute a minute: the second is a 429
  json doc = d.get("/api/v1/openapi.json", "").doc();
  ASSERT_TRUE(doc.is_object());
  struct Case {
    http::verb verb;
    std::string path;  // with the query
    std::string body;
    std::string token;
    int status;  // what it answers today; the check is that OpenAPI lists it
  };
  const Case cases[] = {
      {http::verb::post, "/api/v1/drains", "{not json", kOperator, 400},
      {http::verb::post, "/api/v1/drains", R"({"target": "link", "node": "ghost", "port": 9, "reason": "x"})",
       kOperator, 404},
      {http::verb::post, "/api/v1/drains", kSpineLink, kViewer, 403},
      {http::verb::post, "/api/v1/drains", kSpineLink, "", 401},
      {http::verb::post, "/api/v1/drains?force=maybe", kSpineLink, kOperator, 400},
      {http::verb::delete_, "/api/v1/drains/abc", "", kOperator, 400},
      {http::verb::delete_, "/api/v1/drains/999", "", kOperator, 404},
      {http::verb::get, "/api/v1/reroutes/nope", "", kViewer, 404},
      {http::verb::post, "/api/v1/events/link", R"({"id": "x", "node": "ghost", "port": 9, "state": "down"})",
       kOperator, 404},
      {http::verb::post, "/api/v1/events/link", R"({"id": "x", "node": "leaf g000 r0", "port": 9, "state": "off"})",
       kOperator, 400},
      {http::verb::post, "/api/v1/jobs", R"({"id": "j1"})", kOperator, 400},
      {http::verb::post, "/api/v1/jobs", R"({"id": "j1", "hosts": ["node999"]})", kOperator, 404},
      {http::verb::get, "/api/v1/jobs/nope", "", kViewer, 404},
      {http::verb::get, "/api/v1/routes/ghost/node001", "", kViewer, 404},
      {http::verb::get, "/api/v1/links?state=sideways", "", kViewer, 400},
      {http::verb::get, "/api/v1/fabric?colour=red", "", kViewer, 400},
      {http::verb::get, "/api/v1/health?colour=red", "", "", 400},
      {http::verb::get, "/api/v1/hosts/node999/rails", "", kViewer, 404},
      {http::verb::get, "/api/v1/ar/ghost", "", kViewer, 404},
      {http::verb::get, "/api/v1/links/ghost/counters", "", kViewer, 400},
      {http::verb::get, "/api/v1/topology/slurm?format=xml", "", kViewer, 400},
      // This daemon runs no automatic isolation.
      {http::verb::get, "/api/v1/isolation", "", kViewer, 503},
      {http::verb::post, "/api/v1/isolation/exclude", R"({"target": "0x1"})", kOperator, 503},
      {http::verb::delete_, "/api/v1/isolation/exclude/0x1", "", kOperator, 503},
      {http::verb::post, "/api/v1/reroute", "", kOperator, 202},
      {http::verb::post, "/api/v1/reroute", "", kOperator, 429},
      {http::verb::post, "/api/v1/drains", kSpineLink, kOperator, 201},
      {http::verb::post, "/api/v1/drains", kSpineLink, kOperator, 409},
  };
  for (const Case& c : cases) {
    const Reply r = d.call(c.verb, c.path, c.token, c.body);
    const std::string what = verb_name(c.verb) + " " + c.path + " " + c.body;
    EXPECT_EQ(r.status, c.status) << what << " -> " << r.body;
    json op = operation(doc, verb_name(c.verb), c.path.substr(0, c.path.find('?')));
    EXPECT_TRUE(op["responses"].contains(std::to_string(r.status)))
        << what << " answered " << r.status << ", which OpenAPI does not list: " << op["responses"].dump();
  }
}

TEST_F(ApiTest, UnknownFieldsAreRefusedNamingTheDocumentedOnes) {
  Daemon d(dir_);
  json doc = d.get("/api/v1/openapi.json", "").doc();
  size_t bodies = 0;
  for (const Endpoint& e : endpoints()) {
    if (!e.request) continue;
    ASSERT_EQ(std::string(e.pattern).find('{'), std::string::npos) << "a body endpoint with a path parameter";
    ++bodies;
    const Reply r = d.post(std::string(e.pattern), R"({"zz_unknown": 1})");
    ASSERT_EQ(r.status, 400) << e.pattern << " -> " << r.body;
    const std::string message = r.doc()["error"]["message"];
    const std::string prefix = "unknown field 'zz_unknown' (expected: ";
    ASSERT_EQ(message.rfind(prefix, 0), 0u) << message;
    std::set<std::string> named;
    std::stringstream list(message.substr(prefix.size(), message.size() - prefix.size() - 1));
    for (std::string name; std::getline(list, name, ',');) named.insert(name.substr(name.find_first_not_of(' ')));
    json& schema = doc["paths"][std::string(e.pattern)]["post"]["requestBody"]["content"]["application/json"]["schema"];
    EXPECT_EQ(named, keys(schema["properties"])) << e.pattern;
  }
  EXPECT_EQ(bodies, 6u);
}

// A document's top-level properties against its 2xx schema in OpenAPI: each
// one documented, each required one there.
void expect_documented(json& doc, std::string_view method, const std::string& path, int status,
                       const json& body) {
  json op = operation(doc, method, path);
  json& schema = op["responses"][std::to_string(status)]["content"]["application/json"]["schema"];
  ASSERT_EQ(schema["type"], "object") << method << " " << path;
  ASSERT_TRUE(body.is_object()) << body.dump();
  for (const auto& [key, value] : body.items()) {
    EXPECT_TRUE(schema["properties"].contains(key)) << method << " " << path << ": '" << key << "' is not documented";
  }
  for (const json& r : schema.value("required", json::array())) {
    EXPECT_TRUE(body.contains(r.get<std::string>())) << method << " " << path << ": '" << r << "' is missing";
  }
}

TEST_F(ApiTest, MainDocumentsHaveTheirDocumentedProperties) {
  Daemon d(dir_);
  json doc = d.get("/api/v1/openapi.json", "").doc();
  expect_documented(doc, "GET", "/api/v1/health", 200, d.get("/api/v1/health").doc());
  expect_documented(doc, "GET", "/api/v1/fabric", 200, d.get("/api/v1/fabric").doc());
  const Reply dry = d.post("/api/v1/drains?dry_run=true", kSpineLink);
  ASSERT_EQ(dry.status, 200) << dry.body;
  expect_documented(doc, "POST", "/api/v1/drains", 200, dry.doc());
  const Reply drained = d.post("/api/v1/drains", kSpineLink);
  ASSERT_EQ(drained.status, 201) << drained.body;
  expect_documented(doc, "POST", "/api/v1/drains", 201, drained.doc());
  json drains = d.get("/api/v1/drains").doc();
  expect_documented(doc, "GET", "/api/v1/drains", 200, drains);
  ASSERT_EQ(drains["drains"].size(), 1u);
  json drain_schema =
      operation(doc, "GET", "/api/v1/drains")["responses"]["200"]["content"]["application/json"]["schema"];
  for (const auto& [key, value] : drains["drains"][0].items()) {
    EXPECT_TRUE(drain_schema["properties"]["drains"]["items"]["properties"].contains(key)) << key;
  }
  const Reply reroute = d.post("/api/v1/reroute", "");
  ASSERT_EQ(reroute.status, 202) << reroute.body;
  expect_documented(doc, "POST", "/api/v1/reroute", 202, reroute.doc());
  const std::string id = reroute.doc()["reroute"]["id"];
  expect_documented(doc, "GET", "/api/v1/reroutes/" + id, 200, d.get("/api/v1/reroutes/" + id).doc());
  expect_documented(doc, "GET", "/api/v1/reroutes", 200, d.get("/api/v1/reroutes").doc());
  const Reply undrained = d.del("/api/v1/drains/" + std::to_string(drained.doc()["drain"]["id"].get<int64_t>()));
  ASSERT_EQ(undrained.status, 200) << undrained.body;
  expect_documented(doc, "DELETE", "/api/v1/drains/1", 200, undrained.doc());
  // An error is {"error": {"status", "message"}} wherever one is listed.
  const Reply refused = d.post("/api/v1/drains", "{not json");
  expect_documented(doc, "POST", "/api/v1/drains", 400, refused.doc());
}

}  // namespace
}  // namespace railyard::api
