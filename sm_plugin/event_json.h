// The plugin's end of the controller socket's wire format
// (docs/plugin_protocol.md). The encoding and decoding are the protocol's
// (api/protocol/event_codec.h, api/protocol/command_codec.h), shared with the
// controller; what is here is the plugin's use of them: whole lines for its
// socket, and which command lines it acts on.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/protocol/command_codec.h"
#include "api/protocol/event_codec.h"
#include "routing/result.h"
#include "sm_plugin/events.h"

namespace railyard::sm_plugin {

using protocol::Command;
using protocol::CommandKind;
using protocol::kMaxRequestId;

// One line for the socket: the event's JSON text and '\n'. A FabricEvent's
// fabric is serialized here: call it off OpenSM's threads.
std::string event_line(const Event& event);

// One command line (with or without its '\n'). A known command: the Command.
// A JSON object of another `type`, or of none: std::nullopt, ignored for
// forward compatibility. Other errors name what is wrong (not JSON, not an
// object, an id that is not a string or is longer than kMaxRequestId bytes).
Result<std::optional<Command>> parse_command_line(std::string_view line);

}  // namespace railyard::sm_plugin
