// The web console's side of railyardd: its files (no token, a same-origin
// CSP), GET /api/v1/whoami and the picture GET /api/v1/grid (counts, link
// states after a drain and a link event, predicted loads), over real HTTP.
// The page itself runs in Chromium in tests/integration/console_browser_test.sh.
#include <thread>

#include "api/console/assets.h"
#include "tests/api/daemon.h"

namespace railyard::api {
namespace {

using namespace railyard::api::test_support;

// 16 servers x 4 rails at radix 16 (daemon.h): 8 leaves with 8 CAs and 8
// uplinks each, 8 spines: 64 switch links, 64 CA links.
constexpr size_t kLeaves = 8, kSpines = 8, kSwitchLinks = 8 * 8;

TEST_F(ApiTest, ConsoleFilesAreServedWithoutATokenFromThisOriginOnly) {
  Daemon d(dir_);
  const std::string page = d.raw("GET /console/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(page.rfind("HTTP/1.1 200", 0), 0u) << page.substr(0, 200);
  EXPECT_NE(page.find("Content-Security-Policy: default-src 'self'"), std::string::npos);
  EXPECT_NE(page.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(page.find("<script src=\"console.js\""), std::string::npos);
  // Every file of api/console/web/ is served, byte for byte, with its type.
  for (const console::Asset& a : console::assets()) {
    Reply r = d.get("/console/" + std::string(a.name), "");
    EXPECT_EQ(r.status, 200) << a.name;
    EXPECT_EQ(r.body, a.body) << a.name;
    EXPECT_EQ(r.content_type, a.content_type) << a.name;
  }
  EXPECT_NE(console::find_asset("grid.js"), nullptr);
  const std::string root = d.raw("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(root.rfind("HTTP/1.1 302", 0), 0u);
  EXPECT_NE(root.find("Location: /console/"), std::string::npos);
  EXPECT_EQ(d.get("/console/nothing.js", "").status, 404);
  EXPECT_EQ(d.get("/console/../api/v1/fabric", "").status, 404);
  EXPECT_EQ(d.post("/console/", "{}").status, 405);
}

TEST_F(ApiTest, WhoamiNamesTheCallersRole) {
  Daemon d(dir_);
  EXPECT_EQ(d.get("/api/v1/whoami", kOperator).doc(), json({{"name", "ops"}, {"role", "operator"}}));
  EXPECT_EQ(d.get("/api/v1/whoami", kViewer).doc(), json({{"name", "dash"}, {"role", "viewer"}}));
  EXPECT_EQ(d.get("/api/v1/whoami", "").status, 401);
  EXPECT_EQ(d.get("/api/v1/whoami", "not-a-token-0123456789").status, 401);
}

TEST_F(ApiTest, EventStreamSendsEventsAsTheyAreRecorded) {
  Daemon d(dir_);
  EXPECT_EQ(d.get("/api/v1/events/stream", "").status, 401);
  std::string seen;
  std::thread reader([&] {
    seen = d.raw(std::string("GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kViewer +
                     "\r\n\r\n",
                 std::chrono::milliseconds(2000));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Reply down = d.post("/api/v1/events/link", R"({"id": "m-1", "node": "leaf g001 r1", "port": 10, "state": "down"})");
  reader.join();
  ASSERT_EQ(down.status, 201) << down.body;
  const int64_t id = down.doc()["event"]["id"];
  EXPECT_NE(seen.find("Content-Type: text/event-stream"), std::string::npos) << seen;
  EXPECT_NE(seen.find("event: event\nid: " + std::to_string(id) + "\ndata: {"), std::string::npos) << seen;
  EXPECT_NE(seen.find("\"type\":\"link_down\""), std::string::npos) << seen;
  // ?since=0 replays what was recorded before.
  const std::string replay = d.raw(std::string("GET /api/v1/events/stream?since=0 HTTP/1.1\r\nHost: x\r\n"
                                               "Authorization: Bearer ") + kViewer + "\r\n\r\n",
                                   std::chrono::milliseconds(800));
  EXPECT_NE(replay.find("id: " + std::to_string(id) + "\n"), std::string::npos) << replay;
}

TEST_F(ApiTest, GridIsTheFabricAggregatedPerLeaf) {
  Daemon d(dir_);
  EXPECT_EQ(d.get("/api/v1/grid", "").status, 401);
  EXPECT_EQ(d.get("/api/v1/grid?loads=measured").status, 400);
  json g = d.get("/api/v1/grid").doc();
  EXPECT_EQ(g["rails"], 4);
  EXPECT_EQ(g["hosts"], 16);
  EXPECT_EQ(g["cas"], 64);
  EXPECT_EQ(g["levels"], 2);
  ASSERT_EQ(g["switches"].size(), kLeaves + kSpines);
  ASSERT_EQ(g["links"].size(), kSwitchLinks);
  ASSERT_EQ(g["keys"].size(), kSwitchLinks);
  EXPECT_FALSE(g.contains("loads"));
  size_t leaves = 0, ca_links = 0;
  for (const json& s : g["switches"]) {
    if (s["level"] == 0) {
      ++leaves;
      // "leaf g001 r2" carries rail 2.
      const std::string name = s["name"];
      EXPECT_EQ(s["rail"], name.back() - '0') << name;
      EXPECT_EQ(s["cas"], 8) << name;
    } else {
      EXPECT_EQ(s["level"], 1);
      EXPECT_EQ(s["cas"], 0);
    }
    ca_links += s["cas"].get<size_t>();
  }
  EXPECT_EQ(leaves, kLeaves);
  EXPECT_EQ(ca_links, 64u);
  // Every link joins a leaf to a spine, and /links names it the same way.
  std::set<std::string> keys;
  const json links = d.get("/api/v1/links").doc();
  for (const json& l : links["links"]) keys.insert(l["link"]);
  for (size_t k = 0; k < kSwitchLinks; ++k) {
    const json& l = g["links"][k];
    EXPECT_NE(g["switches"][l[0].get<size_t>()]["level"], g["switches"][l[2].get<size_t>()]["level"]);
    EXPECT_EQ(l[4], 0);
    EXPECT_TRUE(keys.contains(g["keys"][k])) << g["keys"][k];
  }

  // Predicted loads: all-to-all over a balanced ROFT puts the same number of
  // flows on every uplink: a leaf's 8 CAs send to the 56 CAs elsewhere over
  // its 8 uplinks, 56 flows each way.
  json loaded = d.get("/api/v1/grid?loads=predicted").doc();
  ASSERT_EQ(loaded["loads"].size(), kSwitchLinks);
  for (const json& ld : loaded["loads"]) EXPECT_EQ(ld, json({56, 56}));
  EXPECT_EQ(loaded["load_max"], 56);

  // A drain and a link reported down show in the next picture.
  ASSERT_EQ(d.post("/api/v1/drains", R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "t"})").status, 201);
  ASSERT_EQ(d.post("/api/v1/events/link", R"({"id": "m-1", "node": "leaf g001 r1", "port": 10, "state": "down"})").status,
            201);
  json after = d.get("/api/v1/grid?loads=predicted").doc();
  std::map<std::string, int> state;
  for (size_t k = 0; k < kSwitchLinks; ++k) {
    const json& l = after["links"][k];
    state[after["switches"][l[0].get<size_t>()]["name"].get<std::string>() + "[" + l[1].dump() + "]"] = l[4];
    state[after["switches"][l[2].get<size_t>()]["name"].get<std::string>() + "[" + l[3].dump() + "]"] = l[4];
  }
  EXPECT_EQ(state["leaf g000 r0[9]"], 2);
  EXPECT_EQ(state["leaf g001 r1[10]"], 1);
  EXPECT_EQ(state["leaf g000 r0[10]"], 0);
  // Leaf g000 r0's other 7 uplinks now carry its 56 flows each way: 8 each.
  uint64_t busiest = 0;
  for (const json& ld : after["loads"]) busiest = std::max({busiest, ld[0].get<uint64_t>(), ld[1].get<uint64_t>()});
  EXPECT_EQ(busiest, 64u);
}

}  // namespace
}  // namespace railyard::api
