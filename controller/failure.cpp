#include "controller/failure.h"

namespace railyard::controller {

std::string_view to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::kInvalid: return "invalid";
    case FailureKind::kNotFound: return "not_found";
    case FailureKind::kConflict: return "conflict";
    case FailureKind::kRateLimited: return "rate_limited";
    case FailureKind::kUnavailable: return "unavailable";
    case FailureKind::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace railyard::controller
