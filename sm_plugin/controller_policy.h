// write_controller_policy: the policy the controller pushes (`policy` lines,
// docs/plugin_protocol.md) into the plugin's policy file, so that every SM,
// master or standby, routes with the controller's drains, and the file is
// the fallback when no controller is reachable.
//
// The YAML must parse as a policy (policies/policy_loader.h) or it is refused
// with the reason, the file untouched. The file is replaced only when its
// bytes differ (no needless write, no new mtime), and then atomically
// (controller/files/atomic_file.h: a reader sees the old or the new file).
// The caller invalidates its PolicySource after kWritten.
#pragma once

#include <string>
#include <string_view>

#include "routing/result.h"

namespace railyard::sm_plugin {

enum class PolicyWrite : uint8_t { kUnchanged, kWritten };

Result<PolicyWrite> write_controller_policy(const std::string& path, std::string_view yaml);

}  // namespace railyard::sm_plugin
