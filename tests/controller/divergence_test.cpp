// The divergence check on its own: views built by the controller's
// build_view, plugin reports computed as the plugin does (the routing engine
// on the same fabric, digests of its tables and policy).
#include "controller/divergence.h"

#include <gtest/gtest.h>

#include "routing/generator.h"
#include "routing/lid_assignment.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::controller {
namespace {

routing::Fabric fabric() {
  routing::GeneratorSpec spec;
  spec.servers = 16;
  spec.rails = 4;
  spec.radix = 16;
  auto g = routing::generate_fabric(spec);
  EXPECT_TRUE(g.ok());
  auto with_lids = routing::assign_lids(g->fabric);
  EXPECT_TRUE(with_lids.ok());
  return std::move(*with_lids);
}

// What the plugin reports after routing `f` under `policy`.
protocol::Digests plugin_report(const routing::Fabric& f, const policies::Policy& policy) {
  auto options = routing::plan_routing(f, policy, routing::map_rails(f, policy.rails));
  EXPECT_TRUE(options.ok());
  auto routed = routing::route_unicast(f, *options);
  EXPECT_TRUE(routed.ok());
  routing::LftDigests lfts = routing::lft_digests(f, routed->tables);
  return protocol::Digests{routing::policy_digest(policy), lfts.total, lfts.switches};
}

policies::Policy drained(const routing::Fabric& f, uint8_t port) {
  policies::Policy p;
  p.drains.links.push_back({std::string(f.desc(f.switches()[0])), port});
  return p;
}

std::shared_ptr<const FabricView> view(const routing::Fabric& f, const policies::Policy& p, uint64_t version) {
  auto v = build_view(f, p, "test", version);
  EXPECT_TRUE(v.ok()) << v.error().message;
  return *v;
}

TEST(Divergence, TheSameRouteAgrees) {
  const routing::Fabric f = fabric();
  DivergenceTracker t;
  t.note_view(*view(f, {}, 1), 100);
  const DivergenceCheck c = t.check(plugin_report(f, {}), "pass 1", 100);
  EXPECT_TRUE(c.compared);
  EXPECT_TRUE(c.agrees) << c.reason;
  EXPECT_EQ(c.view_version, 1u);
  EXPECT_EQ(t.divergences(), 0u);
  EXPECT_EQ(t.checks(), 1u);
  EXPECT_FALSE(t.standing().has_value());
}

TEST(Divergence, NoViewNoVerdict) {
  const routing::Fabric f = fabric();
  DivergenceTracker t;
  const DivergenceCheck c = t.check(plugin_report(f, {}), "pass 1", 100);
  EXPECT_FALSE(c.compared);
  EXPECT_EQ(t.checks(), 0u);
  EXPECT_EQ(t.divergences(), 0u);
}

TEST(Divergence, APolicyTheControllerDoesNotHaveDiverges) {
  const routing::Fabric f = fabric();
  DivergenceTracker t;
  t.note_view(*view(f, {}, 1), 100);
  // The plugin's file has a drain railyardd does not know.
  const DivergenceCheck c = t.check(plugin_report(f, drained(f, 9)), "pass 2", 100);
  EXPECT_TRUE(c.compared);
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(c.kind, "policy");
  EXPECT_NE(c.reason.find("pass 2: the plugin planned with policy"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("tables differ"), std::string::npos) << c.reason;
  EXPECT_GT(c.switches_differing, 0u);
  EXPECT_EQ(t.divergences(), 1u);
  ASSERT_TRUE(t.standing().has_value());
  EXPECT_EQ(*t.standing(), c.reason);
  // A later pass that agrees ends it; the count stays.
  EXPECT_TRUE(t.check(plugin_report(f, {}), "pass 3", 101).agrees);
  EXPECT_FALSE(t.standing().has_value());
  EXPECT_EQ(t.divergences(), 1u);
}

TEST(Divergence, OtherTablesUnderTheSamePolicyNameTheSwitches) {
  const routing::Fabric f = fabric();
  DivergenceTracker t;
  t.note_view(*view(f, {}, 1), 100);
  protocol::Digests report = plugin_report(f, {});
  // One switch's table differs (as if one entry were written otherwise).
  report.switches[3].lft ^= 1;
  report.lfts = routing::total_lft_digest(report.switches);
  const DivergenceCheck c = t.check(report, "pass 4", 100);
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(c.kind, "lfts");
  EXPECT_EQ(c.switches_differing, 1u);
  ASSERT_EQ(c.switches.size(), 1u);
  EXPECT_EQ(c.switches[0], routing::to_string(report.switches[3].guid));
}

TEST(Divergence, AReportOfTheViewJustReplacedAgreesWithinGrace) {
  const routing::Fabric f = fabric();
  DivergenceTracker t(/*grace_s=*/30);
  t.note_view(*view(f, {}, 1), 100);
  t.note_view(*view(f, drained(f, 9), 2), 110);
  // A pass planned just before the drain rewrote the policy file.
  const DivergenceCheck late = t.check(plugin_report(f, {}), "pass 5", 120);
  EXPECT_TRUE(late.agrees);
  EXPECT_EQ(late.view_version, 1u);
  EXPECT_TRUE(t.check(plugin_report(f, drained(f, 9)), "pass 6", 120).agrees);
  // Long after the drain, the old policy is a divergence.
  const DivergenceCheck stale = t.check(plugin_report(f, {}), "pass 7", 200);
  EXPECT_FALSE(stale.agrees);
  EXPECT_EQ(stale.kind, "policy");
  EXPECT_EQ(stale.view_version, 2u);
}

TEST(Divergence, UncountedChecksChangeNothing) {
  const routing::Fabric f = fabric();
  DivergenceTracker t;
  t.note_view(*view(f, {}, 1), 100);
  EXPECT_FALSE(t.check(plugin_report(f, drained(f, 10)), "done", 100, /*count=*/false).agrees);
  EXPECT_EQ(t.divergences(), 0u);
  EXPECT_EQ(t.checks(), 0u);
  EXPECT_FALSE(t.standing().has_value());
}

// The soak's race (tests/integration/soak_test.sh): the plugin's pass read the
// policy file just before a drain rewrote it, and routed a fabric that had
// just lost a link; railyardd routed that fabric only under the drain.
TEST(Divergence, APassUnderThePolicyJustReplacedOnANewerFabricIsSuperseded) {
  const routing::Fabric before = fabric();
  const routing::Fabric after = routing::test::with_first_switch_link_down(before);
  ASSERT_FALSE(::testing::Test::HasFailure());
  DivergenceTracker t(/*grace_s=*/30);
  t.note_view(*view(before, {}, 1), 100);
  t.note_view(*view(before, drained(before, 9), 2), 110);  // the drain
  t.note_view(*view(after, drained(after, 9), 3), 111);    // the pass's fabric, under the drain
  const protocol::Digests raced = plugin_report(after, {});
  ASSERT_NE(raced.lfts, plugin_report(before, {}).lfts) << "the link must change the tables";
  const DivergenceCheck c = t.check(raced, "pass 8", 112);
  EXPECT_FALSE(c.agrees);
  EXPECT_TRUE(c.superseded) << c.reason;
  EXPECT_EQ(t.divergences(), 0u);
  EXPECT_EQ(t.superseded(), 1u);
  EXPECT_FALSE(t.standing().has_value());
  // The push that carries the drain agrees.
  EXPECT_TRUE(t.check(plugin_report(after, drained(after, 9)), "fast path", 112).agrees);
  // Tables under the policy in force that are not railyardd's stay a divergence.
  protocol::Digests wrong = plugin_report(after, drained(after, 9));
  wrong.switches[2].lft ^= 1;
  wrong.lfts = routing::total_lft_digest(wrong.switches);
  const DivergenceCheck bad = t.check(wrong, "pass 9", 113);
  EXPECT_FALSE(bad.superseded);
  EXPECT_EQ(bad.kind, "lfts");
  // A plugin that keeps the older policy diverges once it is past grace.
  const DivergenceCheck stale = t.check(raced, "pass 10", 200);
  EXPECT_FALSE(stale.superseded);
  EXPECT_EQ(stale.kind, "policy");
}

}  // namespace
}  // namespace railyard::controller
