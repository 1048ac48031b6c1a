// The one place where a controller Failure's kind becomes an HTTP status
// (and, with it, railyardctl's exit code). Everything else in api/ that
// refuses a request throws or returns a controller::Failure and lets
// Api::handle answer it through here; the only statuses chosen elsewhere are
// the HTTP layer's own (401/403 authentication, 404/405 routing, 413/431
// limits).
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "controller/failure.h"

namespace railyard::api {

// invalid 400, not_found 404, conflict 409, rate_limited 429,
// unavailable 503, internal 500.
int status_of(controller::FailureKind kind);

// {"error": {"status", "message", ...details}} with status_of(kind), and
// Retry-After for rate_limited.
HttpResponse failure_response(const controller::Failure& failure,
                              const nlohmann::json& details = nlohmann::json::object());

}  // namespace railyard::api
