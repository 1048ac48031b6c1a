// Placeholder until the verify commands land.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace railyard::cli {
void add_verify_commands(CLI::App& app) { (void)app; }
}  // namespace railyard::cli
