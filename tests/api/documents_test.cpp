// The whole-fabric documents (fabric, switches, hosts): rendered once per
// change, never on a reader's I/O thread once there is one (api/documents.cpp).
#include <chrono>
#include <thread>

#include "tests/api/daemon.h"

namespace railyard::api {
namespace documents_test {  // not anonymous: unity builds compile several test files as one

using namespace railyard::api::test_support;

TEST_F(ApiTest, DocumentsShowAnApiChangeWhenItIsAnsweredAndAnyOtherChangeSoonAfter) {
  Daemon d(dir_);
  ASSERT_EQ(d.get("/api/v1/fabric").doc()["drains"], 0);
  ASSERT_EQ(d.get("/api/v1/switches").status, 200);

  // Through the API: answered once the documents read so far show it.
  ASSERT_EQ(d.post("/api/v1/drains", kSpineLink).status, 201);
  EXPECT_EQ(d.get("/api/v1/fabric").doc()["drains"], 1);

  // Around the API (as the plugin's changes come): the next read gets the
  // last whole document at once while the new one renders in the background.
  controller::DrainRequest other;
  other.kind = controller::DrainKind::kLink;
  other.node = "leaf g000 r0";
  other.port = 10;
  other.reason = "not through the API";
  controller::DrainOutcome out =
      d.controller().drain(other, controller::Actor{"test", controller::Role::kOperator, "drain", "", 0}, false, false);
  ASSERT_TRUE(out.ok()) << out.failure->message;
  EXPECT_EQ(d.get("/api/v1/fabric").doc()["drains"], 1) << "the last whole document, not one rendered on this request";
  int drains = 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (drains != 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drains = d.get("/api/v1/fabric").doc()["drains"].get<int>();
  }
  EXPECT_EQ(drains, 2) << "the new document replaces the last one";
}

}  // namespace documents_test
}  // namespace railyard::api
