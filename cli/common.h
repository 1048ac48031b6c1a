// Shared plumbing of the railyard commands: loading inputs with clear errors
// and leaving with a documented exit code.
#pragma once

#include <string>

#include "policies/policy.h"
#include "routing/fabric.h"

namespace railyard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // the command ran and found problems/differences
inline constexpr int kExitBadInput = 2;  // unreadable or invalid input

// Prints "railyard: <message>" and leaves through main's CLI11 handler.
[[noreturn]] void fail(const std::string& message, int code = kExitBadInput);

routing::Fabric load_fabric(const std::string& path);
// Empty path = default policy.
policies::Policy load_policy(const std::string& path);

}  // namespace railyard::cli
