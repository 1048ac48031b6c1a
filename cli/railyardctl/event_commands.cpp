// Events: read the controller's event log (plugin events, link reports,
// drains, reroutes), follow it, and report a link down/up from outside
// monitoring. A link report is idempotent by its id: sending it again is
// answered "duplicate" and changes nothing, so monitors can retry freely.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

// One line of what an event says: the link and state for link events,
// otherwise its scalar fields as key=value.
std::string event_summary(const json& data) {
  if (!data.is_object()) return cell(data);
  std::string s;
  if (data.contains("link_name") || data.contains("link")) {
    s = cell(data, data.contains("link_name") ? "link_name" : "link") + " " + cell(data, "state");
    if (!data.value("reason", "").empty()) s += " (" + data.value("reason", "") + ")";
    if (data.contains("reported_by")) s += " by " + cell(data, "reported_by");
    return s;
  }
  for (const auto& [k, v] : data.items()) {
    if (v.is_structured()) continue;
    s += (s.empty() ? "" : " ") + k + "=" + cell(v);
  }
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

void print_event_line(const json& e) {
  std::string id = cell(e, "id");
  if (id.size() < 6) id.insert(0, 6 - id.size(), ' ');
  char line[96];
  std::snprintf(line, sizeof line, "%s  %s  %-10s  %-18s  ", id.c_str(), format_time(e.value("time", json())).c_str(),
                cell(e, "source").c_str(), cell(e, "type").c_str());
  std::cout << line << event_summary(e.value("data", json())) << "\n";
}

struct EventsOptions {
  int64_t since = -1;  // -1: not given
  int limit = 100;
  bool follow = false;
  double interval_s = 1.0;
};

ApiReply fetch_events(const ApiSession& api, int64_t since, int limit) {
  return api.get(api_path({"events"}) + "?since=" + std::to_string(since) + "&limit=" + std::to_string(limit));
}

void run_events(Context& ctx, const EventsOptions& o) {
  const ApiSession& api = ctx.api();
  int64_t since = std::max<int64_t>(o.since, 0);
  if (!o.follow) {
    const ApiReply r = fetch_events(api, since, o.limit);
    if (api.json_output()) {
      api.print_raw(r);
      return;
    }
    const json events = r.body.value("events", json::array());
    std::cout << "    ID  TIME                  SOURCE      TYPE                DATA\n";
    for (const json& e : events) print_event_line(e);
    std::cout << events.size() << " events (last id " << cell(r.body, "last_id") << ")";
    if (!events.empty() && static_cast<int>(events.size()) == o.limit) {
      std::cout << "; more with --since " << cell(events.back(), "id");
    }
    std::cout << "\n";
    return;
  }
  // --follow: start with the last `limit` events unless --since says where,
  // then poll for newer ones until interrupted.
  if (o.since < 0) {
    const ApiReply head = fetch_events(api, 0, 1);
    since = std::max<int64_t>(0, head.body.value("last_id", int64_t{0}) - o.limit);
  }
  if (!api.json_output()) std::cout << "    ID  TIME                  SOURCE      TYPE                DATA\n";
  while (true) {
    const ApiReply r = fetch_events(api, since, 1000);
    for (const json& e : r.body.value("events", json::array())) {
      if (api.json_output()) {
        std::cout << e.dump() << "\n";  // one event per line (NDJSON)
      } else {
        print_event_line(e);
      }
      since = std::max(since, e.value("id", since));
    }
    std::cout.flush();
    if (r.body.value("events", json::array()).size() < 1000) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    }
  }
}

struct LinkEventOptions {
  std::string node;
  int port = 0;
  std::string state;
  std::string id;
  std::string reason;
  double time = 0;
  bool force = false;
};

void run_link_event(Context& ctx, const LinkEventOptions& o) {
  const ApiSession& api = ctx.api();
  json body = {{"id", o.id}, {"node", o.node}, {"port", o.port}, {"state", o.state}};
  if (!o.reason.empty()) body["reason"] = o.reason;
  if (o.time > 0) body["time"] = o.time;
  const ApiReply r = api.call("POST", api_path({"events", "link"}) + (o.force ? "?force=true" : ""), body);
  if (!r.ok()) api.fail(r);
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  const json ev = r.body.value("event", json::object());
  if (r.body.value("duplicate", false)) {
    std::cout << "duplicate: id '" << o.id << "' was already recorded as event " << cell(ev, "id")
              << "; nothing changed\n";
  } else {
    std::cout << "recorded event " << cell(ev, "id") << ": " << cell(ev, "type") << " "
              << event_summary(ev.value("data", json())) << "\n";
  }
  if (r.body.contains("reroute")) print_reroute_line(r.body["reroute"]);
}

}  // namespace

void add_event_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EventsOptions>();
  auto* events = app.add_subcommand("events", "The controller's event log: plugin, monitoring and controller events");
  events->add_option("--since", o->since, "Only events with an id above this (default: from the start)")
      ->check(CLI::NonNegativeNumber);
  events->add_option("--limit", o->limit, "At most this many (1..1000)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  events->add_flag("--follow,-f", o->follow,
                   "Keep printing new events until interrupted (starts with the last --limit events)");
  events->add_option("--interval", o->interval_s, "With --follow: seconds between polls")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 3600.0));
  events->footer(
      "With --json and --follow, each event is printed as one JSON object per line.\n\n"
      "Examples:\n"
      "  railyardctl events --limit 20\n"
      "  railyardctl events --since 1200\n"
      "  railyardctl events --follow\n"
      "  railyardctl --json events --follow | jq -c 'select(.type == \"link_down\")'");
  events->callback([&ctx, o] { run_events(ctx, *o); });

  auto l = std::make_shared<LinkEventOptions>();
  auto* link = app.add_subcommand("link-event", "Report a link down or up from outside monitoring (operator)");
  link->add_option("NODE", l->node, "Node at one end: node description, GUID or LID")->required();
  link->add_option("PORT", l->port, "Port number on NODE")->required()->check(CLI::Range(1, 254));
  link->add_option("STATE", l->state, "down or up")->required()->check(CLI::IsMember({"down", "up"}));
  link->add_option("--id", l->id, "The monitor's event id: the same id twice is one event")->required();
  link->add_option("--reason,-r", l->reason, "What the monitor saw");
  link->add_option("--time", l->time, "When it happened, Unix time (default: now)")->check(CLI::PositiveNumber);
  link->add_flag("--force", l->force, "Apply a down even if it leaves CA pairs without a path");
  link->footer(
      "Calls POST /api/v1/events/link. A repeated --id is answered \"duplicate\" (exit 0)\n"
      "and changes nothing, so a monitor can retry safely; the same --id for another link\n"
      "or state is refused (exit 5). A link reported down is routed around (live: as a\n"
      "drain the plugin applies; offline: at once); up brings it back. A down that would\n"
      "leave CA pairs without a path (a CA's only link) is refused with the impact and\n"
      "nothing recorded (exit 5) unless --force: monitoring can be wrong.\n\n"
      "Examples:\n"
      "  railyardctl link-event \"leaf g000 r0\" 17 down --id mon-8812 --reason \"symbol errors\"\n"
      "  railyardctl link-event \"leaf g000 r0\" 17 up --id mon-8813");
  link->callback([&ctx, l] { run_link_event(ctx, *l); });
}

}  // namespace railyard::ctl
