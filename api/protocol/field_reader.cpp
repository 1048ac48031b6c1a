#include "api/protocol/field_reader.h"

#include <cmath>

namespace railyard::protocol {

using nlohmann::json;

FieldReader::FieldReader(const json& object, std::string_view type, std::string path)
    : object_(object), type_(type), path_(std::move(path)) {}

DecodeError FieldReader::error(DecodeError::Kind kind, std::string_view key, std::string reason) const {
  return DecodeError{kind, type_, path_.empty() ? std::string(key) : path_ + "." + std::string(key),
                     std::move(reason)};
}

DecodeError FieldReader::bad_value(std::string_view key, std::string reason) const {
  return error(DecodeError::Kind::kBadValue, key, std::move(reason));
}

bool FieldReader::has(std::string_view key) const {
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const json& FieldReader::get(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) throw error(DecodeError::Kind::kMissingField, key, "is missing");
  return *it;
}

uint64_t FieldReader::unsigned_in(std::string_view key, uint64_t max) const {
  const json& v = get(key);
  const std::string range = "must be an integer 0.." + std::to_string(max);
  if (!v.is_number()) throw error(DecodeError::Kind::kWrongType, key, range);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > max) throw bad_value(key, range);
    return u;
  }
  if (v.is_number_integer()) {  // a signed integer: only its non-negative values fit
    const int64_t s = v.get<int64_t>();
    if (s < 0 || static_cast<uint64_t>(s) > max) throw bad_value(key, range);
    return static_cast<uint64_t>(s);
  }
  throw bad_value(key, range);  // a float
}

int64_t FieldReader::signed_in(std::string_view key, int64_t min, int64_t max) const {
  const json& v = get(key);
  const std::string range = "must be an integer " + std::to_string(min) + ".." + std::to_string(max);
  if (!v.is_number()) throw error(DecodeError::Kind::kWrongType, key, range);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) throw bad_value(key, range);
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    if (s < min || s > max) throw bad_value(key, range);
    return s;
  }
  throw bad_value(key, range);
}

double FieldReader::number(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_number()) throw error(DecodeError::Kind::kWrongType, key, "must be a number");
  // 1e400 parses as infinity: no message carries one (and JSON cannot say it).
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw bad_value(key, "must be a finite number");
  return d;
}

bool FieldReader::boolean(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_boolean()) throw error(DecodeError::Kind::kWrongType, key, "must be true or false");
  return v.get<bool>();
}

std::string FieldReader::string(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_string()) throw error(DecodeError::Kind::kWrongType, key, "must be a string");
  return v.get<std::string>();
}

std::string FieldReader::string_or_null(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end()) throw error(DecodeError::Kind::kMissingField, key, "is missing");
  if (it->is_null()) return {};
  if (!it->is_string()) throw error(DecodeError::Kind::kWrongType, key, "must be a string or null");
  return it->get<std::string>();
}

std::vector<std::string> FieldReader::strings(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_array()) throw error(DecodeError::Kind::kWrongType, key, "must be a list of strings");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      throw error(DecodeError::Kind::kWrongType, std::string(key) + "[" + std::to_string(i) + "]",
                  "must be a string");
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::optional<uint64_t> parse_hex64(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  uint64_t g = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    const char c = text[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return std::nullopt;
    g = g << 4 | static_cast<uint64_t>(d);
  }
  return g;
}

uint64_t FieldReader::guid(std::string_view key) const {
  const std::optional<uint64_t> g = parse_hex64(string(key));
  if (!g) throw bad_value(key, "must be a GUID (\"0x\" and 1..16 hex digits)");
  return *g;
}

uint64_t FieldReader::digest(std::string_view key) const {
  const std::optional<uint64_t> d = parse_hex64(string(key));
  if (!d) throw bad_value(key, "must be a digest (\"0x\" and 1..16 hex digits)");
  return *d;
}

std::vector<std::string> FieldReader::keys() const {
  std::vector<std::string> out;
  for (auto it = object_.begin(); it != object_.end(); ++it) out.push_back(it.key());
  return out;
}

FieldReader FieldReader::object(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_object()) throw error(DecodeError::Kind::kWrongType, key, "must be an object");
  return FieldReader(v, type_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

std::vector<FieldReader> FieldReader::objects(std::string_view key) const {
  const json& v = get(key);
  if (!v.is_array()) throw error(DecodeError::Kind::kWrongType, key, "must be a list of objects");
  std::vector<FieldReader> out;
  out.reserve(v.size());
  const std::string base = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = base + "[" + std::to_string(i) + "]";
    if (!v[i].is_object()) throw DecodeError{DecodeError::Kind::kWrongType, type_, at, "must be an object"};
    out.emplace_back(v[i], type_, at);
  }
  return out;
}

}  // namespace railyard::protocol
