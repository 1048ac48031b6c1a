// FieldReader: typed reads of one JSON object's fields for the decoders
// (event_codec.cpp, command_codec.cpp), each failure a DecodeError naming the
// message type and the field's path.
//
// Internal to the codecs: a read that fails throws the DecodeError, and the
// public decode_* functions catch it and return it as a value, so decoders
// read like the encoders (`e.lid = r.uint<uint16_t>("lid")`) and stop at the
// first bad field.
//
// Numbers: unsigned and signed fields take JSON integers within the C++
// type's range (a float or an out-of-range integer is kBadValue); double
// fields take any finite JSON number. Absent and null are the same ("is missing")
// except where a reader says otherwise.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/protocol/decode_error.h"

namespace railyard::protocol {

// "0x" and 1..16 hex digits (either case), or nullopt.
std::optional<uint64_t> parse_hex64(std::string_view text);

class FieldReader {
 public:
  // `object` must outlive the reader. `type` names the message in errors;
  // `path` is the object's own path ("stage_ms"), empty at the top.
  FieldReader(const nlohmann::json& object, std::string_view type, std::string path = {});

  // Present and not null.
  bool has(std::string_view key) const;

  template <class T>
  T uint(std::string_view key) const {
    static_assert(std::numeric_limits<T>::is_integer && !std::numeric_limits<T>::is_signed);
    return static_cast<T>(unsigned_in(key, std::numeric_limits<T>::max()));
  }
  template <class T>
  T sint(std::string_view key) const {
    static_assert(std::numeric_limits<T>::is_integer && std::numeric_limits<T>::is_signed);
    return static_cast<T>(signed_in(key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
  double number(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string string(std::string_view key) const;
  // A string, or "" when the field is null (policy_file: null = no file).
  std::string string_or_null(std::string_view key) const;
  std::vector<std::string> strings(std::string_view key) const;
  // "0x" and 1..16 hex digits, as the plugin writes GUIDs.
  uint64_t guid(std::string_view key) const;
  // A 64-bit digest, written like a GUID (routing/lft_digest.h: "0x" and 16 digits).
  uint64_t digest(std::string_view key) const;
  // The object's keys, in its order.
  std::vector<std::string> keys() const;
  // A nested object.
  FieldReader object(std::string_view key) const;
  // An array of objects, each read by a reader whose path is "key[i]".
  std::vector<FieldReader> objects(std::string_view key) const;

  // The error for `key` (for checks of values the reader cannot know).
  DecodeError bad_value(std::string_view key, std::string reason) const;

 private:
  const nlohmann::json& get(std::string_view key) const;  // throws kMissingField
  DecodeError error(DecodeError::Kind kind, std::string_view key, std::string reason) const;
  uint64_t unsigned_in(std::string_view key, uint64_t max) const;
  int64_t signed_in(std::string_view key, int64_t min, int64_t max) const;

  const nlohmann::json& object_;
  std::string type_;
  std::string path_;
};

}  // namespace railyard::protocol
