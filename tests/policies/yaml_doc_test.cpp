// policies/yaml_doc.h: the one reader of the policy, railyardd's config and
// the plugin's config. Every error is "FILE:LINE: what is wrong".
#include "policies/yaml_doc.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace railyard::yaml {
namespace {

// The error of reading `text` with `load`, or "<read>" if it was read.
std::string error_of(std::string_view text, const std::function<void(const Value&)>& load = [](const Value&) {}) {
  Status s = read_yaml_document(text, "t.yaml", "the file", load);
  return s ? "<read>" : s.error().message;
}

TEST(YamlDoc, DuplicateKeysAreRefusedAtAnyDepthWithFileAndLine) {
  bool loaded = false;
  const auto load = [&loaded](const Value&) { loaded = true; };
  EXPECT_EQ(error_of("a: 1\nb: 2\na: 3\n", load), "t.yaml:3: duplicate key 'a' at top level");
  EXPECT_EQ(error_of("a:\n  b: 1\n  b: 1\n", load), "t.yaml:3: duplicate key 'b' under 'a'");
  EXPECT_EQ(error_of("a:\n  b:\n    - {c: 1}\n    - {c: 1, d: 2, c: 3}\n", load),
            "t.yaml:4: duplicate key 'c' under 'a.b[1]'");
  EXPECT_EQ(error_of("a: [[x, {k: 1}], [y, {k: 1,\n  k: 2}]]\n", load), "t.yaml:2: duplicate key 'k' under 'a[1][1]'");
  // Quoting does not make another key; an alias names its anchor's text.
  EXPECT_EQ(error_of("a: 1\n'a': 2\n", load), "t.yaml:2: duplicate key 'a' at top level");
  EXPECT_EQ(error_of("a: &k x\nx: 1\n*k : 2\n", load), "t.yaml:3: duplicate key 'x' at top level");
  EXPECT_FALSE(loaded) << "a document with a repeated key never reaches its loader";
}

TEST(YamlDoc, TheSameKeyInDifferentMappingsIsNoDuplicate) {
  EXPECT_EQ(error_of("a: {k: 1}\nb: {k: 2}\nl: [{k: 1}, {k: 2}]\nm: {a: {a: 1}}\n"), "<read>");
}

TEST(YamlDoc, EmptyTextIsANullRoot) {
  bool null_root = false;
  EXPECT_EQ(error_of("# nothing\n", [&](const Value& root) { null_root = root.is_null(); }), "<read>");
  EXPECT_TRUE(null_root);
}

TEST(YamlDoc, MapRefusesUnknownKeysNamingTheAllowedOnes) {
  const auto load = [](const Value& root) {
    const Map top = root.map({"name", "size"});
    top.require("name").map({"first", "last"});
  };
  EXPECT_EQ(error_of("name: {first: a}\nsize: 1\ncolour: red\n", load),
            "t.yaml:3: unknown key 'colour' at top level (expected name, size)");
  EXPECT_EQ(error_of("name:\n  first: a\n  middle: b\n", load),
            "t.yaml:3: unknown key 'middle' under 'name' (expected first, last)");
  EXPECT_EQ(error_of("size: 1\n", load), "t.yaml:1: the file is missing 'name'");
  EXPECT_EQ(error_of("- a\n", load), "t.yaml:1: the file must be a mapping, got a list");
  EXPECT_EQ(error_of("? [a]\n: 1\n", load), "t.yaml:1: a key at top level must be a plain name, got a list");
  EXPECT_EQ(error_of("name:\n", load), "t.yaml:1: 'name' must be a mapping, got null");
  EXPECT_EQ(error_of("name: {first: a}\n", load), "<read>");
}

TEST(YamlDoc, MapKeepsDocumentOrderAndFindsKeys) {
  std::string order;
  bool absent = false;
  EXPECT_EQ(error_of("b: 1\na: 2\nc: 3\n", [&](const Value& root) {
              const Map m = root.map({"a", "b", "c", "d"});
              for (const auto& [key, value] : m.entries()) order += key + "=" + value.string() + " ";
              absent = m.find("d") == nullptr;
            }),
            "<read>");
  EXPECT_EQ(order, "b=1 a=2 c=3 ");
  EXPECT_TRUE(absent);
}

TEST(YamlDoc, Strings) {
  std::string got;
  const auto load = [&got](const Value& root) { got = root.map({"s"}).require("s").string(); };
  EXPECT_EQ(error_of("s: 'a: b'\n", load), "<read>");
  EXPECT_EQ(got, "a: b");
  EXPECT_EQ(error_of("s: 42\n", load), "<read>");
  EXPECT_EQ(got, "42") << "a plain scalar is a string too";
  EXPECT_EQ(error_of("s: [a]\n", load), "t.yaml:1: 's' must be a string, got a list");
  EXPECT_EQ(error_of("s:\n", load), "t.yaml:1: 's' must be a string, got null");
  EXPECT_NE(error_of("s: \"\\N\"\n", load).find("t.yaml:1: 's' is not valid UTF-8"), std::string::npos);
}

TEST(YamlDoc, Booleans) {
  bool got = false;
  const auto load = [&got](const Value& root) { got = root.map({"b"}).require("b").boolean(); };
  EXPECT_EQ(error_of("b: TRUE\n", load), "<read>");
  EXPECT_TRUE(got);
  EXPECT_EQ(error_of("b: false\n", load), "<read>");
  EXPECT_FALSE(got);
  EXPECT_EQ(error_of("b: yes\n", load), "t.yaml:1: 'b' must be true or false, got a scalar 'yes'");
  EXPECT_EQ(error_of("b: 'true'\n", load), "t.yaml:1: 'b' must be true or false, got a scalar 'true'");
}

TEST(YamlDoc, UnsignedWithRange) {
  uint64_t got = 0;
  const auto load = [&got](const Value& root) { got = root.map({"n"}).require("n").unsigned_in(2, 300, "count"); };
  EXPECT_EQ(error_of("n: 300\n", load), "<read>");
  EXPECT_EQ(got, 300u);
  EXPECT_EQ(error_of("n: 2\n", load), "<read>");
  EXPECT_EQ(got, 2u);
  EXPECT_EQ(error_of("\nn: 1\n", load), "t.yaml:2: 'n': count 1 is outside 2..300");
  EXPECT_EQ(error_of("n: 301\n", load), "t.yaml:1: 'n': count 301 is outside 2..300");
  EXPECT_EQ(error_of("n: 99999999999999999999999\n", load),
            "t.yaml:1: 'n': count 99999999999999999999999 is outside 2..300");
  for (const char* bad : {"'7'", "0x7", "+7", "-7", "7.0", "1e1", "[7]"}) {
    const std::string error = error_of(std::string("n: ") + bad + "\n", load);
    EXPECT_EQ(error.rfind("t.yaml:1: 'n' must be an integer, got ", 0), 0u) << bad << ": " << error;
  }
}

TEST(YamlDoc, OneOf) {
  std::string got;
  const auto load = [&got](const Value& root) { got = root.map({"m"}).require("m").one_of({"fast", "slow", "off"}); };
  EXPECT_EQ(error_of("m: slow\n", load), "<read>");
  EXPECT_EQ(got, "slow");
  EXPECT_EQ(error_of("m: quick\n", load), "t.yaml:1: 'm' must be fast, slow or off, got a scalar 'quick'");
  EXPECT_EQ(error_of("m: {a: 1}\n", load), "t.yaml:1: 'm' must be fast, slow or off, got a mapping");
}

TEST(YamlDoc, ListsOfStrings) {
  std::vector<std::string> got;
  const auto load = [&got](const Value& root) {
    got = root.map({"l"}, IfNull::kEmpty).require("l").strings(IfNull::kEmpty);
  };
  EXPECT_EQ(error_of("l: [a, 'b c']\n", load), "<read>");
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(error_of("l:\n", load), "<read>");
  EXPECT_TRUE(got.empty()) << "null is an empty list when asked";
  EXPECT_EQ(error_of("l: a\n", load), "t.yaml:1: 'l' must be a list, got a scalar 'a'");
  EXPECT_EQ(error_of("l:\n  - a\n  - [b]\n", load), "t.yaml:3: 'l[1]' must be a string, got a list");
  const auto refuse_null = [](const Value& root) { root.map({"l"}).require("l").strings(); };
  EXPECT_EQ(error_of("l:\n", refuse_null), "t.yaml:1: 'l' must be a list, got null");
}

TEST(YamlDoc, TextAndSyntaxErrorsHaveFileAndLine) {
  EXPECT_EQ(error_of("a: 1\nb: \x01\n"), "t.yaml:2: control character 0x01 (YAML files are text)");
  EXPECT_EQ(error_of("a: '\xc3\x28'\n"), "t.yaml:1: invalid UTF-8 (YAML files are UTF-8 text)");
  EXPECT_EQ(error_of("a: 1\n---\na: 2\n"), "t.yaml:2: expected one YAML document, found 2");
  EXPECT_EQ(error_of("a:\n\tb: 1\n"), "t.yaml:2: invalid YAML: illegal map value (tabs cannot indent YAML)");
  EXPECT_EQ(error_of(","), "t.yaml:1: invalid YAML: unexpected ','");
  EXPECT_EQ(error_of("a: [1\n"), "t.yaml:2: invalid YAML: end of sequence flow not found");
}

TEST(YamlDoc, FailNamesTheLineOfTheValue) {
  EXPECT_EQ(error_of("a: 1\nb:\n  - x\n  - y\n",
                     [](const Value& root) {
                       const Map top = root.map({"a", "b"});
                       const Value& b = top.require("b");
                       b.items().at(1).fail(b.items().at(1).quoted_path() + ": not this one");
                     }),
            "t.yaml:4: 'b[1]': not this one");
}

TEST(YamlDoc, AnErrorWithoutALineNamesTheFile) {
  EXPECT_EQ(error_of("a: 1\n", [](const Value&) { throw std::runtime_error("boom"); }),
            "t.yaml: cannot read the file: boom");
}

}  // namespace
}  // namespace railyard::yaml
