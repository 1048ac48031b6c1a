// Controller: what the plugin's event lines do (docs/plugin_protocol.md).
//
// Lines come from outside the process: they are parsed with bounded nesting
// (controller/bounded_json.h) and decoded by the protocol's one definition
// (protocol/event_codec.h). A line that does not decode is recorded as
// `plugin_line_rejected` with the decoder's reason (naming the field) and
// does nothing else; a type this build does not know is counted and ignored
// (forward compatibility). The drop counters believe a sequence number only
// when it is plausible.
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "controller/bounded_json.h"
#include "controller/controller.h"
#include "protocol/event_codec.h"

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
// and port_counters (every perf manager sweep) are counted, not stored.
bool stored(const protocol::EventBody& body) {
  if (const auto* simple = std::get_if<protocol::SimpleEvent>(&body)) {
    return simple->kind == protocol::SimpleKind::kHeavySweepStart ||
           simple->kind == protocol::SimpleKind::kHeavySweepDone || simple->kind == protocol::SimpleKind::kSubnetUp;
  }
  return std::holds_alternative<protocol::HelloEvent>(body) || std::holds_alternative<protocol::TrapEvent>(body) ||
         std::holds_alternative<protocol::UcastRoutingDoneEvent>(body) ||
         std::holds_alternative<protocol::RoutingPassEvent>(body) ||
         std::holds_alternative<protocol::PortErrorsEvent>(body) || std::holds_alternative<protocol::AckEvent>(body);
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

void Controller::record_event(Reporter source, const std::string& type, const nlohmann::json& body,
                              std::optional<double> time) {
  EventRecord e;
  const double now = unix_now();
  e.time = now;
  // The plugin runs on this host: its clock is ours. A time from the future
  // (beyond clock steps) or before 1970 is not believed.
  if (time && std::isfinite(*time) && *time >= 0 && *time <= now + 3600) e.time = *time;
  e.source = source;
  e.type = type;
  e.body = safe_dump(body);
  store_->add_event(std::move(e));
}

void Controller::on_plugin_connection(bool connected) {
  std::lock_guard lock(mu_);
  plugin_connected_ = connected;
  // Sequence numbers are followed per connection: the next one starts with
  // its hello (maybe from another plugin process, numbering from 1 again).
  last_plugin_seq_ = 0;
  watch_.on_connection(connected);
  if (connected) ++counters_.plugin_connects;
  if (!connected) {
    // Requests sent to a plugin that went away will not be answered by it.
    const double now = unix_now();
    std::vector<std::string> ids;
    for (const auto& [id, at] : pending_) ids.push_back(id);
    for (const std::string& id : ids) finish_request(id, false, "plugin disconnected", now);
  }
}

void Controller::on_plugin_line(const std::string& line) {
  std::string error;
  json raw = parse_bounded_json(line, &error);
  std::optional<protocol::Envelope> envelope;
  if (!raw.is_discarded()) {
    protocol::Decoded<protocol::Envelope> env = protocol::decode_envelope(raw);
    if (env) {
      envelope = std::move(*env);
    } else {
      error = env.error().message();
    }
  }
  if (!envelope) {
    std::lock_guard lock(mu_);
    record_event(Reporter::kController, "plugin_line_rejected", {{"error", error}, {"bytes", line.size()}});
    return;
  }
  // The body is decoded before the lock: a fabric snapshot's topology (~9 MB
  // at 16k CAs) is read here.
  protocol::Decoded<protocol::EventBody> body = protocol::decode_event_body(envelope->type, raw);

  std::lock_guard lock(mu_);
  // Every numbered line counts for drops, whatever its body: the plugin sent it.
  const uint64_t before = last_plugin_seq_;
  const auto* hello = body ? std::get_if<protocol::HelloEvent>(&*body) : nullptr;
  const std::string anomaly = account_seq(envelope->seq, hello, last_plugin_seq_, counters_.plugin_events_dropped);
  if (!anomaly.empty()) {
    record_event(Reporter::kController, "plugin_seq_anomaly",
                 {{"event", envelope->type}, {"previous_seq", before}, {"reason", anomaly + "; not counted as drops"}});
  }
  if (!body) {
    if (body.error().kind == protocol::DecodeError::Kind::kUnknownType) {
      ++counters_.plugin_events;  // a newer plugin's: counted, not understood
      return;
    }
    if (envelope->type == "fabric") {
      record_event(Reporter::kController, "snapshot_rejected",
                   {{"pass", raw.contains("pass") ? safe_dump(raw["pass"]) : "?"}, {"error", body.error().message()}});
    } else {
      record_event(Reporter::kController, "plugin_line_rejected",
                   {{"error", body.error().message()}, {"bytes", line.size()}});
    }
    return;
  }
  take_plugin_event(*body, envelope->type, raw, envelope->time);
}

void Controller::take_plugin_event(const protocol::EventBody& body, const std::string& type, json& line,
                                   double time) {
  const double now = unix_now();
  if (const auto* fabric = std::get_if<protocol::FabricEvent>(&body)) {
    // An older plugin's whole fabric as topology text.
    watch_.on_fabric_text(fabric->fabric);
    handle_fabric_snapshot(*fabric);
    return;
  }
  if (const auto* changes = std::get_if<protocol::FabricChangesEvent>(&body)) {
    carry_out(watch_.on_fabric_changes(*changes, now), changes->pass);
    return;
  }
  ++counters_.plugin_events;
  if (const auto* hello = std::get_if<protocol::HelloEvent>(&body)) carry_out(watch_.on_hello(*hello), 0);
  if (std::holds_alternative<protocol::LftChangeEvent>(body)) {
    ++counters_.lft_changes;
    ++lft_changes_in_pass_;
    return;
  }
  if (const auto* pass = std::get_if<protocol::RoutingPassEvent>(&body)) {
    lft_changes_in_pass_ = 0;
    if (!pass->ok) {
      for (const std::string& id : pass->requests) {
        finish_request(id, false, "railyard's routing pass was refused: " + pass->reason, now);
      }
    }
    carry_out(watch_.on_routing_pass(*pass, now), pass->pass);
    // The per-switch digests are compared, not stored (1,280 at 16k CAs).
    if (line.contains("digests") && line["digests"].is_object()) line["digests"].erase("switches");
  }
  if (const auto* done = std::get_if<protocol::UcastRoutingDoneEvent>(&body)) {
    // The plugin's fast path counts the blocks it pushed itself (their
    // acknowledgements are not sent one by one as lft_change).
    const bool pushed = done->blocks_changed >= 0;
    const uint64_t blocks = pushed ? static_cast<uint64_t>(done->blocks_changed) : lft_changes_in_pass_;
    // Applied only when the tables the plugin wrote are railyardd's route.
    carry_out(watch_.on_routing_done(*done, blocks, now), 0);
    line["lft_blocks_changed"] = blocks;
  }
  if (stored(body)) record_event(Reporter::kPlugin, type, line, time);
}

void Controller::carry_out(PluginWatch::Effects fx, uint64_t pass) {
  // mu_ held.
  for (auto& [type, body] : fx.events) record_event(Reporter::kController, type, body);
  for (const PluginWatch::Verdict& v : fx.finished) finish_request(v.id, v.applied, v.detail, unix_now());
  for (const std::string& line : fx.commands) {
    if (sender_) (void)sender_(line);
  }
  if (fx.fabric) handle_fabric_snapshot(protocol::FabricEvent{pass, std::move(fx.fabric)});
}

void Controller::handle_fabric_snapshot(const protocol::FabricEvent& snapshot) {
  // mu_ held. The decoder read the topology; the view's Fabric is a copy of
  // it (build_view owns its fabric).
  const std::string pass = std::to_string(snapshot.pass);
  std::shared_ptr<const FabricView> before = view_;
  const policies::Policy policy = effective_policy(store_->active_drains(), snapshot.fabric.get());
  Result<std::shared_ptr<const FabricView>> v =
      build_view(routing::Fabric(*snapshot.fabric), policy, "plugin pass " + pass, next_version_++);
  if (!v) {
    record_event(Reporter::kController, "snapshot_rejected", {{"pass", pass}, {"error", v.error().message}});
    return;
  }
  set_view(*v);
  note_link_changes(before.get(), *view_);
}

void Controller::note_link_changes(const FabricView* before, const FabricView& after) {
  ++generation_;
  std::set<std::string> now_up;
  const routing::Fabric& f = after.fabric;
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    if (f.link(LinkId(i)).state != routing::PortState::kDown) now_up.insert(link_key(f, LinkId(i)));
  }
  const double now = unix_now();
  std::map<std::string, LinkStateRecord> known;
  for (const LinkStateRecord& r : store_->current_link_states()) known[r.link] = r;
  if (before) {
    const routing::Fabric& b = before->fabric;
    for (uint32_t i = 0; i < b.num_links(); ++i) {
      const std::string key = link_key(b, LinkId(i));
      if (now_up.contains(key)) continue;
      auto it = known.find(key);
      if (it != known.end() && it->second.state == LinkState::kDown) continue;
      store_->add_link_state(
          LinkStateRecord{key, LinkState::kDown, now, Reporter::kPlugin, "gone from OpenSM's subnet"});
      record_event(Reporter::kController, "link_down", {{"link", key}, {"source", to_string(Reporter::kPlugin)}});
    }
  }
  for (const auto& [key, rec] : known) {
    if (rec.state == LinkState::kDown && rec.source == Reporter::kPlugin && now_up.contains(key)) {
      store_->add_link_state(LinkStateRecord{key, LinkState::kUp, now, Reporter::kPlugin, "back in OpenSM's subnet"});
      record_event(Reporter::kController, "link_up", {{"link", key}, {"source", to_string(Reporter::kPlugin)}});
    }
  }
}

}  // namespace railyard::controller
