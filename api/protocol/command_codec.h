// The controller's commands on the wire (docs/plugin_protocol.md): one JSON
// object per line, `{"id":"R","type":"reroute"}`. The controller encodes,
// the plugin decodes; both through here.
//
// `id` may be absent or null (an empty id); it must be a string of at most
// kMaxRequestId bytes. Unknown fields are ignored. A line of a type this build
// does not know is a kUnknownType error, which the plugin ignores (forward
// compatibility).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "api/protocol/decode_error.h"
#include "api/protocol/plugin_commands.h"

namespace railyard::protocol {

// The JSON text of one command, without the line end (the socket adds '\n').
std::string encode_command(const Command& command);

Decoded<Command> decode_command(const nlohmann::json& line);
// Parses and decodes one line (with or without its '\n').
Decoded<Command> decode_command_line(std::string_view line);

}  // namespace railyard::protocol
