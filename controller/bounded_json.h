// Parsing JSON from outside (REST bodies, plugin socket lines) with bounds.
// nlohmann's parser is iterative but dump() and the destructor of a deep value
// are not, so a line of 100,000 '[' would crash the daemon later, far from the
// parse. Nesting is checked first, in one pass over the bytes, before a value
// is built at all.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace railyard::controller {

// Deeper than any document railyard reads (its deepest is about 5).
inline constexpr size_t kMaxJsonDepth = 32;

// Nesting depth of arrays and objects in `text`, strings skipped; stops
// counting (and returns) once it passes `limit`.
size_t json_depth(std::string_view text, size_t limit);

// The value, or a discarded value with `*error` set: "not valid JSON" or
// "nested deeper than N levels". Invalid UTF-8 is invalid JSON.
nlohmann::json parse_bounded_json(std::string_view text, std::string* error, size_t max_depth = kMaxJsonDepth);

// dump() that never throws: invalid UTF-8 in strings (which cannot come from a
// parsed document, but can from a URL or a file name) is replaced by U+FFFD.
std::string safe_dump(const nlohmann::json& value);

}  // namespace railyard::controller
