#include "policies/policy_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
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

// --- writing ---

// Printable ASCII is single-quoted (regexes stay readable: only ' is doubled);
// anything else double-quoted, where the emitter escapes control characters,
// DEL and, with EscapeNonAscii, every non-ASCII character (NEL, U+2028 and
// the BOM among them, which some YAML readers take for breaks or strip). A
// byte that is not UTF-8 becomes U+FFFD: YAML cannot carry it, and parsing
// never produces one.
void emit_string(YAML::Emitter& out, const std::string& s) {
  const bool printable = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  out << (printable ? YAML::SingleQuoted : YAML::DoubleQuoted) << s;
}

void emit_list(YAML::Emitter& out, std::string_view key, const std::vector<std::string>& items) {
  out << YAML::Key << std::string(key) << YAML::Value;
  if (items.empty()) out << YAML::Flow;  // "key: []"
  out << YAML::BeginSeq;
  for (const std::string& item : items) emit_string(out, item);
  out << YAML::EndSeq;
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
  YAML::Emitter out;
  out.SetOutputCharset(YAML::EscapeNonAscii);
  out << YAML::Comment("railyard policy (layout: policies/policy_loader.h)");
  out << YAML::BeginMap;
  out << YAML::Key << "rails" << YAML::Value << YAML::BeginMap;
  emit_list(out, "patterns", policy.rails.patterns);
  out << YAML::Key << "infer_from_structure" << YAML::Value << policy.rails.infer_from_structure;
  out << YAML::EndMap;
  out << YAML::Key << "drains" << YAML::Value << YAML::BeginMap;
  emit_list(out, "links", port_refs(policy.drains.links));
  emit_list(out, "ports", port_refs(policy.drains.ports));
  emit_list(out, "switches", policy.drains.switches);
  out << YAML::EndMap;
  emit_list(out, "roots", policy.roots);
  out << YAML::Key << "adaptive_routing" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "max_groups_per_switch" << YAML::Value << policy.ar.max_groups_per_switch;
  out << YAML::EndMap;
  out << YAML::Key << "sharp" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "trees_per_switch" << YAML::Value << policy.sharp.trees_per_switch;
  out << YAML::EndMap;
  out << YAML::EndMap;
  // The emitter only fails on misuse (an unbalanced map), never on data.
  assert(out.good());
  return std::string(out.c_str()) + "\n";
}

}  // namespace railyard::policies
