#include "routing/topology_line.h"

#include <array>
#include <cstdio>

namespace railyard::routing::topology_detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Quotes a piece of input for an error message: bounded length, and bytes
// that would garble a terminal shown as \xNN, since the input is untrusted.
std::string show(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  out += '"';
  return out;
}

constexpr std::array<std::pair<std::string_view, LinkSpeed>, 9> kSpeeds{{
    {"SDR", LinkSpeed::kSdr},
    {"DDR", LinkSpeed::kDdr},
    {"QDR", LinkSpeed::kQdr},
    {"FDR10", LinkSpeed::kFdr10},
    {"FDR", LinkSpeed::kFdr},
    {"EDR", LinkSpeed::kEdr},
    {"HDR", LinkSpeed::kHdr},
    {"NDR", LinkSpeed::kNdr},
    {"XDR", LinkSpeed::kXdr},
}};

bool speed_from_name(std::string_view name, LinkSpeed& speed) {
  for (const auto& [n, s] : kSpeeds) {
    if (n == name) {
      speed = s;
      return true;
    }
  }
  return false;
}

bool width_from_lanes(uint64_t lanes, LinkWidth& width) {
  switch (lanes) {
    case 1: width = LinkWidth::k1x; return true;
    case 2: width = LinkWidth::k2x; return true;
    case 4: width = LinkWidth::k4x; return true;
    case 8: width = LinkWidth::k8x; return true;
    case 12: width = LinkWidth::k12x; return true;
    default: return false;
  }
}

// A cursor over one line. Every parse step either advances and returns true
// or records why it failed and returns false, so callers chain with &&.
class Scanner {
 public:
  Scanner(std::string_view s, std::string& error) : s_(s), error_(error) {}

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  std::string_view rest() const { return s_.substr(i_); }
  // True at the end of a token: end of line, whitespace or a comment.
  bool at_token_end() const { return at_end() || is_space(peek()) || peek() == '#'; }

  void skip_space() {
    while (!at_end() && is_space(s_[i_])) ++i_;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool consume(std::string_view prefix) {
    if (rest().substr(0, prefix.size()) != prefix) return false;
    i_ += prefix.size();
    return true;
  }
  std::string_view identifier() {
    size_t b = i_;
    while (!at_end() && is_word_char(s_[i_])) ++i_;
    return s_.substr(b, i_ - b);
  }
  std::string_view token() {
    size_t b = i_;
    while (!at_end() && !is_space(s_[i_])) ++i_;
    return s_.substr(b, i_ - b);
  }

  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  // Decimal in [lo, hi]. Digits are consumed even past the limit so the
  // message can show the whole number; the value never overflows.
  bool decimal(uint64_t lo, uint64_t hi, std::string_view what, uint64_t& out) {
    size_t b = i_;
    uint64_t v = 0;
    bool too_big = false;
    while (!at_end() && is_digit(s_[i_])) {
      if (!too_big) {
        v = v * 10 + static_cast<uint64_t>(s_[i_] - '0');
        too_big = v > hi;
      }
      ++i_;
    }
    if (i_ == b) return fail("expected a number for the " + std::string(what) + ", found " + show(rest()));
    if (too_big || v < lo) {
      return fail(std::string(what) + " " + show(s_.substr(b, i_ - b)) + " is out of range " +
                  std::to_string(lo) + ".." + std::to_string(hi));
    }
    out = v;
    return true;
  }

  // Hex number of at most 16 digits, with an optional 0x prefix.
  bool hex(std::string_view what, Guid& out) {
    size_t b = i_;
    if (!consume("0x")) consume("0X");
    size_t digits_begin = i_;
    uint64_t v = 0;
    while (!at_end() && hex_value(s_[i_]) >= 0) {
      if (i_ - digits_begin < 16) v = (v << 4) | static_cast<uint64_t>(hex_value(s_[i_]));
      ++i_;
    }
    size_t n = i_ - digits_begin;
    if (n == 0) return fail("expected a hex " + std::string(what) + ", found " + show(s_.substr(b)));
    if (n > 16) return fail(std::string(what) + " " + show(s_.substr(b, i_ - b)) + " has more than 16 hex digits");
    out = Guid{v};
    return true;
  }

  bool quoted(std::string_view what, std::string_view& out) {
    if (!consume('"')) return fail("expected a quoted " + std::string(what) + ", found " + show(rest()));
    size_t b = i_;
    while (!at_end() && s_[i_] != '"') ++i_;
    if (at_end()) return fail("unterminated quote in " + std::string(what) + " " + show(s_.substr(b - 1)));
    out = s_.substr(b, i_ - b);
    ++i_;
    return true;
  }

  // "(hex)" after a port: a port GUID, printed by ibnetdiscover without 0x.
  bool paren_guid(Guid& out) {
    if (!consume('(')) return true;
    if (!hex("port GUID", out)) return false;
    if (!consume(')')) return fail("missing ')' after port GUID, found " + show(rest()));
    return true;
  }

  // "[N]" optionally followed by ibnetdiscover's "[ext M]" chassis port number,
  // which only labels the front panel and is not kept.
  bool port_number(std::string_view what, PortNum& out) {
    if (!consume('[')) return fail("missing '[' before the " + std::string(what) + ", found " + show(rest()));
    std::string_view r = rest();
    if (!r.empty() && r[0] == '0' && (r.size() == 1 || !is_digit(r[1]))) {
      return fail(std::string(what) + " 0 is the switch management port and cannot be cabled");
    }
    uint64_t v = 0;
    if (!decimal(1, kMaxPorts, what, v)) return false;
    if (!consume(']')) return fail("missing ']' after the " + std::string(what) + ", found " + show(rest()));
    if (consume("[ext")) {
      skip_space();
      uint64_t ext = 0;
      if (!decimal(0, 65535, "extended port number", ext)) return false;
      if (!consume(']')) return fail("missing ']' after the extended port number, found " + show(rest()));
    }
    out = PortNum{static_cast<uint8_t>(v)};
    return true;
  }

  // "lid N" / "lmc N" pairs inside comments.
  bool lid_value(Lid& out) {
    skip_space();
    uint64_t v = 0;
    if (!decimal(0, Lid::kMaxUnicast, "LID", v)) return false;
    if (!at_token_end()) return fail("bad LID " + show(rest()));
    out = Lid{static_cast<uint16_t>(v)};
    return true;
  }
  bool lmc_value(uint8_t& out) {
    skip_space();
    uint64_t v = 0;
    if (!decimal(0, 7, "LMC", v)) return false;
    if (!at_token_end()) return fail("bad LMC " + show(rest()));
    out = static_cast<uint8_t>(v);
    return true;
  }

 private:
  std::string_view s_;
  std::string& error_;
  size_t i_ = 0;
};

bool parse_key(Scanner& s, std::string_view word, KeyLine& out) {
  s.consume('=');
  if (word == "vendid" || word == "devid") {
    out.key = word == "vendid" ? Key::kVendorId : Key::kDeviceId;
    if (!s.hex(word == "vendid" ? "vendor id" : "device id", out.value)) return false;
  } else if (word == "sysimgguid") {
    out.key = Key::kSystemGuid;
    if (!s.hex("system image GUID", out.value)) return false;
  } else if (word == "switchguid" || word == "caguid" || word == "rtguid") {
    out.key = word == "switchguid" ? Key::kSwitchGuid : word == "caguid" ? Key::kCaGuid : Key::kRouterGuid;
    if (!s.hex("node GUID", out.value)) return false;
    if (!out.value.valid()) return s.fail("node GUID 0 is not valid");
    if (!s.paren_guid(out.port_guid)) return false;
  } else {
    return s.fail("unknown key " + show(word));
  }
  s.skip_space();
  if (!s.at_end() && s.peek() != '#') return s.fail("unexpected text " + show(s.rest()) + " after " + std::string(word) + "=");
  return true;
}

// Comment of a node header: "# "desc" enhanced port 0 lid 5 lmc 0".
bool parse_header_comment(Scanner& s, HeaderLine& out) {
  s.skip_space();
  if (s.peek() == '"') {
    if (!s.quoted("node description", out.desc)) return false;
    out.has_desc = true;
  }
  for (;;) {
    s.skip_space();
    if (s.at_end()) return true;
    std::string_view t = s.token();
    if (t == "lid" && !s.lid_value(out.lid)) return false;
    if (t == "lmc" && !s.lmc_value(out.lmc)) return false;
  }
}

bool parse_header(Scanner& s, NodeType type, HeaderLine& out) {
  out.type = type;
  s.skip_space();
  uint64_t n = 0;
  if (!s.decimal(1, kMaxPorts, "port count", n)) return false;
  out.num_ports = static_cast<uint8_t>(n);
  s.skip_space();
  if (!s.quoted("node name", out.name)) return false;
  if (out.name.empty()) return s.fail("empty node name");
  s.skip_space();
  if (s.at_end()) return true;
  if (!s.consume('#')) return s.fail("unexpected text " + show(s.rest()) + " after node name");
  return parse_header_comment(s, out);
}

// Comment of a port line: "# lid 4 lmc 0 "remote desc" lid 1 4xSDR" (CA) or
// "# "remote desc" lid 1 4xSDR" (switch).
bool parse_port_comment(Scanner& s, PortLine& out) {
  bool after_desc = false;
  for (;;) {
    s.skip_space();
    if (s.at_end()) return true;
    if (!after_desc && s.peek() == '"') {
      std::string_view ignored;
      if (!s.quoted("remote node description", ignored)) return false;
      after_desc = true;
      continue;
    }
    std::string_view t = s.token();
    if (t == "lid") {
      if (!s.lid_value(after_desc ? out.remote_lid : out.lid)) return false;
    } else if (t == "lmc" && !after_desc) {
      if (!s.lmc_value(out.lmc)) return false;
    } else if ((!t.empty() && is_digit(t[0]) && t.find('x') != std::string_view::npos && t.substr(0, 2) != "0x") ||
               (t.size() > 2 && t.substr(0, 2) == "??")) {
      if (!parse_width_speed(t, out.width, out.speed)) return s.fail("unknown link width/speed " + show(t));
    }
  }
}

bool parse_port(Scanner& s, PortLine& out) {
  if (!s.port_number("port number", out.port)) return false;
  s.skip_space();
  if (!s.paren_guid(out.port_guid)) return false;
  s.skip_space();
  if (s.at_end()) return s.fail("port line has no remote end");
  if (!s.quoted("remote node name", out.remote)) return false;
  if (out.remote.empty()) return s.fail("empty remote node name");
  if (!s.port_number("remote port number", out.remote_port)) return false;
  s.skip_space();
  if (!s.paren_guid(out.remote_port_guid)) return false;
  for (;;) {
    s.skip_space();
    if (s.at_end()) return true;
    if (s.consume('#')) return parse_port_comment(s, out);
    if (s.consume("w=")) {
      uint64_t lanes = 0;
      if (!s.decimal(1, 12, "link width", lanes)) return false;
      if (!width_from_lanes(lanes, out.width) || !s.at_token_end()) {
        return s.fail("bad link width w=" + std::to_string(lanes) + " (expected 1, 2, 4, 8 or 12)");
      }
    } else if (s.consume("s=")) {
      // ibsim's numeric PortInfo encoding (1, 2, 4) or a name such as "HDR".
      std::string_view v = s.token();
      if (v == "1") out.speed = LinkSpeed::kSdr;
      else if (v == "2") out.speed = LinkSpeed::kDdr;
      else if (v == "4") out.speed = LinkSpeed::kQdr;
      else if (!speed_from_name(v, out.speed)) return s.fail("unknown link speed s=" + show(v));
    } else {
      return s.fail("unexpected text " + show(s.rest()) + " in port line");
    }
  }
}

}  // namespace

bool parse_width_speed(std::string_view token, LinkWidth& width, LinkSpeed& speed) {
  // ibnetdiscover prints "??" for a width and "???" for a speed it cannot
  // name (older diags print an HDR link as "4x???"): those read as unknown.
  LinkWidth w = LinkWidth::kUnknown;
  std::string_view name;
  if (token.substr(0, 2) == "??") {
    name = token.substr(2);
  } else {
    size_t x = token.find('x');
    if (x == 0 || x == std::string_view::npos || x > 2) return false;
    uint64_t lanes = 0;
    for (size_t i = 0; i < x; ++i) {
      if (!is_digit(token[i])) return false;
      lanes = lanes * 10 + static_cast<uint64_t>(token[i] - '0');
    }
    if (!width_from_lanes(lanes, w)) return false;
    name = token.substr(x + 1);
  }
  LinkSpeed sp = LinkSpeed::kUnknown;
  bool unnamed = name.find_first_not_of('?') == std::string_view::npos;
  if (!unnamed && !speed_from_name(name, sp)) return false;
  width = w;
  speed = sp;
  return true;
}

bool parse_line(std::string_view line, ParsedLine& out, std::string& error) {
  Scanner s(line, error);
  s.skip_space();
  if (s.at_end()) {
    out.kind = LineKind::kBlank;
    return true;
  }
  if (s.peek() == '#') {
    out.kind = LineKind::kComment;
    return true;
  }
  if (s.peek() == '[') {
    out.kind = LineKind::kPort;
    out.port = PortLine{};
    return parse_port(s, out.port);
  }
  std::string_view word = s.identifier();
  if (word.empty()) return s.fail("unrecognized line " + show(line));
  if (s.peek() == '=') {
    out.kind = LineKind::kKey;
    out.key = KeyLine{};
    return parse_key(s, word, out.key);
  }
  bool word_ends = s.at_end() || is_space(s.peek());
  if (word == "include" && word_ends) {
    return s.fail("\"include\" is not supported: the reader takes the text of one file; "
                  "concatenate included files first");
  }
  if (word == "do" && word_ends) {
    out.kind = LineKind::kSkip;
    return true;
  }
  NodeType type;
  if (word == "Switch") type = NodeType::kSwitch;
  else if (word == "Ca" || word == "Hca") type = NodeType::kCa;
  else if (word == "Rt") type = NodeType::kRouter;
  else {
    s.skip_space();
    if (word_ends && is_digit(s.peek())) return s.fail("unknown node type " + show(word));
    return s.fail("unrecognized line " + show(line));
  }
  if (!word_ends) return s.fail("unrecognized line " + show(line));
  out.kind = LineKind::kHeader;
  out.header = HeaderLine{};
  return parse_header(s, type, out.header);
}

}  // namespace railyard::routing::topology_detail
