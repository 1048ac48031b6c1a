#include "policies/policy.h"

namespace railyard::policies {

namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// "0x" (or "0X") followed by at least one hex digit and nothing else.
bool looks_like_guid(std::string_view ref) {
  if (ref.size() < 3 || ref[0] != '0' || (ref[1] != 'x' && ref[1] != 'X')) return false;
  for (char c : ref.substr(2)) {
    if (!is_hex(c)) return false;
  }
  return true;
}

}  // namespace

std::optional<uint64_t> parse_guid_ref(std::string_view ref) {
  if (!looks_like_guid(ref) || ref.size() - 2 > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : ref.substr(2)) {
    int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  if (v == 0) return std::nullopt;  // GUID 0 means "none" in InfiniBand
  return v;
}

bool is_malformed_guid_ref(std::string_view ref) {
  return looks_like_guid(ref) && !parse_guid_ref(ref);
}

std::string to_string(const PortRef& ref) {
  return ref.node + "[" + std::to_string(ref.port) + "]";
}

std::optional<PortRefText> split_port_ref(std::string_view text) {
  if (text.size() < 4 || text.back() != ']') return std::nullopt;
  size_t open = text.rfind('[');
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  return PortRefText{text.substr(0, open), text.substr(open + 1, text.size() - open - 2)};
}

}  // namespace railyard::policies
