// decide() driven directly: no HTTP, no socket, no store, no file. A small
// generated fabric routed for real; each test decides commands against a
// State and checks the next state, the effects and the reply.
#include <gtest/gtest.h>

#include "controller/decide.h"
#include "routing/generator.h"
#include "routing/lid_assignment.h"

namespace railyard::controller {
namespace {

std::shared_ptr<const routing::Fabric> small_fabric() {
  routing::GeneratorSpec spec;
  spec.servers = 16;
  spec.rails = 4;
  spec.radix = 16;
  auto g = routing::generate_fabric(spec);
  EXPECT_TRUE(g.ok());
  auto with_lids = routing::assign_lids(g->fabric);
  EXPECT_TRUE(with_lids.ok());
  return std::make_shared<const routing::Fabric>(std::move(*with_lids));
}

Constants constants(FabricSource source, uint32_t reroutes_per_minute = 6) {
  Constants k;
  k.config.fabric_source = source;
  k.config.reroutes_per_minute = reroutes_per_minute;
  k.config.reroute_timeout_s = 600;
  k.offline_fabric = small_fabric();
  return k;
}

State routed_state(const Constants& k) {
  State s;
  RoutingJob job;
  job.fabric = k.offline_fabric;
  job.policy = k.base_policy;
  job.origin = "test";
  job.view_version = s.next_view_version;
  job.diff = false;
  Routed r = run_routing(job);
  EXPECT_TRUE(r.view) << r.error;
  s.view = r.view;
  s.next_view_version = r.view->version + 1;
  s.plugin_connected = k.config.fabric_source == FabricSource::kLive;
  return s;
}

const Actor kOps{"ops", Role::kOperator, "POST /api/v1/drains", "{}", 201};

DrainCommand uplink_drain(uint32_t port, bool dry_run = false) {
  DrainCommand c;
  c.request.kind = DrainKind::kLink;
  c.request.node = "leaf g000 r0";
  c.request.port = port;
  c.request.reason = "test";
  c.actor = kOps;
  c.dry_run = dry_run;
  return c;
}

// Decides `command`, routing when asked, as the controller's driver does.
Decision decide_routed(const Constants& k, const State& s, const Command& command, double now = 1000) {
  const Clock clock{now, now};
  Decision d = decide(k, s, command, clock);
  if (!d.route) return d;
  const Routed routed = run_routing(*d.route);
  Decision again = decide(k, s, command, clock, &routed);
  EXPECT_FALSE(again.route) << "routed at the state's own version, yet asked to route again";
  return again;
}

template <class T>
bool has_write(const Effects& fx) {
  return std::any_of(fx.writes.begin(), fx.writes.end(), [](const StoreWrite& w) { return std::holds_alternative<T>(w); });
}

TEST(Decide, ADrainAsksForRoutingThenDecidesItsEffects) {
  const Constants k = constants(FabricSource::kOffline);
  const State s = routed_state(k);
  const Clock clock{1000, 1000};
  Decision first = decide(k, s, uplink_drain(9), clock);
  ASSERT_TRUE(first.route) << "a drain is decided on a what-if routing";
  EXPECT_EQ(first.route->at_version, s.version);
  EXPECT_FALSE(first.effects.durable());

  const Decision d = decide_routed(k, s, uplink_drain(9));
  const auto& out = std::get<DrainOutcome>(d.reply);
  ASSERT_TRUE(out.ok()) << out.failure->message;
  EXPECT_EQ(out.message, "drained leaf g000 r0[9] <-> " + out.drain->target_name.substr(out.drain->target_name.find("<-> ") + 4));
  // The next state holds the drain and a new view routed with it; the state
  // decided from is untouched.
  ASSERT_EQ(d.next.drains.size(), 1u);
  EXPECT_TRUE(s.drains.empty());
  EXPECT_EQ(d.next.version, s.version + 1);
  ASSERT_NE(d.next.view, s.view);
  EXPECT_GT(d.next.view->version, s.view->version);
  ASSERT_EQ(d.next.view->policy.drains.links.size(), 1u);
  // Effects: the policy file with the drain, one transaction (drain, reroute
  // request, audit), the view published; offline nothing goes to a plugin.
  ASSERT_TRUE(d.effects.policy_file);
  EXPECT_EQ(d.effects.policy_file->drains.links.size(), 1u);
  EXPECT_TRUE(has_write<AddDrain>(d.effects));
  EXPECT_TRUE(has_write<PutReroute>(d.effects));
  ASSERT_TRUE(d.effects.audit);
  EXPECT_EQ(d.effects.audit->status, 201);
  EXPECT_TRUE(d.effects.publish);
  EXPECT_TRUE(d.effects.plugin.empty());
  // The impact counts real changes of the tables.
  EXPECT_GT(out.impact.diff.entries_changed, 0u);
  EXPECT_EQ(out.reroute->status, RerouteStatus::kApplied);
}

TEST(Decide, ARoutingMadeFromAStateThatMovedOnIsRoutedAgain) {
  const Constants k = constants(FabricSource::kOffline);
  const State s = routed_state(k);
  const Clock clock{1000, 1000};
  Decision first = decide(k, s, uplink_drain(9), clock);
  ASSERT_TRUE(first.route);
  const Routed stale = run_routing(*first.route);
  // Meanwhile another drain was decided and adopted.
  const State moved = decide_routed(k, s, uplink_drain(10)).next;
  ASSERT_NE(moved.version, s.version);
  Decision again = decide(k, moved, uplink_drain(9), clock, &stale);
  ASSERT_TRUE(again.route) << "a what-if routed without drain 10 must not be committed";
  EXPECT_EQ(again.route->at_version, moved.version);
  EXPECT_EQ(again.route->policy.drains.links.size(), 2u);
  EXPECT_FALSE(again.effects.durable());
}

TEST(Decide, RefusalsChangeNothing) {
  const Constants k = constants(FabricSource::kOffline);
  const State s = routed_state(k);
  State drained = decide_routed(k, s, uplink_drain(9)).next;
  drained.drains[0].id = 7;  // as the store numbered it
  const Decision again = decide_routed(k, drained, uplink_drain(9));
  const auto& out = std::get<DrainOutcome>(again.reply);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure->kind, FailureKind::kConflict);
  EXPECT_NE(out.failure->message.find("already drained (drain 7)"), std::string::npos) << out.failure->message;
  EXPECT_FALSE(again.effects.durable());
  EXPECT_EQ(again.next.version, drained.version);

  DrainCommand unknown = uplink_drain(9);
  unknown.request.node = "no such node";
  const DrainOutcome nf = std::get<DrainOutcome>(decide_routed(k, s, unknown).reply);
  ASSERT_FALSE(nf.ok());
  EXPECT_EQ(nf.failure->kind, FailureKind::kNotFound);

  const DrainOutcome gone = std::get<DrainOutcome>(decide_routed(k, s, UndrainCommand{42, kOps, false}).reply);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.failure->kind, FailureKind::kNotFound);

  // A dry run decides the impact and nothing else.
  const Decision dry = decide_routed(k, s, uplink_drain(9, true));
  EXPECT_TRUE(std::get<DrainOutcome>(dry.reply).ok());
  EXPECT_FALSE(dry.effects.durable());
  EXPECT_TRUE(dry.next.drains.empty());
  EXPECT_EQ(dry.next.view, s.view);
}

TEST(Decide, ACaOnlyLinkIsNotDrainedWithoutForce) {
  const Constants k = constants(FabricSource::kOffline);
  const State s = routed_state(k);
  // Port 1 of a leaf goes to a CA (the generator cables CAs first).
  DrainCommand c = uplink_drain(1);
  const Decision d = decide_routed(k, s, c);
  const auto& out = std::get<DrainOutcome>(d.reply);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure->kind, FailureKind::kConflict);
  EXPECT_GT(out.impact.pairs_cut, 0u);
  EXPECT_FALSE(d.effects.durable());
  c.force = true;
  EXPECT_TRUE(std::get<DrainOutcome>(decide_routed(k, s, c).reply).ok());
}

TEST(Decide, LiveReroutesBeyondTheRateAreQueuedThenSentAsOneAndFinishedByThePlugin) {
  const Constants k = constants(FabricSource::kLive, 1);
  State s = routed_state(k);
  Decision a = decide_routed(k, s, uplink_drain(9), 1000);
  const auto& first = std::get<DrainOutcome>(a.reply);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.reroute->status, RerouteStatus::kPending);
  ASSERT_EQ(a.effects.plugin.size(), 1u);
  EXPECT_EQ(a.effects.plugin[0].kind, protocol::CommandKind::kPolicyChanged);
  EXPECT_EQ(a.effects.plugin[0].id, first.reroute->id);
  s = a.next;
  s.drains.back().id = 1;

  Decision b = decide_routed(k, s, uplink_drain(10), 1001);
  const auto& second = std::get<DrainOutcome>(b.reply);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.reroute->status, RerouteStatus::kQueued);
  EXPECT_TRUE(b.effects.plugin.empty()) << "the minute's one reroute is spent";
  s = b.next;

  // Within the minute the timer sends nothing; after it, the queued change.
  EXPECT_TRUE(decide(k, s, TimerCommand{}, {1030, 1030}).effects.plugin.empty());
  Decision t = decide(k, s, TimerCommand{}, {1000 + 61, 1000 + 61});
  ASSERT_EQ(t.effects.plugin.size(), 1u);
  EXPECT_EQ(t.effects.plugin[0].id, second.reroute->id);
  s = t.next;

  // The plugin's routing-done for both finishes nothing by itself: the
  // plugin watch compares its digests first (plugin_watch.h) ...
  protocol::UcastRoutingDoneEvent done;
  done.engine_ok = true;
  done.blocks_changed = 3;
  done.requests = {first.reroute->id, second.reroute->id};
  PluginEventCommand event;
  event.envelope = protocol::Envelope{"ucast_routing_done", 5, 1062};
  event.body = protocol::EventBody{done};
  event.line = nlohmann::json::object();
  Decision e = decide(k, s, event, {1062, 1062});
  EXPECT_EQ(e.next.requests.pending.size(), 2u);
  for (const StoreWrite& w : e.effects.writes) EXPECT_FALSE(std::holds_alternative<FinishReroute>(w));
  s = e.next;
  // ... and its verdict finishes each request applied.
  Decision f = decide(k, s, FinishRequests{{first.reroute->id, second.reroute->id}, true, "LFTs in place"},
                      {1062, 1062});
  size_t applied = 0;
  for (const StoreWrite& w : f.effects.writes) {
    if (const auto* x = std::get_if<FinishReroute>(&w)) {
      EXPECT_EQ(x->status, RerouteStatus::kApplied);
      ++applied;
    }
  }
  EXPECT_EQ(applied, 2u);
  EXPECT_TRUE(f.next.requests.pending.empty());
  EXPECT_EQ(f.next.counters.reroutes_applied, 2u);
}

TEST(Decide, APluginGoneFailsWhatItWasSent) {
  const Constants k = constants(FabricSource::kLive);
  const State s = routed_state(k);
  const Decision a = decide_routed(k, s, uplink_drain(9));
  ASSERT_EQ(a.next.requests.pending.size(), 1u);
  const Decision gone = decide(k, a.next, ConnectionCommand{false}, {1001, 1001});
  EXPECT_FALSE(gone.next.plugin_connected);
  EXPECT_TRUE(gone.next.requests.pending.empty());
  ASSERT_EQ(gone.effects.writes.size(), 1u);
  const auto& finish = std::get<FinishReroute>(gone.effects.writes[0]);
  EXPECT_EQ(finish.status, RerouteStatus::kFailed);
  EXPECT_EQ(finish.detail, "plugin disconnected");
}

TEST(Decide, ALinkEventIdSeenBeforeIsADuplicateOrAConflict) {
  const Constants k = constants(FabricSource::kOffline);
  const State s = routed_state(k);
  LinkEventCommand c;
  c.request.event_id = "mon-1";
  c.request.node = "leaf g000 r0";
  c.request.port = 9;
  c.request.state = LinkState::kDown;
  c.actor = kOps;
  const Decision d = decide_routed(k, s, c);
  const auto& out = std::get<LinkEventOutcome>(d.reply);
  ASSERT_TRUE(out.ok()) << out.failure->message;
  ASSERT_EQ(d.next.link_states.size(), 1u);
  EXPECT_EQ(d.next.link_states[0].state, LinkState::kDown);
  EXPECT_TRUE(has_write<AddEvent>(d.effects));
  EXPECT_TRUE(has_write<AddLinkState>(d.effects));
  // Offline the link leaves the fabric of the next view.
  auto links_down = [](const FabricView& v) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < v.fabric.num_links(); ++i) n += v.fabric.link(LinkId(i)).state == routing::PortState::kDown;
    return n;
  };
  EXPECT_EQ(links_down(*s.view), 0u);
  EXPECT_EQ(links_down(*d.next.view), 1u);

  c.known = out.event;
  const Decision dup = decide_routed(k, d.next, c);
  EXPECT_TRUE(std::get<LinkEventOutcome>(dup.reply).duplicate);
  EXPECT_TRUE(std::get<LinkEventOutcome>(dup.reply).ok());
  EXPECT_FALSE(dup.effects.durable());
  c.request.state = LinkState::kUp;
  const LinkEventOutcome clash = std::get<LinkEventOutcome>(decide_routed(k, d.next, c).reply);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.failure->kind, FailureKind::kConflict);
}

}  // namespace
}  // namespace railyard::controller
