// Placeholder until the topo commands land.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace railyard::cli {
void add_topo_commands(CLI::App& app) { (void)app; }
}  // namespace railyard::cli
