// YAML documents for railyard's loaders (the policy, railyardd's config, the
// plugin's config): one way to parse them, one set of checks and one wording,
// so every loader refuses the same mistakes with the same words.
//
// read_yaml_document parses the text with yaml-cpp and refuses, before any
// loader sees a node:
//   - text that is not UTF-8 or holds control characters (tab, CR, LF aside);
//   - more than one document, and text on which yaml-cpp 0.7 would loop
//     forever (a stray top-level ',': see check_structure in the .cpp);
//   - a key repeated in one mapping, at any depth (yaml-cpp keeps both and a
//     lookup sees the first: the second would silently do nothing).
// It then hands the root to the loader as a Value, whose getters refuse wrong
// types, values out of range and unknown keys ("'PATH' must be ..., got ...").
//
// Every error is "FILE:LINE: what is wrong", LINE 1-based (yaml-cpp's Mark),
// or "FILE: what is wrong" when yaml-cpp gives no line. The first error found
// is reported; nothing throws out of read_yaml_document.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "routing/result.h"  // header-only Result/Error, shared by every layer

namespace railyard::yaml {

class Map;

// What a getter does with an explicit null (`key:` or `key: ~`).
enum class IfNull : uint8_t { kRefuse, kEmpty };

// A node of the document and where it is: its path for messages
// ("drains.links[0].port"; empty for the root) and its line.
class Value {
 public:
  // `root_name` names the root in messages ("the policy"); it must outlive
  // the Value (read_yaml_document's argument does).
  Value(YAML::Node node, std::string path, std::string_view root_name);

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  int line() const;  // 1-based; 0 when yaml-cpp has none

  bool is_null() const { return node_.IsNull(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_map() const { return node_.IsMap(); }
  // "null", "a scalar 'x'", "a list", "a mapping": for "..., got <type_name>".
  std::string type_name() const;
  // "'drains.links[0]'", or the root's name.
  std::string quoted_path() const;

  // Ends the load with "FILE:LINE: message", LINE this value's. Only inside
  // read_yaml_document's `load` (it is thrown to there).
  [[noreturn]] void fail(std::string message) const;

  // A scalar, quoted or plain, that is valid UTF-8.
  std::string string() const;
  // Plain true or false (True, TRUE, False, FALSE); not yes/no, not quoted.
  bool boolean() const;
  // Plain decimal digits in [lo, hi]; "0x10", "+3", "1e3" and quoted numbers
  // are refused. Out of range: "'PATH': <what> N is outside LO..HI".
  uint64_t unsigned_in(uint64_t lo, uint64_t hi, std::string_view what = "value") const;
  // A scalar equal to one of `choices`.
  std::string one_of(std::initializer_list<std::string_view> choices) const;
  // A list; its items' paths are PATH[i].
  std::vector<Value> items(IfNull if_null = IfNull::kRefuse) const;
  // A list of strings.
  std::vector<std::string> strings(IfNull if_null = IfNull::kRefuse) const;
  // A mapping whose keys are plain names, all in `allowed` (else "unknown key
  // 'K' under 'PATH' (expected a, b)"), checked before any value is read.
  Map map(std::initializer_list<std::string_view> allowed, IfNull if_null = IfNull::kRefuse) const;

 private:
  YAML::Node node_;
  std::string path_;
  std::string_view root_name_;
  // 0-based, negative when unknown. An empty value (`key:`) has its key's:
  // yaml-cpp marks it where the next token starts, often the next line.
  int line_;
};

// A checked mapping: its entries in document order, each key once.
class Map {
 public:
  explicit Map(Value self) : self_(std::move(self)) {}

  const Value& self() const { return self_; }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  // The value of `key`, or null when the key is absent.
  const Value* find(std::string_view key) const;
  // The value of `key`; absent: "'PATH' is missing 'KEY'".
  const Value& require(std::string_view key) const;

 private:
  friend class Value;
  Value self_;
  std::vector<std::pair<std::string, Value>> entries_;
};

// Parses `text` (one document; `source_name` labels errors), checks it as
// above and calls load(root). `root_name` names the root in messages ("the
// policy must be a mapping, got a list"). Errors thrown by Value::fail and by
// yaml-cpp come back as the Error.
Status read_yaml_document(std::string_view text, std::string_view source_name, std::string_view root_name,
                          const std::function<void(const Value& root)>& load);

}  // namespace railyard::yaml
