// railyardd under hostile input (issue 12): each test is one row of the
// issue's table or one of its risks, over real HTTP on loopback. Each failed
// (crashed, hung or answered wrongly) on the code before the fix.
#include <chrono>

#include "tests/api/daemon.h"

namespace railyard::api {
namespace {

using namespace railyard::api::test_support;
using Clock = std::chrono::steady_clock;

std::string status_line(const std::string& response) { return response.substr(0, response.find("\r\n")); }
std::string body_of(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// Row 1: bytes that are not UTF-8 in the target crashed the daemon (a JSON
// type_error thrown while rendering the error, outside any try), no token
// needed. Each is now a 400 with a JSON body, and the daemon goes on.
TEST_F(ApiTest, TargetsThatAreNotUtf8Are400sAndTheDaemonLives) {
  Daemon d(dir_);
  const std::string auth = std::string("Authorization: Bearer ") + kOperator + "\r\n";
  const std::vector<std::string> requests = {
      "GET /api/v1/health?%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /api/v1/metrics?%c3%28=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /api/v1/openapi.json?%80 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /api/v1/health\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "GET /api/v1/routes/%ff/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth + "\r\n",
      "DELETE /api/v1/drains/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth + "\r\n",
      "GET /api/v1/hosts/%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth + "\r\n",
      "GET /api/v1/health?a=%ed%a0%80 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",  // a UTF-16 surrogate
  };
  for (const std::string& req : requests) {
    const std::string res = d.raw(req);
    EXPECT_EQ(status_line(res), "HTTP/1.1 400 Bad Request") << req;
    const json body = json::parse(body_of(res), nullptr, false);
    ASSERT_TRUE(body.is_object()) << res;
    EXPECT_EQ(body["error"]["status"], 400);
    EXPECT_EQ(d.get("/api/v1/health", "").status, 200) << "after " << req;
  }
  // A well-formed UTF-8 escape still works.
  EXPECT_EQ(d.get("/api/v1/routes/node001%20mlx5_0/node002%20mlx5_0").status, 200);
}

// Row 2 (the cap): beyond limits.max_connections a connection gets a 503
// at once instead of waiting; once they close, service is back.
TEST_F(ApiTest, ConnectionsBeyondTheCapAre503AtOnce) {
  Daemon d(dir_, [](controller::ControllerConfig& c) { c.max_connections = 8; });
  asio::io_context io;
  std::vector<asio::ip::tcp::socket> held;
  for (int i = 0; i < 8; ++i) held.push_back(d.hold(io));
  // The server accepts them in its own time: wait until the ninth is refused.
  std::string res;
  for (int i = 0; i < 100; ++i) {
    res = d.raw("GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    if (status_line(res) == "HTTP/1.1 503 Service Unavailable") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(status_line(res), "HTTP/1.1 503 Service Unavailable") << res;
  EXPECT_NE(res.find("too many connections"), std::string::npos);
  EXPECT_NE(res.find("Retry-After: 1"), std::string::npos);
  held.clear();  // closes them
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = d.get("/api/v1/health", "").status;
  }
  EXPECT_EQ(status, 200);
  const std::string metrics = d.get("/api/v1/metrics", "").body;
  EXPECT_EQ(metrics.find("railyard_http_connections_refused_total 0\n"), std::string::npos) << metrics;
}

// Row 2 (time): a request that started has request_timeout to arrive whole,
// an idle connection idle_timeout; a slow client holds a connection for
// seconds, not the 30 s it held it before.
TEST_F(ApiTest, SlowAndIdleConnectionsAreClosedOnTime) {
  Daemon d(dir_, [](controller::ControllerConfig& c) {
    c.request_timeout_s = 1;
    c.idle_timeout_s = 1;
  });
  for (const std::string& partial : {std::string("GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Slow: "), std::string()}) {
    const auto start = Clock::now();
    const std::string res = d.raw(partial, std::chrono::seconds(10));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_EQ(res, "") << "nothing is answered to a request that never completed";
    EXPECT_LT(s, 4.0) << (partial.empty() ? "idle" : "partial") << " connection held for " << s << " s";
    EXPECT_GT(s, 0.5);
  }
}

// Row 8: ids are visible ASCII without blanks; names and reasons hold no
// control characters. A job id with a NUL held tree slots for ever.
TEST_F(ApiTest, IdsAndNamesRefuseControlCharacters) {
  Daemon d(dir_);
  for (const std::string& id : {std::string(R"("j9\u0000x")"), std::string(R"("a b")"), std::string(R"("tab\there")"),
                                std::string("\"") + std::string(129, 'x') + "\"", std::string(R"("")")}) {
    const Reply r = d.post("/api/v1/jobs", R"({"id": )" + id + R"(, "hosts": ["node001"]})");
    EXPECT_EQ(r.status, 400) << id << " " << r.body;
  }
  EXPECT_TRUE(d.get("/api/v1/jobs?all=true").doc()["jobs"].empty());
  const Reply ok = d.post("/api/v1/jobs", R"({"id": "slurm-4242.0+1", "hosts": ["node001", "node002"]})");
  ASSERT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(d.del("/api/v1/jobs/slurm-4242.0+1").status, 200);

  EXPECT_EQ(d.post("/api/v1/events/link", R"({"id": "m\u0001", "node": "leaf g000 r0", "port": 9, "state": "down"})").status,
            400);
  EXPECT_EQ(d.post("/api/v1/drains", R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "a\u0000b"})").status,
            400);
  EXPECT_EQ(d.post("/api/v1/jobs", R"({"id": "j1", "hosts": ["node\u0007"]})").status, 400);
  EXPECT_TRUE(d.get("/api/v1/drains").doc()["drains"].empty());
}

// Deeply nested bodies are refused before a value is built (dump() and the
// destructor of such a value recurse).
TEST_F(ApiTest, DeeplyNestedBodiesAre400s) {
  Daemon d(dir_, [](controller::ControllerConfig& c) { c.max_body_bytes = 1 << 20; });
  const std::string deep = R"({"id": "j1", "hosts": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const Reply r = d.post("/api/v1/jobs", deep);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("nested deeper than"), std::string::npos) << r.body;
  EXPECT_EQ(d.get("/api/v1/health", "").status, 200);
}

int count_status(const std::vector<controller::AuditRecord>& audit, int status) {
  int n = 0;
  for (const auto& a : audit) n += a.status == status;
  return n;
}

// Row 10: every refused mutation is audited — before, only 403s were; 401,
// 413, 431 and malformed requests left no trace. A change is audited exactly
// once, with the change.
TEST_F(ApiTest, RefusedMutationsAreAudited) {
  Daemon d(dir_);
  const std::string drain = R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "audit"})";
  EXPECT_EQ(d.post("/api/v1/drains", drain, "").status, 401);
  EXPECT_EQ(d.post("/api/v1/drains", drain, "not-a-token-at-all-123").status, 401);
  EXPECT_EQ(d.post("/api/v1/drains", drain, kViewer).status, 403);
  EXPECT_EQ(d.post("/api/v1/drains", std::string(4096, ' '), kOperator).status, 413);
  EXPECT_EQ(status_line(d.raw("POST /api/v1/drains HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1x\r\n\r\n")),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(d.raw("POST /api/v1/drains HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: " + std::string(17000, 'a') +
                              "\r\n\r\n")),
            "HTTP/1.1 431 Request Header Fields Too Large");
  const Reply made = d.post("/api/v1/drains", drain);
  ASSERT_EQ(made.status, 201) << made.body;
  const auto audit = d.controller().store().audit_since(0, 100);
  EXPECT_EQ(count_status(audit, 401), 2);
  EXPECT_EQ(count_status(audit, 403), 1);
  EXPECT_EQ(count_status(audit, 413), 1);
  EXPECT_EQ(count_status(audit, 400), 1);
  EXPECT_EQ(count_status(audit, 431), 1);
  EXPECT_EQ(count_status(audit, 201), 1);
  for (const auto& a : audit) {
    if (a.status == 401) {
      EXPECT_EQ(a.actor, "anonymous");
    }
    if (a.status == 201) {
      EXPECT_EQ(a.actor, "ops");
      EXPECT_EQ(a.action, "POST /api/v1/drains");
      EXPECT_EQ(a.result, made.doc()["message"].get<std::string>());
    }
  }
}

// A viewer (or anyone) could make the daemon fsync an audit row per refused
// request as fast as it sent them: now at most refused_audits_per_minute,
// the rest counted, and the next record says how many were left out.
TEST_F(ApiTest, RefusedAuditsAreRateBounded) {
  Daemon d(dir_, [](controller::ControllerConfig& c) { c.refused_audits_per_minute = 5; });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(d.post("/api/v1/reroute", "{}", kViewer).status, 403);
  const auto audit = d.controller().store().audit_since(0, 100);
  EXPECT_EQ(count_status(audit, 403), 5);
  EXPECT_EQ(d.controller().counters().audits_suppressed, 15u);
  const std::string metrics = d.get("/api/v1/metrics", "").body;
  EXPECT_NE(metrics.find("railyard_audit_refused_skipped_total{reason=\"rate\"} 15\n"), std::string::npos) << metrics;
  // Changes are never dropped from the audit log.
  EXPECT_EQ(d.post("/api/v1/reroute", "{}").status, 202);
  EXPECT_EQ(count_status(d.controller().store().audit_since(0, 100), 202), 1);
}

// Risk: a monitoring "down" on a CA's only link cut the CA off without
// force. Now it is a 409 with the impact and nothing is recorded; force
// applies it.
TEST_F(ApiTest, LinkDownThatCutsCAsNeedsForce) {
  Daemon d(dir_);
  const std::string event = R"({"id": "mon-1", "node": "leaf g000 r0", "port": 1, "state": "down"})";
  const Reply refused = d.post("/api/v1/events/link", event);
  ASSERT_EQ(refused.status, 409) << refused.body;
  EXPECT_GT(refused.doc()["error"]["impact"]["pairs_cut"].get<int>(), 0) << refused.body;
  EXPECT_NE(refused.doc()["error"]["message"].get<std::string>().find("force=true"), std::string::npos);
  EXPECT_TRUE(d.get("/api/v1/links?state=down").doc()["links"].empty());
  EXPECT_TRUE(d.get("/api/v1/events").doc()["events"].empty()) << "nothing recorded";
  const Reply forced = d.post("/api/v1/events/link?force=true", event);
  ASSERT_EQ(forced.status, 201) << forced.body;
  EXPECT_EQ(d.get("/api/v1/links?state=down").doc()["links"].size(), 1u);
  EXPECT_GT(d.get("/api/v1/fabric").doc()["routing"]["unreachable_pairs"].get<int>(), 0);
}

// Risk: an event id reused with another state was silently taken as a
// duplicate. The same event again is still a 200.
TEST_F(ApiTest, AnEventIdNamesOneEvent) {
  Daemon d(dir_);
  const std::string down = R"({"id": "mon-2", "node": "leaf g000 r0", "port": 9, "state": "down"})";
  ASSERT_EQ(d.post("/api/v1/events/link", down).status, 201);
  const Reply again = d.post("/api/v1/events/link", down);
  EXPECT_EQ(again.status, 200);
  EXPECT_TRUE(again.doc()["duplicate"].get<bool>());
  const Reply reused = d.post("/api/v1/events/link", R"({"id": "mon-2", "node": "leaf g000 r0", "port": 9, "state": "up"})");
  EXPECT_EQ(reused.status, 409) << reused.body;
  EXPECT_NE(reused.body.find("was recorded as link_down"), std::string::npos) << reused.body;
  const Reply other = d.post("/api/v1/events/link", R"({"id": "mon-2", "node": "leaf g000 r0", "port": 10, "state": "down"})");
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(d.get("/api/v1/links?state=down").doc()["links"].size(), 1u);
}

}  // namespace
}  // namespace railyard::api
