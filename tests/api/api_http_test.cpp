// /api/v1 over real HTTP on loopback: railyardd's server, API and controller
// in-process on a free port, an offline fabric from a generated topology
// file, and a real SQLite file. Each test talks HTTP/1.1 to it.
#include <set>

#include "api/endpoints.h"
#include "tests/api/daemon.h"

namespace railyard::api {
namespace {

using namespace railyard::api::test_support;


TEST_F(ApiTest, ReadEndpointsDescribeTheFabric) {
  Daemon d(dir_);
  Reply health = d.get("/api/v1/health", "");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.doc()["status"], "ok");

  json fabric = d.get("/api/v1/fabric").doc();
  EXPECT_EQ(fabric["cas"], 64);
  EXPECT_EQ(fabric["hosts"], 16);
  EXPECT_EQ(fabric["rails"], 4);
  EXPECT_EQ(fabric["switches"], 16);
  EXPECT_EQ(fabric["routing"]["unreachable_pairs"], 0);

  json hosts = d.get("/api/v1/hosts").doc();
  ASSERT_EQ(hosts["hosts"].size(), 16u);
  for (const json& h : hosts["hosts"]) {
    ASSERT_EQ(h["cas"].size(), 4u) << h.dump();
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(h["cas"][r]["rail"], r);
      // Rail r's CA hangs off a leaf of rail r.
      EXPECT_NE(h["cas"][r]["leaf"].get<std::string>().find(" r" + std::to_string(r)), std::string::npos);
      EXPECT_EQ(h["cas"][r]["health"], "healthy");
    }
  }
  json switches = d.get("/api/v1/switches").doc();
  EXPECT_EQ(switches["switches"].size(), 16u);
  EXPECT_EQ(d.get("/api/v1/links").doc()["count"], 64 + 64);

  json route = d.get("/api/v1/routes/node001%20mlx5_0/node016%20mlx5_0").doc();
  EXPECT_EQ(route["delivered"], true) << route.dump();
  ASSERT_EQ(route["hops"].size(), 5u);  // CA, leaf, spine, leaf, CA
  EXPECT_EQ(route["hops"][0]["node"], "node001 mlx5_0");
  EXPECT_EQ(route["hops"][1]["node"], "leaf g000 r0");
  EXPECT_EQ(route["hops"][4]["node"], "node016 mlx5_0");
  // By LID and by GUID too.
  const std::string dst_lid = std::to_string(route["destination_lid"].get<int>());
  const std::string src_guid = d.get("/api/v1/hosts").doc()["hosts"][0]["cas"][0]["guid"];
  json by_ids = d.get("/api/v1/routes/" + src_guid + "/" + dst_lid).doc();
  EXPECT_EQ(by_ids["hops"], route["hops"]);

  Reply slurm = d.get("/api/v1/topology/slurm");
  EXPECT_EQ(slurm.status, 200);
  EXPECT_EQ(slurm.content_type.rfind("text/plain", 0), 0u);
  for (int h = 1; h <= 16; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "node%03d", h);
    size_t count = 0;
    for (size_t at = slurm.body.find(name); at != std::string::npos; at = slurm.body.find(name, at + 1)) ++count;
    EXPECT_EQ(count, 1u) << name << " must be under exactly one switch:\n" << slurm.body;
  }
  Reply yaml = d.get("/api/v1/topology/slurm?format=yaml");
  EXPECT_EQ(yaml.status, 200);
  EXPECT_EQ(yaml.content_type.rfind("application/yaml", 0), 0u);
  EXPECT_NE(yaml.body.find("- topology: railyard-tree"), std::string::npos) << yaml.body;
  EXPECT_EQ(d.get("/api/v1/topology/slurm?format=kubernetes").status, 400);
  EXPECT_EQ(d.get("/api/v1/topology/slurm?format=xml").status, 400);
  Reply k8s = d.get("/api/v1/topology/kubernetes");
  EXPECT_EQ(k8s.status, 200);
  EXPECT_NE(k8s.body.find("kind: Topology"), std::string::npos) << k8s.body;
  json rails = d.get("/api/v1/hosts/node003/rails").doc();
  EXPECT_EQ(rails["host"], "node003");
  EXPECT_EQ(rails["cas"].size(), rails["rails"].get<size_t>());
  EXPECT_EQ(d.get("/api/v1/hosts/node999/rails").status, 404);
  EXPECT_EQ(d.get("/api/v1/hosts/node003/rails", "").status, 401);

  Reply metrics = d.get("/api/v1/metrics", "");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("railyard_links{state=\"up\"} 128"), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("railyard_drains_active 0"), std::string::npos);
}

TEST_F(ApiTest, IndexAndOpenApiListEveryEndpoint) {
  Daemon d(dir_);
  json index = d.get("/api/v1").doc();
  json openapi = d.get("/api/v1/openapi.json", "").doc();
  ASSERT_EQ(index["endpoints"].size(), endpoints().size());
  for (const Endpoint& e : endpoints()) {
    std::string method(e.method);
    for (char& c : method) c = static_cast<char>(std::tolower(c));
    EXPECT_TRUE(openapi["paths"][std::string(e.pattern)].contains(method)) << e.pattern;
  }
}

TEST_F(ApiTest, AuthenticationAndRoles) {
  Daemon d(dir_);
  Reply none = d.get("/api/v1/fabric", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(d.get("/api/v1/fabric", "wrong-token-0123456789").status, 401);
  Reply viewer = d.post("/api/v1/drains", kSpineLink, kViewer);
  EXPECT_EQ(viewer.status, 403);
  EXPECT_NE(viewer.doc()["error"]["message"].get<std::string>().find("needs operator"), std::string::npos);
  EXPECT_EQ(d.post("/api/v1/drains", kSpineLink, "").status, 401);
  EXPECT_EQ(d.get("/api/v1/drains").doc()["drains"].size(), 0u) << "nothing was drained";
}

TEST_F(ApiTest, BadRequestsAreFourHundredsWithAReason) {
  Daemon d(dir_);
  struct Case {
    std::string body;
    int status;
    std::string message;
  };
  const Case cases[] = {
      {"{not json", 400, "not valid JSON"},
      {"[1,2]", 400, "must be a JSON object"},
      {"", 400, "body is required"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "x", "colour": "red"})", 400, "unknown field 'colour'"},
      {R"({"target": "cable", "node": "leaf g000 r0", "port": 9, "reason": "x"})", 400, "link, port or switch"},
      {R"({"target": "link", "node": "leaf g000 r0", "reason": "x"})", 400, "'port' is required"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 300, "reason": "x"})", 400, "1..254"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": "9", "reason": "x"})", 400, "1..254"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 9})", 400, "'reason' is required"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": ""})", 400, "must say why"},
      {R"({"target": "link", "node": "no such switch", "port": 9, "reason": "x"})", 404, "unknown node"},
      {R"({"target": "link", "node": "0xdeadbeef", "port": 9, "reason": "x"})", 404, "unknown node"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 17, "reason": "x"})", 400, "ports 1..16"},
      {R"({"target": "switch", "node": "node001 mlx5_0", "reason": "x"})", 400, "not a switch"},
      {R"({"target": "switch", "node": "leaf g000 r0", "port": 1, "reason": "x"})", 400, "takes no 'port'"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "x", "expires": "soon"})", 400, "expires"},
      {R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "x", "expires": 5})", 400, "in the future"},
  };
  for (const Case& c : cases) {
    Reply r = d.post("/api/v1/drains", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    json doc = r.doc();
    ASSERT_TRUE(doc.is_object()) << r.body;
    EXPECT_NE(doc["error"]["message"].get<std::string>().find(c.message), std::string::npos)
        << c.body << " -> " << r.body;
  }
  EXPECT_EQ(d.get("/api/v1/nothing-here").status, 404);
  EXPECT_EQ(d.call(http::verb::put, "/api/v1/drains").status, 405);
  EXPECT_EQ(d.get("/api/v1/links?state=sideways").status, 400);
  EXPECT_EQ(d.get("/api/v1/links?colour=red").status, 400);
  EXPECT_EQ(d.get("/api/v1/events?since=-1").status, 400);
  EXPECT_EQ(d.get("/api/v1/routes/node001%20mlx5_0/nobody").status, 404);
  EXPECT_EQ(d.get("/api/v1/routes/%zz/x").status, 400);
  // An encoded '/' stays inside its segment: a name, not a path separator.
  Reply slash = d.get("/api/v1/routes/rack%2F7/node001%20mlx5_0");
  EXPECT_EQ(slash.status, 404) << slash.body;
  EXPECT_NE(slash.body.find("unknown source 'rack/7'"), std::string::npos) << slash.body;
  EXPECT_EQ(d.del("/api/v1/drains/abc").status, 400);
  EXPECT_EQ(d.del("/api/v1/drains/42").status, 404);
  // Bodies beyond the limit (2 KiB here) are refused before parsing.
  Reply big = d.post("/api/v1/drains", R"({"reason": ")" + std::string(4096, 'x') + "\"}");
  EXPECT_EQ(big.status, 413) << big.body;
  EXPECT_EQ(d.get("/api/v1/drains").doc()["drains"].size(), 0u);
}

TEST_F(ApiTest, DrainLifecycle) {
  Daemon d(dir_);
  // Dry run: the impact, nothing stored.
  Reply dry = d.post("/api/v1/drains?dry_run=true", kSpineLink);
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.doc()["dry_run"], true);
  EXPECT_EQ(dry.doc()["impact"]["pairs_cut"], 0);
  EXPECT_GT(dry.doc()["impact"]["pairs_rerouted"].get<int>(), 0);
  EXPECT_GT(dry.doc()["impact"]["lft_blocks_changed"].get<int>(), 0);
  EXPECT_EQ(d.get("/api/v1/drains").doc()["drains"].size(), 0u);

  const int64_t version_before = d.get("/api/v1/health").doc()["fabric"]["version"];
  Reply made = d.post("/api/v1/drains", kSpineLink);
  ASSERT_EQ(made.status, 201) << made.body;
  const int64_t id = made.doc()["drain"]["id"];
  // Offline, "applied" means the view in force was routed again with the
  // drain: a new fabric version, and the request's latency is that routing.
  EXPECT_EQ(made.doc()["reroute"]["status"], "applied");
  EXPECT_EQ(d.get("/api/v1/health").doc()["fabric"]["version"], version_before + 1);
  EXPECT_GT(made.doc()["reroute"]["latency_ms"].get<double>(), 0);
  EXPECT_EQ(made.doc()["reroute"]["latency_ms"], made.doc()["impact"]["route_ms"]);
  EXPECT_EQ(made.doc()["impact"]["pairs_rerouted"], dry.doc()["impact"]["pairs_rerouted"]);

  json drained = d.get("/api/v1/links?state=drained").doc();
  ASSERT_EQ(drained["count"], 1);
  const json& link = drained["links"][0];
  const json& leaf_end = link["a"]["node"] == "leaf g000 r0" ? link["a"] : link["b"];
  EXPECT_EQ(leaf_end["node"], "leaf g000 r0") << link.dump();
  EXPECT_EQ(leaf_end["port"], 9) << link.dump();

  // No route crosses the drained link any more.
  for (int h = 2; h <= 16; ++h) {
    char dst[32];
    std::snprintf(dst, sizeof dst, "node%03d%%20mlx5_0", h);
    json route = d.get(std::string("/api/v1/routes/node001%20mlx5_0/") + dst).doc();
    ASSERT_EQ(route["delivered"], true);
    for (const json& hop : route["hops"]) {
      if (hop["node"] == "leaf g000 r0") {
        EXPECT_NE(hop.value("out_port", 0), 9) << route.dump();
      }
    }
  }
  // The policy file the plugin reads names the drain.
  std::ifstream policy(dir_ / "policy.yaml");
  std::string text((std::istreambuf_iterator<char>(policy)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(made.doc()["drain"]["key"].get<std::string>()), std::string::npos) << text;

  Reply again = d.post("/api/v1/drains", kSpineLink);
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(again.doc()["error"]["message"].get<std::string>().find("already drained"), std::string::npos);

  EXPECT_NE(d.get("/api/v1/metrics", "").body.find("railyard_drains_active 1"), std::string::npos);

  Reply undrain = d.del("/api/v1/drains/" + std::to_string(id));
  EXPECT_EQ(undrain.status, 200) << undrain.body;
  EXPECT_EQ(d.get("/api/v1/links?state=drained").doc()["count"], 0);
  EXPECT_EQ(d.del("/api/v1/drains/" + std::to_string(id)).status, 404);

  // Every mutation is in the audit log, with who and the outcome.
  auto audit = d.controller().store().audit_since(0, 100);
  ASSERT_GE(audit.size(), 4u);
  int created = 0, conflicts = 0;
  for (const auto& a : audit) {
    created += a.status == 201;
    conflicts += a.status == 409;
    EXPECT_EQ(a.actor, "ops");
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(conflicts, 1);
}

TEST_F(ApiTest, DrainThatCutsPairsIsRefusedUnlessForced) {
  Daemon d(dir_);
  // node001 mlx5_0's only link.
  const std::string ca_link = R"({"target": "link", "node": "leaf g000 r0", "port": 1, "reason": "replace cable"})";
  Reply refused = d.post("/api/v1/drains", ca_link);
  ASSERT_EQ(refused.status, 409) << refused.body;
  json err = refused.doc()["error"];
  EXPECT_GT(err["impact"]["pairs_cut"].get<int>(), 0);
  ASSERT_FALSE(err["impact"]["cut"].empty());
  EXPECT_EQ(err["impact"]["cut"][0]["destination"], "node001 mlx5_0") << err.dump();
  EXPECT_NE(err["impact"]["cut"][0]["example_source"], "node001 mlx5_0") << "a CA is no source of its own pairs";
  EXPECT_EQ(d.get("/api/v1/drains").doc()["drains"].size(), 0u);

  Reply forced = d.post("/api/v1/drains?force=true", ca_link);
  EXPECT_EQ(forced.status, 201) << forced.body;
  // A switch drain: every link of the switch. The whole-fabric documents
  // (rendered once per change) show it at once.
  const json before = d.get("/api/v1/switches").doc();
  EXPECT_EQ(d.get("/api/v1/fabric").doc()["drains"], 1);
  Reply sw = d.post("/api/v1/drains", R"({"target": "switch", "node": "spine s01", "reason": "firmware"})");
  EXPECT_EQ(sw.status, 201) << sw.body;
  EXPECT_EQ(d.get("/api/v1/fabric").doc()["drains"], 2);
  const json after = d.get("/api/v1/switches").doc();
  for (size_t i = 0; i < after["switches"].size(); ++i) {
    const bool is_s01 = after["switches"][i]["name"] == "spine s01";
    EXPECT_FALSE(before["switches"][i].contains("drain"));
    EXPECT_EQ(after["switches"][i].contains("drain"), is_s01) << after["switches"][i].dump();
  }
  EXPECT_EQ(d.get("/api/v1/links?state=drained").doc()["count"], 1 + 8);
}

TEST_F(ApiTest, RerouteIsRateLimited) {
  Daemon d(dir_, 2);
  const int64_t version_before = d.get("/api/v1/health").doc()["fabric"]["version"];
  EXPECT_EQ(d.post("/api/v1/reroute", "").status, 202);
  Reply second = d.post("/api/v1/reroute", R"({"reason": "test"})");
  EXPECT_EQ(second.status, 202);
  const std::string id = second.doc()["reroute"]["id"];
  Reply third = d.post("/api/v1/reroute", "");
  EXPECT_EQ(third.status, 429);
  EXPECT_FALSE(third.retry_after.empty());
  // Offline each accepted reroute routes the view again (a new version); the
  // refused one does not.
  EXPECT_EQ(d.get("/api/v1/health").doc()["fabric"]["version"], version_before + 2);
  Reply got = d.get("/api/v1/reroutes/" + id);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.doc()["status"], "applied");
  EXPECT_GT(got.doc()["latency_ms"].get<double>(), 0) << got.body;
  EXPECT_EQ(got.doc()["reason"], "test");
  EXPECT_EQ(d.get("/api/v1/reroutes/nope").status, 404);
  EXPECT_EQ(d.post("/api/v1/reroute", R"({"why": 1})").status, 400);
}

// The uplink of leaf g000 r0 that the route node001 -> node016 leaves by
// (hops: the CA, its leaf, ...): the port a test takes away must be one the
// route really uses, or "the route avoids it" proves nothing.
int uplink_of_route(Daemon& d) {
  const json route = d.get("/api/v1/routes/node001%20mlx5_0/node016%20mlx5_0").doc();
  EXPECT_EQ(route["delivered"], true) << route.dump();
  EXPECT_EQ(route["hops"][1]["node"], "leaf g000 r0") << route.dump();
  const int port = route["hops"][1].value("out_port", 0);
  EXPECT_GE(port, 9) << "an uplink (ports 9..16): " << route.dump();
  return port;
}

TEST_F(ApiTest, LinkEventsAreIdempotentAndReroute) {
  Daemon d(dir_);
  const int used = uplink_of_route(d);
  const std::string ev = R"({"id": "mon-17", "node": "leaf g000 r0", "port": )" + std::to_string(used) +
                         R"(, "state": "down", "reason": "symbol errors"})";
  Reply first = d.post("/api/v1/events/link", ev);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.doc()["duplicate"], false);
  Reply second = d.post("/api/v1/events/link", ev);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.doc()["duplicate"], true);
  EXPECT_EQ(second.doc()["event"]["id"], first.doc()["event"]["id"]);

  json down = d.get("/api/v1/links?state=down").doc();
  ASSERT_EQ(down["count"], 1) << down.dump();
  json events = d.get("/api/v1/events?since=0").doc();
  ASSERT_EQ(events["events"].size(), 1u);
  EXPECT_EQ(events["events"][0]["type"], "link_down");
  EXPECT_EQ(events["events"][0]["external_id"], "mon-17");
  // The route that used the reported link avoids it now, and takes it again
  // once the link is back (routing is deterministic).
  json route = d.get("/api/v1/routes/node001%20mlx5_0/node016%20mlx5_0").doc();
  EXPECT_EQ(route["delivered"], true);
  EXPECT_NE(route["hops"][1].value("out_port", 0), used) << route.dump();

  EXPECT_EQ(d.post("/api/v1/events/link", R"({"id": "mon-18", "node": "leaf g000 r0", "port": )" +
                                              std::to_string(used) + R"(, "state": "up"})")
                .status,
            201);
  EXPECT_EQ(d.get("/api/v1/links?state=down").doc()["count"], 0);
  EXPECT_EQ(uplink_of_route(d), used);
  EXPECT_EQ(d.post("/api/v1/events/link", R"({"id": "x", "node": "leaf g000 r0", "port": 9, "state": "sideways"})").status,
            400);
  EXPECT_EQ(d.post("/api/v1/events/link", R"({"id": "x", "node": "ghost", "port": 9, "state": "down"})").status, 404);
}

TEST_F(ApiTest, StateSurvivesARestart) {
  int64_t id = 0;
  int used = 0;
  {
    Daemon d(dir_);
    used = uplink_of_route(d);
    Reply made = d.post("/api/v1/drains", R"({"target": "link", "node": "leaf g000 r0", "port": )" +
                                              std::to_string(used) + R"(, "reason": "flapping"})");
    ASSERT_EQ(made.status, 201);
    id = made.doc()["drain"]["id"];
    ASSERT_EQ(d.post("/api/v1/events/link", R"({"id": "m1", "node": "leaf g001 r1", "port": 10, "state": "down"})").status,
              201);
  }
  Daemon d(dir_);
  json drains = d.get("/api/v1/drains").doc();
  ASSERT_EQ(drains["drains"].size(), 1u);
  EXPECT_EQ(drains["drains"][0]["id"], id);
  EXPECT_EQ(d.get("/api/v1/links?state=drained").doc()["count"], 1);
  EXPECT_EQ(d.get("/api/v1/links?state=down").doc()["count"], 1);
  // Still applied after the restart: the route that used the drained link
  // avoids it; undrained, it takes it again.
  json route = d.get("/api/v1/routes/node001%20mlx5_0/node016%20mlx5_0").doc();
  EXPECT_NE(route["hops"][1].value("out_port", 0), used) << route.dump();
  ASSERT_EQ(d.del("/api/v1/drains/" + std::to_string(id)).status, 200);
  EXPECT_EQ(uplink_of_route(d), used);
}

TEST_F(ApiTest, AdaptiveRoutingGroups) {
  Daemon d(dir_);
  json summary = d.get("/api/v1/ar").doc();
  ASSERT_EQ(summary["switches"].size(), 16u) << summary.dump().substr(0, 400);
  EXPECT_EQ(summary["over_limit"].size(), 0u);
  EXPECT_EQ(summary["max_groups_per_switch"], 2048);
  // A leaf of a healthy 2-level ROFT (radix 16: CA ports 1-8, uplinks 9-16):
  // a CA on another leaf is reachable over every uplink, a CA of its own over
  // exactly its one port.
  json leaf = d.get("/api/v1/ar/leaf%20g000%20r0").doc();
  json hosts = d.get("/api/v1/hosts").doc();
  const int local_lid = hosts["hosts"][0]["cas"][0]["lid"];    // node001 mlx5_0, on leaf g000 r0
  const int remote_lid = hosts["hosts"][15]["cas"][0]["lid"];  // node016 mlx5_0, on leaf g001 r0
  const json& groups = leaf["groups"];
  const json& map = leaf["lid_to_group"];
  ASSERT_TRUE(map.contains(std::to_string(local_lid))) << leaf.dump().substr(0, 400);
  EXPECT_EQ(groups[map[std::to_string(local_lid)].get<int>()], json::array({1}));
  EXPECT_EQ(groups[map[std::to_string(remote_lid)].get<int>()], json::array({9, 10, 11, 12, 13, 14, 15, 16}));
  json one = d.get("/api/v1/ar/leaf%20g000%20r0?lid=" + std::to_string(remote_lid)).doc();
  EXPECT_EQ(one["lid_to_group"].size(), 1u);
  // A drained uplink leaves the groups.
  ASSERT_EQ(d.post("/api/v1/drains", kSpineLink).status, 201);
  json drained = d.get("/api/v1/ar/leaf%20g000%20r0").doc();
  EXPECT_EQ(drained["groups"][drained["lid_to_group"][std::to_string(remote_lid)].get<int>()],
            json::array({10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(d.get("/api/v1/ar/node001%20mlx5_0").status, 404) << "a CA has no AR table";
  EXPECT_EQ(d.get("/api/v1/ar/nobody").status, 404);
}

std::string all_hosts_job(const std::string& id) {
  json hosts = json::array();
  for (int h = 1; h <= 16; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "node%03d", h);
    hosts.push_back(name);
  }
  return json{{"id", id}, {"hosts", hosts}}.dump();
}

TEST_F(ApiTest, SharpJobsShareCapacityAndFollowFailures) {
  int64_t version = 0;
  {
    Daemon d(dir_);
    Reply made = d.post("/api/v1/jobs", all_hosts_job("job-1"));
    ASSERT_EQ(made.status, 201) << made.body;
    json job = made.doc();
    ASSERT_EQ(job["trees"].size(), 4u) << "one tree per rail";
    std::set<int> rails;
    for (const json& t : job["trees"]) {
      rails.insert(t["rail"].get<int>());
      EXPECT_EQ(t["cas"], 16);
      // Two leaves of the rail under one spine: height 1, every switch's
      // parent is the root, every leaf holds the rail's 8 CAs of its group.
      EXPECT_EQ(t["height"], 1);
      ASSERT_EQ(t["switches"].size(), 3u) << t.dump();
      EXPECT_EQ(t["switches"][0]["switch"], t["root"]);
      EXPECT_TRUE(t["switches"][0]["parent"].is_null());
      for (size_t i = 1; i < 3; ++i) {
        EXPECT_EQ(t["switches"][i]["parent"], t["root"]);
        EXPECT_EQ(t["switches"][i]["cas"].size(), 8u);
        EXPECT_NE(t["switches"][i]["switch"].get<std::string>().find(" r" + std::to_string(t["rail"].get<int>())),
                  std::string::npos)
            << "rail-aligned leaves";
      }
    }
    EXPECT_EQ(rails, (std::set<int>{0, 1, 2, 3}));

    // Leaves hold 4 trees (the default): jobs 2..4 fit, the 5th is refused.
    for (int i = 2; i <= 4; ++i) ASSERT_EQ(d.post("/api/v1/jobs", all_hosts_job("job-" + std::to_string(i))).status, 201);
    Reply full = d.post("/api/v1/jobs", all_hosts_job("job-5"));
    EXPECT_EQ(full.status, 409) << full.body;
    EXPECT_NE(full.body.find("capacity exhausted"), std::string::npos) << full.body;
    EXPECT_EQ(d.post("/api/v1/jobs", all_hosts_job("job-1")).status, 409) << "ids are unique";
    EXPECT_EQ(d.get("/api/v1/jobs").doc()["jobs"].size(), 4u);
    ASSERT_EQ(d.del("/api/v1/jobs/job-4").status, 200);
    EXPECT_EQ(d.del("/api/v1/jobs/job-4").status, 404);
    EXPECT_EQ(d.post("/api/v1/jobs", all_hosts_job("job-5")).status, 201) << "deleting freed the slots";

    // A link of job-1's rail-0 tree fails: its trees are recomputed around it.
    json t0 = d.get("/api/v1/jobs/job-1").doc()["trees"][0];
    const std::string leaf = t0["switches"][1]["switch"];
    const std::string root = t0["root"];
    // The leaf's port toward the root, from the fabric's link list.
    int port = 0;
    const json links = d.get("/api/v1/links").doc();
    for (const json& l : links["links"]) {
      if (l["a"]["node"] == leaf && l["b"]["node"] == root) port = l["a"]["port"];
      if (l["b"]["node"] == leaf && l["a"]["node"] == root) port = l["b"]["port"];
    }
    ASSERT_NE(port, 0) << leaf << " / " << root << " / " << t0.dump().substr(0, 300);
    json ev = {{"id", "mon-sharp"}, {"node", leaf}, {"port", port}, {"state", "down"}};
    ASSERT_EQ(d.post("/api/v1/events/link", ev.dump()).status, 201);
    json after = d.get("/api/v1/jobs/job-1").doc();
    EXPECT_EQ(after["status"], "active");
    EXPECT_GT(after["version"].get<int>(), 1);
    version = after["version"];
    for (const json& s2 : after["trees"][0]["switches"]) {
      EXPECT_FALSE(s2["switch"] == leaf && s2["parent"] == root) << "the tree still uses the failed link";
    }
    bool seen = false;
    const json events = d.get("/api/v1/events?since=0").doc();
    for (const json& e : events["events"]) seen |= e["type"] == "sharp_job_changed";
    EXPECT_TRUE(seen);

    EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x", "hosts": ["nobody"]})").status, 404);
    EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x"})").status, 400);
    EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x", "hosts": "node001"})").status, 400);
    EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x", "hosts": ["node001"], "rails": [9]})").status, 400);
    EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x", "hosts": ["node001"]})", kViewer).status, 403);
  }
  // Jobs survive a restart with their trees.
  Daemon d(dir_);
  json jobs = d.get("/api/v1/jobs").doc()["jobs"];
  ASSERT_EQ(jobs.size(), 4u);
  json again = d.get("/api/v1/jobs/job-1").doc();
  EXPECT_EQ(again["status"], "active");
  EXPECT_GE(again["version"].get<int64_t>(), version);
  EXPECT_EQ(d.get("/api/v1/jobs/job-4").doc()["status"], "deleted");
  EXPECT_EQ(d.get("/api/v1/jobs?all=true").doc()["jobs"].size(), 5u);
}

// A job request's refusals: the kind (and so the status) comes from what was
// checked, not from matching the message; the messages are the allocator's.
TEST_F(ApiTest, JobRequestsAreRefusedWithTheirKind) {
  Daemon d(dir_);
  struct Case {
    std::string body;
    int status;
    std::string message;
  };
  const Case cases[] = {
      {R"({"id": "x", "hosts": ["nobody"]})", 404, "job 'x': unknown host 'nobody'"},
      {R"({"id": "x", "cas": ["ghost"]})", 404, "job 'x': unknown CA 'ghost'"},
      {R"({"id": "x", "cas": ["leaf g000 r0"]})", 400, "job 'x': 'leaf g000 r0' is a switch, not a CA"},
      {R"({"id": "x", "hosts": ["node001"], "rails": [9]})", 400,
       "job 'x': rail 9 is not a rail of this fabric (4 rails)"},
      {R"({"id": "x", "cas": ["node001 mlx5_0"], "rails": [1]})", 400, "job 'x': none of its CAs is on rail 1"},
  };
  for (const Case& c : cases) {
    Reply r = d.post("/api/v1/jobs", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " -> " << r.body;
    EXPECT_EQ(r.doc()["error"]["message"], c.message) << c.body;
  }
  EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "x", "cas": ["node001 mlx5_0"], "rails": [0]})").status, 201);
  EXPECT_TRUE(d.get("/api/v1/jobs?all=true").doc()["jobs"].size() == 1u) << "only the last one was made";
}

}  // namespace
}  // namespace railyard::api
