// railyardctl: the operator's client of railyardd's REST API (/api/v1). It is
// a pure client: everything it shows or changes goes through the API, so what
// it can do is exactly what the API allows the token's role to do.
//
//   railyardctl [--url URL] [--token-file F] [--json] [--timeout S] COMMAND ...
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/railyardctl/commands.h"

int main(int argc, char** argv) {
  using namespace railyard::ctl;
  Context ctx;
  CLI::App app{
      "railyardctl: operate a railyard controller (railyardd) over its REST API.\n"
      "Read the fabric (status, hosts, switches, links, route, ar, slurm, kubernetes, rails,\n"
      "events, hotspots) with a viewer token; drain, undrain, reroute and report link events\n"
      "with an operator token.\n"
      "Tables are for people; --json prints the API's JSON unchanged, for scripts.\n"
      "Run `railyardctl COMMAND --help` for a command's options and examples.",
      "railyardctl"};
  app.require_subcommand(1);
  app.fallthrough();  // global options also after the command: `railyardctl links --json`
  app.set_version_flag("--version", "railyardctl 0.1.0");
  app.add_option("--url", ctx.options.url,
                 std::string("railyardd's base URL (default: $RAILYARD_URL, else ") + kDefaultUrl + ")");
  app.add_option("--token", ctx.options.token,
                 "Bearer token (discouraged: visible in `ps` and shell history; use a file or env)");
  app.add_option("--token-file", ctx.options.token_file, "File holding the bearer token");
  app.add_flag("--json,-j", ctx.options.json, "Print the API's JSON as is instead of tables");
  app.add_option("--timeout", ctx.options.timeout_s, "Seconds to wait for each answer")->capture_default_str();
  app.footer(
      "Token: the first of --token, --token-file, $RAILYARD_TOKEN, $RAILYARD_TOKEN_FILE.\n"
      "Health needs none; reads need a viewer token; changes an operator token.\n\n" +
      std::string(exit_code_help()) +
      "\n\n"
      "Examples:\n"
      "  export RAILYARD_URL=http://railyard-ctl:8640 RAILYARD_TOKEN_FILE=~/.railyard/token\n"
      "  railyardctl status\n"
      "  railyardctl hosts node001\n"
      "  railyardctl route \"node001 mlx5_0\" \"node017 mlx5_0\"\n"
      "  railyardctl drain link \"leaf g000 r0\" 17 --reason \"CRC errors\" --dry-run\n"
      "  railyardctl undrain 7\n"
      "  railyardctl hotspots\n"
      "  railyardctl reroute --reason \"cable swap\" --wait\n"
      "  railyardctl --json links --state drained | jq -r '.links[].link'");

  add_fabric_commands(app, ctx);
  add_scheduler_commands(app, ctx);
  add_drain_commands(app, ctx);
  add_reroute_commands(app, ctx);
  add_event_commands(app, ctx);
  add_job_commands(app, ctx);
  add_isolation_commands(app, ctx);
  add_telemetry_commands(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? 0 : static_cast<int>(Exit::kUsage);
  } catch (const CommandExit& e) {
    return static_cast<int>(e.code);
  }
  return 0;
}
