#include "policies/yaml_doc.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "policies/utf8.h"

namespace railyard::yaml {

namespace {

// The first problem found. Thrown by Value::fail inside the loader (yaml-cpp
// reports through exceptions too, so one catch site handles both) and turned
// into an Error by read_yaml_document; it never escapes this file.
struct Failure {
  int line;  // 0-based as in YAML::Mark; negative when unknown
  std::string message;
};

std::string where(const std::string& path) { return path.empty() ? "at top level" : "under '" + path + "'"; }

std::string join_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// "a, b, c"; with `last` "a, b or c".
std::string join(std::initializer_list<std::string_view> words, std::string_view last = ", ") {
  std::string out;
  size_t i = 0;
  for (std::string_view w : words) {
    if (i > 0) out += i + 1 == words.size() ? last : ", ";
    out += w;
    ++i;
  }
  return out;
}

// YAML text must be Unicode; yaml-cpp accepts stray bytes and control
// characters as scalar content, so binary garbage is refused up front with a
// line number instead of surfacing later as a baffling name.
std::optional<Failure> check_text(std::string_view text) {
  int line = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') ++line;
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "control character 0x%02x (YAML files are text)", c);
      return Failure{line, buf};
    }
    const size_t len = utf8_sequence(text.substr(i));
    if (len == 0) return Failure{line, "invalid UTF-8 (YAML files are UTF-8 text)"};
    i += len;
  }
  return std::nullopt;
}

// One pass over the parser's events, before any node is built: where each
// document starts, and the first key repeated within one mapping. Events see
// an alias once, unexpanded, so the pass is linear in the text.
class StructureCheck : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  std::optional<Failure> duplicate;

  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    frames_.clear();
    anchored_scalars_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    start_node(mark, nullptr);
    end_node();
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchored_scalars_.find(anchor);
    start_node(mark, it == anchored_scalars_.end() ? nullptr : &it->second);
    end_node();
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (anchor != YAML::NullAnchor) anchored_scalars_[anchor] = value;
    start_node(mark, &value);
    end_node();
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    push(mark, false);
  }
  void OnSequenceEnd() override { pop(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    push(mark, true);
  }
  void OnMapEnd() override { pop(); }

 private:
  struct Frame {
    bool is_map;
    std::string path;
    bool at_key = true;  // a mapping: the next node is a key (else its value)
    std::string key;     // the key whose value comes next; "?" if not a scalar
    std::set<std::string> keys;
    size_t index = 0;    // a list: the next item's index
  };

  // The path of the node now starting (for a key: unused).
  std::string child_path() const {
    if (frames_.empty()) return "";
    const Frame& f = frames_.back();
    return f.is_map ? join_path(f.path, f.key) : item_path(f.path, f.index);
  }

  // A node starts; a scalar key is checked against its mapping's keys.
  // Complex keys (lists, mappings) are not compared: the loaders refuse them.
  void start_node(const YAML::Mark& mark, const std::string* scalar) {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (!f.is_map || !f.at_key) return;
    f.key = scalar != nullptr ? *scalar : "?";
    if (scalar != nullptr && !f.keys.insert(*scalar).second && !duplicate) {
      duplicate = Failure{mark.line, "duplicate key '" + *scalar + "' " + where(f.path)};
    }
  }

  // A node ended: a mapping alternates key and value, a list counts items.
  void end_node() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (f.is_map) {
      f.at_key = !f.at_key;
    } else {
      ++f.index;
    }
  }

  void push(const YAML::Mark& mark, bool is_map) {
    std::string path = child_path();
    start_node(mark, nullptr);
    frames_.push_back(Frame{is_map, std::move(path)});
  }

  void pop() {
    if (!frames_.empty()) frames_.pop_back();
    end_node();
  }

  std::vector<Frame> frames_;
  std::map<YAML::anchor_t, std::string> anchored_scalars_;
};

// Refuses a stream of more than one document, a repeated key, and text on
// which yaml-cpp 0.7 makes no progress. Its parser leaves a stray top-level
// token such as ',' unconsumed and reports an empty document at the same
// place forever (jbeder/yaml-cpp#1040, fixed upstream by #1318/#1319 after
// 0.7), so YAML::LoadAll never returns and grows without bound. Here at most
// three documents are pulled, and two starting at the same offset mean
// "stuck". Syntax errors come out as YAML::Exception.
std::optional<Failure> check_structure(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  StructureCheck check;
  for (int i = 0; i < 3 && parser.HandleNextDocument(check); ++i) {
  }
  const std::vector<YAML::Mark>& s = check.starts;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i].pos == s[i + 1].pos) {
      const size_t pos = static_cast<size_t>(std::max(s[i].pos, 0));
      std::string what = "end of text";
      if (pos < text.size()) what = std::string{'\'', text[pos], '\''};
      return Failure{s[i].line, "invalid YAML: unexpected " + what};
    }
  }
  if (s.size() > 1) {
    return Failure{s[1].line, "expected one YAML document, found " + std::string(s.size() > 2 ? "more" : "2")};
  }
  return check.duplicate;
}

std::string line_of(std::string_view text, int line) {
  size_t start = 0;
  for (int l = 0; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > text.size()) return {};
  const size_t end = text.find('\n', start);
  return std::string(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

Error located(std::string_view source, int line, const std::string& message) {
  std::string out(source);
  if (line >= 0) {
    out += ':';
    out += std::to_string(line + 1);
  }
  out += ": ";
  out += message;
  return Error{std::move(out)};
}

// Quoted scalars are strings in YAML; numbers and booleans must be plain.
bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

}  // namespace

Value::Value(YAML::Node node, std::string path, std::string_view root_name)
    : node_(std::move(node)), path_(std::move(path)), root_name_(root_name), line_(node_.Mark().line) {}

int Value::line() const { return line_ + 1; }

std::string Value::type_name() const {
  switch (node_.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Scalar: return "a scalar '" + node_.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "?";
}

std::string Value::quoted_path() const { return path_.empty() ? std::string(root_name_) : "'" + path_ + "'"; }

void Value::fail(std::string message) const { throw Failure{line_, std::move(message)}; }

std::string Value::string() const {
  if (!is_scalar()) fail(quoted_path() + " must be a string, got " + type_name());
  // yaml-cpp decodes the escapes \N and \_ to one raw byte (0x85, 0xA0), not
  // to UTF-8: such a string is refused, so that what loads can be written
  // back and read again unchanged.
  for (std::string_view rest = node_.Scalar(); !rest.empty();) {
    const size_t len = utf8_sequence(rest);
    if (len == 0) {
      fail(quoted_path() + " is not valid UTF-8 (the YAML escapes \\N and \\_ give raw bytes here: "
                           "write the character itself)");
    }
    rest.remove_prefix(len);
  }
  return node_.Scalar();
}

bool Value::boolean() const {
  if (is_scalar() && is_plain(node_)) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail(quoted_path() + " must be true or false, got " + type_name());
}

// Written out rather than via YAML::as<int> so that "0x10", "1e3", "+3" and
// quoted numbers are all refused.
uint64_t Value::unsigned_in(uint64_t lo, uint64_t hi, std::string_view what) const {
  if (!is_scalar() || !is_plain(node_)) fail(quoted_path() + " must be an integer, got " + type_name());
  const std::string& s = node_.Scalar();
  const bool digits_only = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only) fail(quoted_path() + " must be an integer, got " + type_name());
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    fail(quoted_path() + ": " + std::string(what) + " " + s + " is outside " + std::to_string(lo) + ".." +
         std::to_string(hi));
  }
  return v;
}

std::string Value::one_of(std::initializer_list<std::string_view> choices) const {
  if (is_scalar()) {
    const std::string& s = node_.Scalar();
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
  }
  fail(quoted_path() + " must be " + join(choices, " or ") + ", got " + type_name());
}

std::vector<Value> Value::items(IfNull if_null) const {
  std::vector<Value> out;
  if (is_null() && if_null == IfNull::kEmpty) return out;
  if (!is_list()) fail(quoted_path() + " must be a list, got " + type_name());
  out.reserve(node_.size());
  for (const YAML::Node& item : node_) out.emplace_back(item, item_path(path_, out.size()), root_name_);
  return out;
}

std::vector<std::string> Value::strings(IfNull if_null) const {
  std::vector<std::string> out;
  for (const Value& item : items(if_null)) out.push_back(item.string());
  return out;
}

Map Value::map(std::initializer_list<std::string_view> allowed, IfNull if_null) const {
  Map out(*this);
  if (is_null() && if_null == IfNull::kEmpty) return out;
  if (!is_map()) fail(quoted_path() + " must be a mapping, got " + type_name());
  for (const auto& entry : node_) {
    const Value key(entry.first, path_, root_name_);
    if (!key.is_scalar()) key.fail("a key " + where(path_) + " must be a plain name, got " + key.type_name());
    const std::string& k = key.node().Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      key.fail("unknown key '" + k + "' " + where(path_) + " (expected " + join(allowed) + ")");
    }
    Value value(entry.second, join_path(path_, k), root_name_);
    if (value.is_null()) value.line_ = key.line_;
    out.entries_.emplace_back(k, std::move(value));
  }
  return out;
}

const Value* Map::find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Value& Map::require(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) self_.fail(self_.quoted_path() + " is missing '" + std::string(key) + "'");
  return *v;
}

Status read_yaml_document(std::string_view text, std::string_view source_name, std::string_view root_name,
                          const std::function<void(const Value& root)>& load) {
  if (std::optional<Failure> bad = check_text(text)) return located(source_name, bad->line, bad->message);
  try {
    if (std::optional<Failure> bad = check_structure(text)) return located(source_name, bad->line, bad->message);
    // YAML::Load reads the first document only; check_structure made sure
    // there is exactly one (or none: an empty file is a null root).
    load(Value(YAML::Load(std::string(text)), "", root_name));
  } catch (const Failure& e) {
    return located(source_name, e.line, e.message);
  } catch (const YAML::Exception& e) {
    std::string message = "invalid YAML: " + e.msg;
    // yaml-cpp's message for tab indentation ("illegal map value" and the
    // like) does not say why; the offending line does.
    const std::string line = line_of(text, e.mark.line);
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line[first] == '\t') message += " (tabs cannot indent YAML)";
    return located(source_name, e.mark.line, message);
  } catch (const std::exception& e) {
    // Anything else (std::bad_alloc on absurd input) is still the input's
    // fault as far as the caller can tell: reported rather than a crash.
    return located(source_name, -1, "cannot read " + std::string(root_name) + ": " + e.what());
  }
  return {};
}

}  // namespace railyard::yaml
