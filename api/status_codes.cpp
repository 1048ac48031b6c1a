#include "api/status_codes.h"

#include <cmath>
#include <string>

#include "api/request.h"

namespace railyard::api {

int status_of(controller::FailureKind kind) {
  using controller::FailureKind;
  switch (kind) {
    case FailureKind::kInvalid: return 400;
    case FailureKind::kNotFound: return 404;
    case FailureKind::kConflict: return 409;
    case FailureKind::kRateLimited: return 429;
    case FailureKind::kUnavailable: return 503;
    case FailureKind::kInternal: return 500;
  }
  return 500;
}

HttpResponse failure_response(const controller::Failure& failure, const nlohmann::json& details) {
  const int status = status_of(failure.kind);
  nlohmann::json error = {{"status", status}, {"message", failure.message}};
  for (const auto& [key, value] : details.items()) error[key] = value;
  HttpResponse r = json_response(status, {{"error", error}});
  if (failure.kind == controller::FailureKind::kRateLimited) {
    r.headers.emplace_back("Retry-After", std::to_string(static_cast<int>(std::ceil(failure.retry_after_s))));
  }
  return r;
}

}  // namespace railyard::api
