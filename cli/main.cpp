// railyard: offline tools — generate and inspect topologies, route them, and
// verify/analyze any set of forwarding tables.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "railyard: rail-aware routing for InfiniBand fat trees.\n"
      "Generate or read a topology, compute forwarding tables, and judge any set of\n"
      "tables (railyard's or OpenSM's own). Run `railyard <command> --help` for details."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "railyard 0.1.0");
  railyard::cli::add_topo_commands(app);
  railyard::cli::add_route_commands(app);
  railyard::cli::add_verify_commands(app);
  railyard::cli::add_lfts_commands(app);
  railyard::cli::add_ar_commands(app);
  railyard::cli::add_sharp_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
