// Placeholder until the route commands land.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace railyard::cli {
void add_route_commands(CLI::App& app) { (void)app; }
}  // namespace railyard::cli
