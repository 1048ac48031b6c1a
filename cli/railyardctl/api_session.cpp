#include "cli/railyardctl/api_session.h"

#include <cmath>
#include <cstdlib>
#include <iostream>

#include "controller/token_file.h"

namespace railyard::ctl {

using nlohmann::json;

namespace {

// The same reader as railyardd's (controller/token_file.h), so a file that
// works for one works for the other.
std::string token_from_file(const std::string& path, const char* origin) {
  Result<std::string> token = controller::read_token_file(path);
  if (!token) {
    print_error(token.error().message + " (" + origin + ")");
    throw CommandExit{Exit::kUsage};
  }
  return std::move(*token);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

HttpClient make_client(const GlobalOptions& o) {
  std::string url = o.url;
  if (url.empty()) url = env("RAILYARD_URL");
  if (url.empty()) url = kDefaultUrl;
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0) {
    print_error("--timeout must be a positive number of seconds");
    throw CommandExit{Exit::kUsage};
  }
  try {
    return HttpClient(url, resolve_token(o),
                      std::chrono::milliseconds(static_cast<int64_t>(std::ceil(o.timeout_s * 1000))));
  } catch (const UrlError& e) {
    print_error(std::string("--url ") + e.what());
    throw CommandExit{Exit::kUsage};
  }
}

}  // namespace

std::string api_path(std::initializer_list<std::string_view> segments) {
  std::string path = "/api/v1";
  for (std::string_view s : segments) path += "/" + percent_encode(s);
  return path;
}

void print_error(const std::string& message) { std::cerr << "railyardctl: " << message << "\n"; }

std::string resolve_token(const GlobalOptions& o) {
  if (!o.token.empty()) return o.token;
  if (!o.token_file.empty()) return token_from_file(o.token_file, "--token-file");
  if (std::string t = env("RAILYARD_TOKEN"); !t.empty()) return t;
  if (std::string f = env("RAILYARD_TOKEN_FILE"); !f.empty()) return token_from_file(f, "$RAILYARD_TOKEN_FILE");
  return {};
}

ApiSession::ApiSession(const GlobalOptions& options) : client_(make_client(options)), json_(options.json) {}

ApiReply ApiSession::call(std::string_view method, const std::string& target, const json& body) const {
  HttpReply http;
  try {
    http = client_.request(method, target, body.is_null() ? std::string() : body.dump());
  } catch (const TransportError& e) {
    print_error(std::string("cannot reach railyardd: ") + e.what());
    throw CommandExit{Exit::kTransport};
  }
  ApiReply r;
  r.status = http.status;
  r.text = std::move(http.body);
  r.retry_after = std::move(http.retry_after);
  if (http.content_type.starts_with("application/json")) {
    r.body = json::parse(r.text, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
  }
  return r;
}

ApiReply ApiSession::get(const std::string& target) const {
  ApiReply r = call("GET", target);
  if (!r.ok()) fail(r);
  if (r.body.is_null() && r.text.empty()) {
    print_error(std::to_string(r.status) + " empty reply to GET " + target);
    throw CommandExit{Exit::kTransport};
  }
  return r;
}

void ApiSession::fail(const ApiReply& r, bool body_printed) const {
  std::string message;
  if (r.body.is_object() && r.body.contains("error") && r.body["error"].is_object()) {
    message = r.body["error"].value("message", "");
  } else if (r.body.is_object()) {
    message = r.body.dump();  // an answer rather than an error (health's 503)
    if (message.size() > 200) message = message.substr(0, 200) + "...";
  } else {
    // Not railyardd's error shape (a proxy's page?): its first line.
    message = r.text.substr(0, r.text.find('\n'));
    if (message.size() > 200) message = message.substr(0, 200) + "...";
    if (message.empty()) message = "(no message)";
  }
  if (r.status == 429 && !r.retry_after.empty()) message += " (retry after " + r.retry_after + " s)";
  if (json_ && !body_printed && !r.body.is_null()) print_raw(r);
  print_error(std::to_string(r.status) + " " + message);
  const Exit code = exit_for_status(r.status);
  throw CommandExit{code == Exit::kOk ? Exit::kTransport : code};
}

void ApiSession::print_raw(const ApiReply& r) const {
  std::cout << r.text;
  if (!r.text.empty() && r.text.back() != '\n') std::cout << "\n";
  std::cout.flush();
}

}  // namespace railyard::ctl
