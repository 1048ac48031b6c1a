// railyardctl's commands. Each add_* registers a family of subcommands on the
// CLI11 app; their callbacks reach the API through Context::api() and end
// with a CommandExit when they fail (exit_codes.h).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

#include "cli/railyardctl/api_session.h"

namespace railyard::ctl {

// The global options and the session built from them on first use (after
// CLI11 has parsed everything, so the options are final).
class Context {
 public:
  GlobalOptions options;

  const ApiSession& api() {
    if (!api_) api_.emplace(options);
    return *api_;
  }

 private:
  std::optional<ApiSession> api_;
};

// status, hosts, switches, links, route, ar
void add_fabric_commands(CLI::App& app, Context& ctx);
// slurm, kubernetes, rails (what schedulers and job launchers read)
void add_scheduler_commands(CLI::App& app, Context& ctx);
// drain link|port|switch, drains, undrain
void add_drain_commands(CLI::App& app, Context& ctx);
// reroute, reroutes
void add_reroute_commands(CLI::App& app, Context& ctx);
// events, link-event
void add_event_commands(CLI::App& app, Context& ctx);
// job create|show|list|delete (SHARP trees)
void add_job_commands(CLI::App& app, Context& ctx);
// isolation status|reset|exclude|unexclude (automatic isolation)
void add_isolation_commands(CLI::App& app, Context& ctx);
// hotspots, counters (perf-manager telemetry)
void add_telemetry_commands(CLI::App& app, Context& ctx);

// Prints what a reroute record says, one line: "reroute r1-2 applied in 12.0 ms (offline fabric re-routed)".
void print_reroute_line(const nlohmann::json& reroute);

}  // namespace railyard::ctl
