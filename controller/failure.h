// Failure: why the controller did not do what it was asked, as one kind and a
// message for people. The one error type of controller/'s operations; it
// knows nothing of HTTP: api/ maps each kind to a status code in one place
// (api/status_codes.h), railyardctl maps those to exit codes.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace railyard::controller {

enum class FailureKind : uint8_t {
  kInvalid,      // the request is wrong in itself (a port the node does not have, a CA drained as a switch)
  kNotFound,     // it names something that does not exist (a node, a drain, a job)
  kConflict,     // it clashes with the state (already drained, would cut CA pairs, an event id reused, no capacity)
  kRateLimited,  // too many of its kind for now; retry_after_s says when one more fits
  kUnavailable,  // cannot be done now (no fabric yet, the database or the policy file cannot be written)
  kInternal,     // should not happen (routing failed on a fabric it routed before)
};
std::string_view to_string(FailureKind kind);  // "invalid", "not_found", ...

struct Failure {
  FailureKind kind = FailureKind::kInternal;
  std::string message;
  double retry_after_s = 0;  // kRateLimited only

  static Failure invalid(std::string message) { return {FailureKind::kInvalid, std::move(message)}; }
  static Failure not_found(std::string message) { return {FailureKind::kNotFound, std::move(message)}; }
  static Failure conflict(std::string message) { return {FailureKind::kConflict, std::move(message)}; }
  static Failure unavailable(std::string message) { return {FailureKind::kUnavailable, std::move(message)}; }
  static Failure internal(std::string message) { return {FailureKind::kInternal, std::move(message)}; }
  static Failure rate_limited(std::string message, double retry_after_s) {
    return {FailureKind::kRateLimited, std::move(message), retry_after_s};
  }
};

// A value, or the Failure why there is none.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Expected(Failure failure) : v_(std::move(failure)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Failure& failure() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Failure> v_;
};

}  // namespace railyard::controller
