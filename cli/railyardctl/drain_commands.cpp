// Drains: take a link, a port or a whole switch out of routing, list them,
// and undo them. The API answers every drain with its impact (CA pairs cut,
// LFT entries changed) and refuses one that would cut pairs with 409 unless
// forced; a dry run reports the impact and changes nothing.
#include <charconv>
#include <iostream>
#include <memory>
#include <utility>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

struct DrainOptions {
  std::string target;  // link | port | switch
  std::string node;
  int port = 0;
  std::string reason;
  std::string expires;
  bool dry_run = false;
  bool force = false;
};

// "--expires +3600" goes as the string, "--expires 1767225600" as a number.
json expires_value(const std::string& text) {
  if (text.starts_with("+")) return text;
  int64_t t = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || t <= 0) {
    print_error("--expires must be a Unix time or +SECONDS from now, not '" + text + "'");
    throw CommandExit{Exit::kUsage};
  }
  return t;
}

void print_impact(const json& impact) {
  if (!impact.is_object()) return;
  std::cout << "impact: " << cell(impact, "pairs_cut") << " CA pairs cut, " << cell(impact, "pairs_rerouted")
            << " pairs rerouted, " << cell(impact, "lft_entries_changed") << " LFT entries in "
            << cell(impact, "lft_blocks_changed") << " blocks on " << cell(impact, "switches_touched")
            << " switches (what-if routed in " << format_ms(impact.value("route_ms", json())) << ")\n";
  const json cut = impact.value("cut", json::array());
  if (cut.empty()) return;
  std::cout << "CA pairs left without a path (examples):\n";
  Table t({"DESTINATION", "EXAMPLE SOURCE", "SOURCES CUT"});
  t.align_right(2);
  for (const json& c : cut) t.add_row({cell(c, "destination"), cell(c, "example_source"), cell(c, "sources")});
  t.print(std::cout);
}

void print_drain_record(const json& d) {
  std::cout << "drain " << cell(d, "id") << ": " << cell(d, "target") << " " << cell(d, "name") << " (key "
            << cell(d, "key") << "), reason \"" << cell(d, "reason") << "\", by " << cell(d, "created_by");
  if (d.contains("expires_at") && !d["expires_at"].is_null()) std::cout << ", expires " << format_time(d["expires_at"]);
  std::cout << "\n";
}

void run_drain(Context& ctx, const DrainOptions& o) {
  const ApiSession& api = ctx.api();
  json body = {{"target", o.target}, {"node", o.node}, {"reason", o.reason}};
  if (o.target != "switch") body["port"] = o.port;
  if (!o.expires.empty()) body["expires"] = expires_value(o.expires);
  std::string target = api_path({"drains"});
  std::string sep = "?";
  if (o.dry_run) target += std::exchange(sep, "&") + "dry_run=true";
  if (o.force) target += std::exchange(sep, "&") + "force=true";
  const ApiReply r = api.call("POST", target, body);
  if (!r.ok()) {
    // 409 carries the conflicting drain or the cut pairs: show them.
    if (!api.json_output() && r.body.is_object() && r.body["error"].is_object()) {
      const json& e = r.body["error"];
      if (e.contains("drain")) print_drain_record(e["drain"]);
      if (e.contains("impact") && e["impact"].value("pairs_cut", 0) > 0) print_impact(e["impact"]);
    }
    api.fail(r);
  }
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  std::cout << cell(r.body, "message") << "\n";
  if (r.body.contains("drain")) print_drain_record(r.body["drain"]);
  print_impact(r.body.value("impact", json()));
  if (r.body.contains("reroute")) print_reroute_line(r.body["reroute"]);
}

void run_drains(Context& ctx) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"drains"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"ID", "TARGET", "NAME", "REASON", "BY", "CREATED", "EXPIRES"});
  t.align_right(0);
  for (const json& d : r.body.value("drains", json::array())) {
    t.add_row({cell(d, "id"), cell(d, "target"), cell(d, "name"), cell(d, "reason"), cell(d, "created_by"),
               format_time(d.value("created_at", json())), format_time(d.value("expires_at", json()))});
  }
  t.print(std::cout);
  std::cout << t.rows() << " active drains\n";
}

struct UndrainOptions {
  int64_t id = 0;
  bool dry_run = false;
};

void run_undrain(Context& ctx, const UndrainOptions& o) {
  const ApiSession& api = ctx.api();
  std::string target = api_path({"drains", std::to_string(o.id)});
  if (o.dry_run) target += "?dry_run=true";
  const ApiReply r = api.call("DELETE", target);
  if (!r.ok()) api.fail(r);
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  std::cout << cell(r.body, "message") << "\n";
  if (r.body.contains("drain")) print_drain_record(r.body["drain"]);
  print_impact(r.body.value("impact", json()));
  if (r.body.contains("reroute")) print_reroute_line(r.body["reroute"]);
}

CLI::App* add_drain_target(CLI::App& drain, Context& ctx, const std::string& kind, const std::string& what,
                           const std::string& examples) {
  auto o = std::make_shared<DrainOptions>();
  o->target = kind;
  auto* sub = drain.add_subcommand(kind, what);
  sub->add_option("NODE", o->node,
                  kind == "switch" ? "The switch: node description, GUID or LID"
                                   : "Node at one end: node description, GUID or LID")
      ->required();
  if (kind != "switch") sub->add_option("PORT", o->port, "Port number on NODE")->required()->check(CLI::Range(1, 254));
  sub->add_option("--reason,-r", o->reason, "Why (recorded with the drain and in the audit log)")->required();
  sub->add_option("--expires", o->expires,
                  "Undrain automatically: +SECONDS from now (\"+3600\") or a Unix time (at most a year ahead)");
  sub->add_flag("--dry-run,-n", o->dry_run, "Show the impact (pairs cut, LFT changes) and change nothing");
  sub->add_flag("--force", o->force, "Drain even if CA pairs would be left without a path");
  sub->footer(
      "Needs an operator token. Exit 5 (409) when already drained (the existing drain is\n"
      "shown) or when the drain would cut CA pairs (examples of the pairs are shown;\n"
      "--force drains anyway). --dry-run answers with the same checks and changes nothing.\n\n"
      "Examples:\n" +
      examples);
  sub->callback([&ctx, o] { run_drain(ctx, *o); });
  return sub;
}

}  // namespace

void add_drain_commands(CLI::App& app, Context& ctx) {
  auto* drain = app.add_subcommand("drain", "Take a link, a port or a switch out of routing (operator)");
  drain->require_subcommand(1);
  drain->footer(
      "Examples:\n"
      "  railyardctl drain link \"leaf g000 r0\" 17 --reason \"flapping, ticket 4711\" --expires +86400\n"
      "  railyardctl drain port 0x0002c90300a1b2c3 5 --reason \"bad transceiver\" --dry-run\n"
      "  railyardctl drain switch \"spine s03\" --reason \"firmware upgrade\"");
  add_drain_target(
      *drain, ctx, "link", "Drain the link at NODE's PORT (either end names it)",
      "  railyardctl drain link \"leaf g000 r0\" 17 --reason \"CRC errors\"\n"
      "  railyardctl drain link \"leaf g000 r0\" 1 --reason test --dry-run   # a CA's link: 409, pairs cut\n"
      "  railyardctl --json drain link \"leaf g000 r0\" 17 -r test -n | jq .impact.pairs_rerouted");
  add_drain_target(*drain, ctx, "port", "Drain NODE's PORT (its link leaves routing)",
                   "  railyardctl drain port \"leaf g000 r0\" 17 --reason \"bad transceiver\" --expires +3600");
  add_drain_target(*drain, ctx, "switch", "Drain every link of switch NODE",
                   "  railyardctl drain switch \"spine s03\" --reason \"firmware upgrade\" --dry-run\n"
                   "  railyardctl drain switch 0x0002c90300a1b2c3 --reason \"RMA\" --force");

  auto* drains = app.add_subcommand("drains", "Active drains");
  drains->footer(
      "Examples:\n"
      "  railyardctl drains\n"
      "  railyardctl --json drains | jq -r '.drains[] | \"\\(.id) \\(.name)\"'");
  drains->callback([&ctx] { run_drains(ctx); });

  auto u = std::make_shared<UndrainOptions>();
  auto* undrain = app.add_subcommand("undrain", "Remove a drain: its target returns to routing (operator)");
  undrain->add_option("ID", u->id, "The drain's id (railyardctl drains lists them)")
      ->required()
      ->check(CLI::PositiveNumber);
  undrain->add_flag("--dry-run,-n", u->dry_run, "Show the impact and change nothing");
  undrain->footer(
      "Exit 4 when there is no active drain ID.\n\n"
      "Examples:\n"
      "  railyardctl undrain 7\n"
      "  railyardctl undrain 7 --dry-run");
  undrain->callback([&ctx, u] { run_undrain(ctx, *u); });
}

}  // namespace railyard::ctl
