#include "policies/policy_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "policies/yaml_doc.h"

namespace railyard::policies {

namespace {

void check_node_ref(const yaml::Value& at, const std::string& ref) {
  if (ref.empty()) at.fail(at.quoted_path() + ": empty node name");
  if (is_malformed_guid_ref(ref)) {
    at.fail(at.quoted_path() + ": '" + ref + "' is not a GUID (expected 0x and 1 to 16 hex digits, not all zero)");
  }
}

std::string get_node_ref(const yaml::Value& v) {
  std::string ref = v.string();
  check_node_ref(v, ref);
  return ref;
}

std::vector<std::string> get_node_refs(const yaml::Value& list) {
  std::vector<std::string> out;
  for (const yaml::Value& item : list.items(yaml::IfNull::kEmpty)) out.push_back(get_node_ref(item));
  return out;
}

constexpr uint64_t kMinPort = 1;
constexpr uint64_t kMaxPort = 254;

PortRef get_port_ref(const yaml::Value& v) {
  PortRef ref;
  if (v.is_map()) {
    const yaml::Map m = v.map({"node", "port"});
    for (const auto& [key, value] : m.entries()) {
      if (key == "node") {
        ref.node = get_node_ref(value);
      } else {
        ref.port = static_cast<uint8_t>(value.unsigned_in(kMinPort, kMaxPort, "port"));
      }
    }
    m.require("node");
    m.require("port");
    return ref;
  }
  if (v.is_scalar()) {
    const std::string text = v.string();
    std::optional<PortRefText> parts = split_port_ref(text);
    if (parts) {
      std::string port(parts->port);
      bool digits_only = !port.empty() && port.size() <= 3 && port.find_first_not_of("0123456789") == std::string::npos;
      if (!digits_only) v.fail(v.quoted_path() + ": port '" + port + "' in '" + text + "' is not a number");
      unsigned n = static_cast<unsigned>(std::stoul(port));
      if (n < kMinPort || n > kMaxPort) v.fail(v.quoted_path() + ": port " + port + " is outside 1..254");
      ref.node = std::string(parts->node);
      check_node_ref(v, ref.node);
      ref.port = static_cast<uint8_t>(n);
      return ref;
    }
  }
  v.fail(v.quoted_path() + " must be a port reference (\"NODE[PORT]\" or {node: NODE, port: PORT}), got " +
         v.type_name());
}

std::vector<PortRef> get_port_refs(const yaml::Value& list) {
  std::vector<PortRef> out;
  for (const yaml::Value& item : list.items(yaml::IfNull::kEmpty)) out.push_back(get_port_ref(item));
  return out;
}

// libstdc++ compiles std::regex by recursive descent, one level per group:
// deep nesting overflows the stack (a crash, not an exception), so depth and
// length are bounded before compiling. Real rail patterns are a line long.
constexpr size_t kMaxPatternLength = 1024;
constexpr int kMaxGroupDepth = 32;

int group_depth(std::string_view pattern) {
  int depth = 0;
  int deepest = 0;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;  // an escaped character is a literal, also inside [...]
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      depth = std::max(depth - 1, 0);
    }
  }
  return deepest;
}

constexpr size_t kMaxPatternNumberDigits = 4;

void check_pattern(const yaml::Value& at, const std::string& pattern) {
  if (pattern.size() > kMaxPatternLength) {
    at.fail(at.quoted_path() + ": pattern is " + std::to_string(pattern.size()) + " characters long; at most " +
                 std::to_string(kMaxPatternLength));
  }
  if (int depth = group_depth(pattern); depth > kMaxGroupDepth) {
    at.fail(at.quoted_path() + ": pattern nests groups " + std::to_string(depth) + " deep; at most " +
                 std::to_string(kMaxGroupDepth));
  }
  // libstdc++'s regex compiler reads the number of a back-reference (\12)
  // or a repetition ({3,12}) into an int without a bound: signed overflow,
  // undefined behaviour. No rail pattern needs more than 4 digits there.
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' && pattern[i] != '{' && pattern[i] != ',') continue;
    size_t digits = 0;
    while (i + 1 + digits < pattern.size() && pattern[i + 1 + digits] >= '0' && pattern[i + 1 + digits] <= '9') ++digits;
    if (digits > kMaxPatternNumberDigits) {
      at.fail(at.quoted_path() + ": pattern '" + pattern + "' has a back-reference or repetition count of more than " +
                   std::to_string(kMaxPatternNumberDigits) + " digits");
    }
    if (pattern[i] == '\\') ++i;  // the escaped character is not a new start
  }
  try {
    std::regex re(pattern, std::regex::ECMAScript);
    if (re.mark_count() < 2) {
      at.fail(at.quoted_path() + ": pattern '" + pattern + "' has " + std::to_string(re.mark_count()) +
                   " capture group(s); it needs 2 (host, rail)");
    }
  } catch (const std::regex_error& e) {
    at.fail(at.quoted_path() + ": pattern '" + pattern + "' does not compile: " + e.what());
  }
}

Policy load(const yaml::Value& root) {
  Policy policy;
  const yaml::Map top = root.map({"rails", "drains", "roots", "adaptive_routing", "sharp"}, yaml::IfNull::kEmpty);
  for (const auto& [key, v] : top.entries()) {
    if (key == "rails") {
      const yaml::Map rails = v.map({"patterns", "infer_from_structure"}, yaml::IfNull::kEmpty);
      for (const auto& [k, v2] : rails.entries()) {
        if (k == "patterns") {
          if (v2.is_null()) continue;  // like an absent key: the default patterns
          policy.rails.patterns.clear();
          for (const yaml::Value& item : v2.items()) {
            std::string pattern = item.string();
            check_pattern(item, pattern);
            policy.rails.patterns.push_back(std::move(pattern));
          }
        } else {
          policy.rails.infer_from_structure = v2.boolean();
        }
      }
    } else if (key == "drains") {
      const yaml::Map drains = v.map({"links", "ports", "switches"}, yaml::IfNull::kEmpty);
      for (const auto& [k, v2] : drains.entries()) {
        if (k == "switches") {
          policy.drains.switches = get_node_refs(v2);
        } else {
          (k == "links" ? policy.drains.links : policy.drains.ports) = get_port_refs(v2);
        }
      }
    } else if (key == "roots") {
      policy.roots = get_node_refs(v);
    } else if (key == "adaptive_routing") {
      const yaml::Map ar = v.map({"max_groups_per_switch"}, yaml::IfNull::kEmpty);
      if (const yaml::Value* limit = ar.find("max_groups_per_switch")) {
        policy.ar.max_groups_per_switch = static_cast<uint32_t>(limit->unsigned_in(1, UINT32_MAX, "limit"));
      }
    } else {
      const yaml::Map sharp = v.map({"trees_per_switch"}, yaml::IfNull::kEmpty);
      if (const yaml::Value* limit = sharp.find("trees_per_switch")) {
        policy.sharp.trees_per_switch = static_cast<uint32_t>(limit->unsigned_in(1, UINT32_MAX, "limit"));
      }
    }
  }
  return policy;
}

// --- rendering ---

void append_utf8_escape(std::string& out, uint32_t cp) {
  char buf[16];
  if (cp <= 0xFF) {
    std::snprintf(buf, sizeof buf, "\\x%02x", cp);
  } else if (cp <= 0xFFFF) {
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  } else {
    std::snprintf(buf, sizeof buf, "\\U%08x", cp);
  }
  out += buf;
}

// Single quotes when the string is printable ASCII (regexes stay readable:
// only ' is doubled); otherwise double quotes with escapes for control and
// line-breaking characters. Bytes that are not UTF-8 become U+FFFD: YAML cannot
// carry them, and parse never produces them.
std::string quote(std::string_view s) {
  bool printable = true;
  for (char c : s) printable = printable && c >= 0x20 && c <= 0x7e;
  std::string out;
  if (printable) {
    out += '\'';
    for (char c : s) {
      out += c;
      if (c == '\'') out += '\'';
    }
    out += '\'';
    return out;
  }
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            append_utf8_escape(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char ck = static_cast<unsigned char>(s[i + k]);
      ok = (ck & 0xC0) == 0x80;
      cp = (cp << 6) | (ck & 0x3F);
    }
    if (!ok || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    // C1 controls (NEL among them), line/paragraph separators and the BOM are
    // escaped: some YAML readers treat them as breaks or strip them.
    if (cp < 0xA0 || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) {
      append_utf8_escape(out, cp);
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  out += '"';
  return out;
}

void render_list(std::string& out, std::string_view indent, std::string_view key,
                 const std::vector<std::string>& items) {
  out += indent;
  out += key;
  if (items.empty()) {
    out += ": []\n";
    return;
  }
  out += ":\n";
  for (const std::string& item : items) {
    out += indent;
    out += "  - " + quote(item) + "\n";
  }
}

std::vector<std::string> port_refs(const std::vector<PortRef>& refs) {
  std::vector<std::string> out;
  out.reserve(refs.size());
  for (const PortRef& r : refs) out.push_back(to_string(r));
  return out;
}

}  // namespace

Result<Policy> parse_policy_yaml(std::string_view text, std::string_view source_name) {
  Policy policy;
  Status s = yaml::read_yaml_document(text, source_name, "the policy",
                                      [&policy](const yaml::Value& root) { policy = load(root); });
  if (!s) return s.error();
  return policy;
}

std::string render_policy_yaml(const Policy& policy) {
  std::string out = "# railyard policy (layout: policies/policy_loader.h)\n";
  out += "rails:\n";
  render_list(out, "  ", "patterns", policy.rails.patterns);
  out += std::string("  infer_from_structure: ") + (policy.rails.infer_from_structure ? "true" : "false") + "\n";
  out += "drains:\n";
  render_list(out, "  ", "links", port_refs(policy.drains.links));
  render_list(out, "  ", "ports", port_refs(policy.drains.ports));
  render_list(out, "  ", "switches", policy.drains.switches);
  render_list(out, "", "roots", policy.roots);
  out += "adaptive_routing:\n";
  out += "  max_groups_per_switch: " + std::to_string(policy.ar.max_groups_per_switch) + "\n";
  out += "sharp:\n";
  out += "  trees_per_switch: " + std::to_string(policy.sharp.trees_per_switch) + "\n";
  return out;
}

}  // namespace railyard::policies
