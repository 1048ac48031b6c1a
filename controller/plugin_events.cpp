// Controller: what the plugin's event lines do (docs/plugin_protocol.md).
//
// Lines come from outside the process: they are parsed with bounded nesting
// (controller/bounded_json.h) and decoded by the protocol's one definition
// (api/protocol/event_codec.h). A line that does not decode is recorded as
// `plugin_line_rejected` with the decoder's reason (naming the field) and
// does nothing else; a type this build does not know is counted and ignored
// (forward compatibility). The drop counters believe a sequence number only
// when it is plausible.
#include <cmath>
#include <optional>
#include <map>
#include <set>
#include <string>

#include "controller/bounded_json.h"
#include "controller/controller.h"
#include "controller/decide_parts.h"
#include "api/protocol/event_codec.h"

namespace railyard::controller {

namespace {

using nlohmann::json;

// The plugin numbers every event, sent or dropped, 1, 2, ... per process, in
// queue order: within a connection seq only grows, and a gap is the number of
// events dropped in between (its queue holds 4,096; drops are bursts of
// thousands). A gap above this bound is not a count but a broken or forged
// seq: it is recorded as an anomaly and restarts the baseline.
constexpr uint64_t kMaxPlausibleSeqGap = 1'000'000;
// hello.dropped is the plugin process's total, including everything dropped
// while no controller listened (perf-manager counters of a large fabric: up to
// ~1,000 a second). It may raise the counter by at most this much at once.
constexpr uint64_t kMaxPlausibleHelloDropIncrease = 100'000'000;

// Events worth keeping in the database. lft_change (one per 64-entry block)
// is counted, not stored; port_errors and port_counters (every port, every
// perf-manager sweep) go to the telemetry, and only an error burst is stored.
bool stored(const protocol::EventBody& body) {
  if (const auto* simple = std::get_if<protocol::SimpleEvent>(&body)) {
    return simple->kind == protocol::SimpleKind::kHeavySweepStart ||
           simple->kind == protocol::SimpleKind::kHeavySweepDone || simple->kind == protocol::SimpleKind::kSubnetUp;
  }
  return std::holds_alternative<protocol::HelloEvent>(body) || std::holds_alternative<protocol::TrapEvent>(body) ||
         std::holds_alternative<protocol::UcastRoutingDoneEvent>(body) ||
         std::holds_alternative<protocol::RoutingPassEvent>(body) || std::holds_alternative<protocol::AckEvent>(body);
}

// Follows the event's seq (and a hello's `dropped`, when the line decoded to
// one) into `last_seq` and `dropped`. Returns why the numbers were not
// believed, or "" when they were.
std::string account_seq(uint64_t seq, const protocol::HelloEvent* hello, uint64_t& last_seq, uint64_t& dropped) {
  const uint64_t previous = last_seq;
  last_seq = seq;  // believed or not, the baseline moves to it
  if (hello) {
    // A hello opens a connection: its seq is the new baseline. Every event
    // before it was sent or dropped, so dropped < seq.
    const uint64_t reported = hello->dropped;
    if (reported <= dropped) return {};
    if (reported >= seq) {
      return "hello.dropped " + std::to_string(reported) + " is not below its seq " + std::to_string(seq);
    }
    if (reported - dropped > kMaxPlausibleHelloDropIncrease) {
      return "hello.dropped " + std::to_string(reported) + " would raise the dropped count by more than " +
             std::to_string(kMaxPlausibleHelloDropIncrease);
    }
    dropped = reported;
    return {};
  }
  if (previous == 0) return {};  // the first numbered line of this connection
  if (seq <= previous) {
    return "seq went from " + std::to_string(previous) + " back to " + std::to_string(seq);
  }
  const uint64_t gap = seq - previous - 1;
  if (gap > kMaxPlausibleSeqGap) {
    return "seq jumped from " + std::to_string(previous) + " to " + std::to_string(seq);
  }
  dropped += gap;
  return {};
}

}  // namespace

// Off the strand: the line is parsed with bounded nesting and decoded (a
// fabric snapshot's topology, ~9 MB at 16k CAs, is read here).
PluginEventCommand read_plugin_line(const std::string& text) {
  PluginEventCommand c;
  c.bytes = text.size();
  c.line = parse_bounded_json(text, &c.error);
  if (c.line.is_discarded()) return c;
  protocol::Decoded<protocol::Envelope> env = protocol::decode_envelope(c.line);
  if (!env) {
    c.error = env.error().message();
    return c;
  }
  c.envelope = std::move(*env);
  protocol::Decoded<protocol::EventBody> body = protocol::decode_event_body(c.envelope->type, c.line);
  if (body) {
    c.body = std::move(*body);
  } else {
    c.unknown_type = body.error().kind == protocol::DecodeError::Kind::kUnknownType;
    c.error = body.error().message();
  }
  return c;
}

// The one place a plugin event is decided: requests it finishes, counters,
// what is stored. (A fabric snapshot is routed as a SnapshotCommand next.)
Decision decide_plugin_event(const Constants&, const State& s, const PluginEventCommand& c, const Clock& clock) {
  Decision d = unchanged(s);
  State& next = d.next;
  Effects& fx = d.effects;
  auto record = [&](Reporter source, const std::string& type, const json& body, std::optional<double> time = {}) {
    fx.writes.push_back(AddEvent{event_record(source, type, body, clock.now, time)});
  };
  if (!c.envelope) {
    record(Reporter::kController, "plugin_line_rejected", {{"error", c.error}, {"bytes", c.bytes}});
    return d;
  }
  const std::string& type = c.envelope->type;
  // Every numbered line counts for drops, whatever its body: the plugin sent it.
  const uint64_t before = next.last_plugin_seq;
  const auto* hello = c.body ? std::get_if<protocol::HelloEvent>(&*c.body) : nullptr;
  const std::string anomaly =
      account_seq(c.envelope->seq, hello, next.last_plugin_seq, next.counters.plugin_events_dropped);
  if (!anomaly.empty()) {
    record(Reporter::kController, "plugin_seq_anomaly",
           {{"event", type}, {"previous_seq", before}, {"reason", anomaly + "; not counted as drops"}});
  }
  if (!c.body) {
    if (c.unknown_type) {
      ++next.counters.plugin_events;  // a newer plugin's: counted, not understood
    } else if (type == "fabric") {
      record(Reporter::kController, "snapshot_rejected",
             {{"pass", c.line.contains("pass") ? safe_dump(c.line["pass"]) : "?"}, {"error", c.error}});
    } else {
      record(Reporter::kController, "plugin_line_rejected", {{"error", c.error}, {"bytes", c.bytes}});
    }
    return d;
  }
  const protocol::EventBody& body = *c.body;
  // The whole fabric and its changes go to the plugin watch (and a
  // SnapshotCommand); they are not counted as events.
  if (std::holds_alternative<protocol::FabricEvent>(body) ||
      std::holds_alternative<protocol::FabricChangesEvent>(body)) {
    return d;
  }
  ++next.counters.plugin_events;
  if (std::holds_alternative<protocol::LftChangeEvent>(body)) {
    ++next.counters.lft_changes;
    ++next.lft_changes_in_pass;
    return d;
  }
  json line = c.line;
  if (const auto* pass = std::get_if<protocol::RoutingPassEvent>(&body)) {
    next.lft_changes_in_pass = 0;
    if (!pass->ok) {
      for (const std::string& id : pass->requests) {
        finish_request(next, fx, id, false, "railyard's routing pass was refused: " + pass->reason, clock);
      }
    }
    // The per-switch digests are compared (the watch), not stored (1,280 at 16k CAs).
    if (line.contains("digests") && line["digests"].is_object()) line["digests"].erase("switches");
  }
  if (const auto* done = std::get_if<protocol::UcastRoutingDoneEvent>(&body)) {
    // The plugin's fast path counts the blocks it pushed itself (their
    // acknowledgements are not sent one by one as lft_change).
    const bool pushed = done->blocks_changed >= 0;
    const uint64_t blocks = pushed ? static_cast<uint64_t>(done->blocks_changed) : next.lft_changes_in_pass;
    // Its requests are finished by the plugin watch's verdict: applied only
    // when the tables the plugin wrote are railyardd's route (watch_plugin_event).
    line["lft_blocks_changed"] = blocks;
  }
  if (stored(body)) record(Reporter::kPlugin, type, line, c.envelope->time);
  return d;
}

Decision decide_snapshot(const Constants& k, const State& s, const SnapshotCommand& c, const Clock& clock,
                         const Routed* r) {
  Decision d = unchanged(s);
  const std::string pass = std::to_string(c.pass);
  RoutingJob job;
  job.base = s.view;
  job.fabric = c.fabric;
  job.policy = effective_policy(k, s.drains, s.link_states, c.fabric.get());
  job.origin = "plugin pass " + pass;
  job.diff = false;
  const Routed* routed = routed_now(s, r, std::move(job), d);
  if (!routed) return d;
  if (!routed->view) {
    d.effects.writes.push_back(AddEvent{event_record(Reporter::kController, "snapshot_rejected",
                                                     {{"pass", pass}, {"error", routed->error}}, clock.now)});
    return d;
  }
  State& next = d.next;
  next.view = adopt_view(next, *routed);
  ++next.version;
  d.effects.publish = true;
  // Links gone from OpenSM's subnet are down (source plugin), and up again
  // when they return.
  std::set<std::string> now_up;
  const routing::Fabric& f = next.view->fabric;
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    if (f.link(LinkId(i)).state != routing::PortState::kDown) now_up.insert(link_key(f, LinkId(i)));
  }
  std::map<std::string, LinkStateRecord> known;
  for (const LinkStateRecord& x : s.link_states) known[x.link] = x;
  auto set_state = [&](const std::string& key, LinkState state, const char* reason) {
    const LinkStateRecord rec{key, state, clock.now, Reporter::kPlugin, reason};
    d.effects.writes.push_back(AddLinkState{rec});
    d.effects.writes.push_back(AddEvent{event_record(
        Reporter::kController, "link_" + std::string(to_string(state)),
        {{"link", key}, {"source", to_string(Reporter::kPlugin)}}, clock.now)});
    known[key] = rec;
  };
  if (s.view) {
    const routing::Fabric& b = s.view->fabric;
    for (uint32_t i = 0; i < b.num_links(); ++i) {
      const std::string key = link_key(b, LinkId(i));
      if (now_up.contains(key)) continue;
      auto it = known.find(key);
      if (it != known.end() && it->second.state == LinkState::kDown) continue;
      set_state(key, LinkState::kDown, "gone from OpenSM's subnet");
    }
  }
  for (const LinkStateRecord& x : s.link_states) {
    if (x.state == LinkState::kDown && x.source == Reporter::kPlugin && now_up.contains(x.link)) {
      set_state(x.link, LinkState::kUp, "back in OpenSM's subnet");
    }
  }
  next.link_states.clear();
  for (auto& [key, rec] : known) next.link_states.push_back(rec);
  return d;
}

// ---- The plugin watch (PluginWatch decides; carried out here) ----------------

void Controller::watch_plugin_event(const protocol::EventBody& body, uint64_t blocks_in_pass, double time) {
  PluginWatch::Effects fx;
  uint64_t pass = 0;
  {
    std::lock_guard lock(strand_);
    const double now = unix_now();
    if (const auto* hello = std::get_if<protocol::HelloEvent>(&body)) {
      fx = watch_.on_hello(*hello, time);
    } else if (const auto* fabric = std::get_if<protocol::FabricEvent>(&body)) {
      // An older plugin's whole fabric as topology text (routed as a snapshot).
      watch_.on_fabric_text(fabric->fabric);
    } else if (const auto* changes = std::get_if<protocol::FabricChangesEvent>(&body)) {
      fx = watch_.on_fabric_changes(*changes, now);
      pass = changes->pass;
    } else if (const auto* routing_pass = std::get_if<protocol::RoutingPassEvent>(&body)) {
      fx = watch_.on_routing_pass(*routing_pass, now, time);
    } else if (const auto* done = std::get_if<protocol::UcastRoutingDoneEvent>(&body)) {
      const uint64_t blocks = done->blocks_changed >= 0 ? static_cast<uint64_t>(done->blocks_changed) : blocks_in_pass;
      fx = watch_.on_routing_done(*done, blocks, now, time);
    } else {
      return;
    }
    publish_watch();
  }
  carry_out_watch(std::move(fx), pass);
}

void Controller::carry_out_watch(PluginWatch::Effects fx, uint64_t pass) {
  for (auto& [type, body] : fx.events) record_event(Reporter::kController, type, body);
  for (PluginWatch::Verdict& v : fx.finished) {
    run(FinishRequests{{std::move(v.id)}, v.applied, std::move(v.detail)}, false);
  }
  if (!fx.commands.empty()) {
    std::lock_guard lock(strand_);
    for (const std::string& line : fx.commands) {
      if (sender_) (void)sender_(line);
    }
  }
  if (fx.fabric) run(SnapshotCommand{std::move(fx.fabric), pass}, true);
}

void Controller::take_port_sample(const protocol::EventBody& body, const json& line, double time) {
  const double now = unix_now();
  // The plugin's time when plausible.
  const double at = std::isfinite(time) && time > 0 && time <= now + 3600 ? time : now;
  if (const auto* errors = std::get_if<protocol::PortErrorsEvent>(&body)) {
    if (std::optional<ErrorBurst> burst = telemetry_.add(*errors, at)) {
      const json event = {{"node_guid", line.value("node_guid", "")},
                          {"port", errors->port.port},
                          {"node_name", errors->port.node_name},
                          {"errors", burst->errors},
                          {"interval_s", burst->interval_s},
                          {"counters", line}};
      try {
        store_->add_event(event_record(Reporter::kController, "error_burst", event, now, at));
      } catch (const StoreError&) {
        // The event is lost, the rates are kept; /health shows the database.
      }
    }
  } else if (const auto* counters = std::get_if<protocol::PortCountersEvent>(&body)) {
    telemetry_.add(*counters, at);
  }
}

void Controller::publish_watch() {
  std::lock_guard lock(health_mu_);
  watch_reasons_ = watch_.health_reasons();
  watch_status_ = watch_.status();
  watch_checks_ = watch_.divergence().checks();
  watch_divergences_ = watch_.divergence().divergences();
  watch_resyncs_ = watch_.fabric().resyncs();
}

}  // namespace railyard::controller
