#include "controller/auto_isolation.h"

#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "routing/node_lookup.h"

namespace railyard::controller {

namespace {

Actor auto_actor(const std::string& action, const std::string& request) {
  return Actor{kAutoActor, Role::kOperator, action, request, 0};
}

std::string failure_text(const Failure& f) { return std::string(to_string(f.kind)) + ": " + f.message; }

// The link of an error_burst event's port (the telemetry's record of a
// perf-manager sample with many errors), in `v`; null when it names no
// cabled port of the view.
std::optional<std::string> burst_link(const nlohmann::json& body, const FabricView* v) {
  if (v == nullptr || !body.contains("node_guid") || !body["node_guid"].is_string() || !body.contains("port") ||
      !body["port"].is_number_unsigned()) {
    return std::nullopt;
  }
  const routing::Fabric& f = v->fabric;
  Result<NodeId> node = routing::find_node(f, body["node_guid"].get<std::string>());
  const uint64_t port = body["port"].get<uint64_t>();
  if (!node || port < 1 || port > f.node(*node).num_ports) return std::nullopt;
  const routing::Port& p = f.port(f.port_id(*node, PortNum{static_cast<uint8_t>(port)}));
  if (!p.remote.valid()) return std::nullopt;
  return link_key(f, p.link);
}

}  // namespace

bool valid_exclude_target(const std::string& target) {
  if (split_link_key(target)) return true;
  if (target.size() < 3 || target.size() > 18 || target.rfind("0x", 0) != 0) return false;
  for (size_t i = 2; i < target.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(target[i]))) return false;
  }
  return true;
}

AutoIsolation::AutoIsolation(Controller& controller, IsolationConfig config) : c_(controller), engine_(config) {}

AutoIsolation::~AutoIsolation() { stop(); }

void AutoIsolation::note(bool warn, const std::string& text) const {
  if (log_) log_(warn, text);
}

void AutoIsolation::start_at(double now) {
  std::lock_guard lock(mu_);
  last_event_ = c_.store().last_event_id();
  for (const DrainRecord& d : c_.store().active_drains()) {
    if (d.created_by == kAutoActor && d.kind == DrainKind::kLink) engine_.adopt(d.target, d.reason, d.id, now);
  }
}

void AutoIsolation::start_thread() {
  start_at(unix_now());
  thread_ = std::thread([this] {
    std::unique_lock lock(thread_mu_);
    while (!stop_) {
      lock.unlock();
      try {
        tick(unix_now());
      } catch (const std::exception& e) {
        note(true, std::string("isolation: ") + e.what());
      }
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; });
    }
  });
}

void AutoIsolation::stop() {
  {
    std::lock_guard lock(thread_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AutoIsolation::refresh_view() {
  // mu_ held.
  std::shared_ptr<const FabricView> v = c_.view();
  if (!v || v->version == view_version_) return;
  view_version_ = v->version;
  const routing::Fabric& f = v->fabric;
  uint32_t switch_links = 0;
  present_.clear();
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    const routing::Link& l = f.link(LinkId(i));
    if (f.is_switch(f.port(l.a).node) && f.is_switch(f.port(l.b).node)) ++switch_links;
    if (l.state != routing::PortState::kDown) present_.insert(link_key(f, LinkId(i)));
  }
  engine_.set_switch_links(switch_links);
}

void AutoIsolation::tick(double now) {
  std::lock_guard round(tick_mu_);
  std::vector<IsolationAction> actions;
  {
    std::lock_guard lock(mu_);
    refresh_view();
    actions.swap(deferred_);
  }
  for (;;) {
    std::vector<EventRecord> events;
    {
      std::lock_guard lock(mu_);
      events = c_.store().events_since(last_event_, 500);
      if (events.empty()) break;
      last_event_ = events.back().id;
      std::shared_ptr<const FabricView> view;
      for (const EventRecord& e : events) {
        if (e.type == "error_burst") {
          // A perf-manager sample with at least telemetry.error_burst errors:
          // its rate is what errors_per_minute is compared with.
          nlohmann::json body = nlohmann::json::parse(e.body, nullptr, false);
          if (!view) view = c_.view();
          const std::optional<std::string> link = body.is_object() ? burst_link(body, view.get()) : std::nullopt;
          const double interval = body.is_object() ? body.value("interval_s", 0.0) : 0.0;
          const double errors = body.is_object() ? body.value("errors", 0.0) : 0.0;
          if (!link || !(interval > 0)) continue;
          auto out = engine_.on_error_rate(*link, errors * 60.0 / interval, e.time);
          actions.insert(actions.end(), out.begin(), out.end());
          continue;
        }
        if (e.type != "link_down" && e.type != "link_up") continue;
        nlohmann::json body = nlohmann::json::parse(e.body, nullptr, false);
        if (!body.is_object() || !body.contains("link") || !body["link"].is_string()) continue;
        const std::string link = body["link"].get<std::string>();
        auto out = engine_.on_link_state(link, e.type == "link_down" ? LinkState::kDown : LinkState::kUp, e.time);
        actions.insert(actions.end(), out.begin(), out.end());
      }
    }
    if (events.size() < 500) break;
  }
  {
    // Drains of ours an operator removed: no longer ours.
    std::vector<DrainRecord> active = c_.store().active_drains();
    std::lock_guard lock(mu_);
    for (const IsolatedLink& iso : engine_.snapshot().isolated) {
      if (iso.drain_id == 0) continue;
      bool found = false;
      for (const DrainRecord& d : active) found = found || d.id == iso.drain_id;
      if (!found) engine_.restored(iso.link);
    }
    auto out = engine_.tick(now);
    actions.insert(actions.end(), out.begin(), out.end());
  }
  for (const IsolationAction& a : actions) carry_out(a, now);
}

void AutoIsolation::carry_out(const IsolationAction& a, double now) {
  const std::string what = std::string(to_string(a.kind)) + " " + a.link;
  const std::string request = nlohmann::json{{"link", a.link}, {"reason", a.reason}, {"detail", a.detail},
                                             {"dry_run", a.dry_run}}.dump();
  const Actor actor = auto_actor("isolation: " + what, request);
  switch (a.kind) {
    case IsolationAction::Kind::kExcluded:
      note(false, "isolation: " + a.link + " would be isolated (" + a.detail + "), but it is excluded");
      audit(actor, "not isolated: excluded (" + a.detail + ")", now);
      return;
    case IsolationAction::Kind::kTrip:
      note(true, "isolation: breaker tripped: " + a.detail + "; automation stopped until an operator resets it");
      audit(actor, "breaker tripped: " + a.detail, now);
      return;
    case IsolationAction::Kind::kIsolate: {
      if (a.dry_run) {
        note(false, "isolation (dry run): would isolate " + a.link + " (" + a.reason + ": " + a.detail + ")");
        audit(actor, "dry run: would isolate (" + a.reason + ", " + a.detail + "); nothing drained", now);
        std::lock_guard lock(mu_);
        engine_.isolated(a.link, 0, now);
        return;
      }
      {
        std::lock_guard lock(mu_);
        refresh_view();
        if (!present_.contains(a.link)) {
          deferred_.push_back(a);  // down now, out of the subnet: drained once it is back
          return;
        }
      }
      auto parts = split_link_key(a.link);
      if (!parts) {
        std::lock_guard lock(mu_);
        engine_.not_isolated(a.link);
        return;
      }
      DrainRequest req;
      req.kind = DrainKind::kLink;
      req.node = parts->first;
      req.port = parts->second;
      req.reason = a.reason;
      DrainOutcome o = c_.drain(req, actor, false, false);
      std::lock_guard lock(mu_);
      if (o.ok() && o.drain) {
        note(false, "isolation: isolated " + a.link + " (" + a.reason + ": " + a.detail + "), drain " + std::to_string(o.drain->id));
        engine_.isolated(a.link, o.drain->id, now);
      } else {
        // The link may have left the subnet after the check above (it went
        // down again while this round ran): then it is drained once back,
        // as if it had been out already.
        refresh_view();
        if (!present_.contains(a.link)) {
          note(false, "isolation: " + a.link + " left the subnet while being isolated; drained once it is back");
          deferred_.push_back(a);
          return;
        }
        const std::string why = o.failure ? failure_text(*o.failure) : o.message;
        note(true, "isolation: " + a.link + " not isolated: " + why);
        engine_.not_isolated(a.link);
        if (!o.audited) c_.audit_refused(actor, 0, "not isolated: " + why);
      }
      return;
    }
    case IsolationAction::Kind::kRestore: {
      if (a.dry_run) {
        note(false, "isolation (dry run): would restore " + a.link + " (" + a.detail + ")");
        audit(actor, "dry run: would restore (" + a.detail + ")", now);
        std::lock_guard lock(mu_);
        engine_.restored(a.link);
        return;
      }
      DrainOutcome o = c_.undrain(a.drain_id, actor, false);
      std::lock_guard lock(mu_);
      if (o.ok() || (o.failure && o.failure->kind == FailureKind::kNotFound)) {
        note(false, "isolation: restored " + a.link + " (" + a.detail + "), drain " + std::to_string(a.drain_id) + " removed");
        engine_.restored(a.link);
      } else {
        const std::string why = o.failure ? failure_text(*o.failure) : o.message;
        note(true, "isolation: " + a.link + " not restored: " + why);
        engine_.not_isolated(a.link);  // tried again next round
        if (!o.audited) c_.audit_refused(actor, 0, "not restored: " + why);
      }
      return;
    }
  }
}

void AutoIsolation::audit(const Actor& actor, const std::string& result, double now) {
  AuditRecord r;
  r.time = now;
  r.actor = actor.name;
  r.role = std::string(to_string(actor.role));
  r.action = actor.action;
  r.request = actor.request;
  r.status = actor.reply_code;
  r.result = result;
  try {
    c_.store().add_audit(r);
  } catch (const std::exception& e) {
    note(true, std::string("isolation: audit record not written: ") + e.what());
  }
}

IsolationSnapshot AutoIsolation::snapshot() const {
  std::lock_guard lock(mu_);
  return engine_.snapshot();
}

Outcome AutoIsolation::reset(const Actor& actor, double now) {
  Outcome out;
  bool was = false;
  {
    std::lock_guard lock(mu_);
    was = engine_.reset(actor.name, now);
  }
  out.message = was ? "breaker reset: automation resumes" : "breaker was not tripped";
  audit(actor, out.message, now);
  out.audited = true;
  return out;
}

Outcome AutoIsolation::exclude(const ExcludeEntry& entry, const Actor& actor, double now) {
  if (!valid_exclude_target(entry.target)) {
    return refused<Outcome>(
        Failure::invalid("target '" + entry.target + "' is neither a link \"0x<guid>[port]\" nor a node \"0x<guid>\""));
  }
  if (entry.expires_at && *entry.expires_at <= now) {
    return refused<Outcome>(Failure::invalid("expires_at is in the past"));
  }
  {
    std::lock_guard lock(mu_);
    ExcludeEntry e = entry;
    e.by = actor.name;
    e.added_at = now;
    engine_.exclude(std::move(e));
  }
  Outcome out;
  out.message = "excluded " + entry.target;
  audit(actor, out.message, now);
  out.audited = true;
  return out;
}

Outcome AutoIsolation::unexclude(const std::string& target, const Actor& actor, double now) {
  bool removed = false;
  {
    std::lock_guard lock(mu_);
    removed = engine_.unexclude(target);
  }
  if (!removed) return refused<Outcome>(Failure::not_found("'" + target + "' is not on the exclude list"));
  Outcome out;
  out.message = "no longer excluded: " + target;
  audit(actor, out.message, now);
  out.audited = true;
  return out;
}

}  // namespace railyard::controller
