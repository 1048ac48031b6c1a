// Controller: what the plugin's event lines do (docs/plugin_protocol.md).
#include <set>

#include "controller/controller.h"
#include "routing/topology_reader.h"

namespace railyard::controller {

namespace {

// Events worth keeping in the database. lft_change (one per 64-entry block)
// and port_counters (every perf manager sweep) are counted, not stored.
const std::set<std::string>& stored_types() {
  static const std::set<std::string> kTypes = {"hello", "trap", "heavy_sweep_start", "heavy_sweep_done",
                                               "subnet_up", "ucast_routing_done", "routing_pass", "port_errors",
                                               "ack"};
  return kTypes;
}

}  // namespace

void Controller::record_event(const std::string& source, const std::string& type, const nlohmann::json& body,
                              const std::string& external_id) {
  EventRecord e;
  e.time = body.contains("time") && body["time"].is_number() ? body["time"].get<double>() : unix_now();
  e.source = source;
  e.type = type;
  e.external_id = external_id;
  e.body = body.dump();
  store_->add_event(std::move(e));
}

void Controller::on_plugin_connection(bool connected) {
  std::lock_guard lock(mu_);
  plugin_connected_ = connected;
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
  nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
  if (event.is_discarded() || !event.is_object() || !event.contains("type") || !event["type"].is_string()) return;
  const std::string type = event["type"].get<std::string>();

  if (type == "fabric") {
    handle_fabric_snapshot(event);
    return;
  }
  std::lock_guard lock(mu_);
  ++counters_.plugin_events;
  if (event.contains("seq") && event["seq"].is_number_unsigned()) {
    const uint64_t seq = event["seq"].get<uint64_t>();
    if (type == "hello") {
      if (event.contains("dropped") && event["dropped"].is_number_unsigned()) {
        counters_.plugin_events_dropped = std::max(counters_.plugin_events_dropped, event["dropped"].get<uint64_t>());
      }
    } else if (last_plugin_seq_ != 0 && seq > last_plugin_seq_ + 1) {
      counters_.plugin_events_dropped += seq - last_plugin_seq_ - 1;
    }
    last_plugin_seq_ = seq;
  }
  if (type == "lft_change") {
    ++counters_.lft_changes;
    ++lft_changes_in_pass_;
    return;
  }
  if (type == "routing_pass") {
    lft_changes_in_pass_ = 0;
    const bool ok = event.value("status", "") == "ok";
    if (!ok && event.contains("requests") && event["requests"].is_array()) {
      for (const auto& id : event["requests"]) {
        if (id.is_string()) {
          finish_request(id.get<std::string>(), false,
                         "railyard's routing pass was refused: " + event.value("reason", std::string("(no reason)")),
                         unix_now());
        }
      }
    }
  }
  if (type == "ucast_routing_done" && event.contains("requests") && event["requests"].is_array()) {
    const bool ok = event.value("engine_ok", true);
    for (const auto& id : event["requests"]) {
      if (!id.is_string()) continue;
      finish_request(id.get<std::string>(), ok,
                     ok ? "LFTs in place (" + std::to_string(lft_changes_in_pass_) + " blocks changed)"
                        : "OpenSM routed with a fallback engine",
                     unix_now());
    }
    event["lft_blocks_changed"] = lft_changes_in_pass_;
  }
  if (stored_types().contains(type)) record_event("plugin", type, event);
}

void Controller::handle_fabric_snapshot(const nlohmann::json& event) {
  if (!event.contains("topology") || !event["topology"].is_string()) return;
  const std::string pass = event.contains("pass") ? event["pass"].dump() : "?";
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
