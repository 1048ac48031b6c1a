#include "api/request.h"

#include <charconv>

#include "api/status_codes.h"
#include "controller/bounded_json.h"

namespace railyard::api {

using nlohmann::json;
using controller::Failure;

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = controller::safe_dump(body) + "\n";
  return r;
}

HttpResponse text_response(const std::string& text) {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = text;
  return r;
}

json parse_object(const std::string& body, const Schema& schema) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    if (schema.optional) return json::object();
    throw Failure::invalid("a JSON object body is required");
  }
  std::string error;
  json j = controller::parse_bounded_json(body, &error);
  if (j.is_discarded()) throw Failure::invalid("the body is " + error);
  if (!j.is_object()) throw Failure::invalid("the body must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const Field& f : schema.fields) ok = ok || f.name == key;
    if (!ok) {
      std::string list;
      for (const Field& f : schema.fields) list += (list.empty() ? "" : ", ") + std::string(f.name);
      throw Failure::invalid("unknown field '" + key + "' (expected: " + list + ")");
    }
  }
  return j;
}

std::string get_string(const json& j, const char* key, bool required, size_t max_len) {
  if (!j.contains(key)) {
    if (required) throw Failure::invalid(std::string("field '") + key + "' is required");
    return {};
  }
  if (!j[key].is_string()) throw Failure::invalid(std::string("field '") + key + "' must be a string");
  std::string v = j[key].get<std::string>();
  if (v.size() > max_len) {
    throw Failure::invalid(std::string("field '") + key + "' is longer than " + std::to_string(max_len) + " bytes");
  }
  if (!is_clean_utf8(v)) throw Failure::invalid(std::string("field '") + key + "' holds a control character");
  return v;
}

std::string get_id(const json& j, const char* key, size_t max_len) {
  std::string v = get_string(j, key, true, max_len);
  if (!valid_id(v, max_len)) {
    throw Failure::invalid(std::string("field '") + key + "' must be 1.." + std::to_string(max_len) +
                           " printable ASCII characters without blanks");
  }
  return v;
}

bool valid_id(std::string_view id, size_t max_len) {
  if (id.empty() || id.size() > max_len) return false;
  for (const char ch : id) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7F) return false;
  }
  return true;
}

uint32_t get_port(const json& j, bool required) {
  if (!j.contains("port")) {
    if (required) throw Failure::invalid("field 'port' is required for a link or port");
    return 0;
  }
  if (!j["port"].is_number_integer() || j["port"].get<int64_t>() < 1 || j["port"].get<int64_t>() > 254) {
    throw Failure::invalid("field 'port' must be an integer 1..254");
  }
  return static_cast<uint32_t>(j["port"].get<int64_t>());
}

bool query_flag(const HttpRequest& r, const char* name) {
  auto it = r.query.find(name);
  if (it == r.query.end()) return false;
  if (it->second == "true" || it->second == "1" || it->second.empty()) return true;
  if (it->second == "false" || it->second == "0") return false;
  throw Failure::invalid(std::string("query '") + name + "' must be true or false");
}

int64_t query_int(const HttpRequest& r, const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  auto it = r.query.find(name);
  if (it == r.query.end()) return fallback;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || v < lo || v > hi) {
    throw Failure::invalid(std::string("query '") + name + "' must be an integer in " + std::to_string(lo) + ".." +
                           std::to_string(hi));
  }
  return v;
}

void check_query(const HttpRequest& r, const Endpoint& e) {
  for (const auto& [key, value] : r.query) {
    bool ok = false;
    for (const QueryParam& q : e.query) ok = ok || q.name == key;
    if (!ok) throw Failure::invalid("unknown query parameter '" + key + "'");
  }
}

controller::Actor replying(const controller::Actor& actor, int done_status) {
  controller::Actor a = actor;
  a.reply_code = done_status;
  return a;
}

std::shared_ptr<const controller::FabricView> need_view(controller::Controller& c) {
  auto v = c.view();
  if (!v) throw Failure::unavailable("no fabric yet: waiting for the plugin's first snapshot");
  return v;
}

// The outcome of a controller mutation as a response.
HttpResponse outcome_response(const controller::Outcome& o, json body, int done_status) {
  if (o.failure) return failure_response(*o.failure, body);
  body["message"] = o.message;
  return json_response(done_status, body);
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, {{"error", {{"status", status}, {"message", message}}}});
}

}  // namespace railyard::api
