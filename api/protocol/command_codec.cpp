#include "api/protocol/command_codec.h"

#include "api/protocol/field_reader.h"

namespace railyard::protocol {

using nlohmann::json;

std::string_view to_string(CommandKind kind) {
  switch (kind) {
    case CommandKind::kReroute: return "reroute";
    case CommandKind::kPolicyChanged: return "policy_changed";
    case CommandKind::kSendFabric: return "send_fabric";
    case CommandKind::kNotLeader: return "not_leader";
    case CommandKind::kPolicy: return "policy";
    case CommandKind::kReceived: return "received";
  }
  return "reroute";
}

std::optional<CommandKind> parse_command_kind(std::string_view type) {
  if (type == "reroute") return CommandKind::kReroute;
  if (type == "policy_changed") return CommandKind::kPolicyChanged;
  if (type == "send_fabric") return CommandKind::kSendFabric;
  if (type == "not_leader") return CommandKind::kNotLeader;
  if (type == "policy") return CommandKind::kPolicy;
  if (type == "received") return CommandKind::kReceived;
  return std::nullopt;
}

std::string encode_command(const Command& command) {
  json j{{"type", to_string(command.kind)}};
  const bool carries_id = command.kind != CommandKind::kNotLeader && command.kind != CommandKind::kReceived;
  if (carries_id) j["id"] = command.id;
  if (command.kind == CommandKind::kNotLeader) j["leader"] = command.leader;
  if (command.kind == CommandKind::kPolicy) j["yaml"] = command.yaml;
  if (command.kind == CommandKind::kReceived) j["lines"] = command.lines;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Decoded<Command> decode_command(const json& line) {
  if (!line.is_object()) return DecodeError{DecodeError::Kind::kNotAnObject, "", "", "not a JSON object"};
  try {
    const std::string type = FieldReader(line, "").string("type");
    const std::optional<CommandKind> kind = parse_command_kind(type);
    if (!kind) return DecodeError{DecodeError::Kind::kUnknownType, "", "", "unknown type '" + type + "'"};
    const FieldReader r(line, type);
    // not_leader and received carry no request id (encode_command writes
    // none): an id sent with them is ignored, as unknown fields are.
    const bool carries_id = *kind != CommandKind::kNotLeader && *kind != CommandKind::kReceived;
    Command c{*kind, r.has("id") && carries_id ? r.string("id") : std::string()};
    if (c.id.size() > kMaxRequestId) throw r.bad_value("id", "longer than " + std::to_string(kMaxRequestId) + " bytes");
    if (c.kind == CommandKind::kNotLeader && r.has("leader")) c.leader = r.string("leader");
    if (c.kind == CommandKind::kPolicy) c.yaml = r.string("yaml");
    if (c.kind == CommandKind::kReceived) c.lines = r.uint<uint64_t>("lines");
    return c;
  } catch (const DecodeError& error) {
    return error;
  }
}

Decoded<Command> decode_command_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DecodeError{DecodeError::Kind::kNotJson, "", "", "not JSON"};
  return decode_command(j);
}

}  // namespace railyard::protocol
