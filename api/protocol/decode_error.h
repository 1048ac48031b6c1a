// Why a plugin-socket line does not decode, and Decoded<T>: a message or that
// error. Lines come from another process (and, for the controller, across a
// trust boundary): a bad line is a value naming the field, never an assert or
// an exception out of the decoder.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace railyard::protocol {

struct DecodeError {
  enum class Kind : uint8_t {
    kNotJson,       // the line does not parse
    kNotAnObject,   // JSON, but not an object
    kUnknownType,   // a `type` this side does not know: ignored by the reader (forward compatibility)
    kMissingField,  // a field the message always carries is absent (or null where null is not allowed)
    kWrongType,     // a field of another JSON type
    kBadValue,      // the right JSON type, a value outside the message's (a LID > 65535, a status "maybe")
  };
  Kind kind = Kind::kNotJson;
  std::string type;    // the message's type when known ("routing_pass"), else empty
  std::string field;   // the field's path ("stage_ms.route", "unreachable_cas[1].lid"); empty: the line itself
  std::string reason;  // what is wrong with it ("is missing", "must be a string")

  // "routing_pass: stage_ms.route must be a number"; "not JSON"; "unknown type 'dance'".
  std::string message() const;
};

template <class T>
class [[nodiscard]] Decoded {
 public:
  Decoded(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Decoded(DecodeError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const DecodeError& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, DecodeError> v_;
};

}  // namespace railyard::protocol
