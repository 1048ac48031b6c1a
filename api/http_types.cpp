#include "api/http_types.h"

#include "policies/utf8.h"

namespace railyard::api {

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool is_clean_utf8(std::string_view s) {
  while (!s.empty()) {
    const auto c = static_cast<unsigned char>(s.front());
    if (c < 0x20 || c == 0x7F) return false;  // control characters
    const size_t n = utf8_sequence(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

bool percent_decode(std::string_view in, std::string* out, bool plus_is_space) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      const int h = hex(in[i + 1]), l = hex(in[i + 2]);
      if (h < 0 || l < 0) return false;
      out->push_back(static_cast<char>(h * 16 + l));
      i += 2;
    } else if (plus_is_space && in[i] == '+') {
      out->push_back(' ');
    } else {
      out->push_back(in[i]);
    }
  }
  return is_clean_utf8(*out);
}

bool split_target(const std::string& target, std::string* path, std::map<std::string, std::string>* query) {
  query->clear();
  // RFC 9112: the request target is visible ASCII; anything else (a raw 0xFF,
  // a space, a control byte) is refused before it reaches a message or a log.
  for (const char ch : target) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7F) return false;
  }
  const size_t q = target.find('?');
  *path = target.substr(0, q);
  std::string ignored;
  if (!percent_decode(*path, &ignored, false)) return false;
  if (q == std::string::npos) return true;
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string key, value;
    if (!percent_decode(item.substr(0, eq), &key, true)) return false;
    if (eq != std::string_view::npos && !percent_decode(item.substr(eq + 1), &value, true)) return false;
    (*query)[key] = value;
  }
  return true;
}

}  // namespace railyard::api
