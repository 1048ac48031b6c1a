// railyardctl's exit codes: the API's HTTP status mapped to a small, stable,
// documented set, so scripts can branch on `$?` without parsing messages.
#pragma once

#include <string_view>

namespace railyard::ctl {

enum class Exit : int {
  kOk = 0,
  kTransport = 1,      // no connection, timeout, malformed reply, or a 5xx
  kUsage = 2,          // bad command line, or 400 (and other 4xx not below)
  kAuth = 3,           // 401 (no or bad token) or 403 (role too low)
  kNotFound = 4,       // 404: unknown node, drain, reroute, switch
  kConflict = 5,       // 409: already drained, or the drain would cut CA pairs
  kRateLimited = 6,    // 429: too many reroutes; Retry-After is printed
  kRerouteFailed = 7,  // reroute --wait: the request failed or did not finish in time
};

Exit exit_for_status(int http_status);

// The table printed at the end of `railyardctl --help`.
std::string_view exit_code_help();

// Thrown by commands to end the program with `code` (the message, if any,
// was already printed).
struct CommandExit {
  Exit code;
};

}  // namespace railyard::ctl
