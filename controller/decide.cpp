// decide(): the dispatch over commands, and what every decision shares
// (decide.h).
#include <algorithm>
#include <cmath>

#include "controller/bounded_json.h"
#include "controller/decide_parts.h"
#include "routing/node_lookup.h"

namespace railyard::controller {

namespace {

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

Decision decide(const Constants& k, const State& state, const Command& command, const Clock& clock,
                const Routed* routed) {
  return std::visit(
      [&](const auto& c) -> Decision {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, DrainCommand>) return decide_drain(k, state, c, clock, routed);
        if constexpr (std::is_same_v<C, UndrainCommand>) return decide_undrain(k, state, c, clock, routed);
        if constexpr (std::is_same_v<C, LinkEventCommand>) return decide_link_event(k, state, c, clock, routed);
        if constexpr (std::is_same_v<C, RerouteCommand>) return decide_reroute(k, state, c, clock, routed);
        if constexpr (std::is_same_v<C, FinishRequests>) return decide_finish(k, state, c, clock);
        if constexpr (std::is_same_v<C, PluginEventCommand>) return decide_plugin_event(k, state, c, clock);
        if constexpr (std::is_same_v<C, SnapshotCommand>) return decide_snapshot(k, state, c, clock, routed);
        if constexpr (std::is_same_v<C, ConnectionCommand>) return decide_connection(k, state, c, clock);
        if constexpr (std::is_same_v<C, TimerCommand>) return decide_timer(k, state, clock);
      },
      command);
}

Decision unchanged(const State& s) {
  Decision d;
  d.next = s;
  return d;
}

const Routed* routed_now(const State& s, const Routed* r, RoutingJob job, Decision& d) {
  if (r && r->at_version == s.version) return r;
  job.at_version = s.version;
  job.view_version = s.next_view_version;
  d.route = std::move(job);
  return nullptr;
}

std::shared_ptr<const FabricView> adopt_view(State& next, const Routed& routed) {
  next.next_view_version = std::max(next.next_view_version, routed.view->version + 1);
  return routed.view;
}

Routed run_routing(const RoutingJob& job) {
  Routed out;
  out.at_version = job.at_version;
  try {
    routing::Fabric fabric = job.down.empty() ? *job.fabric : with_links_down(*job.fabric, job.down);
    Result<std::shared_ptr<const FabricView>> next =
        build_view(std::move(fabric), job.policy, job.origin, job.view_version);
    if (!next) {
      out.error = next.error().message;
      return out;
    }
    out.view = *next;
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.impact.route_ms = out.view->route_ms;
  if (!job.base) return out;
  const routing::RoutingReport& before = job.base->routing.report;
  const routing::RoutingReport& after = out.view->routing.report;
  const uint64_t cut_before = before.drained_pairs + before.unreachable_pairs;
  const uint64_t cut_after = after.drained_pairs + after.unreachable_pairs;
  out.impact.pairs_cut = cut_after > cut_before ? cut_after - cut_before : 0;
  if (out.impact.pairs_cut > 0) {
    const routing::Fabric& f = out.view->fabric;
    auto add = [&](const std::vector<routing::DestinationIssue>& issues) {
      for (const routing::DestinationIssue& i : issues) {
        if (out.impact.cut.size() >= 10) break;
        out.impact.cut.push_back(
            CutPair{std::string(f.desc(i.example_source)), std::string(f.desc(i.dest)), i.sources});
      }
    };
    add(after.through_drained);
    add(after.unreachable);
  }
  if (job.diff) {
    out.impact.diff = routing::diff_routes(job.base->fabric, job.base->routing.tables, out.view->routing.tables);
  }
  return out;
}

std::vector<std::string> down_links(const std::vector<LinkStateRecord>& states) {
  std::vector<std::string> out;
  for (const LinkStateRecord& r : states) {
    if (r.state == LinkState::kDown) out.push_back(r.link);
  }
  return out;
}

policies::Policy effective_policy(const Constants& k, const std::vector<DrainRecord>& drains,
                                  const std::vector<LinkStateRecord>& states, const routing::Fabric* f) {
  policies::Policy p = k.base_policy;
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
    if (ref && resolvable(ref->node) &&
        std::find(p.drains.links.begin(), p.drains.links.end(), *ref) == p.drains.links.end()) {
      p.drains.links.push_back(*ref);
    }
  }
  return p;
}

Expected<std::string> canonical_target(const routing::Fabric& f, const DrainRequest& r, std::string* label) {
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

AuditRecord audit_of(const Actor& actor, const std::string& fallback_action, const std::string& done, double now) {
  AuditRecord a;
  a.time = now;
  a.actor = actor.name;
  a.role = std::string(to_string(actor.role));
  a.action = actor.action.empty() ? fallback_action : actor.action;
  a.request = actor.request.substr(0, 4096);
  a.status = actor.reply_code;
  a.result = done.substr(0, 1024);
  return a;
}

EventRecord event_record(Reporter source, const std::string& type, const nlohmann::json& body, double now,
                         std::optional<double> time) {
  EventRecord e;
  e.time = now;
  // The plugin runs on this host: its clock is ours. A time from the future
  // (beyond clock steps) or before 1970 is not believed.
  if (time && std::isfinite(*time) && *time >= 0 && *time <= now + 3600) e.time = *time;
  e.source = source;
  e.type = type;
  e.body = safe_dump(body);
  return e;
}

}  // namespace railyard::controller
