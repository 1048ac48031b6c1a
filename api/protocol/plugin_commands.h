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
// kNotLeader: this controller is not the leader; `leader` names the leader's
// plugin address (empty: unknown). Sent before the controller closes the
// connection; handled by the plugin's channel itself, never acknowledged.
// kPolicy: the policy in force, as canonical YAML (`yaml`,
// policies::render_policy_yaml), for the plugin's policy file; acknowledged
// when the plugin took it.
// kReceived: the controller has read and handled the first `lines` lines the
// plugin wrote on this connection (its hello is line 1); the plugin forgets
// the events among them and replays the others on its next connection.
// Handled by the plugin's channel itself, never acknowledged.
enum class CommandKind : uint8_t { kReroute, kPolicyChanged, kSendFabric, kNotLeader, kPolicy, kReceived };
// The `type` on the wire: "reroute", "policy_changed", "send_fabric",
// "not_leader", "policy", "received".
std::string_view to_string(CommandKind kind);
std::optional<CommandKind> parse_command_kind(std::string_view type);

// Request ids are opaque to the plugin; it hands them back in its events.
constexpr size_t kMaxRequestId = 128;

struct Command {
  CommandKind kind = CommandKind::kReroute;
  std::string id;  // at most kMaxRequestId bytes; empty when the controller gave none
  std::string leader;  // kNotLeader only: the leader's plugin address, or empty
  std::string yaml;    // kPolicy only: the policy's YAML
  uint64_t lines = 0;  // kReceived only: lines of this connection handled
  bool operator==(const Command&) const = default;
};

}  // namespace railyard::protocol
