#include "controller/bounded_json.h"

namespace railyard::controller {

size_t json_depth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) deepest = depth;
        if (deepest > limit) return deepest;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

nlohmann::json parse_bounded_json(std::string_view text, std::string* error, size_t max_depth) {
  if (json_depth(text, max_depth) > max_depth) {
    *error = "nested deeper than " + std::to_string(max_depth) + " levels";
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded()) *error = "not valid JSON";
  return value;
}

std::string safe_dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace railyard::controller
