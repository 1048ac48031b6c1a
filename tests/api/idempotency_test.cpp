// Idempotency-Key on mutations (docs/controller.md): the first request with a
// key makes its change and records the key in the same transaction; the same
// key again answers 200 with what the first made and changes nothing; the
// key on another request is a 409, a malformed key a 400. Single-node here
// (no ha:): the header works there too, and no HA header is added.
#include "tests/api/daemon.h"

namespace railyard::api {
namespace idempotency_test {  // not anonymous: unity builds compile several test files as one

using namespace railyard::api::test_support;

// One raw request with an Idempotency-Key; the status line and the body.
std::pair<int, std::string> post_with_key(Daemon& d, const std::string& path, const std::string& body,
                                          const std::string& key) {
  const std::string req = "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kOperator +
                          "\r\nContent-Type: application/json\r\nIdempotency-Key: " + key +
                          "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  const std::string out = d.raw(req);
  const int status = out.size() > 12 ? std::stoi(out.substr(9, 3)) : 0;
  const size_t start = out.find("\r\n\r\n");
  return {status, start == std::string::npos ? "" : out.substr(start + 4)};
}

TEST_F(ApiTest, IdempotencyKeyMakesARetryAReplay) {
  Daemon d(dir_);
  auto [first, body1] = post_with_key(d, "/api/v1/drains", kSpineLink, "drain-once-1");
  ASSERT_EQ(first, 201) << body1;
  const int64_t id = json::parse(body1)["drain"]["id"].get<int64_t>();

  auto [again, body2] = post_with_key(d, "/api/v1/drains", kSpineLink, "drain-once-1");
  ASSERT_EQ(again, 200) << body2;
  const json replay = json::parse(body2);
  EXPECT_TRUE(replay["idempotent_replay"].get<bool>());
  EXPECT_EQ(replay["result"], "drain " + std::to_string(id));
  EXPECT_EQ(replay["drain"]["id"].get<int64_t>(), id);
  EXPECT_EQ(d.get("/api/v1/drains").doc()["drains"].size(), 1u);

  // The same key on another request: refused, nothing done.
  auto [other, body3] = post_with_key(d, "/api/v1/reroute", R"({"reason": "x"})", "drain-once-1");
  EXPECT_EQ(other, 409) << body3;
  auto [bad, body4] = post_with_key(d, "/api/v1/drains", kSpineLink, std::string(200, 'k'));
  EXPECT_EQ(bad, 400) << body4;
  // A refused change records no key: the same key may be used again.
  const std::string cut = R"({"target": "link", "node": "leaf g000 r0", "port": 1, "reason": "x"})";
  auto [refused, body5] = post_with_key(d, "/api/v1/drains", cut, "k-refused");
  EXPECT_EQ(refused, 409) << body5;
  EXPECT_FALSE(d.controller().store().idempotency("k-refused"));
  // Single-node: no view-version header.
  EXPECT_EQ(d.raw("GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").find("X-Railyard-View-Version"),
            std::string::npos);
}

}  // namespace idempotency_test
}  // namespace railyard::api
