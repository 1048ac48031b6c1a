#include "cli/railyardctl/api_session.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>

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

std::chrono::milliseconds timeout_of(const GlobalOptions& o) {
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0) {
    print_error("--timeout must be a positive number of seconds");
    throw CommandExit{Exit::kUsage};
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(o.timeout_s * 1000)));
}

std::vector<HttpClient> make_clients(const GlobalOptions& o, const std::string& token,
                                     std::chrono::milliseconds timeout) {
  std::string text = o.url;
  if (text.empty()) text = env("RAILYARD_URL");
  if (text.empty()) text = kDefaultUrl;
  std::vector<HttpClient> out;
  for (const std::string& url : split_urls(text)) {
    try {
      out.emplace_back(url, token, timeout);
    } catch (const UrlError& e) {
      print_error(std::string("--url ") + e.what());
      throw CommandExit{Exit::kUsage};
    }
  }
  if (out.empty()) {
    print_error("--url names no URL");
    throw CommandExit{Exit::kUsage};
  }
  return out;
}

bool is_read(std::string_view method) { return method == "GET" || method == "HEAD"; }

}  // namespace

std::vector<std::string> split_urls(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(start, comma - start);
    const size_t a = part.find_first_not_of(" \t");
    const size_t b = part.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(part.substr(a, b - a + 1));
    start = comma + 1;
  }
  return out;
}

std::string new_idempotency_key() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key = "ctl-";
  for (int i = 0; i < 8; ++i) {
    const unsigned v = rd();
    for (int k = 0; k < 4; ++k) key += kHex[(v >> (k * 4)) & 15];
  }
  return key;
}

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

ApiSession::ApiSession(const GlobalOptions& options)
    : token_(resolve_token(options)), timeout_(timeout_of(options)), json_(options.json) {
  clients_ = make_clients(options, token_, timeout_);
}

HttpReply ApiSession::send(const HttpClient& client, std::string_view method, const std::string& target,
                           const std::string& body, const std::string& key) const {
  return client.request(method, target, body, key);
}

ApiReply ApiSession::call(std::string_view method, const std::string& target, const json& body) const {
  const std::string text = body.is_null() ? std::string() : body.dump();
  // A mutation carries one Idempotency-Key through every attempt: sent again
  // after a member died before answering, it is not done twice.
  const std::string key = is_read(method) ? std::string() : new_idempotency_key();
  HttpReply http;
  std::optional<HttpReply> last;  // the last answer (a 503 with no leader to follow)
  std::string errors;
  int hops = 0;
  for (size_t n = 0; n < clients_.size() && !http.status; ++n) {
    const size_t at = (preferred_ + n) % clients_.size();
    try {
      HttpReply got = send(clients_[at], method, target, text, key);
      // A member that is not the leader names it: follow (bounded).
      while (!is_read(method) && got.status == 503 && !got.leader.empty() && hops < kMaxLeaderHops) {
        ++hops;
        try {
          got = send(HttpClient(got.leader, token_, timeout_), method, target, text, key);
        } catch (const UrlError&) {
          break;
        } catch (const TransportError& e) {
          errors += std::string(errors.empty() ? "" : "; ") + e.what();
          break;
        }
      }
      if (!is_read(method) && got.status == 503 && n + 1 < clients_.size()) {
        last = std::move(got);
        continue;  // no leader here: the next member may know one
      }
      preferred_ = at;
      http = std::move(got);
    } catch (const TransportError& e) {
      errors += std::string(errors.empty() ? "" : "; ") + e.what();
    }
  }
  if (!http.status && last) http = std::move(*last);
  if (!http.status) {
    print_error(std::string("cannot reach railyardd: ") + errors);
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
