#include "cli/railyardctl/exit_codes.h"

namespace railyard::ctl {

Exit exit_for_status(int http_status) {
  if (http_status >= 200 && http_status < 300) return Exit::kOk;
  switch (http_status) {
    case 401:
    case 403: return Exit::kAuth;
    case 404: return Exit::kNotFound;
    case 409: return Exit::kConflict;
    case 429: return Exit::kRateLimited;
    default: break;
  }
  if (http_status >= 400 && http_status < 500) return Exit::kUsage;
  return Exit::kTransport;  // 5xx, and anything unexpected (1xx/3xx)
}

std::string_view exit_code_help() {
  return "Exit codes:\n"
         "  0  ok\n"
         "  1  connection or transport failure, timeout, or a server error (5xx)\n"
         "  2  usage error, or the API refused the request as invalid (400)\n"
         "  3  not authorized: no or bad token (401), or the role is too low (403)\n"
         "  4  not found (404): unknown node, switch, drain or reroute\n"
         "  5  conflict (409): already drained, or the drain would cut CA pairs\n"
         "     (the cut pairs are printed; --force drains anyway)\n"
         "  6  rate limited (429): too many reroutes; Retry-After is printed\n"
         "  7  reroute --wait: the reroute failed or did not finish within --wait-timeout\n"
         "Errors are printed on stderr as \"railyardctl: <status> <message>\".";
}

}  // namespace railyard::ctl
