// Read-only views of the fabric: status, hosts, switches, links, route, ar. Tables for people; --json prints the API's reply unchanged
// (hosts filtered by name keeps the API's shape).
#include <iostream>
#include <memory>
#include <set>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

// ---- status ---------------------------------------------------------------

void run_status(Context& ctx) {
  const ApiSession& api = ctx.api();
  // Health needs no token; the fabric summary does. Both are shown even when
  // one fails, and the exit code is the worse of the two.
  const ApiReply health = api.call("GET", api_path({"health"}));
  const ApiReply fabric = api.call("GET", api_path({"fabric"}));
  if (api.json_output()) {
    std::cout << json{{"health", health.body}, {"fabric", fabric.body}}.dump(2) << "\n";
  }
  if (!api.json_output() && health.body.is_object()) {
    const json& h = health.body;
    std::string line =
        "controller  " + cell(h, "status") + " (source " + cell(h, "source") + ", database " + cell(h, "database");
    if (h.contains("plugin")) line += ", plugin " + cell(h, "plugin");
    std::cout << line << ")\n";
    if (h.contains("ha") && h["ha"].is_object()) {
      // Several members (docs/ha.md): this one's role, the leader, the log entry its answers reflect.
      const json& ha = h["ha"];
      std::cout << "ha          " << cell(ha, "member") << " is " << cell(ha, "role") << ", leader "
                << (ha.value("leader", json()).is_string() ? cell(ha, "leader") + " (" + cell(ha, "leader_url") + ")"
                                                          : std::string("none"))
                << ", log entry " << cell(ha, "applied_seq") << ", etcd " << cell(ha, "etcd") << "\n";
      if (ha.contains("mutations")) std::cout << "            " << cell(ha, "mutations") << "\n";
    }
  }
  if (!api.json_output() && fabric.ok() && fabric.body.is_object()) {
    const json& f = fabric.body;
    std::string levels;
    if (f.contains("switches_per_level")) {
      for (const auto& [lvl, n] : f["switches_per_level"].items()) {
        levels += (levels.empty() ? "" : ", ") + std::string("L") + lvl + " " + cell(n);
      }
    }
    const json links = f.value("links", json::object());
    const json routing = f.value("routing", json::object());
    std::cout << "fabric      version " << cell(f, "version") << " from " << cell(f, "origin") << ", built "
              << format_time(f.value("built_at", json())) << "\n"
              << "size        " << cell(f, "hosts") << " hosts, " << cell(f, "cas") << " CAs, " << cell(f, "rails")
              << " rails; " << cell(f, "switches") << " switches in " << cell(f, "levels") << " levels (" << levels
              << ")\n"
              << "links       " << cell(links, "up") << " up, " << cell(links, "down") << " down, "
              << cell(links, "drained") << " drained; " << cell(f, "drains") << " active drains\n"
              << "routing     " << cell(routing, "ca_ports") << " CA ports, " << cell(routing, "unreachable_pairs")
              << " unreachable pairs, " << cell(routing, "pairs_through_drains") << " pairs through drains, routed in "
              << format_ms(routing.value("route_ms", json())) << "\n";
    if (f.value("misfits", 0) > 0)
      std::cout << "misfits     " << cell(f, "misfits") << " nodes do not fit the rail plan\n";
  }
  const bool printed = api.json_output();
  if (!health.ok() && health.status != 503) api.fail(health, printed);
  if (!fabric.ok()) api.fail(fabric, printed);
  if (!health.ok()) api.fail(health, printed);  // 503: degraded, after the summary
}

// ---- hosts ----------------------------------------------------------------

struct HostsOptions {
  std::vector<std::string> hosts;
  bool unhealthy = false;
};

void run_hosts(Context& ctx, const HostsOptions& o) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"hosts"}));
  const std::set<std::string> wanted(o.hosts.begin(), o.hosts.end());
  std::set<std::string> seen;
  json kept = json::array();
  for (const json& h : r.body.value("hosts", json::array())) {
    const std::string name = h.value("host", "");
    if (!wanted.empty() && !wanted.contains(name)) continue;
    seen.insert(name);
    if (o.unhealthy && h.value("rails_healthy", 0) == h.value("rails", 0)) continue;
    kept.push_back(h);
  }
  for (const std::string& w : wanted) {
    if (!seen.contains(w)) {
      print_error("404 no host '" + w + "' (railyardctl hosts lists them)");
      throw CommandExit{Exit::kNotFound};
    }
  }
  if (api.json_output()) {
    if (wanted.empty() && !o.unhealthy) {
      api.print_raw(r);
    } else {
      std::cout << json{{"hosts", kept}}.dump(2) << "\n";
    }
    return;
  }
  Table t({"HOST", "RAIL", "CA", "LID", "LEAF", "UPLINKS", "HEALTH"});
  t.align_right(1).align_right(3);
  size_t cas = 0, sick = 0;
  auto add_ca = [&](const std::string& host, const json& c) {
    ++cas;
    sick += c.value("health", "") != "healthy";
    std::string leaf = "-", uplinks = "-";
    if (c.contains("leaf")) {
      leaf = cell(c, "leaf") + "[" + cell(c, "leaf_port") + "]";
      const json& u = c["leaf_uplinks"];
      uplinks = cell(u, "healthy") + "/" + cell(u, "total");
    }
    t.add_row({host, cell(c, "rail"), cell(c, "name"), cell(c, "lid"), leaf, uplinks, cell(c, "health")});
  };
  for (const json& h : kept) {
    for (const json& c : h.value("cas", json::array())) add_ca(h.value("host", ""), c);
  }
  if (wanted.empty() && !o.unhealthy) {
    for (const json& c : r.body.value("cas_without_host", json::array())) add_ca("-", c);
  }
  t.print(std::cout);
  std::cout << kept.size() << " hosts, " << cas << " CAs, " << sick << " not healthy\n";
}

// ---- switches -------------------------------------------------------------

void run_switches(Context& ctx) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"switches"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"SWITCH", "GUID", "LID", "LEVEL", "RAIL", "PORTS UP", "TO SWITCHES", "TO CAS", "DRAIN"});
  for (size_t c : {2, 3, 4, 5, 6, 7}) t.align_right(c);
  for (const json& s : r.body.value("switches", json::array())) {
    t.add_row({cell(s, "name"), cell(s, "guid"), cell(s, "lid"), cell(s, "level"), cell(s, "rail"),
               cell(s, "ports_up") + "/" + cell(s, "ports"), cell(s, "links_to_switches"), cell(s, "links_to_cas"),
               cell(s, "drain")});
  }
  t.print(std::cout);
  std::cout << t.rows() << " switches\n";
}

// ---- links ----------------------------------------------------------------

void run_links(Context& ctx, const std::string& state) {
  const ApiSession& api = ctx.api();
  std::string target = api_path({"links"});
  if (!state.empty()) target += "?state=" + percent_encode(state);
  const ApiReply r = api.get(target);
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"LINK", "STATE", "DRAINS", "A", "B"});
  for (const json& l : r.body.value("links", json::array())) {
    std::string drains = "-";
    if (l.contains("drains")) {
      drains.clear();
      for (const json& d : l["drains"]) drains += (drains.empty() ? "" : ",") + cell(d);
    }
    auto end = [](const json& l, const char* side) {
      return l.contains(side) ? cell(l[side], "node") + "[" + cell(l[side], "port") + "]" : std::string("-");
    };
    t.add_row({cell(l, "link"), cell(l, "state"), drains, end(l, "a"), end(l, "b")});
  }
  t.print(std::cout);
  std::cout << t.rows() << " links" << (state.empty() ? "" : " " + state) << "\n";
}

// ---- route ----------------------------------------------------------------

struct RouteOptions {
  std::string src, dst;
  int src_port = 0;
};

void run_route(Context& ctx, const RouteOptions& o) {
  const ApiSession& api = ctx.api();
  std::string target = api_path({"routes", o.src, o.dst});
  if (o.src_port > 0) target += "?src_port=" + std::to_string(o.src_port);
  const ApiReply r = api.get(target);
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  const json& b = r.body;
  const bool delivered = b.value("delivered", false);
  std::cout << cell(b, "source") << " (LID " << cell(b, "source_lid") << ") -> " << cell(b, "destination") << " (LID "
            << cell(b, "destination_lid") << "): "
            << (delivered ? "delivered in " + cell(b, "switch_hops") + " switch hops"
                          : "NOT delivered: " + cell(b, "end"))
            << " (fabric version " << cell(b, "fabric_version") << ")\n";
  Table t({"#", "NODE", "TYPE", "GUID", "LID", "LEVEL", "IN", "OUT"});
  for (size_t c : {0, 4, 5, 6, 7}) t.align_right(c);
  size_t i = 0;
  for (const json& h : b.value("hops", json::array())) {
    t.add_row({std::to_string(i++), cell(h, "node"), cell(h, "type"), cell(h, "guid"), cell(h, "lid"), cell(h, "level"),
               cell(h, "in_port"), cell(h, "out_port")});
  }
  t.print(std::cout);
  // A route that does not arrive is an answer, not a failure of the command:
  // scripts read "delivered" from --json.
}

// ---- ar -------------------------------------------------------------------

struct ArOptions {
  std::string sw;
  int lid = 0;
};

void run_ar(Context& ctx, const ArOptions& o) {
  const ApiSession& api = ctx.api();
  if (o.sw.empty()) {
    const ApiReply r = api.get(api_path({"ar"}));
    if (api.json_output()) {
      api.print_raw(r);
      return;
    }
    const json& b = r.body;
    Table t({"SWITCH", "GUID", "GROUPS", "ADAPTIVE", "TRIMMED"});
    for (size_t c : {2, 3, 4}) t.align_right(c);
    for (const json& s : b.value("switches", json::array())) {
      t.add_row(
          {cell(s, "switch"), cell(s, "guid"), cell(s, "groups"), cell(s, "adaptive_groups"), cell(s, "trimmed")});
    }
    t.print(std::cout);
    std::string over;
    for (const json& s : b.value("over_limit", json::array())) over += (over.empty() ? "" : ", ") + cell(s);
    std::cout << "at most " << cell(b, "max_groups") << " groups on a switch (limit "
              << cell(b, "max_groups_per_switch") << "); " << cell(b, "trimmed_destinations")
              << " destinations trimmed; over the limit: " << (over.empty() ? "none" : over) << "\n";
    return;
  }
  std::string target = api_path({"ar", o.sw});
  if (o.lid > 0) target += "?lid=" + std::to_string(o.lid);
  const ApiReply r = api.get(target);
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  const json& b = r.body;
  std::cout << cell(b, "switch") << " (" << cell(b, "guid") << "): " << b.value("groups", json::array()).size()
            << " AR groups, " << cell(b, "adaptive_groups") << " adaptive, " << cell(b, "trimmed") << " trimmed\n";
  const json groups = b.value("groups", json::array());
  const json map = b.value("lid_to_group", json::object());
  auto ports_of = [](const json& ports) {
    std::string list;
    for (const json& p : ports) list += (list.empty() ? "" : ",") + cell(p);
    return list;
  };
  if (o.lid > 0) {
    // The API filtered the map to this one LID.
    const std::string key = std::to_string(o.lid);
    if (!map.contains(key) || !map[key].is_number_unsigned() || map[key].get<size_t>() >= groups.size()) {
      std::cout << "LID " << o.lid << ": no AR group (plain LFT entry)\n";
    } else {
      const size_t g = map[key].get<size_t>();
      std::cout << "LID " << o.lid << " -> group " << g << ": ports " << ports_of(groups[g]) << "\n";
    }
    return;
  }
  // How many LIDs use each group, so the table reads group -> ports -> users.
  std::vector<size_t> users(groups.size(), 0);
  for (const auto& [lid, g] : map.items()) {
    if (g.is_number_unsigned() && g.get<size_t>() < users.size()) ++users[g.get<size_t>()];
  }
  Table t({"GROUP", "PORTS", "LIDS"});
  t.align_right(0).align_right(2);
  for (size_t i = 0; i < groups.size(); ++i)
    t.add_row({std::to_string(i), ports_of(groups[i]), std::to_string(users[i])});
  t.print(std::cout);
}

}  // namespace

void add_fabric_commands(CLI::App& app, Context& ctx) {
  auto* status = app.add_subcommand("status", "Controller health and a fabric summary");
  status->footer(
      "Calls GET /api/v1/health (no token needed) and GET /api/v1/fabric (viewer).\n"
      "Exits 1 when the controller reports itself degraded (503).\n\n"
      "Examples:\n"
      "  railyardctl status\n"
      "  railyardctl --json status | jq .fabric.links");
  status->callback([&ctx] { run_status(ctx); });

  auto hosts_o = std::make_shared<HostsOptions>();
  auto* hosts = app.add_subcommand("hosts", "Hosts and their CAs: rail, LID, leaf, uplinks, health");
  hosts->add_option("HOST", hosts_o->hosts, "Only these hosts (exit 4 if one is unknown)");
  hosts->add_flag("--unhealthy", hosts_o->unhealthy, "Only hosts with a rail that is not healthy");
  hosts->footer(
      "HEALTH per CA: healthy; degraded (its leaf lost some uplinks); isolated (its\n"
      "leaf lost all uplinks); drained (its own link is drained); down (its link is down).\n"
      "UPLINKS: the leaf's healthy/total links to the next level.\n\n"
      "Examples:\n"
      "  railyardctl hosts\n"
      "  railyardctl hosts node001 node017\n"
      "  railyardctl hosts --unhealthy\n"
      "  railyardctl --json hosts | jq '.hosts | length'");
  hosts->callback([&ctx, hosts_o] { run_hosts(ctx, *hosts_o); });

  auto* switches = app.add_subcommand("switches", "Switches: GUID, LID, level, rail, ports up, drains");
  switches->footer(
      "Examples:\n"
      "  railyardctl switches\n"
      "  railyardctl --json switches | jq -r '.switches[] | select(.level == 0) | .name'");
  switches->callback([&ctx] { run_switches(ctx); });

  auto links_state = std::make_shared<std::string>();
  auto* links = app.add_subcommand("links", "Links, their state and the drains covering them");
  links->add_option("--state", *links_state, "Only links in this state")
      ->check(CLI::IsMember({"up", "down", "drained"}));
  links->footer(
      "LINK is the canonical name \"0x<GUID>[port]\" of one end; A and B name both ends.\n\n"
      "Examples:\n"
      "  railyardctl links --state down\n"
      "  railyardctl links --state drained\n"
      "  railyardctl --json links --state drained | jq -r '.links[].link'");
  links->callback([&ctx, links_state] { run_links(ctx, *links_state); });

  auto route_o = std::make_shared<RouteOptions>();
  auto* route = app.add_subcommand("route", "The hop-by-hop path from SRC to DST in the tables in force");
  route->add_option("SRC", route_o->src, "Source: node description, GUID or LID")->required();
  route->add_option("DST", route_o->dst, "Destination: node description, GUID or LID")->required();
  route->add_option("--src-port", route_o->src_port, "The source CA's port (default: its first cabled port)")
      ->check(CLI::Range(1, 254));
  route->footer(
      "Quote names with blanks. A route that does not arrive still exits 0: it is the\n"
      "answer (\"delivered\": false in --json).\n\n"
      "Examples:\n"
      "  railyardctl route \"node001 mlx5_0\" \"node017 mlx5_0\"\n"
      "  railyardctl route 12 0x1c   # by LID\n"
      "  railyardctl --json route \"node001 mlx5_0\" \"node017 mlx5_0\" | jq .switch_hops");
  route->callback([&ctx, route_o] { run_route(ctx, *route_o); });

  auto ar_o = std::make_shared<ArOptions>();
  auto* ar = app.add_subcommand("ar", "Adaptive-routing groups: per-switch counts, or one switch's groups");
  auto* sw = ar->add_option("SWITCH", ar_o->sw, "One switch: node description, GUID or LID");
  ar->add_option("--lid", ar_o->lid, "With SWITCH: the group of this destination LID")
      ->check(CLI::Range(1, 0xBFFF))
      ->needs(sw);
  ar->footer(
      "Examples:\n"
      "  railyardctl ar\n"
      "  railyardctl ar \"leaf g000 r0\"\n"
      "  railyardctl ar \"leaf g000 r0\" --lid 42");
  ar->callback([&ctx, ar_o] { run_ar(ctx, *ar_o); });
}

}  // namespace railyard::ctl
