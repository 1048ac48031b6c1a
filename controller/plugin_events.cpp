// Controller: what the plugin's event lines do (docs/plugin_protocol.md).
//
// Lines come from outside the process: they are parsed with bounded nesting
// (controller/bounded_json.h), fields of the wrong type are treated as absent,
// and the drop counters believe a sequence number only when it is plausible.
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "controller/bounded_json.h"
#include "controller/controller.h"
#include "routing/topology_reader.h"

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
const std::set<std::string>& stored_types() {
  static const std::set<std::string> kTypes = {"hello", "trap", "heavy_sweep_start", "heavy_sweep_done",
                                               "subnet_up", "ucast_routing_done", "routing_pass", "port_errors",
                                               "ack"};
  return kTypes;
}

std::string string_field(const json& e, const char* key, const std::string& fallback) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool bool_field(const json& e, const char* key, bool fallback) {
  auto it = e.find(key);
  return it != e.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::optional<uint64_t> unsigned_field(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

// Follows the event's seq (and a hello's `dropped`) into `last_seq` and
// `dropped`. Returns why the numbers were not believed, or "" when they were.
std::string account_seq(const json& event, const std::string& type, uint64_t& last_seq, uint64_t& dropped) {
  const std::optional<uint64_t> seq = unsigned_field(event, "seq");
  if (!seq) return {};
  const uint64_t previous = last_seq;
  last_seq = *seq;  // believed or not, the baseline moves to it
  if (type == "hello") {
    // A hello opens a connection: its seq is the new baseline. Every event
    // before it was sent or dropped, so dropped < seq.
    const std::optional<uint64_t> reported = unsigned_field(event, "dropped");
    if (!reported || *reported <= dropped) return {};
    if (*reported >= *seq) {
      return "hello.dropped " + std::to_string(*reported) + " is not below its seq " + std::to_string(*seq);
    }
    if (*reported - dropped > kMaxPlausibleHelloDropIncrease) {
      return "hello.dropped " + std::to_string(*reported) + " would raise the dropped count by more than " +
             std::to_string(kMaxPlausibleHelloDropIncrease);
    }
    dropped = *reported;
    return {};
  }
  if (previous == 0) return {};  // the first numbered line of this connection
  if (*seq <= previous) {
    return "seq went from " + std::to_string(previous) + " back to " + std::to_string(*seq);
  }
  const uint64_t gap = *seq - previous - 1;
  if (gap > kMaxPlausibleSeqGap) {
    return "seq jumped from " + std::to_string(previous) + " to " + std::to_string(*seq);
  }
  dropped += gap;
  return {};
}

}  // namespace

void Controller::record_event(const std::string& source, const std::string& type, const nlohmann::json& body,
                              const std::string& external_id) {
  EventRecord e;
  const double now = unix_now();
  e.time = now;
  // The plugin runs on this host: its clock is ours. A time from the future
  // (beyond clock steps) or before 1970 is not believed.
  if (auto it = body.find("time"); it != body.end() && it->is_number()) {
    const double t = it->get<double>();
    if (std::isfinite(t) && t >= 0 && t <= now + 3600) e.time = t;
  }
  e.source = source;
  e.type = type;
  e.external_id = external_id;
  e.body = safe_dump(body);
  store_->add_event(std::move(e));
}

void Controller::on_plugin_connection(bool connected) {
  std::lock_guard lock(mu_);
  plugin_connected_ = connected;
  // Sequence numbers are followed per connection: the next one starts with
  // its hello (maybe from another plugin process, numbering from 1 again).
  last_plugin_seq_ = 0;
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
  json event = parse_bounded_json(line, &error);
  if (!event.is_discarded() && (!event.is_object() || !event.contains("type") || !event["type"].is_string())) {
    error = "not a JSON object with a string \"type\"";
  }
  if (!error.empty()) {
    std::lock_guard lock(mu_);
    record_event("controller", "plugin_line_rejected", {{"error", error}, {"bytes", line.size()}});
    return;
  }
  const std::string type = event["type"].get<std::string>();

  auto follow_seq = [&] {  // mu_ held
    const uint64_t before = last_plugin_seq_;
    const std::string anomaly = account_seq(event, type, last_plugin_seq_, counters_.plugin_events_dropped);
    if (!anomaly.empty()) {
      record_event("controller", "plugin_seq_anomaly",
                   {{"event", type}, {"previous_seq", before}, {"reason", anomaly + "; not counted as drops"}});
    }
  };
  if (type == "fabric") {
    {
      std::lock_guard lock(mu_);
      follow_seq();
    }
    handle_fabric_snapshot(event);
    return;
  }
  std::lock_guard lock(mu_);
  ++counters_.plugin_events;
  follow_seq();
  if (type == "lft_change") {
    ++counters_.lft_changes;
    ++lft_changes_in_pass_;
    return;
  }
  if (type == "routing_pass") {
    lft_changes_in_pass_ = 0;
    const bool ok = string_field(event, "status", "") == "ok";
    if (!ok && event.contains("requests") && event["requests"].is_array()) {
      const std::string reason = string_field(event, "reason", "(no reason)");
      for (const auto& id : event["requests"]) {
        if (id.is_string()) {
          finish_request(id.get<std::string>(), false, "railyard's routing pass was refused: " + reason, unix_now());
        }
      }
    }
  }
  if (type == "ucast_routing_done" && event.contains("requests") && event["requests"].is_array()) {
    const bool ok = bool_field(event, "engine_ok", true);
    // The plugin's fast path counts the blocks it pushed itself (their
    // acknowledgements are not sent one by one as lft_change).
    const bool pushed = event.contains("blocks_changed") && event["blocks_changed"].is_number_unsigned();
    const uint64_t blocks = pushed ? event["blocks_changed"].get<uint64_t>() : lft_changes_in_pass_;
    for (const auto& id : event["requests"]) {
      if (!id.is_string()) continue;
      finish_request(id.get<std::string>(), ok,
                     ok ? "LFTs in place (" + std::to_string(blocks) + " blocks changed" +
                              (pushed ? ", pushed by the plugin)" : ")")
                        : "OpenSM routed with a fallback engine",
                     unix_now());
    }
    event["lft_blocks_changed"] = blocks;
  }
  if (stored_types().contains(type)) record_event("plugin", type, event);
}

void Controller::handle_fabric_snapshot(const nlohmann::json& event) {
  if (!event.contains("topology") || !event["topology"].is_string()) return;
  const std::string pass = event.contains("pass") && event["pass"].is_number() ? safe_dump(event["pass"]) : "?";
  Result<routing::Fabric> fabric = routing::read_topology(event["topology"].get_ref<const std::string&>(),
                                                          "plugin snapshot (pass " + pass + ")");
  std::lock_guard lock(mu_);
  if (!fabric) {
    record_event("controller", "snapshot_rejected", {{"pass", pass}, {"error", fabric.error().message}});
    return;
  }
  std::shared_ptr<const FabricView> before = view_;
  const policies::Policy policy = effective_policy(store_->active_drains(), &*fabric);
  Result<std::shared_ptr<const FabricView>> v =
      build_view(std::move(*fabric), policy, "plugin pass " + pass, next_version_++);
  if (!v) {
    record_event("controller", "snapshot_rejected", {{"pass", pass}, {"error", v.error().message}});
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
      if (it != known.end() && it->second.state == "down") continue;
      store_->add_link_state(LinkStateRecord{key, "down", now, "plugin", "gone from OpenSM's subnet"});
      record_event("controller", "link_down", {{"link", key}, {"source", "plugin"}});
    }
  }
  for (const auto& [key, rec] : known) {
    if (rec.state == "down" && rec.source == "plugin" && now_up.contains(key)) {
      store_->add_link_state(LinkStateRecord{key, "up", now, "plugin", "back in OpenSM's subnet"});
      record_event("controller", "link_up", {{"link", key}, {"source", "plugin"}});
    }
  }
}

}  // namespace railyard::controller
