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

#include "files/atomic_file.h"
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
  Counters c = counters_;
  c.divergence_checks = watch_.divergence().checks();
  c.divergences = watch_.divergence().divergences();
  c.fabric_resyncs = watch_.fabric().resyncs();
  return c;
}

std::vector<std::string> Controller::down_links() const { return down_links(store_->current_link_states()); }

std::vector<std::string> Controller::down_links(const std::vector<LinkStateRecord>& states) {
  std::vector<std::string> out;
  for (const LinkStateRecord& r : states) {
    if (r.state == LinkState::kDown) out.push_back(r.link);
  }
  return out;
}

policies::Policy Controller::effective_policy(const std::vector<DrainRecord>& drains,
                                              const routing::Fabric* fabric) const {
  return effective_policy(drains, store_->current_link_states(), fabric);
}

policies::Policy Controller::effective_policy(const std::vector<DrainRecord>& drains,
                                              const std::vector<LinkStateRecord>& states,
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
  for (const LinkStateRecord& r : states) {
    if (r.state != LinkState::kDown || r.source != Reporter::kRest) continue;
    auto ref = key_to_ref(r.link);
    if (ref && resolvable(ref->node) && std::find(p.drains.links.begin(), p.drains.links.end(), *ref) == p.drains.links.end()) {
      p.drains.links.push_back(*ref);
    }
  }
  return p;
}

Status Controller::write_policy_file(const policies::Policy& policy) {
  if (config_.policy_output_file.empty()) return {};
  Status s = files::write_file_atomically(config_.policy_output_file, policies::render_policy_yaml(policy), 0644);
  policy_file_ok_ = s.ok();
  policy_file_error_ = s.ok() ? "" : s.error().message;
  return s;
}

Expected<std::string> Controller::canonical_target(const routing::Fabric& f, const DrainRequest& r,
                                                   std::string* label) const {
  Result<NodeId> node = routing::find_node(f, r.node);
  if (!node) return Failure::not_found("unknown node '" + r.node + "'");
  if (r.kind == DrainKind::kSwitch) {
    if (!f.is_switch(*node)) return Failure::invalid("'" + r.node + "' is not a switch");
    *label = std::string(f.desc(*node));
    return routing::to_string(f.node(*node).guid);
  }
  const routing::Node& nd = f.node(*node);
  if (r.port < 1 || r.port > nd.num_ports) {
    return Failure::invalid("'" + r.node + "' has ports 1.." + std::to_string(nd.num_ports) + ", not " +
                            std::to_string(r.port));
  }
  const PortId port = f.port_id(*node, PortNum{static_cast<uint8_t>(r.port)});
  const routing::Port& p = f.port(port);
  if (r.kind == DrainKind::kLink) {
    if (!p.remote.valid()) return Failure::invalid(port_label(f, port) + " is not cabled");
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

void Controller::set_view(std::shared_ptr<const FabricView> view) {
  view_ = std::move(view);
  // Live: the divergence check compares the plugin's digests with this view.
  if (view_ && config_.fabric_source == FabricSource::kLive) watch_.on_view(*view_, unix_now());
  ++generation_;
  sharp_follow_view();
}

Health Controller::health() const {
  std::lock_guard lock(mu_);
  Health h;
  h.database_writable = store_->writable();
  if (!h.database_writable) h.database_error = store_->write_error();
  h.policy_file_writable = policy_file_ok_;
  h.policy_file_error = policy_file_error_;
  if (config_.fabric_source == FabricSource::kLive) {
    h.plugin_reasons = watch_.health_reasons();
    h.plugin = watch_.status();
  }
  return h;
}

std::shared_ptr<const std::vector<LinkStatus>> Controller::links() const {
  std::lock_guard cache_lock(links_mu_);
  const uint64_t generation = generation_.load();
  if (links_ && links_generation_ == generation) return links_;
  std::shared_ptr<const FabricView> v = view();
  auto result = std::make_shared<std::vector<LinkStatus>>();
  std::vector<LinkStatus>& out = *result;
  std::map<std::string, LinkState> states;
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
      const bool down = l.state == routing::PortState::kDown || (st != states.end() && st->second == LinkState::kDown);
      s.state = down ? LinkState::kDown : LinkState::kUp;
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
    if (state == LinkState::kDown && !seen.contains(key)) {
      out.push_back(LinkStatus{LinkId(), key, LinkState::kDown, {}});
    }
  }
  links_ = std::move(result);
  links_generation_ = generation;
  return links_;
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
