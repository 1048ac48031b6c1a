// Automatic isolation (docs/auto_isolation.md): its state, the breaker's
// reset and the exclude list. railyardd decides and drains by itself; these
// commands only look and steer.
#include <iostream>
#include <memory>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

struct ExcludeOptions {
  std::string target;
  std::string reason;
  std::string expires;
};

void print_state(const json& s) {
  const json& b = s.value("breaker", json::object());
  std::cout << "automatic isolation " << (s.value("enabled", false) ? "on" : "off")
            << (s.value("dry_run", false) ? " (dry run)" : "") << "; cap " << cell(s, "cap") << " links ("
            << cell(s, "switch_links") << " switch links)\n";
  if (b.value("tripped", false)) {
    std::cout << "breaker TRIPPED at " << format_time(b.value("tripped_at", json())) << ": " << cell(b, "why")
              << "\n  automation stopped; `railyardctl isolation reset` resumes it\n";
  } else {
    std::cout << "breaker ok\n";
  }
  Table t({"LINK", "REASON", "SINCE", "DRAIN", "DRY RUN"});
  for (const json& i : s.value("isolated", json::array())) {
    t.add_row({cell(i, "link"), cell(i, "reason"), format_time(i.value("since", json())), cell(i, "drain_id"),
               i.value("dry_run", false) ? "yes" : "no"});
  }
  std::cout << t.rows() << " links isolated\n";
  if (t.rows() > 0) t.print(std::cout);
  Table x({"EXCLUDED", "REASON", "BY", "EXPIRES"});
  for (const json& e : s.value("excluded", json::array())) {
    x.add_row({cell(e, "target"), cell(e, "reason"), cell(e, "by"), format_time(e.value("expires_at", json()))});
  }
  if (x.rows() > 0) x.print(std::cout);
}

void show(Context& ctx, const ApiReply& r) {
  if (!r.ok()) ctx.api().fail(r);
  if (ctx.api().json_output()) {
    ctx.api().print_raw(r);
    return;
  }
  const std::string message = r.body.value("message", "");
  if (!message.empty()) std::cout << message << "\n";
  print_state(r.body);
}

}  // namespace

void add_isolation_commands(CLI::App& app, Context& ctx) {
  auto* iso = app.add_subcommand("isolation", "Automatic isolation: state, breaker reset, exclude list");
  iso->require_subcommand(1);
  iso->footer(
      "railyardd drains a flapping link by itself (reason \"auto: flapping\") when isolation:\n"
      "is enabled in railyardd.yaml, and undrains it once clean. Past the cap the breaker\n"
      "trips and automation stops until `isolation reset` (operator).\n\n"
      "Examples:\n"
      "  railyardctl isolation status\n"
      "  railyardctl isolation reset\n"
      "  railyardctl isolation exclude '0x0002c90300000001[17]' --reason \"vendor RMA\" --expires +86400\n"
      "  railyardctl isolation unexclude '0x0002c90300000001[17]'\n"
      "  railyardctl --json isolation status | jq .breaker.tripped");

  auto* status = iso->add_subcommand("status", "The breaker, links isolated, the exclude list");
  status->callback([&ctx] { show(ctx, ctx.api().get(api_path({"isolation"}))); });

  auto* reset = iso->add_subcommand("reset", "Reset a tripped breaker: automation resumes (operator)");
  reset->callback([&ctx] { show(ctx, ctx.api().call("POST", api_path({"isolation", "reset"}), json::object())); });

  auto o = std::make_shared<ExcludeOptions>();
  auto* exclude = iso->add_subcommand("exclude", "Never isolate a link or node automatically (operator)");
  exclude->add_option("TARGET", o->target, "A link \"0x<guid>[port]\" (as railyardctl links shows) or a node \"0x<guid>\"")
      ->required();
  exclude->add_option("--reason,-r", o->reason, "Why (recorded)");
  exclude->add_option("--expires", o->expires, "Unix time, or +SECONDS from now");
  exclude->callback([&ctx, o] {
    json body{{"target", o->target}};
    if (!o->reason.empty()) body["reason"] = o->reason;
    if (!o->expires.empty()) {
      if (o->expires[0] == '+') {
        body["expires"] = o->expires;
      } else {
        try {
          body["expires"] = std::stod(o->expires);
        } catch (const std::exception&) {
          print_error("--expires must be a Unix time or +SECONDS");
          throw CommandExit{Exit::kUsage};
        }
      }
    }
    show(ctx, ctx.api().call("POST", api_path({"isolation", "exclude"}), body));
  });

  auto u = std::make_shared<std::string>();
  auto* unexclude = iso->add_subcommand("unexclude", "Take a link or node off the exclude list (operator)");
  unexclude->add_option("TARGET", *u, "As given to exclude")->required();
  unexclude->callback([&ctx, u] { show(ctx, ctx.api().call("DELETE", api_path({"isolation", "exclude", *u}))); });
}

}  // namespace railyard::ctl
