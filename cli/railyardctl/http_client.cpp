#include "cli/railyardctl/http_client.h"

#include "api/http_exchange/http_exchange.h"

// Before Asio: Boost 1.74's awaitable.hpp uses std::exchange without including it.
#include <utility>

#include <boost/beast/http.hpp>
#include <cstdio>

namespace railyard::ctl {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr uint64_t kMaxReplyBytes = 256ull << 20;  // a 16k-CA fabric's links list is ~10 MB

}  // namespace

HttpClient::HttpClient(const std::string& base_url, std::string token, std::chrono::milliseconds timeout)
    : base_url_(base_url), token_(std::move(token)), timeout_(timeout) {
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = base_url;
  if (rest.starts_with("https://")) {
    throw UrlError("'" + base_url + "': https is not supported; reach railyardd over http on loopback or a tunnel");
  }
  if (!rest.starts_with(kScheme)) throw UrlError("'" + base_url + "' is not an http:// URL");
  rest.remove_prefix(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    prefix_ = std::string(rest.substr(slash));
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  }
  if (authority.find('@') != std::string_view::npos) {
    throw UrlError("'" + base_url + "': credentials in the URL are not supported; use a token");
  }
  port_ = "80";
  if (authority.starts_with("[")) {  // [v6]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) throw UrlError("'" + base_url + "': unclosed '[' in the host");
    host_ = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (after.starts_with(":"))
      port_ = std::string(after.substr(1));
    else if (!after.empty())
      throw UrlError("'" + base_url + "': junk after the host");
  } else {
    const size_t colon = authority.rfind(':');
    host_ = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_ = std::string(authority.substr(colon + 1));
  }
  if (host_.empty()) throw UrlError("'" + base_url + "' names no host");
  if (port_.empty() || port_.find_first_not_of("0123456789") != std::string::npos || port_.size() > 5 ||
      std::stoul(port_) == 0 || std::stoul(port_) > 65535) {
    throw UrlError("'" + base_url + "': the port must be a number 1..65535");
  }
}

HttpReply HttpClient::request(std::string_view method, const std::string& target, const std::string& body,
                              const std::string& idempotency_key) const {
  http::request<http::string_body> req;
  req.method_string(boost::beast::string_view(method.data(), method.size()));
  req.target(prefix_ + target);
  req.version(11);
  req.set(http::field::host, host_.find(':') != std::string::npos ? "[" + host_ + "]:" + port_ : host_ + ":" + port_);
  req.set(http::field::user_agent, "railyardctl/0.1");
  req.set(http::field::accept, "application/json, text/plain");
  req.keep_alive(false);
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!idempotency_key.empty()) req.set("Idempotency-Key", idempotency_key);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();

  const http_exchange::Outcome got = http_exchange::exchange(host_, port_, req, timeout_, kMaxReplyBytes);
  const std::string where = std::string(method) + " " + base_url_ + target;
  if (got.timed_out) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(timeout_.count()) / 1000.0);
    throw TransportError(where + ": no answer within " + secs + " s (--timeout)");
  }
  if (!got.ok) throw TransportError(where + ": " + got.stage + ": " + got.error);

  const http::response<http::string_body>& res = got.response;
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.body = res.body();
  if (auto it = res.find(http::field::content_type); it != res.end()) reply.content_type = std::string(it->value());
  if (auto it = res.find(http::field::retry_after); it != res.end()) reply.retry_after = std::string(it->value());
  if (auto it = res.find("X-Railyard-Leader"); it != res.end()) reply.leader = std::string(it->value());
  return reply;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace railyard::ctl
