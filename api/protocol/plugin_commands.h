// The controller's commands: what railyardd tells the plugin over the plugin
// socket (docs/plugin_protocol.md). The one definition both sides use: the
// controller encodes them, the plugin decodes them (command_codec.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railyard::protocol {

// kSendFabric: the controller's copy of the fabric does not match the
// plugin's changes (docs/plugin_protocol.md, fabric_changes): send the whole
// fabric again. Handled by the plugin's channel itself, never acknowledged.
enum class CommandKind : uint8_t { kReroute, kPolicyChanged, kSendFabric };
// The `type` on the wire: "reroute", "policy_changed", "send_fabric".
std::string_view to_string(CommandKind kind);
std::optional<CommandKind> parse_command_kind(std::string_view type);

// Request ids are opaque to the plugin; it hands them back in its events.
constexpr size_t kMaxRequestId = 128;

struct Command {
  CommandKind kind = CommandKind::kReroute;
  std::string id;  // at most kMaxRequestId bytes; empty when the controller gave none
  bool operator==(const Command&) const = default;
};

}  // namespace railyard::protocol
