// The plugin's events on the wire (docs/plugin_protocol.md): one JSON object
// per line. The plugin encodes, the controller decodes; both through here.
//
// Encoding: the key order and number formats are nlohmann::json's (keys
// sorted), stage times rounded to the microsecond and `time` to the
// microsecond, so a decoded event encodes to the same bytes. Strings from the
// fabric (node descriptions are 64 raw bytes from the wire) may be invalid
// UTF-8: such bytes become U+FFFD rather than failing the line. A
// FabricEvent's fabric is serialized here (megabytes at 16k CAs): the plugin
// calls encode_event off OpenSM's threads.
//
// Decoding: every field the plugin has always written is required; fields
// that come only in some cases (trap 128's `lid`, a refused pass's `reason`,
// the fast path's trap fields, ...) are read exactly when the message says
// they are there; fields added after the first release (`fast_path.trigger`,
// `detours`, `ca_first`, `ucast_routing_done.blocks_changed`) are optional,
// so lines of older plugins still decode. Unknown fields are ignored. Errors
// name the message and the field (decode_error.h).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "api/protocol/decode_error.h"
#include "api/protocol/plugin_events.h"

namespace railyard::protocol {

// The JSON text of one event, without the line end (the channel adds '\n').
std::string encode_event(const Event& event);

// The fields every event line has, read before (and without) its body: the
// controller follows sequence numbers even of lines whose body is bad.
struct Envelope {
  std::string type;
  uint64_t seq = 0;
  double time = 0;
};
Decoded<Envelope> decode_envelope(const nlohmann::json& line);

// The body of a line whose envelope says `type`. kUnknownType for a type this
// build does not know. A `fabric` line's topology is read here
// (routing/topology_reader.h): its errors come back as errors of `topology`.
Decoded<EventBody> decode_event_body(std::string_view type, const nlohmann::json& line);

// Both of the above.
Decoded<Event> decode_event(const nlohmann::json& line);
// Parses and decodes one line (with or without its '\n'). No nesting bound:
// the controller parses untrusted lines itself (controller/bounded_json.h).
Decoded<Event> decode_event_line(std::string_view line);

}  // namespace railyard::protocol
