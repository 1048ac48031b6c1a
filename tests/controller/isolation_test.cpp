// Automatic isolation's decisions (controller/isolation.h), driven by a clock
// the test owns: flapping and error-rate triggers, the clean period, dry run,
// the exclude list and its expiry, the breaker and its reset, and the config.
#include "controller/isolation.h"

#include <gtest/gtest.h>

#include "controller/config.h"

namespace railyard::controller {
namespace {

using Kind = IsolationAction::Kind;

constexpr const char* kA = "0x0000000000000a01[3]";
constexpr const char* kB = "0x0000000000000b01[4]";

IsolationConfig on(uint32_t flaps = 3, uint32_t window = 10, uint32_t clean = 30) {
  IsolationConfig c;
  c.enabled = true;
  c.flaps = flaps;
  c.window_s = window;
  c.clean_s = clean;
  c.max_links = 4;
  c.max_percent = 1;
  return c;
}

// down at t, up at t + 0.5; the actions of the down.
std::vector<IsolationAction> flap(IsolationEngine& e, const std::string& link, double t) {
  auto out = e.on_link_state(link, LinkState::kDown, t);
  auto up = e.on_link_state(link, LinkState::kUp, t + 0.5);
  EXPECT_TRUE(up.empty());
  return out;
}

TEST(Isolation, OffByDefault) {
  EXPECT_FALSE(IsolationConfig{}.enabled);
  IsolationEngine e;
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(flap(e, kA, i).empty());
  EXPECT_TRUE(e.tick(1000).empty());
}

TEST(Isolation, NDownsWithinTheWindowIsolateOnce) {
  IsolationEngine e(on(3, 10));
  EXPECT_TRUE(flap(e, kA, 100).empty());
  EXPECT_TRUE(flap(e, kA, 104).empty());
  auto a = flap(e, kA, 108);  // 3 downs within 10 s
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kIsolate);
  EXPECT_EQ(a[0].link, kA);
  EXPECT_EQ(a[0].reason, "auto: flapping");
  EXPECT_FALSE(a[0].dry_run);
  // Decided: more flaps while the caller drains, or once drained, decide nothing new.
  EXPECT_TRUE(flap(e, kA, 109).empty());
  e.isolated(kA, 42, 109);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(flap(e, kA, 110 + i).empty());
  auto s = e.snapshot();
  ASSERT_EQ(s.isolated.size(), 1u);
  EXPECT_EQ(s.isolated[0].drain_id, 42);
  EXPECT_EQ(s.isolated[0].reason, "auto: flapping");
}

TEST(Isolation, DownsSpreadBeyondTheWindowDoNotCount) {
  IsolationEngine e(on(3, 10));
  // 3 downs, but never 3 within 10 s.
  EXPECT_TRUE(flap(e, kA, 0).empty());
  EXPECT_TRUE(flap(e, kA, 6).empty());
  EXPECT_TRUE(flap(e, kA, 12).empty());
  EXPECT_TRUE(flap(e, kA, 18).empty());
}

TEST(Isolation, ADownReportedTwiceCountsOnce) {
  IsolationEngine e(on(3, 10));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(e.on_link_state(kA, LinkState::kDown, i).empty());
  EXPECT_EQ(e.snapshot().recent_downs.at(kA), 1u);
}

TEST(Isolation, RestoredAfterTheCleanPeriodNotBefore) {
  IsolationEngine e(on(2, 10, 30));
  flap(e, kA, 0);
  ASSERT_EQ(flap(e, kA, 1).size(), 1u);  // down at 1, up at 1.5
  e.isolated(kA, 7, 2);
  EXPECT_TRUE(e.tick(20).empty());
  EXPECT_TRUE(e.tick(31).empty());  // clean since 2: 29 s
  // A flap while isolated starts the clean period again (down at 40).
  EXPECT_TRUE(flap(e, kA, 40).empty());
  EXPECT_TRUE(e.tick(60).empty());
  EXPECT_TRUE(e.tick(70.4).empty());  // up again at 40.5
  auto r = e.tick(70.5);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, Kind::kRestore);
  EXPECT_EQ(r[0].link, kA);
  EXPECT_EQ(r[0].drain_id, 7);
  EXPECT_TRUE(e.tick(71).empty());  // decided once
  e.restored(kA);
  EXPECT_TRUE(e.snapshot().isolated.empty());
}

TEST(Isolation, NotRestoredWhileDown) {
  IsolationEngine e(on(2, 10, 30));
  flap(e, kA, 0);
  ASSERT_EQ(flap(e, kA, 1).size(), 1u);
  e.isolated(kA, 7, 2);
  EXPECT_TRUE(e.on_link_state(kA, LinkState::kDown, 3).empty());
  EXPECT_TRUE(e.tick(100).empty());
  e.on_link_state(kA, LinkState::kUp, 101);
  EXPECT_TRUE(e.tick(130.9).empty());  // up only since 101
  EXPECT_EQ(e.tick(131).size(), 1u);
}

TEST(Isolation, ARefusedIsolationIsDecidedAgainAtTheNextCrossing) {
  IsolationEngine e(on(2, 10));
  flap(e, kA, 0);
  ASSERT_EQ(flap(e, kA, 1).size(), 1u);
  e.not_isolated(kA);
  EXPECT_TRUE(flap(e, kA, 2).empty());  // the count started again
  EXPECT_EQ(flap(e, kA, 3).size(), 1u);
}

TEST(Isolation, DryRunDecidesAndMarksButDrainsNothing) {
  IsolationConfig c = on(2, 10, 30);
  c.dry_run = true;
  IsolationEngine e(c);
  flap(e, kA, 0);
  auto a = flap(e, kA, 1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a[0].dry_run);
  e.isolated(kA, 0, 1);
  auto s = e.snapshot();
  ASSERT_EQ(s.isolated.size(), 1u);
  EXPECT_TRUE(s.isolated[0].dry_run);
  auto r = e.tick(40);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].dry_run);
  EXPECT_EQ(r[0].drain_id, 0);
}

TEST(Isolation, ExcludedLinksAndNodesAreNotIsolatedUntilTheEntryExpires) {
  IsolationEngine e(on(2, 10));
  e.exclude({kA, 50.0, "vendor RMA", "ops", 0});
  e.exclude({"0x0000000000000b01", std::nullopt, "", "ops", 0});  // every port of that node
  flap(e, kA, 0);
  auto a = flap(e, kA, 1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, Kind::kExcluded);
  flap(e, kB, 0);
  auto b = flap(e, kB, 1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kind, Kind::kExcluded);
  EXPECT_TRUE(e.snapshot().isolated.empty());
  // The link's entry expires at 50: then it is isolated like any other.
  e.tick(51);
  EXPECT_EQ(e.snapshot().excluded.size(), 1u);
  flap(e, kA, 60);
  auto later = flap(e, kA, 61);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].kind, Kind::kIsolate);
  EXPECT_TRUE(e.unexclude("0x0000000000000b01"));
  EXPECT_FALSE(e.unexclude("0x0000000000000b01"));
}

std::string link(int i) { return "0x00000000000001" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "[1]"; }

TEST(Isolation, TheCapIsTheLargerOfLinksAndPercent) {
  IsolationConfig c = on();
  c.max_links = 2;
  c.max_percent = 5;
  IsolationEngine e(c);
  e.set_switch_links(10);
  EXPECT_EQ(e.cap(), 2u);  // 5% of 10 rounds up to 1
  e.set_switch_links(100);
  EXPECT_EQ(e.cap(), 5u);
  e.set_switch_links(101);
  EXPECT_EQ(e.cap(), 6u);  // 5.05 rounds up
}

TEST(Isolation, OneMoreThanTheCapTripsTheBreakerAndStopsEverythingUntilReset) {
  IsolationConfig c = on(2, 10, 30);
  c.max_links = 2;
  c.max_percent = 0;
  IsolationEngine e(c);
  e.set_switch_links(100);
  for (int i = 0; i < 2; ++i) {
    flap(e, link(i), 0);
    auto a = flap(e, link(i), 1);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(a[0].kind, Kind::kIsolate);
    e.isolated(link(i), 10 + i, 1);
  }
  flap(e, link(2), 0);
  auto t = flap(e, link(2), 1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, Kind::kTrip);
  EXPECT_TRUE(e.snapshot().breaker.tripped);
  // Tripped: no isolation, no restore, whatever happens.
  for (int i = 3; i < 6; ++i) {
    flap(e, link(i), 2);
    EXPECT_TRUE(flap(e, link(i), 3).empty());
  }
  EXPECT_TRUE(e.tick(1000).empty());
  // Reset: the clean links are restored, new flapping is isolated again.
  EXPECT_TRUE(e.reset("ops", 1001));
  EXPECT_FALSE(e.snapshot().breaker.tripped);
  EXPECT_EQ(e.snapshot().breaker.reset_by, "ops");
  EXPECT_EQ(e.tick(1002).size(), 2u);
  EXPECT_FALSE(e.reset("ops", 1003));
}

TEST(Isolation, DryRunIsolationsCountTowardsTheCapToo) {
  IsolationConfig c = on(2, 10, 30);
  c.dry_run = true;
  c.max_links = 1;
  c.max_percent = 0;
  IsolationEngine e(c);
  flap(e, link(0), 0);
  ASSERT_EQ(flap(e, link(0), 1)[0].kind, Kind::kIsolate);
  e.isolated(link(0), 0, 1);
  flap(e, link(1), 0);
  EXPECT_EQ(flap(e, link(1), 1)[0].kind, Kind::kTrip);
}

TEST(Isolation, ErrorRateOverTheThresholdIsolates) {
  IsolationConfig c = on(3, 10, 30);
  c.errors_per_minute = 100;
  IsolationEngine e(c);
  EXPECT_TRUE(e.on_error_rate(kA, 99, 0).empty());
  auto a = e.on_error_rate(kA, 100, 1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].reason, "auto: errors");
  e.isolated(kA, 5, 1);
  EXPECT_EQ(e.snapshot().isolated[0].reason, "auto: errors");
  e.on_error_rate(kA, 500, 20);  // still erroring: not clean
  EXPECT_TRUE(e.tick(40).empty());
  EXPECT_EQ(e.tick(50).size(), 1u);
  // Off (0) by default.
  IsolationEngine off(on());
  EXPECT_TRUE(off.on_error_rate(kA, 1e9, 0).empty());
}

TEST(Isolation, AdoptedDrainsAreRestoredLikeOwnOnes) {
  IsolationEngine e(on(2, 10, 30));
  e.adopt(kA, "auto: flapping", 9, 100);
  EXPECT_TRUE(e.tick(120).empty());
  auto r = e.tick(130);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].drain_id, 9);
}

TEST(Isolation, SplitLinkKey) {
  auto k = split_link_key("0x0002c90300000001[33]");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->first, "0x0002c90300000001");
  EXPECT_EQ(k->second, 33u);
  EXPECT_FALSE(split_link_key("0x01"));
  EXPECT_FALSE(split_link_key("0x01[]"));
  EXPECT_FALSE(split_link_key("0x01[256]"));
  EXPECT_FALSE(split_link_key("0x01[1a]"));
  EXPECT_FALSE(split_link_key("guid[1]"));
}

TEST(IsolationConfig, ParsedFromRailyarddYamlOffByDefault) {
  auto none = parse_controller_config("fabric: {source: offline, topology_file: f.topo}\n", "/x/r.yaml");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->isolation.enabled);
  auto cfg = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\n"
      "isolation: {enabled: true, dry_run: true, flaps: 4, window_s: 30, errors_per_minute: 50, clean_s: 90,\n"
      "            max_links: 3, max_percent: 2}\n",
      "/x/r.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_TRUE(cfg->isolation.enabled);
  EXPECT_TRUE(cfg->isolation.dry_run);
  EXPECT_EQ(cfg->isolation.flaps, 4u);
  EXPECT_EQ(cfg->isolation.window_s, 30u);
  EXPECT_EQ(cfg->isolation.errors_per_minute, 50u);
  EXPECT_EQ(cfg->isolation.clean_s, 90u);
  EXPECT_EQ(cfg->isolation.max_links, 3u);
  EXPECT_EQ(cfg->isolation.max_percent, 2u);
  auto bad = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\nisolation:\n  max_percent: 101\n", "/x/r.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/x/r.yaml:3"), std::string::npos) << bad.error().message;
  auto unknown = parse_controller_config(
      "fabric: {source: offline, topology_file: f.topo}\nisolation: {flap: 3}\n", "/x/r.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("flap"), std::string::npos) << unknown.error().message;
}

}  // namespace
}  // namespace railyard::controller
