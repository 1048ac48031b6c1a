// The plugin <-> controller wire format (docs/plugin_protocol.md): events out
// and commands in, one JSON object per line.
//
// Pure functions, no socket and no OpenSM: the channel (event_channel.h) calls
// them on its own thread; tests call them directly. Strings from the fabric
// (node descriptions are 64 raw bytes from the wire) may be invalid UTF-8:
// such bytes become U+FFFD rather than failing the line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "routing/result.h"
#include "sm_plugin/events.h"

namespace railyard::sm_plugin {

// The `type` field of an event body ("trap", "routing_pass", ...).
std::string_view event_type(const EventBody& body);

// One line, ended by '\n'. A FabricEvent's fabric is serialized here
// (routing/topology_writer.h): call it off OpenSM's threads.
std::string encode_event(const Event& event);

enum class CommandKind : uint8_t { kReroute, kPolicyChanged };
std::string_view to_string(CommandKind kind);

struct Command {
  CommandKind kind = CommandKind::kReroute;
  std::string id;  // opaque, at most kMaxRequestId bytes; empty when the controller gave none
};

constexpr size_t kMaxRequestId = 128;

// One command line (with or without its '\n'). A known command: the Command.
// A JSON object of another `type` (or none): std::nullopt, ignored for forward
// compatibility. Errors name what is wrong: not JSON, not an object, an id that
// is not a string or is longer than kMaxRequestId bytes.
Result<std::optional<Command>> parse_command_line(std::string_view line);

}  // namespace railyard::sm_plugin
