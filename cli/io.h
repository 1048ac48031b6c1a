// File helpers for the command-line tools (routing/ itself does no I/O).
#pragma once

#include <string>

#include "routing/result.h"

namespace railyard::cli {

// Whole file as a string; "-" reads standard input.
Result<std::string> read_file(const std::string& path);
// Writes atomically (temporary file + rename); "-" writes standard output.
Status write_file(const std::string& path, const std::string& data);

}  // namespace railyard::cli
