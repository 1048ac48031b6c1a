#include "sm_plugin/event_json.h"

#include <chrono>

namespace railyard::sm_plugin {

double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string event_line(const Event& event) {
  std::string line = protocol::encode_event(event);
  line += '\n';
  return line;
}

Result<std::optional<Command>> parse_command_line(std::string_view line) {
  protocol::Decoded<Command> c = protocol::decode_command_line(line);
  if (c) return std::optional<Command>{std::move(*c)};
  const protocol::DecodeError& e = c.error();
  // Another type, or a JSON object without one: not for this plugin.
  if (e.kind == protocol::DecodeError::Kind::kUnknownType) return std::optional<Command>{};
  if (e.field == "type" && e.type.empty()) return std::optional<Command>{};
  return Error{e.message()};
}

}  // namespace railyard::sm_plugin
