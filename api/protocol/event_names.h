// The words of the events on the wire (docs/plugin_protocol.md): types and
// enumerated values, one place for the encoder and the decoder.
#pragma once

#include <optional>
#include <string_view>

#include "api/protocol/plugin_events.h"

namespace railyard::protocol {

// SimpleEvent kinds: "heavy_sweep_start", "heavy_sweep_done", "subnet_up",
// "sa_db_dumped", "state_change".
std::string_view to_string(SimpleKind kind);
std::optional<SimpleKind> parse_simple_kind(std::string_view type);

// ucast_routing_done.reason: "heavy_sweep", "reroute", "fast_path", "none".
std::string_view to_string(RoutingReason reason);
std::optional<RoutingReason> parse_routing_reason(std::string_view text);

// fabric_changes: a port's state as one character of a node's `states`
// ('?' unknown, 'D' down, 'I' init, 'R' armed, 'A' active).
char port_state_char(routing::PortState state);
std::optional<routing::PortState> parse_port_state_char(char c);
// fabric_changes' enumerated fields, as routing/fabric.h writes them
// ("Switch", "Ca", "Rt"; "4x", "" unknown; "HDR", "" unknown; "active", ...).
std::optional<routing::NodeType> parse_node_type(std::string_view text);
std::optional<routing::LinkWidth> parse_link_width(std::string_view text);
std::optional<routing::LinkSpeed> parse_link_speed(std::string_view text);
std::optional<routing::PortState> parse_port_state(std::string_view text);

// routing_pass.status.
inline constexpr std::string_view kStatusOk = "ok";
inline constexpr std::string_view kStatusRefused = "refused";
// fast_path.path and the trigger that carries the trap fields.
inline constexpr std::string_view kPathPush = "push";
inline constexpr std::string_view kPathOpenSm = "opensm";
inline constexpr std::string_view kTrapTrigger = "trap";

}  // namespace railyard::protocol
