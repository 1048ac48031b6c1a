// Reroutes: ask railyardd to recompute and push the forwarding tables now,
// optionally wait for the outcome, and list past requests. Offline the
// controller applies a request on the spot; live the OpenSM plugin reports
// it applied (or failed) later, so --wait polls GET /api/v1/reroutes/{id}.
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/railyardctl/commands.h"
#include "cli/railyardctl/table.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

struct RerouteOptions {
  std::string reason;
  bool wait = false;
  double wait_timeout_s = 120;
};

void run_reroute(Context& ctx, const RerouteOptions& o) {
  const ApiSession& api = ctx.api();
  const auto start = std::chrono::steady_clock::now();
  json body = o.reason.empty() ? json::object() : json{{"reason", o.reason}};
  const ApiReply r = api.call("POST", api_path({"reroute"}), body);
  if (!r.ok()) api.fail(r);  // 429 prints Retry-After
  json reroute = r.body.value("reroute", json::object());
  const std::string id = reroute.value("id", "");
  if (!o.wait || reroute.value("status", "") != "pending" || id.empty()) {
    if (api.json_output()) {
      api.print_raw(r);
    } else {
      print_reroute_line(reroute);
    }
  } else {
    if (!api.json_output()) std::cout << "reroute " << id << " requested; waiting for the outcome\n";
    // Poll quickly at first (a small fabric is done in milliseconds), then
    // back off to a second.
    auto delay = std::chrono::milliseconds(50);
    const auto deadline = start + std::chrono::duration<double>(o.wait_timeout_s);
    ApiReply last = r;
    while (reroute.value("status", "") == "pending") {
      if (std::chrono::steady_clock::now() >= deadline) {
        if (api.json_output()) std::cout << reroute.dump(2) << "\n";
        print_error("reroute " + id + " still pending after " + std::to_string(static_cast<int>(o.wait_timeout_s)) +
                    " s (--wait-timeout)");
        throw CommandExit{Exit::kRerouteFailed};
      }
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, std::chrono::milliseconds(1000));
      last = api.get(api_path({"reroutes", id}));
      reroute = last.body;
    }
    const double waited_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (api.json_output()) {
      api.print_raw(last);
    } else {
      print_reroute_line(reroute);
      std::cout << "waited " << format_ms(waited_ms) << " from request to outcome\n";
    }
  }
  // Without --wait the request was accepted (202) and that is the answer.
  if (o.wait && reroute.value("status", "") == "failed") {
    print_error("reroute " + id + " failed: " + reroute.value("detail", ""));
    throw CommandExit{Exit::kRerouteFailed};
  }
}

void run_reroutes(Context& ctx) {
  const ApiSession& api = ctx.api();
  const ApiReply r = api.get(api_path({"reroutes"}));
  if (api.json_output()) {
    api.print_raw(r);
    return;
  }
  Table t({"ID", "STATUS", "REQUESTED", "BY", "REASON", "LATENCY", "DETAIL"});
  t.align_right(5);
  for (const json& x : r.body.value("reroutes", json::array())) {
    t.add_row({cell(x, "id"), cell(x, "status"), format_time(x.value("requested_at", json())), cell(x, "requested_by"),
               cell(x, "reason"), format_ms(x.value("latency_ms", json())), cell(x, "detail")});
  }
  t.print(std::cout);
  std::cout << t.rows() << " reroute requests (newest first, at most 100)\n";
}

}  // namespace

void print_reroute_line(const json& reroute) {
  if (!reroute.is_object() || !reroute.contains("id")) return;
  const std::string status = reroute.value("status", "");
  std::cout << "reroute " << cell(reroute, "id") << " " << status;
  if (status == "applied") std::cout << " in " << format_ms(reroute.value("latency_ms", json()));
  const std::string detail = reroute.value("detail", "");
  if (!detail.empty()) std::cout << " (" << detail << ")";
  std::cout << "\n";
}

void add_reroute_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RerouteOptions>();
  auto* reroute = app.add_subcommand("reroute", "Recompute and push the forwarding tables now (operator)");
  reroute->add_option("--reason,-r", o->reason, "Why (recorded with the request)");
  reroute->add_flag("--wait,-w", o->wait, "Wait until the request is applied or failed; print the latency");
  reroute->add_option("--wait-timeout", o->wait_timeout_s, "Give up waiting after this many seconds (exit 7)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  reroute->footer(
      "Rate-limited by the controller (limits.reroutes_per_minute): over the limit it\n"
      "exits 6 and prints when to retry. With --wait, a failed request exits 7.\n"
      "Drains and undrains reroute by themselves; this is for \"route again now\".\n\n"
      "Examples:\n"
      "  railyardctl reroute --reason \"after cable swap\" --wait\n"
      "  railyardctl --json reroute --wait | jq .latency_ms");
  reroute->callback([&ctx, o] { run_reroute(ctx, *o); });

  auto* reroutes = app.add_subcommand("reroutes", "Reroute requests: pending, applied or failed, with latency");
  reroutes->footer(
      "Examples:\n"
      "  railyardctl reroutes\n"
      "  railyardctl --json reroutes | jq '[.reroutes[] | select(.status == \"failed\")] | length'");
  reroutes->callback([&ctx] { run_reroutes(ctx); });
}

}  // namespace railyard::ctl
