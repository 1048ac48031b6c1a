#include "controller/controller.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <variant>

#include "controller/decide_parts.h"
#include "controller/files/atomic_file.h"
#include "policies/policy_loader.h"
#include "routing/lid_assignment.h"
#include "routing/node_lookup.h"
#include "routing/topology_reader.h"

namespace railyard::controller {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class O>
O reply_as(Reply reply) {
  if (O* o = std::get_if<O>(&reply)) return std::move(*o);
  return refused<O>(Failure::internal("no answer was decided"));
}

}  // namespace

Controller::Controller(ControllerConfig config, std::unique_ptr<Store> store)
    : store_(std::move(store)), routing_worker_(static_cast<int>(config.mutation_nice)), telemetry_(config.telemetry) {
  k_.config = std::move(config);
  published_.store(std::make_shared<const Published>());
}

Status Controller::start() {
  if (!k_.config.policy_base_file.empty()) {
    Result<std::string> text = read_file(k_.config.policy_base_file);
    if (!text) return text.error();
    Result<policies::Policy> policy = policies::parse_policy_yaml(*text, k_.config.policy_base_file);
    if (!policy) return policy.error();
    k_.base_policy = std::move(*policy);
  }
  std::scoped_lock lock(route_mu_, strand_);
  const bool writes = !write_refusal();
  try {
    if (writes) apply_retention(steady_now());
    state_.drains = store_->active_drains();
    state_.link_states = store_->current_link_states();
  } catch (const StoreError& e) {
    return Error{k_.config.database + ": " + e.what()};
  }
  if (k_.offline()) {
    Result<std::string> text = read_file(k_.config.topology_file);
    if (!text) return text.error();
    Result<routing::Fabric> fabric = routing::read_topology(*text, k_.config.topology_file);
    if (!fabric) return fabric.error();
    if (!fabric->has_lids()) {
      Result<routing::Fabric> with_lids = routing::assign_lids(*fabric);
      if (!with_lids) return with_lids.error();
      fabric = std::move(with_lids);
    }
    k_.offline_fabric = std::make_shared<const routing::Fabric>(std::move(*fabric));
    // Stored drains are resolved against the fabric just read.
    if (Status s = route_offline("offline "); !s) return s;
  }
  // Live, until the plugin's first snapshot there is no fabric: the policy
  // file names every stored drain (nothing to resolve them against yet).
  if (Status s = write_policy_file(policy_in_force()); !s) return s;
  try {
    if (writes) reconcile_requests();
  } catch (const StoreError& e) {
    return Error{k_.config.database + ": reconciling reroute requests: " + e.what()};
  }
  publish();
  return {};
}

void Controller::set_write_gate(WriteGate gate) { write_gate_ = std::move(gate); }

std::optional<std::string> Controller::write_refusal() const {
  return write_gate_ ? write_gate_() : std::nullopt;
}

// Strand held: the topology file's fabric routed with the state's down links
// and drains, adopted as the view.
Status Controller::route_offline(const std::string& origin) {
  RoutingJob job;
  job.fabric = k_.offline_fabric;
  job.down = down_links(state_.link_states);
  job.policy = effective_policy(k_, state_.drains, state_.link_states, k_.offline_fabric.get());
  job.origin = origin + k_.config.topology_file;
  job.view_version = state_.next_view_version;
  job.at_version = state_.version;
  job.base = state_.view;
  job.diff = false;
  Routed routed;
  routing_worker_.run([&] { routed = run_routing(job); });
  if (!routed.view) return Error{k_.config.topology_file + ": " + routed.error};
  state_.view = adopt_view(state_, routed);
  sharp_follow_view();
  return {};
}

Status Controller::follow_store(bool leading) {
  std::scoped_lock lock(route_mu_, strand_);
  std::vector<DrainRecord> drains;
  std::vector<LinkStateRecord> link_states;
  try {
    drains = store_->active_drains();
    link_states = store_->current_link_states();
  } catch (const StoreError& e) {
    return Error{k_.config.database + ": " + e.what()};
  }
  auto same_drains = [](const std::vector<DrainRecord>& a, const std::vector<DrainRecord>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].id != b[i].id || a[i].expires_at != b[i].expires_at) return false;
    }
    return true;
  };
  auto same_states = [](const std::vector<LinkStateRecord>& a, const std::vector<LinkStateRecord>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].link != b[i].link || a[i].state != b[i].state) return false;
    }
    return true;
  };
  const bool changed = !same_drains(drains, state_.drains) || !same_states(link_states, state_.link_states);
  if (changed) {
    state_.drains = std::move(drains);
    state_.link_states = std::move(link_states);
    ++state_.version;
    if (k_.offline() && k_.offline_fabric) {
      if (Status s = route_offline("replicated "); !s) return s;
    }
    (void)write_policy_file(policy_in_force());
  }
  // The plugin link hands the last policy it was given to every plugin that
  // connects: a member that becomes the leader must give its plugins the
  // replicated policy, not the one it started with.
  if ((changed || leading) && broadcaster_) broadcaster_(policies::render_policy_yaml(policy_in_force()));
  if (leading) {
    try {
      reconcile_requests();
    } catch (const StoreError& e) {
      return Error{k_.config.database + ": reconciling reroute requests: " + e.what()};
    }
  }
  if (changed) publish();
  return {};
}

void Controller::set_plugin_sender(PluginSender sender) {
  std::lock_guard lock(strand_);
  sender_ = std::move(sender);
}

void Controller::set_policy_broadcaster(PolicyBroadcaster broadcaster) {
  std::lock_guard lock(strand_);
  broadcaster_ = std::move(broadcaster);
  if (broadcaster_) broadcaster_(policies::render_policy_yaml(policy_in_force()));
}

void Controller::set_plugin_link_stats(PluginLinkStatsSource source) {
  std::lock_guard lock(strand_);
  link_stats_ = std::move(source);
}

std::optional<PluginLinkStats> Controller::plugin_link_stats() const {
  PluginLinkStatsSource source;
  {
    std::lock_guard lock(strand_);
    source = link_stats_;
  }
  if (!source) return std::nullopt;
  return source();
}

std::shared_ptr<const FabricView> Controller::view() const { return published_.load()->view; }

std::vector<DrainRecord> Controller::drains() const { return published_.load()->drains; }

uint64_t Controller::generation() const { return published_.load()->generation; }

bool Controller::plugin_connected() const { return plugin_connected_.load(); }

Counters Controller::counters() const {
  Counters c;
  {
    std::lock_guard lock(counters_mu_);
    c = counters_;
  }
  c.audits_suppressed = audits_suppressed_.load();
  c.audits_failed = audits_failed_.load();
  std::lock_guard lock(health_mu_);
  c.divergence_checks = watch_checks_;
  c.divergences = watch_divergences_;
  c.fabric_resyncs = watch_resyncs_;
  return c;
}

policies::Policy Controller::policy_in_force() const {
  return state_.view ? state_.view->policy : effective_policy(k_, state_.drains, state_.link_states, nullptr);
}

Status Controller::write_policy_file(const policies::Policy& policy) {
  if (k_.config.policy_output_file.empty()) return {};
  Status s = files::write_file_atomically(k_.config.policy_output_file, policies::render_policy_yaml(policy), 0644);
  policy_file_ok_ = s.ok();
  policy_file_error_ = s.ok() ? "" : s.error().message;
  health_policy_ok_ = s.ok();
  std::lock_guard lock(health_mu_);
  health_policy_error_ = policy_file_error_;
  return s;
}

void Controller::publish() {
  auto p = std::make_shared<Published>();
  p->view = state_.view;
  p->drains = state_.drains;
  p->link_states = state_.link_states;
  p->generation = ++generation_counter_;
  published_.store(std::move(p));
}

Reply Controller::run(Command command, bool routes) {
  std::unique_lock<std::mutex> routing_lock(route_mu_, std::defer_lock);
  if (routes) routing_lock.lock();
  std::optional<Routed> routed;
  for (;;) {
    std::unique_lock strand(strand_);
    if (auto* event = std::get_if<LinkEventCommand>(&command)) {
      // Looked up on the strand: events with an id are added on it only.
      event->known = store_->event_by_external_id(Reporter::kRest, event->request.event_id);
    }
    const Clock clock{unix_now(), steady_now()};
    Decision d = decide(k_, state_, command, clock, routed ? &*routed : nullptr);
    if (d.route) {
      // Routed off the strand; decided again with the result, which decide
      // takes only if the state is still the one it was routed from.
      strand.unlock();
      routing_worker_.run([&] { routed = run_routing(*d.route); });
      continue;
    }
    carry_out(d, clock);
    return std::move(d.reply);
  }
}

DrainOutcome Controller::drain(const DrainRequest& request, const Actor& actor, bool dry_run, bool force) {
  if (std::optional<std::string> why = write_refusal(); why && !dry_run) {
    return refused<DrainOutcome>(Failure::unavailable(*why));
  }
  return reply_as<DrainOutcome>(run(DrainCommand{request, actor, dry_run, force}, true));
}

DrainOutcome Controller::undrain(int64_t id, const Actor& actor, bool dry_run) {
  if (std::optional<std::string> why = write_refusal(); why && !dry_run) {
    return refused<DrainOutcome>(Failure::unavailable(*why));
  }
  return reply_as<DrainOutcome>(run(UndrainCommand{id, actor, dry_run}, true));
}

RerouteOutcome Controller::reroute(const Actor& actor, const std::string& reason) {
  if (std::optional<std::string> why = write_refusal()) return refused<RerouteOutcome>(Failure::unavailable(*why));
  return reply_as<RerouteOutcome>(run(RerouteCommand{actor, reason}, true));
}

LinkEventOutcome Controller::link_event(const LinkEventRequest& request, const Actor& actor, bool force) {
  if (std::optional<std::string> why = write_refusal()) return refused<LinkEventOutcome>(Failure::unavailable(*why));
  return reply_as<LinkEventOutcome>(run(LinkEventCommand{request, actor, force, std::nullopt}, true));
}

void Controller::on_plugin_line(const std::string& line) {
  // Plugin events are the leader's to record (a follower's plugin link should
  // not be connected at all: it tells plugins where the leader is).
  if (write_refusal()) return;
  PluginEventCommand event = read_plugin_line(line);
  std::optional<SnapshotCommand> snapshot;
  std::optional<protocol::EventBody> body;
  uint64_t blocks_in_pass = 0;
  if (event.body && event.envelope) {
    if (const auto* fabric = std::get_if<protocol::FabricEvent>(&*event.body)) {
      snapshot = SnapshotCommand{fabric->fabric, fabric->pass};
    }
    body = event.body;
    // Lines come one at a time (the plugin link's strand): the count is the
    // one this event's decision reads.
    std::lock_guard lock(strand_);
    blocks_in_pass = state_.lft_changes_in_pass;
  }
  // Perf-manager samples (every port, every sweep) go to the telemetry
  // after their sequence number is counted.
  const bool sample = body && (std::holds_alternative<protocol::PortErrorsEvent>(*body) ||
                               std::holds_alternative<protocol::PortCountersEvent>(*body));
  const double time = event.envelope ? event.envelope->time : 0;
  nlohmann::json sample_line = sample ? event.line : nlohmann::json();
  run(std::move(event), false);
  if (sample) {
    take_port_sample(*body, sample_line, time);
    return;
  }
  if (body) watch_plugin_event(*body, blocks_in_pass, time);
  if (snapshot) run(std::move(*snapshot), true);
}

void Controller::on_plugin_connection(bool connected) {
  run(ConnectionCommand{connected}, false);
  std::lock_guard lock(strand_);
  watch_.on_connection(connected);
  publish_watch();
}

void Controller::tick(double now) {
  // Expiries and retention are the leader's: a follower gets them from the log.
  if (write_refusal()) return;
  std::vector<int64_t> expired;
  {
    std::lock_guard lock(strand_);
    for (const DrainRecord& d : state_.drains) {
      if (d.expires_at && *d.expires_at <= now) expired.push_back(d.id);
    }
  }
  for (int64_t id : expired) {
    Actor system{"controller", Role::kOperator, "expire drain " + std::to_string(id), ""};
    DrainOutcome o = undrain(id, system, false);
    if (!o.audited) {
      audit_refused(system, 0,
                    o.failure ? std::string(to_string(o.failure->kind)) + ": " + o.failure->message : o.message);
    }
  }
  {
    std::lock_guard lock(strand_);
    // Recovery: once the disk has room again (or is writable again), health
    // says so and the policy file is brought in line with the state.
    // Probed every tick while failing, every 10 s while healthy, so that a
    // database gone read-only shows in /health before a mutation trips on it.
    const double probe_at = steady_now();
    if (!store_->writable() || probe_at - last_store_probe_ >= 10.0) {
      last_store_probe_ = probe_at;
      (void)store_->probe_write();
    }
    if (!policy_file_ok_) (void)write_policy_file(policy_in_force());
  }
  apply_retention(steady_now());
  run(TimerCommand{}, false);
}

Health Controller::health() const {
  Health h;
  h.database_writable = store_->writable();
  if (!h.database_writable) h.database_error = store_->write_error();
  h.policy_file_writable = health_policy_ok_.load();
  std::lock_guard lock(health_mu_);
  h.policy_file_error = health_policy_error_;
  if (!k_.offline()) {
    h.plugin_reasons = watch_reasons_;
    h.plugin = watch_status_;
  }
  return h;
}

std::shared_ptr<const std::vector<LinkStatus>> Controller::links() const {
  std::shared_ptr<const Published> p = published_.load();
  std::call_once(p->links_once, [&] {
    auto result = std::make_shared<std::vector<LinkStatus>>();
    std::vector<LinkStatus>& out = *result;
    std::map<std::string, LinkState> states;
    for (const LinkStateRecord& r : p->link_states) states[r.link] = r.state;
    const std::vector<DrainRecord>& drains = p->drains;
    std::set<std::string> seen;
    if (const std::shared_ptr<const FabricView>& v = p->view) {
      const routing::Fabric& f = v->fabric;
      for (uint32_t i = 0; i < f.num_links(); ++i) {
        const LinkId id(i);
        const routing::Link& l = f.link(id);
        LinkStatus s;
        s.link = id;
        s.key = link_key(f, id);
        auto st = states.find(s.key);
        const bool down =
            l.state == routing::PortState::kDown || (st != states.end() && st->second == LinkState::kDown);
        s.state = down ? LinkState::kDown : LinkState::kUp;
        const std::string ka = port_key(f, l.a), kb = port_key(f, l.b);
        const std::string sa = routing::to_string(f.node(f.port(l.a).node).guid);
        const std::string sb = routing::to_string(f.node(f.port(l.b).node).guid);
        for (const DrainRecord& d : drains) {
          const bool hit =
              d.kind == DrainKind::kSwitch ? (d.target == sa || d.target == sb) : (d.target == ka || d.target == kb);
          if (hit) s.drains.push_back(d.id);
        }
        seen.insert(s.key);
        out.push_back(std::move(s));
      }
    }
    for (const auto& [key, state] : states) {
      if (state == LinkState::kDown && !seen.contains(key)) {
        out.push_back(LinkStatus{LinkId(), key, LinkState::kDown, {}});
      }
    }
    p->links = std::move(result);
  });
  return p->links;
}

Expected<std::shared_ptr<const routing::ArTables>> Controller::ar_tables() {
  std::shared_ptr<const FabricView> v = view();
  if (!v) return Failure::unavailable("no fabric yet");
  std::lock_guard lock(ar_mu_);
  if (ar_ && ar_version_ == v->version) return ar_;
  Result<routing::ArTables> t = routing::compute_ar_groups(v->fabric, v->routing.tables, v->options,
                                                           v->policy.ar.max_groups_per_switch);
  if (!t) return Failure::internal("AR groups: " + t.error().message);
  ar_ = std::make_shared<const routing::ArTables>(std::move(*t));
  ar_version_ = v->version;
  return ar_;
}

}  // namespace railyard::controller
