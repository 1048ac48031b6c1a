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

#include "policies/policy_loader.h"
#include "routing/lid_assignment.h"
#include "routing/node_lookup.h"
#include "routing/topology_reader.h"

namespace railyard::controller {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "0x<guid>[port]" -> PortRef.
std::optional<policies::PortRef> key_to_ref(const std::string& key) {
  auto split = policies::split_port_ref(key);
  if (!split) return std::nullopt;
  uint32_t port = 0;
  for (char c : split->port) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 255) return std::nullopt;
  }
  return policies::PortRef{std::string(split->node), static_cast<uint8_t>(port)};
}

}  // namespace

Controller::Controller(ControllerConfig config, std::unique_ptr<Store> store)
    : config_(std::move(config)), store_(std::move(store)) {}

Status Controller::start() {
  if (!config_.policy_base_file.empty()) {
    Result<std::string> text = read_file(config_.policy_base_file);
    if (!text) return text.error();
    Result<policies::Policy> policy = policies::parse_policy_yaml(*text, config_.policy_base_file);
    if (!policy) return policy.error();
    base_policy_ = std::move(*policy);
  }
  std::lock_guard lock(mu_);
  const std::vector<DrainRecord> drains = store_->active_drains();
  if (config_.fabric_source == FabricSource::kOffline) {
    Result<std::string> text = read_file(config_.topology_file);
    if (!text) return text.error();
    Result<routing::Fabric> fabric = routing::read_topology(*text, config_.topology_file);
    if (!fabric) return fabric.error();
    if (!fabric->has_lids()) {
      Result<routing::Fabric> with_lids = routing::assign_lids(*fabric);
      if (!with_lids) return with_lids.error();
      fabric = std::move(with_lids);
    }
    offline_fabric_ = std::move(*fabric);
    routing::Fabric current = with_links_down(offline_fabric_, down_links());
    // Stored drains are resolved against the fabric just read (view_ is null).
    Result<std::shared_ptr<const FabricView>> view =
        build_view(std::move(current), effective_policy(drains), "offline " + config_.topology_file, next_version_++);
    if (!view) return Error{config_.topology_file + ": " + view.error().message};
    set_view(*view);
    if (Status s = write_policy_file(view_->policy); !s) return s;
  } else {
    // Until the plugin's first snapshot there is no fabric: the policy file
    // names every stored drain (nothing to resolve them against yet).
    if (Status s = write_policy_file(effective_policy(drains)); !s) return s;
  }
  return {};
}

void Controller::set_plugin_sender(PluginSender sender) {
  std::lock_guard lock(mu_);
  sender_ = std::move(sender);
}

std::shared_ptr<const FabricView> Controller::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

bool Controller::plugin_connected() const {
  std::lock_guard lock(mu_);
  return plugin_connected_;
}

Counters Controller::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

std::vector<std::string> Controller::down_links() const {
  std::vector<std::string> out;
  for (const LinkStateRecord& r : store_->current_link_states()) {
    if (r.state == "down") out.push_back(r.link);
  }
  return out;
}

policies::Policy Controller::effective_policy(const std::vector<DrainRecord>& drains,
                                              const routing::Fabric* fabric) const {
  policies::Policy p = base_policy_;
  const routing::Fabric* f = fabric ? fabric
                             : view_ ? &view_->fabric
                                     : (offline_fabric_.num_nodes() ? &offline_fabric_ : nullptr);
  auto resolvable = [&](const std::string& node) { return f == nullptr || routing::find_node(*f, node).ok(); };
  for (const DrainRecord& d : drains) {
    if (d.kind == DrainKind::kSwitch) {
      if (resolvable(d.target)) p.drains.switches.push_back(d.target);
      continue;
    }
    auto ref = key_to_ref(d.target);
    if (!ref || !resolvable(ref->node)) continue;
    (d.kind == DrainKind::kLink ? p.drains.links : p.drains.ports).push_back(*ref);
  }
  // Links that outside monitoring reported down are kept out of routing too:
  // live, OpenSM may still see them up.
  for (const LinkStateRecord& r : store_->current_link_states()) {
    if (r.state != "down" || r.source != "rest") continue;
    auto ref = key_to_ref(r.link);
    if (ref && resolvable(ref->node) && std::find(p.drains.links.begin(), p.drains.links.end(), *ref) == p.drains.links.end()) {
      p.drains.links.push_back(*ref);
    }
  }
  return p;
}

Status Controller::write_policy_file(const policies::Policy& policy) const {
  if (config_.policy_output_file.empty()) return {};
  const std::string& path = config_.policy_output_file;
  const std::string tmp = path + ".tmp";
  const std::string text = policies::render_policy_yaml(policy);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{tmp + ": cannot write the policy file"};
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Error{tmp + ": write failed"};
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Error{path + ": cannot replace the policy file"};
  return {};
}

Result<std::string> Controller::canonical_target(const routing::Fabric& f, const DrainRequest& r,
                                                 std::string* label) const {
  Result<NodeId> node = routing::find_node(f, r.node);
  if (!node) return Error{"unknown node '" + r.node + "'"};
  if (r.kind == DrainKind::kSwitch) {
    if (!f.is_switch(*node)) return Error{"'" + r.node + "' is not a switch"};
    *label = std::string(f.desc(*node));
    return routing::to_string(f.node(*node).guid);
  }
  const routing::Node& nd = f.node(*node);
  if (r.port < 1 || r.port > nd.num_ports) {
    return Error{"'" + r.node + "' has ports 1.." + std::to_string(nd.num_ports) + ", not " + std::to_string(r.port)};
  }
  const PortId port = f.port_id(*node, PortNum{static_cast<uint8_t>(r.port)});
  const routing::Port& p = f.port(port);
  if (r.kind == DrainKind::kLink) {
    if (!p.remote.valid()) return Error{port_label(f, port) + " is not cabled"};
    *label = port_label(f, port) + " <-> " + port_label(f, p.remote);
    return link_key(f, p.link);
  }
  *label = port_label(f, port);
  return port_key(f, port);
}

DrainImpact Controller::what_if(const FabricView& current, const policies::Policy& policy,
                                std::shared_ptr<const FabricView>* out, Status* error) const {
  DrainImpact impact;
  Result<std::shared_ptr<const FabricView>> next = build_view(current.fabric, policy, current.origin, 0);
  if (!next) {
    *error = next.error();
    return impact;
  }
  const routing::RoutingReport& before = current.routing.report;
  const routing::RoutingReport& after = (*next)->routing.report;
  const uint64_t cut_before = before.drained_pairs + before.unreachable_pairs;
  const uint64_t cut_after = after.drained_pairs + after.unreachable_pairs;
  impact.pairs_cut = cut_after > cut_before ? cut_after - cut_before : 0;
  if (impact.pairs_cut > 0) {
    const routing::Fabric& f = (*next)->fabric;
    auto add = [&](const std::vector<routing::DestinationIssue>& issues) {
      for (const routing::DestinationIssue& i : issues) {
        if (impact.cut.size() >= 10) break;
        impact.cut.push_back(CutPair{std::string(f.desc(i.example_source)), std::string(f.desc(i.dest)), i.sources});
      }
    };
    add(after.through_drained);
    add(after.unreachable);
  }
  impact.diff = routing::diff_routes(current.fabric, current.routing.tables, (*next)->routing.tables);
  impact.route_ms = (*next)->route_ms;
  *out = std::move(*next);
  return impact;
}

std::string Controller::next_request_id() {
  char buf[48];
  std::snprintf(buf, sizeof buf, "r%lld-%llu", static_cast<long long>(unix_now() * 1000),
                static_cast<unsigned long long>(++request_counter_));
  return buf;
}

RerouteRecord Controller::push_reroute(const Actor& actor, const std::string& reason, bool policy_changed) {
  RerouteRecord r;
  r.id = next_request_id();
  r.requested_at = unix_now();
  r.requested_by = actor.name;
  r.reason = reason;
  ++counters_.reroutes_requested;
  if (config_.fabric_source == FabricSource::kOffline) {
    // The view was re-routed by the caller: applied on the spot.
    r.status = "applied";
    r.finished_at = unix_now();
    r.latency_ms = view_ ? view_->route_ms : 0;
    r.detail = "offline fabric re-routed";
    ++counters_.reroutes_applied;
    counters_.reroute_latency_ms.push_back(*r.latency_ms);
  } else {
    const nlohmann::json line = {{"type", policy_changed ? "policy_changed" : "reroute"}, {"id", r.id}};
    if (sender_ && sender_(line.dump())) {
      r.status = "pending";
      pending_[r.id] = steady_now();
    } else {
      r.status = "failed";
      r.finished_at = unix_now();
      r.detail = "plugin not connected: the policy file is written and applies at OpenSM's next sweep";
      ++counters_.reroutes_failed;
    }
  }
  if (counters_.reroute_latency_ms.size() > 1000) {
    counters_.reroute_latency_ms.erase(counters_.reroute_latency_ms.begin());
  }
  store_->put_reroute(r);
  return r;
}

void Controller::set_view(std::shared_ptr<const FabricView> view) {
  view_ = std::move(view);
  ++generation_;
  sharp_follow_view();
}

DrainOutcome Controller::drain(const DrainRequest& request, const Actor& actor, bool dry_run, bool force) {
  std::lock_guard lock(mu_);
  DrainOutcome out;
  out.dry_run = dry_run;
  if (!view_) return {{503, "no fabric yet: the plugin has not sent a snapshot"}};
  std::string label;
  Result<std::string> target = canonical_target(view_->fabric, request, &label);
  if (!target) {
    out.status = target.error().message.starts_with("unknown node") ? 404 : 400;
    out.message = target.error().message;
    return out;
  }
  std::vector<DrainRecord> drains = store_->active_drains();
  for (const DrainRecord& d : drains) {
    if (d.kind == request.kind && d.target == *target) {
      out.status = 409;
      out.message = std::string(to_string(d.kind)) + " " + label + " is already drained (drain " + std::to_string(d.id) + ")";
      out.drain = d;
      return out;
    }
  }
  DrainRecord record;
  record.kind = request.kind;
  record.target = *target;
  record.target_name = label;
  record.reason = request.reason;
  record.created_by = actor.name;
  record.created_at = unix_now();
  record.expires_at = request.expires_at;
  drains.push_back(record);

  std::shared_ptr<const FabricView> next;
  Status error;
  out.impact = what_if(*view_, effective_policy(drains), &next, &error);
  if (!error) return {{400, error.error().message}};
  if (out.impact.pairs_cut > 0 && !force) {
    out.status = 409;
    out.message = "draining " + label + " would cut " + std::to_string(out.impact.pairs_cut) +
                  " CA pairs (no path left that avoids drains); repeat with force to drain anyway";
    return out;
  }
  if (dry_run) {
    out.status = 200;
    out.message = "dry run: nothing changed";
    return out;
  }
  out.drain = store_->add_drain(record);
  ++generation_;
  if (Status s = write_policy_file(next->policy); !s) {
    return {{500, "drain " + std::to_string(out.drain->id) + " stored but the policy file failed: " + s.error().message}};
  }
  auto fresh = std::make_shared<FabricView>(*next);
  fresh->version = next_version_++;
  set_view(std::move(fresh));
  out.reroute = push_reroute(actor, "drain " + std::to_string(out.drain->id), true);
  out.status = 201;
  out.message = "drained " + label;
  return out;
}

DrainOutcome Controller::undrain(int64_t id, const Actor& actor, bool dry_run) {
  std::lock_guard lock(mu_);
  DrainOutcome out;
  out.dry_run = dry_run;
  std::optional<DrainRecord> existing = store_->drain(id);
  if (!existing || existing->removed_at) return {{404, "no active drain " + std::to_string(id)}};
  out.drain = existing;
  std::vector<DrainRecord> drains = store_->active_drains();
  std::erase_if(drains, [&](const DrainRecord& d) { return d.id == id; });
  std::shared_ptr<const FabricView> next;
  if (view_) {
    Status error;
    out.impact = what_if(*view_, effective_policy(drains), &next, &error);
    if (!error) return {{500, "re-routing without drain " + std::to_string(id) + " failed: " + error.error().message}};
  }
  if (dry_run) {
    out.status = 200;
    out.message = "dry run: nothing changed";
    return out;
  }
  store_->remove_drain(id, actor.name, unix_now());
  ++generation_;
  out.drain = store_->drain(id);
  const policies::Policy policy = next ? next->policy : effective_policy(drains);
  if (Status s = write_policy_file(policy); !s) return {{500, s.error().message}};
  if (next) {
    auto fresh = std::make_shared<FabricView>(*next);
    fresh->version = next_version_++;
    set_view(std::move(fresh));
  }
  out.reroute = push_reroute(actor, "undrain " + std::to_string(id), true);
  out.status = 200;
  out.message = "undrained " + existing->target_name;
  return out;
}

RerouteOutcome Controller::reroute(const Actor& actor, const std::string& reason) {
  std::lock_guard lock(mu_);
  const double now = steady_now();
  while (!reroute_times_.empty() && now - reroute_times_.front() >= 60.0) reroute_times_.pop_front();
  if (reroute_times_.size() >= config_.reroutes_per_minute) {
    ++counters_.reroutes_rate_limited;
    RerouteOutcome out{{429, "at most " + std::to_string(config_.reroutes_per_minute) + " reroutes a minute"}};
    out.retry_after_s = std::max(1.0, 60.0 - (now - reroute_times_.front()));
    return out;
  }
  reroute_times_.push_back(now);
  if (config_.fabric_source == FabricSource::kOffline && view_) {
    Result<std::shared_ptr<const FabricView>> v =
        build_view(view_->fabric, view_->policy, view_->origin, next_version_++);
    if (!v) return {{500, v.error().message}};
    set_view(*v);
  }
  RerouteOutcome out{{202, "reroute requested"}};
  out.reroute = push_reroute(actor, reason.empty() ? "requested" : reason, false);
  return out;
}

LinkEventOutcome Controller::link_event(const LinkEventRequest& request, const Actor& actor) {
  std::lock_guard lock(mu_);
  if (!view_) return {{503, "no fabric yet"}};
  if (request.state != "down" && request.state != "up") return {{400, "state must be down or up"}};
  const routing::Fabric& f = config_.fabric_source == FabricSource::kOffline ? offline_fabric_ : view_->fabric;
  Result<NodeId> node = routing::find_node(f, request.node);
  if (!node) return {{404, "unknown node '" + request.node + "'"}};
  const routing::Node& nd = f.node(*node);
  if (request.port < 1 || request.port > nd.num_ports) {
    return {{400, "'" + request.node + "' has ports 1.." + std::to_string(nd.num_ports)}};
  }
  const PortId port = f.port_id(*node, PortNum{static_cast<uint8_t>(request.port)});
  if (!f.port(port).remote.valid()) return {{400, port_label(f, port) + " is not cabled"}};
  const std::string key = link_key(f, f.port(port).link);

  nlohmann::json body = {{"link", key},
                         {"link_name", port_label(f, port) + " <-> " + port_label(f, f.port(port).remote)},
                         {"state", request.state},
                         {"reason", request.reason},
                         {"reported_by", actor.name}};
  EventRecord e;
  e.time = request.time.value_or(unix_now());
  e.source = "rest";
  e.type = "link_" + request.state;
  e.external_id = request.event_id;
  e.body = body.dump();
  Store::Added added = store_->add_event(std::move(e));
  LinkEventOutcome out{{added.inserted ? 201 : 200, added.inserted ? "recorded" : "already recorded"}};
  out.event = added.event;
  out.duplicate = !added.inserted;
  if (!added.inserted) return out;

  std::string previous = "up";
  for (const LinkStateRecord& r : store_->current_link_states()) {
    if (r.link == key) previous = r.state;
  }
  store_->add_link_state(LinkStateRecord{key, request.state, out.event.time, "rest", request.reason});
  ++generation_;
  if (previous == request.state) return out;

  // Re-route around (or back over) the link.
  routing::Fabric fabric =
      config_.fabric_source == FabricSource::kOffline ? with_links_down(offline_fabric_, down_links()) : view_->fabric;
  const policies::Policy policy = effective_policy(store_->active_drains());
  Result<std::shared_ptr<const FabricView>> v = build_view(std::move(fabric), policy, view_->origin, next_version_++);
  if (!v) {
    out.message += "; re-routing failed: " + v.error().message;
    return out;
  }
  set_view(*v);
  (void)write_policy_file(policy);
  out.reroute = push_reroute(actor, "link " + key + " " + request.state, true);
  return out;
}

std::shared_ptr<const std::vector<LinkStatus>> Controller::links() const {
  std::lock_guard cache_lock(links_mu_);
  const uint64_t generation = generation_.load();
  if (links_ && links_generation_ == generation) return links_;
  std::shared_ptr<const FabricView> v = view();
  auto result = std::make_shared<std::vector<LinkStatus>>();
  std::vector<LinkStatus>& out = *result;
  std::map<std::string, std::string> states;
  for (const LinkStateRecord& r : store_->current_link_states()) states[r.link] = r.state;
  const std::vector<DrainRecord> drains = store_->active_drains();
  std::set<std::string> seen;
  if (v) {
    const routing::Fabric& f = v->fabric;
    for (uint32_t i = 0; i < f.num_links(); ++i) {
      const LinkId id(i);
      const routing::Link& l = f.link(id);
      LinkStatus s;
      s.link = id;
      s.key = link_key(f, id);
      auto st = states.find(s.key);
      s.state = l.state == routing::PortState::kDown || (st != states.end() && st->second == "down") ? "down" : "up";
      const std::string ka = port_key(f, l.a), kb = port_key(f, l.b);
      const std::string sa = routing::to_string(f.node(f.port(l.a).node).guid);
      const std::string sb = routing::to_string(f.node(f.port(l.b).node).guid);
      for (const DrainRecord& d : drains) {
        const bool hit = d.kind == DrainKind::kSwitch ? (d.target == sa || d.target == sb) : (d.target == ka || d.target == kb);
        if (hit) s.drains.push_back(d.id);
      }
      seen.insert(s.key);
      out.push_back(std::move(s));
    }
  }
  for (const auto& [key, state] : states) {
    if (state == "down" && !seen.contains(key)) out.push_back(LinkStatus{LinkId(), key, "down", {}});
  }
  links_ = std::move(result);
  links_generation_ = generation;
  return links_;
}

Result<std::shared_ptr<const routing::ArTables>> Controller::ar_tables() {
  std::shared_ptr<const FabricView> v = view();
  if (!v) return Error{"no fabric yet"};
  std::lock_guard lock(ar_mu_);
  if (ar_ && ar_version_ == v->version) return ar_;
  Result<routing::ArTables> t = routing::compute_ar_groups(v->fabric, v->routing.tables, v->options,
                                                           v->policy.ar.max_groups_per_switch);
  if (!t) return t.error();
  ar_ = std::make_shared<const routing::ArTables>(std::move(*t));
  ar_version_ = v->version;
  return ar_;
}

void Controller::audit(const Actor& actor, const std::string& action, const std::string& request, int status,
                       const std::string& result) {
  AuditRecord r;
  r.time = unix_now();
  r.actor = actor.name;
  r.role = std::string(to_string(actor.role));
  r.action = action;
  r.request = request.substr(0, 4096);
  r.status = status;
  r.result = result.substr(0, 1024);
  store_->add_audit(r);
}

void Controller::tick(double now) {
  std::vector<int64_t> expired;
  for (const DrainRecord& d : store_->active_drains()) {
    if (d.expires_at && *d.expires_at <= now) expired.push_back(d.id);
  }
  for (int64_t id : expired) {
    const Actor system{"controller", Role::kOperator};
    DrainOutcome o = undrain(id, system, false);
    audit(system, "expire drain " + std::to_string(id), "", o.status, o.message);
  }
  std::lock_guard lock(mu_);
  const double steady = steady_now();
  std::vector<std::string> overdue;
  for (const auto& [id, at] : pending_) {
    if (steady - at > config_.reroute_timeout_s) overdue.push_back(id);
  }
  for (const std::string& id : overdue) {
    finish_request(id, false, "no routing pass within " + std::to_string(config_.reroute_timeout_s) + " s", now);
  }
}

void Controller::finish_request(const std::string& id, bool applied, const std::string& detail, double now) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  const double latency_ms = (steady_now() - it->second) * 1000.0;
  pending_.erase(it);
  std::optional<RerouteRecord> r = store_->reroute(id);
  if (!r) return;
  r->status = applied ? "applied" : "failed";
  r->finished_at = now;
  r->detail = detail;
  if (applied) {
    r->latency_ms = latency_ms;
    ++counters_.reroutes_applied;
    counters_.reroute_latency_ms.push_back(latency_ms);
  } else {
    ++counters_.reroutes_failed;
  }
  store_->put_reroute(*r);
}

}  // namespace railyard::controller
