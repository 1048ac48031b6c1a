// Shared plumbing of the railyard commands: loading inputs with clear errors
// and leaving with a documented exit code.
#pragma once

#include <chrono>
#include <string>

#include "policies/policy.h"
#include "routing/fabric.h"
#include "routing/unicast_engine.h"

namespace railyard::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // the command ran and found problems/differences
inline constexpr int kExitBadInput = 2;  // unreadable or invalid input

// Prints "railyard: <message>" and leaves through main's CLI11 handler.
using Clock = std::chrono::steady_clock;
// Milliseconds since t: the timings the commands print.
inline double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

[[noreturn]] void fail(const std::string& message, int code = kExitBadInput);

routing::Fabric load_fabric(const std::string& path);
// Empty path = default policy.
policies::Policy load_policy(const std::string& path);

// Gives a fabric read without LIDs (a generated topology) the LIDs
// `railyard route` assigns, deterministically; true when it did.
bool ensure_lids(routing::Fabric& fabric);
// The engine options for a fabric under a policy (drains, roots, rail order);
// policy_path names the policy in errors.
routing::RoutingOptions plan_or_fail(const routing::Fabric& fabric, const policies::Policy& policy,
                                     const std::string& policy_path);

}  // namespace railyard::cli
