#include "policies/policy_loader.h"

#include "policies/utf8.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace railyard::policies {

namespace {

// The first schema violation found. Thrown inside the loader only (yaml-cpp
// already reports through exceptions, so one catch site handles both) and
// turned into an Error by parse_policy_yaml; it never escapes this file.
struct LoadError {
  int line;  // 0-based as in YAML::Mark; negative when unknown
  std::string message;
};

[[noreturn]] void fail(const YAML::Node& at, std::string message) {
  throw LoadError{at.Mark().line, std::move(message)};
}

std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Scalar: return "a scalar '" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "?";
}

std::string join(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string where(const std::string& path) { return path.empty() ? "at top level" : "under '" + path + "'"; }

std::string join_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Calls visit(key, value, path_of_value) for each entry of a mapping after
// checking every key against `keys`. A null node is an empty mapping: the
// section keeps its defaults. yaml-cpp keeps duplicate keys, so they are
// rejected here rather than letting the last one win silently.
template <class Visit>
void for_each_entry(const YAML::Node& map, const std::string& path, std::initializer_list<std::string_view> keys,
                    Visit&& visit) {
  if (map.IsNull()) return;
  if (!map.IsMap()) {
    fail(map, (path.empty() ? std::string("the policy") : "'" + path + "'") + " must be a mapping, got " +
                  type_name(map));
  }
  std::vector<std::string> seen;
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) fail(key, "a key " + where(path) + " must be a plain name, got " + type_name(key));
    const std::string& k = key.Scalar();
    bool known = false;
    for (std::string_view allowed : keys) known = known || allowed == k;
    if (!known) fail(key, "unknown key '" + k + "' " + where(path) + " (expected " + join(keys) + ")");
    for (const std::string& s : seen) {
      if (s == k) fail(key, "duplicate key '" + k + "' " + where(path));
    }
    seen.push_back(k);
    visit(k, entry.second, join_path(path, k));
  }
}

// Calls visit(item, path_of_item) for each element; null is an empty list.
template <class Visit>
void for_each_item(const YAML::Node& list, const std::string& path, Visit&& visit) {
  if (list.IsNull()) return;
  if (!list.IsSequence()) fail(list, "'" + path + "' must be a list, got " + type_name(list));
  size_t i = 0;
  for (const auto& item : list) {
    visit(item, item_path(path, i));
    ++i;
  }
}

// Quoted scalars are strings in YAML; numbers and booleans must be plain.
bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

// yaml-cpp decodes the escapes \N and \_ to one raw byte (0x85, 0xA0), not
// to UTF-8: a string that is not UTF-8 is refused here, so that what loads
// can be rendered and read back unchanged.
void check_utf8(const YAML::Node& n, const std::string& path, std::string_view s) {
  for (std::string_view rest = s; !rest.empty();) {
    const size_t len = utf8_sequence(rest);
    if (len == 0) {
      fail(n, "'" + path + "' is not valid UTF-8 (the YAML escapes \\N and \\_ give raw bytes here: "
              "write the character itself)");
    }
    rest.remove_prefix(len);
  }
}

std::string get_string(const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) fail(n, "'" + path + "' must be a string, got " + type_name(n));
  check_utf8(n, path, n.Scalar());
  return n.Scalar();
}

bool get_bool(const YAML::Node& n, const std::string& path) {
  if (n.IsScalar() && is_plain(n)) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail(n, "'" + path + "' must be true or false, got " + type_name(n));
}

// A plain decimal integer in [lo, hi]. Written out rather than via
// YAML::as<int> so "0x10", "1e3", "+3" and quoted numbers are all refused.
uint64_t get_uint(const YAML::Node& n, const std::string& path, uint64_t lo, uint64_t hi, std::string_view what) {
  if (!n.IsScalar() || !is_plain(n)) fail(n, "'" + path + "' must be an integer, got " + type_name(n));
  const std::string& s = n.Scalar();
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  bool digits_only = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only) fail(n, "'" + path + "' must be an integer, got " + type_name(n));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    fail(n, "'" + path + "': " + std::string(what) + " " + s + " is outside " + std::to_string(lo) + ".." +
                std::to_string(hi));
  }
  (void)end;
  return v;
}

void check_node_ref(const YAML::Node& at, const std::string& path, const std::string& ref) {
  if (ref.empty()) fail(at, "'" + path + "': empty node name");
  if (is_malformed_guid_ref(ref)) {
    fail(at, "'" + path + "': '" + ref + "' is not a GUID (expected 0x and 1 to 16 hex digits, not all zero)");
  }
}

std::string get_node_ref(const YAML::Node& n, const std::string& path) {
  std::string ref = get_string(n, path);
  check_node_ref(n, path, ref);
  return ref;
}

constexpr uint64_t kMinPort = 1;
constexpr uint64_t kMaxPort = 254;

PortRef get_port_ref(const YAML::Node& n, const std::string& path) {
  PortRef ref;
  if (n.IsMap()) {
    bool has_node = false;
    bool has_port = false;
    for_each_entry(n, path, {"node", "port"}, [&](const std::string& key, const YAML::Node& v, const std::string& p) {
      if (key == "node") {
        ref.node = get_node_ref(v, p);
        has_node = true;
      } else {
        ref.port = static_cast<uint8_t>(get_uint(v, p, kMinPort, kMaxPort, "port"));
        has_port = true;
      }
    });
    if (!has_node) fail(n, "'" + path + "' is missing 'node'");
    if (!has_port) fail(n, "'" + path + "' is missing 'port'");
    return ref;
  }
  if (n.IsScalar()) {
    check_utf8(n, path, n.Scalar());
    std::optional<PortRefText> parts = split_port_ref(n.Scalar());
    if (parts) {
      std::string port(parts->port);
      bool digits_only = !port.empty() && port.size() <= 3 && port.find_first_not_of("0123456789") == std::string::npos;
      if (!digits_only) fail(n, "'" + path + "': port '" + port + "' in '" + n.Scalar() + "' is not a number");
      unsigned v = static_cast<unsigned>(std::stoul(port));
      if (v < kMinPort || v > kMaxPort) fail(n, "'" + path + "': port " + port + " is outside 1..254");
      ref.node = std::string(parts->node);
      check_node_ref(n, path, ref.node);
      ref.port = static_cast<uint8_t>(v);
      return ref;
    }
  }
  fail(n, "'" + path + "' must be a port reference (\"NODE[PORT]\" or {node: NODE, port: PORT}), got " +
              type_name(n));
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

void check_pattern(const YAML::Node& at, const std::string& path, const std::string& pattern) {
  if (pattern.size() > kMaxPatternLength) {
    fail(at, "'" + path + "': pattern is " + std::to_string(pattern.size()) + " characters long; at most " +
                 std::to_string(kMaxPatternLength));
  }
  if (int depth = group_depth(pattern); depth > kMaxGroupDepth) {
    fail(at, "'" + path + "': pattern nests groups " + std::to_string(depth) + " deep; at most " +
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
      fail(at, "'" + path + "': pattern '" + pattern + "' has a back-reference or repetition count of more than " +
                   std::to_string(kMaxPatternNumberDigits) + " digits");
    }
    if (pattern[i] == '\\') ++i;  // the escaped character is not a new start
  }
  try {
    std::regex re(pattern, std::regex::ECMAScript);
    if (re.mark_count() < 2) {
      fail(at, "'" + path + "': pattern '" + pattern + "' has " + std::to_string(re.mark_count()) +
                   " capture group(s); it needs 2 (host, rail)");
    }
  } catch (const std::regex_error& e) {
    fail(at, "'" + path + "': pattern '" + pattern + "' does not compile: " + e.what());
  }
}

Policy load(const YAML::Node& root) {
  Policy policy;
  for_each_entry(root, "", {"rails", "drains", "roots", "adaptive_routing", "sharp"},
                 [&](const std::string& key, const YAML::Node& v, const std::string& path) {
    if (key == "rails") {
      for_each_entry(v, path, {"patterns", "infer_from_structure"},
                     [&](const std::string& k, const YAML::Node& v2, const std::string& p) {
        if (k == "patterns") {
          if (v2.IsNull()) return;  // like an absent key: the default patterns
          policy.rails.patterns.clear();
          for_each_item(v2, p, [&](const YAML::Node& item, const std::string& ip) {
            std::string pattern = get_string(item, ip);
            check_pattern(item, ip, pattern);
            policy.rails.patterns.push_back(std::move(pattern));
          });
        } else {
          policy.rails.infer_from_structure = get_bool(v2, p);
        }
      });
    } else if (key == "drains") {
      for_each_entry(v, path, {"links", "ports", "switches"},
                     [&](const std::string& k, const YAML::Node& v2, const std::string& p) {
        if (k == "switches") {
          for_each_item(v2, p, [&](const YAML::Node& item, const std::string& ip) {
            policy.drains.switches.push_back(get_node_ref(item, ip));
          });
        } else {
          auto& out = k == "links" ? policy.drains.links : policy.drains.ports;
          for_each_item(v2, p, [&](const YAML::Node& item, const std::string& ip) {
            out.push_back(get_port_ref(item, ip));
          });
        }
      });
    } else if (key == "roots") {
      for_each_item(v, path, [&](const YAML::Node& item, const std::string& ip) {
        policy.roots.push_back(get_node_ref(item, ip));
      });
    } else if (key == "adaptive_routing") {
      for_each_entry(v, path, {"max_groups_per_switch"}, [&](const std::string&, const YAML::Node& v2, const std::string& p) {
        policy.ar.max_groups_per_switch = static_cast<uint32_t>(get_uint(v2, p, 1, UINT32_MAX, "limit"));
      });
    } else {
      for_each_entry(v, path, {"trees_per_switch"}, [&](const std::string&, const YAML::Node& v2, const std::string& p) {
        policy.sharp.trees_per_switch = static_cast<uint32_t>(get_uint(v2, p, 1, UINT32_MAX, "limit"));
      });
    }
  });
  return policy;
}

// YAML text must be Unicode; yaml-cpp accepts stray bytes and control
// characters as scalar content, so binary garbage is refused up front with a
// line number instead of surfacing later as a baffling name. Returns the
// 0-based line of the first offence and the reason.
std::optional<std::pair<int, std::string>> check_text(std::string_view text) {
  int line = 0;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "control character 0x%02x (policy files are text)", c);
        return std::make_pair(line, std::string(buf));
      }
      ++i;
      continue;
    }
    // UTF-8: reject overlong forms, surrogates and code points above U+10FFFF.
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    bool ok = len != 0 && c <= 0xF4 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (ok && len >= 3) {
      unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) ok = false;
      if (c == 0xED && c1 >= 0xA0) ok = false;
      if (c == 0xF0 && c1 < 0x90) ok = false;
      if (c == 0xF4 && c1 >= 0x90) ok = false;
    }
    if (!ok) return std::make_pair(line, std::string("invalid UTF-8 (policy files are UTF-8 text)"));
    i += len;
  }
  return std::nullopt;
}

std::string line_of(std::string_view text, int line) {
  size_t start = 0;
  for (int l = 0; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > text.size()) return {};
  size_t end = text.find('\n', start);
  return std::string(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

Error make_error(std::string_view source, int line, const std::string& message) {
  std::string out(source);
  if (line >= 0) out += ": line " + std::to_string(line + 1);
  return Error{out + ": " + message};
}

// Counts documents without building nodes; remembers where each starts.
class DocumentCounter : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Refuses a stream of more than one document, and text on which yaml-cpp 0.7
// makes no progress. Its parser leaves a stray top-level token such as ','
// unconsumed and reports an empty document at the same place forever
// (jbeder/yaml-cpp#1040, fixed upstream by #1318/#1319 after 0.7), so
// YAML::LoadAll never returns and grows without bound. Here at most three
// documents are pulled, and two starting at the same offset mean "stuck".
std::optional<LoadError> check_documents(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentCounter counter;
  for (int i = 0; i < 3 && parser.HandleNextDocument(counter); ++i) {
  }
  const std::vector<YAML::Mark>& s = counter.starts;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i].pos == s[i + 1].pos) {
      size_t pos = static_cast<size_t>(std::max(s[i].pos, 0));
      std::string what = pos < text.size() ? "'" + std::string(1, text[pos]) + "'" : "end of text";
      return LoadError{s[i].line, "invalid YAML: unexpected " + what};
    }
  }
  if (s.size() > 1) {
    return LoadError{s[1].line, "expected one YAML document, found " + std::string(s.size() > 2 ? "more" : "2")};
  }
  return std::nullopt;
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
  if (auto bad = check_text(text)) return make_error(source_name, bad->first, bad->second);
  try {
    if (std::optional<LoadError> bad_docs = check_documents(text)) throw *bad_docs;
    // YAML::Load reads the first document only; check_documents made sure
    // there is exactly one (or none: an empty file is the default policy).
    return load(YAML::Load(std::string(text)));
  } catch (const LoadError& e) {
    return make_error(source_name, e.line, e.message);
  } catch (const YAML::Exception& e) {
    std::string message = "invalid YAML: " + e.msg;
    // yaml-cpp's message for tab indentation ("illegal map value" and the
    // like) does not say why; the offending line does.
    std::string line = line_of(text, e.mark.line);
    size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line[first] == '\t') message += " (tabs cannot indent YAML)";
    return make_error(source_name, e.mark.line, message);
  } catch (const std::exception& e) {
    // Anything else (std::bad_alloc on absurd input) is still the input's
    // fault as far as the caller can tell; report it rather than crash.
    return make_error(source_name, -1, std::string("cannot load policy: ") + e.what());
  }
}

Status check_yaml_text(std::string_view text, std::string_view source_name) {
  if (auto bad = check_text(text)) return make_error(source_name, bad->first, bad->second);
  try {
    if (std::optional<LoadError> bad_docs = check_documents(text)) return make_error(source_name, bad_docs->line, bad_docs->message);
  } catch (const YAML::Exception& e) {
    return make_error(source_name, e.mark.line, "invalid YAML: " + e.msg);
  }
  return {};
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
