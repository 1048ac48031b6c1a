#include "sm_plugin/fast_path.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_map>
#include <cstring>
#include <exception>
#include <future>
#include <thread>
#include <utility>
#include <variant>

#include "routing/lft_digest.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/update_order.h"
#include "sm_plugin/elapsed.h"
#include "sm_plugin/subnet_reading.h"
#include "sm_plugin/subnet_snapshot.h"
#include "sm_plugin/trap_target.h"

namespace railyard::sm_plugin {

FastPath::FastPath(osm_opensm_t* osm, const OsmLogger& logger, RequestBook& requests, RoutingPass& pass)
    : osm_(osm),
      logger_(logger),
      requests_(requests),
      pass_(pass),
      push_(osm, logger) {
  thread_ = std::thread([this] { run(); });
}

FastPath::~FastPath() { stop(); }

void FastPath::stop() noexcept {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  push_.stop();
  if (thread_.joinable()) thread_.join();
}

void FastPath::submit(const Command& command) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    queue_.push_back(command);
  }
  cv_.notify_all();
}

void FastPath::on_subnet_up() noexcept {
  {
    std::lock_guard lock(mu_);
    if (subnet_up_seen_) return;
    subnet_up_seen_ = true;
    prime_ = true;
  }
  cv_.notify_all();
}

void FastPath::on_trap(uint16_t lid) noexcept {
  try {
    std::lock_guard lock(mu_);
    if (stopping_ || probe_path_.empty()) return;
    if (std::find(traps_.begin(), traps_.end(), lid) == traps_.end()) traps_.push_back(lid);
  } catch (...) {
    return;  // out of memory: OpenSM's sweep handles it
  }
  cv_.notify_all();
}

void FastPath::run() noexcept {
  for (;;) {
    std::vector<Command> batch;
    std::vector<uint16_t> traps;
    bool prime = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || !traps_.empty() || prime_; });
      if (stopping_) return;
      // A failure first: traffic is black-holed until its blocks are out.
      traps.swap(traps_);
      if (traps.empty()) {
        batch.assign(queue_.begin(), queue_.end());
        queue_.clear();
      }
      // A command or a trap routes anyway: no separate background route then.
      prime = prime_ && batch.empty() && traps.empty();
      if (traps.empty()) prime_ = false;
    }
    try {
      if (!traps.empty()) {
        handle_traps(std::move(traps));
      } else if (prime) {
        this->prime();
      } else {
        apply(std::move(batch));
      }
    } catch (const std::exception& e) {
      logger_.log(LogLevel::kError, "fast path: internal error: %s", e.what());
    } catch (...) {
      logger_.log(LogLevel::kError, "fast path: internal error");
    }
  }
}

void FastPath::fall_back(const std::vector<Command>& commands, const std::string& why, FastPathEvent ev) {
  routed_.reset();
  for (const Command& c : commands) requests_.add(c.id);
  if (osm_exit_flag) {
    logger_.log(LogLevel::kInfo, "fast path: %zu command(s) dropped, OpenSM is exiting", commands.size());
    return;
  }
  osm_->subn.force_reroute = TRUE;
  osm_opensm_sweep(osm_);
  std::string ids;
  for (const Command& c : commands) ids += (ids.empty() ? "'" : ", '") + c.id + "'";
  logger_.log(LogLevel::kInfo, "fast path: %s: path opensm (force_reroute): %s", ids.c_str(), why.c_str());
  if (EventChannel* events = events_.load()) {
    ev.pushed = false;
    ev.reason = why;
    ev.digests.reset();
    events->push(std::move(ev));
  }
}

namespace {

// Hands a reading's tables back to the fast path when the reading is done
// with, whatever way the step ends.
class KeepTables {
 public:
  KeepTables(routing::ForwardingTables& spare, SubnetReading& r) : spare_(spare), r_(r) {}
  ~KeepTables() { spare_ = std::move(r_.before); }
  KeepTables(const KeepTables&) = delete;
  KeepTables& operator=(const KeepTables&) = delete;

 private:
  routing::ForwardingTables& spare_;
  SubnetReading& r_;
};

}  // namespace

void FastPath::prime() {
  const auto t = Clock::now();
  // The port probe too, so that the first failure does not wait for it.
  if (!probe_path_.empty() && !prober_) {
    prober_ = std::make_unique<PortProber>(probe_path_);
    Status s = prober_->warm_up();
    if (!s.ok()) logger_.log(LogLevel::kError, "fast path: port probe: %s", s.error().message.c_str());
  }
  auto read = read_subnet(osm_, pass_, &spare_tables_);
  if (const auto* failure = std::get_if<ReadFailure>(&read)) {
    logger_.log(LogLevel::kVerbose, "fast path: no background route: %s", failure->why.c_str());
    return;
  }
  SubnetReading& r = std::get<SubnetReading>(read);
  const KeepTables keep(spare_tables_, r);
  const RoutingPass::PolicyRead in_force = pass_.read_policy(false);
  if (!in_force.error.empty()) return;
  const routing::RailMap rails = routing::map_rails(r.fabric, in_force.policy.rails);
  auto options = routing::plan_routing(r.fabric, in_force.policy, rails);
  if (!options) return;
  auto tracked = routing::route_unicast_tracked(r.fabric, *options);
  if (!tracked) return;
  // Newer than OpenSM's last pass: the next command continues from this one.
  pass_.take_routed();
  auto routed = std::make_unique<RoutingPass::Routed>();
  routed->fabric = std::make_shared<const routing::Fabric>(std::move(r.fabric));
  routed->options = std::move(*options);
  routed->tracked = std::move(*tracked);
  routed_ = std::move(routed);
  logger_.log(LogLevel::kInfo, "fast path: ready (the subnet routed once in the background, %.1f ms)", ms_since(t));
}

void FastPath::apply(std::vector<Command> commands) {
  const auto t_total = Clock::now();
  FastPathEvent ev;
  for (const Command& c : commands) ev.requests.push_back(c.id);
  // OpenSM's next pass re-reads the policy too, whichever path this takes.
  if (std::any_of(commands.begin(), commands.end(),
                  [](const Command& c) { return c.kind == CommandKind::kPolicyChanged; })) {
    pass_.request_policy_reload();
  }
  try {
    // 1. Read.
    auto t = Clock::now();
    int attempt = 0;
    std::variant<SubnetReading, ReadFailure> read = read_settled(osm_, pass_, attempt, &spare_tables_);
    ev.read_ms = ms_since(t);
    if (const auto* failure = std::get_if<ReadFailure>(&read)) return fall_back(commands, failure->why, std::move(ev));
    SubnetReading& r = std::get<SubnetReading>(read);
    const KeepTables keep(spare_tables_, r);
    ev.known_down = apply_known_down(r);

    std::string route_how;
    double lock_ms = 0, lock_wait_ms = 0;
    // A link the fast path found down may still be in OpenSM's model, and
    // on the SM's route to some switches.
    auto routes = known_down_.empty() ? std::unordered_map<uint64_t, std::vector<uint8_t>>{} : detours(r, r.fabric);
    const std::string failed =
        route_and_push(r, std::move(r.fabric), ev, route_how, lock_ms, lock_wait_ms, std::move(routes));
    if (!failed.empty()) return fall_back(commands, failed, std::move(ev));
    ev.total_ms = ms_since(t_total);

    std::string ids;
    for (const Command& c : commands) ids += (ids.empty() ? "'" : ", '") + c.id + "'";
    logger_.log(LogLevel::kInfo,
                "fast path: %s: path push: %llu entries in %llu changed blocks, %llu Sets posted (%llu re-posted), "
                "%llu acknowledged, %u rounds; read %.1f ms (%d tries), route %.1f ms (%s), order %.1f ms, "
                "push %.1f ms (lock held %.1f ms, waited %.1f ms), total %.1f ms",
                ids.c_str(), static_cast<unsigned long long>(ev.entries_changed),
                static_cast<unsigned long long>(ev.blocks_changed), static_cast<unsigned long long>(ev.blocks_sent),
                static_cast<unsigned long long>(ev.reposted), static_cast<unsigned long long>(ev.blocks_acked),
                ev.rounds, ev.read_ms, attempt + 1, ev.route_ms, route_how.c_str(), ev.order_ms, ev.push_ms,
                lock_ms, lock_wait_ms, ev.total_ms);
    pass_.set_last_digests(ev.digests);
    if (EventChannel* events = events_.load()) {
      ev.pushed = true;
      UcastRoutingDoneEvent done;
      done.reason = RoutingReason::kFastPath;
      done.requests = ev.requests;
      done.engine_ok = true;
      done.blocks_changed = static_cast<int64_t>(ev.blocks_changed);
      done.digests = ev.digests;
      events->push(std::move(ev));
      // The fabric these tables were routed on goes first (when railyardd
      // has not got it: a link the subnet lost or regained since OpenSM's
      // last pass), so the digests are compared with railyardd's route of it.
      if (routed_) pass_.share_fabric(routed_->fabric);
      events->push(std::move(done));
    }
  } catch (const std::exception& e) {
    FastPathEvent failed;
    for (const Command& c : commands) failed.requests.push_back(c.id);
    fall_back(commands, std::string("internal error: ") + e.what(), std::move(failed));
  }
}

// Trap 128s: which links of the trapping switches changed (the probe), then
// the subnet routed with those changes and pushed, as for a command. Nothing
// is left undone when this fails: OpenSM's heavy sweep (which the trap
// started, or which this asks for when `sweep_on_trap` is off) routes the
// rediscovered subnet and sends what differs.
void FastPath::handle_traps(std::vector<uint16_t> lids) {
  const auto t_total = Clock::now();
  FastPathEvent ev;
  ev.trigger = "trap";
  ev.trap_lid = lids.front();
  std::string what = "trap from LID";
  for (uint16_t lid : lids) what += " " + std::to_string(lid);
  auto sweep_if_off = [&] {
    // With sweep_on_trap off OpenSM waits for its light sweep to notice:
    // ask for the heavy sweep now so that its model catches up.
    if (!osm_->subn.opt.sweep_on_trap && !osm_exit_flag) {
      osm_->subn.force_heavy_sweep = TRUE;
      osm_opensm_sweep(osm_);
    }
  };
  auto give_up = [&](const std::string& why) {
    logger_.log(LogLevel::kInfo, "fast path: %s: left to OpenSM's sweep: %s", what.c_str(), why.c_str());
    sweep_if_off();
    if (EventChannel* events = events_.load()) {
      ev.pushed = false;
      ev.reason = why;
      ev.digests.reset();
      ev.total_ms = ms_since(t_total);
      events->push(std::move(ev));
    }
  };
  try {
    // Which ports changed: the trapping switches' linked ports, asked by
    // directed route while the subnet is read (the probe waits on the
    // switches, the reading on OpenSM's lock and memory).
    std::vector<TrapTarget> targets;
    for (uint16_t lid : lids) {
      auto target = read_trap_target(osm_, lid);
      if (!target) return give_up(target.error().message);
      targets.push_back(std::move(target).value());
    }
    if (!prober_) prober_ = std::make_unique<PortProber>(probe_path_);
    using Answers = Result<std::vector<ProbedPort>>;
    std::future<std::vector<Answers>> probing = std::async(std::launch::async, [&] {
      const auto t = Clock::now();
      std::vector<Answers> out;
      for (const TrapTarget& target : targets) out.push_back(prober_->probe(target.m_key, target.dr_path, target.ports));
      ev.probe_ms = ms_since(t);
      return out;
    });
    auto t = Clock::now();
    int attempt = 0;
    std::variant<SubnetReading, ReadFailure> read = read_settled(osm_, pass_, attempt, &spare_tables_);
    ev.read_ms = ms_since(t);
    const std::vector<Answers> answered = probing.get();  // before any return: the probe uses targets and ev
    if (const auto* failure = std::get_if<ReadFailure>(&read)) return give_up(failure->why);
    SubnetReading& r = std::get<SubnetReading>(read);
    const KeepTables keep(spare_tables_, r);
    ev.known_down = apply_known_down(r);

    std::vector<LinkChange> changes;
    for (size_t i = 0; i < targets.size(); ++i) {
      const NodeId sw = r.fabric.find_node_guid(Guid{targets[i].node_guid});
      if (!sw.valid()) return give_up("the switch of LID " + std::to_string(lids[i]) + " is not in the subnet read");
      const Answers& answers = answered[i];
      if (!answers) return give_up("port probe: " + answers.error().message);
      for (const LinkChange& c : link_changes(r.fabric, sw, *answers)) {
        // Both ends of a cable trap: one change.
        if (std::any_of(changes.begin(), changes.end(), [&](const LinkChange& o) { return o.link == c.link; })) {
          continue;
        }
        const routing::Link& link = r.fabric.link(c.link);
        const routing::Port& a = r.fabric.port(link.a);
        ev.links.push_back(routing::to_string(r.fabric.node(a.node).guid) + "[" + std::to_string(a.num.value) + "] " +
                           (c.up ? "up" : "down"));
        changes.push_back(c);
      }
    }
    for (const LinkChange& c : changes) {
      const routing::Port& a = r.fabric.port(r.fabric.link(c.link).a);
      const std::pair<uint64_t, uint8_t> end{r.fabric.node(a.node).guid.value, a.num.value};
      std::erase(known_down_, end);
      if (!c.up) known_down_.push_back(end);
    }
    if (changes.empty()) return give_up("the probe found no link changed");
    auto changed = apply_link_changes(r.fabric, changes);
    if (!changed) return give_up(changed.error().message);

    std::string route_how;
    double lock_ms = 0, lock_wait_ms = 0;
    // The SM's own routes to some switches may cross the links that went down.
    auto routes = detours(r, *changed);
    ev.detours = routes.size();
    const std::string failed =
        route_and_push(r, std::move(*changed), ev, route_how, lock_ms, lock_wait_ms, std::move(routes));
    if (!failed.empty()) return give_up(failed);
    ev.total_ms = ms_since(t_total);
    std::string links;
    for (const std::string& l : ev.links) links += (links.empty() ? "" : ", ") + l;
    const std::string ca_first =
        ev.ca_first ? "; the CA columns first, acknowledged " + std::to_string(static_cast<int>(ev.ca_acked_ms)) +
                          " ms into the push"
                    : "";
    logger_.log(LogLevel::kInfo,
                "fast path: %s: %s: path push: %llu entries in %llu changed blocks, %llu Sets posted, %llu "
                "acknowledged, %u rounds, %llu switches by a detour; read %.1f ms, probe %.1f ms, route %.1f ms (%s), order %.1f ms, push "
                "%.1f ms (lock held %.1f ms), total %.1f ms%s",
                what.c_str(), links.c_str(), static_cast<unsigned long long>(ev.entries_changed),
                static_cast<unsigned long long>(ev.blocks_changed), static_cast<unsigned long long>(ev.blocks_sent),
                static_cast<unsigned long long>(ev.blocks_acked), ev.rounds,
                static_cast<unsigned long long>(ev.detours), ev.read_ms, ev.probe_ms, ev.route_ms,
                route_how.c_str(), ev.order_ms, ev.push_ms, lock_ms, ev.total_ms, ca_first.c_str());
    sweep_if_off();
    pass_.set_last_digests(ev.digests);
    if (EventChannel* events = events_.load()) {
      ev.pushed = true;
      events->push(std::move(ev));
    }
  } catch (const std::exception& e) {
    give_up(std::string("internal error: ") + e.what());
  }
}

uint32_t FastPath::apply_known_down(SubnetReading& r) {
  std::vector<LinkChange> still;
  std::vector<std::pair<uint64_t, uint8_t>> keep;
  for (const auto& [guid, port] : known_down_) {
    const NodeId node = r.fabric.find_node_guid(Guid{guid});
    if (!node.valid() || port == 0 || port > r.fabric.node(node).num_ports) continue;
    const LinkId link = r.fabric.port(r.fabric.port_id(node, PortNum{port})).link;
    if (!link.valid()) continue;  // OpenSM's sweep unlinked it: the model knows
    keep.emplace_back(guid, port);
    if (r.fabric.link(link).state != routing::PortState::kDown) still.push_back({link, false});
  }
  known_down_ = std::move(keep);
  if (still.empty()) return 0;
  auto changed = apply_link_changes(r.fabric, still);
  if (!changed) return 0;
  r.fabric = std::move(*changed);
  return static_cast<uint32_t>(still.size());
}

std::string FastPath::route_and_push(SubnetReading& r, routing::Fabric fabric, FastPathEvent& ev,
                                     std::string& route_how, double& lock_ms, double& lock_wait_ms,
                                     std::unordered_map<uint64_t, std::vector<uint8_t>> routes) {
  // 2. Route: the policy as OpenSM's next pass will read it.
  auto t = Clock::now();
  const RoutingPass::PolicyRead in_force = pass_.read_policy(true);
  if (!in_force.error.empty()) return "policy file: " + in_force.error;
  if (in_force.refresh.kind == PolicySource::Refresh::Kind::kLoaded) {
    logger_.log(LogLevel::kInfo, "fast path: %s", in_force.refresh.message.c_str());
  }
  const routing::RailMap rails = routing::map_rails(fabric, in_force.policy.rails);
  auto options = routing::plan_routing(fabric, in_force.policy, rails);
  if (!options) return "policy does not apply: " + options.error().message;
  // A route to continue from: OpenSM's last railyard pass if one ran since
  // the last push, else the fast path's own last one (a push, or its
  // background route). Either is exact: reroute_unicast gives the full route
  // of (fabric, options) whatever route it starts from (it routes in full
  // when nodes, ports or LIDs differ).
  std::unique_ptr<RoutingPass::Routed> last = pass_.take_routed();
  route_how = "incremental from OpenSM's last pass";
  if (!last) {
    last = std::move(routed_);
    route_how = "incremental from the fast path's last route";
  }
  routed_.reset();
  Result<routing::TrackedRouting> tracked = Error{"not routed"};
  const auto t_route = Clock::now();
  if (last) {
    tracked = routing::reroute_unicast(*last->fabric, last->options, std::move(last->tracked), fabric, *options);
    if (tracked && !tracked->stats.incremental) route_how = "full: " + tracked->stats.full_reason;
  } else {
    tracked = routing::route_unicast_tracked(fabric, *options);
    route_how = "full: no earlier route";
  }
  const double engine_ms = ms_since(t_route);
  last.reset();
  if (!tracked) return "routing failed: " + tracked.error().message;
  ev.incremental = tracked->stats.incremental;
  if (tracked->stats.incremental) {
    const routing::RerouteStats& st = tracked->stats;
    route_how += "; " + std::to_string(st.columns_recomputed) + " of " + std::to_string(st.columns) +
                 " columns re-walked, modes of " + std::to_string(st.targets_prepared) + " of " +
                 std::to_string(st.targets) + " leaves worked out again";
  }
  const routing::ForwardingTables& after = tracked->result.tables;
  char split[64];
  std::snprintf(split, sizeof split, "; engine %.1f ms", engine_ms);
  route_how += split;
  ev.route_ms = ms_since(t);

  // 3. Order.
  t = Clock::now();
  auto order = routing::plan_update_order(fabric, r.before, after);
  if (!order) return "no safe order: " + order.error().message;
  ev.entries_changed = order->entries_changed;
  ev.blocks_changed = order->blocks_changed;
  // The CA columns first when the blocks that change only switch LIDs are
  // many, in number (ca_first_blocks_: the plugin's config) and against
  // those that change a CA LID (the switch LIDs' turn switch lost a link and
  // another took its place under other spines, so that many turned entries
  // move): the jobs'
  // traffic then does not wait behind the management tables. Two safe
  // orders, before -> (CA columns new) -> after; every intermediate table
  // has each LID's column either all old or all new. A block with both
  // kinds of change is then sent twice; otherwise every changed block is
  // sent once (a turn switch replaced under the same spines moves only
  // their fills: a few thousand blocks at 16k CAs, one order).
  std::vector<uint8_t> ca_lid(r.before.num_lids(), 0);
  for (uint32_t lid = 1; lid < ca_lid.size(); ++lid) {
    const PortId p = fabric.lid_owner(Lid{static_cast<uint16_t>(lid)});
    ca_lid[lid] = p.valid() && !fabric.is_switch(fabric.port(p).node);
  }
  auto has_ca_change = [&](const routing::UpdateStep& step) {
    for (uint32_t lid = step.block * 64; lid < step.block * 64 + 64 && lid < ca_lid.size(); ++lid) {
      const Lid l{static_cast<uint16_t>(lid)};
      if (ca_lid[lid] && r.before.get(step.switch_index, l) != after.get(step.switch_index, l)) return true;
    }
    return false;
  };
  uint64_t ca_blocks = 0, switch_only = 0;
  for (const routing::UpdateStep& step : order->steps) {
    if (step.complete) (has_ca_change(step) ? ca_blocks : switch_only) += 1;
  }
  struct Phase {
    routing::UpdateOrder order;
    const routing::ForwardingTables* from;
    const routing::ForwardingTables* to;
  };
  std::vector<Phase> phases;
  routing::ForwardingTables mid;
  if (ca_blocks > 0 && switch_only > std::max(ca_first_blocks_, ca_blocks)) {
    mid = r.before;
    for (const routing::UpdateStep& step : order->steps) {
      if (!step.complete) continue;
      for (uint32_t lid = step.block * 64; lid < step.block * 64 + 64 && lid < ca_lid.size(); ++lid) {
        const Lid l{static_cast<uint16_t>(lid)};
        if (ca_lid[lid]) mid.set(step.switch_index, l, after.get(step.switch_index, l));
      }
    }
    auto first = routing::plan_update_order(fabric, r.before, mid);
    if (!first) return "no safe order: " + first.error().message;
    phases.push_back({std::move(*first), &r.before, &mid});
    // The second order is planned once the first phase is out (below).
    phases.push_back({routing::UpdateOrder{}, &mid, &after});
    ev.ca_first = true;
  } else {
    phases.push_back({std::move(*order), &r.before, &after});
  }
  ev.rounds = 0;
  auto plan_of = [&](const Phase& phase) {
    const routing::UpdateOrder& o = phase.order;
    ev.rounds += o.rounds();
    PushPlan plan;
    plan.blocks.resize(o.steps.size());
    for (size_t i = 0; i < o.steps.size(); ++i) {
      const routing::UpdateStep& step = o.steps[i];
      plan.blocks[i].switch_guid = r.guids[step.switch_index];
      plan.blocks[i].block = step.block;
      routing::step_entries(*phase.from, *phase.to, step, plan.blocks[i].entries);
    }
    plan.round_begin = o.round_begin;
    plan.routes = routes;
    return plan;
  };
  PushPlan plan = plan_of(phases[0]);
  ev.order_ms = ms_since(t);

  // 4. Push, phase by phase.
  t = Clock::now();
  const uint64_t pass_read = r.pass;
  double order_in_push = 0;  // the second order, planned between the phases
  for (size_t p = 0; p < phases.size(); ++p) {
    if (p > 0) {
      const auto t_order = Clock::now();
      auto next = routing::plan_update_order(fabric, *phases[p].from, *phases[p].to);
      if (!next) return "no safe order: " + next.error().message;
      phases[p].order = std::move(*next);
      plan = plan_of(phases[p]);
      order_in_push += ms_since(t_order);
    }
    const PushOutcome out = push_.run(plan, [&] { return pass_.passes() == pass_read; });
    ev.blocks_sent += out.posted;
    ev.blocks_acked += out.acked;
    ev.reposted += out.reposted;
    lock_ms += out.lock_ms;
    lock_wait_ms += out.lock_wait_ms;
    if (out.status != PushStatus::kApplied) {
      ev.push_ms = ms_since(t) - order_in_push;
      return "push stopped in phase " + std::to_string(p + 1) + " of " + std::to_string(phases.size()) + " after " +
             std::to_string(out.rounds_done) + " of " + std::to_string(phases[p].order.rounds()) + " rounds, " +
             std::to_string(out.acked) + " of " + std::to_string(phases[p].order.blocks_changed) +
             " blocks acknowledged: " + std::string(to_string(out.status)) + ": " + out.detail;
    }
    if (ev.ca_first && p == 0) ev.ca_acked_ms = ms_since(t);
  }
  ev.order_ms += order_in_push;
  ev.push_ms = ms_since(t) - order_in_push;
  // The digests of the tables now in place, for the event and railyardd's
  // comparison: after the push, so that the switches do not wait for them
  // (15-25 ms at 16k CAs).
  t = Clock::now();
  {
    const routing::LftDigests lfts = routing::lft_digests(fabric, after);
    ev.digests = Digests{routing::policy_digest(in_force.policy), lfts.total, {}};
  }
  std::snprintf(split, sizeof split, "; digests after the push %.1f ms", ms_since(t));
  route_how += split;
  auto routed = std::make_unique<RoutingPass::Routed>();
  routed->fabric = std::make_shared<const routing::Fabric>(std::move(fabric));
  routed->options = std::move(*options);
  routed->tracked = std::move(*tracked);
  routed_ = std::move(routed);
  return {};
}

}  // namespace railyard::sm_plugin
