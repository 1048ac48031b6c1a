// Request parsing and response building shared by the API's handlers:
// strict JSON bodies (unknown fields refused), typed fields, query flags. What
// they refuse they throw as a controller::Failure (kind + message), which
// Api::handle answers through status_codes.h.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "api/endpoints.h"
#include "api/http_types.h"
#include "api/schema.h"
#include "controller/controller.h"

namespace railyard::api {

HttpResponse json_response(int status, const nlohmann::json& body);
HttpResponse text_response(const std::string& text);
HttpResponse error_response(int status, const std::string& message);

// The body as a JSON object with only the schema's fields; an empty body is
// {} when the schema is optional.
nlohmann::json parse_object(const std::string& body, const Schema& schema);
// A string field: at most max_len bytes, clean UTF-8 (no control characters).
std::string get_string(const nlohmann::json& j, const char* key, bool required, size_t max_len = 1024);
// A required identifier (job id, event id): 1..max_len visible ASCII
// characters, no blanks, so it can be named in a URL, a log and a shell.
std::string get_id(const nlohmann::json& j, const char* key, size_t max_len);
bool valid_id(std::string_view id, size_t max_len);
uint32_t get_port(const nlohmann::json& j, bool required);
bool query_flag(const HttpRequest& r, const char* name);
int64_t query_int(const HttpRequest& r, const char* name, int64_t fallback, int64_t lo, int64_t hi);
void check_query(const HttpRequest& r, const Endpoint& e);

// The actor of a change whose success is answered with `done_status`: the
// audit record written with the change carries it.
controller::Actor replying(const controller::Actor& actor, int done_status);

// The current view; throws unavailable when there is none yet.
std::shared_ptr<const controller::FabricView> need_view(controller::Controller& c);
// A controller outcome: refused as {"error": {...body}} (status_codes.h),
// done as body + message with `done_status`.
HttpResponse outcome_response(const controller::Outcome& o, nlohmann::json body, int done_status);

}  // namespace railyard::api
