// HttpClient: one HTTP/1.1 request per call to railyardd, over plain TCP
// (Boost.Beast), with a bearer token and a deadline covering resolve,
// connect, send and receive. It knows nothing of the API beyond the URL.
//
// Limits: http:// only (put a TLS-terminating proxy in front of railyardd and
// keep railyardctl on loopback, or use a tunnel); a fresh connection per
// request, which is plenty for an operator tool and its polling loops.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace railyard::ctl {

struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // the Retry-After header, if any
  std::string leader;       // X-Railyard-Leader (a member that is not the leader names it), if any
};

// No reply: the address is wrong, the connection failed, or the deadline passed.
struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A base URL that cannot be used ("ftp://...", "https://...", no host).
struct UrlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class HttpClient {
 public:
  // base_url: "http://HOST[:PORT][/PREFIX]"; HOST may be "[v6 address]".
  HttpClient(const std::string& base_url, std::string token, std::chrono::milliseconds timeout);

  // target: the path and query, e.g. "/api/v1/links?state=down" (PREFIX is
  // put in front). A non-empty body is sent as application/json.
  HttpReply request(std::string_view method, const std::string& target, const std::string& body = {},
                    const std::string& idempotency_key = {}) const;

  const std::string& base_url() const { return base_url_; }

 private:
  std::string base_url_;
  std::string host_;
  std::string port_;
  std::string prefix_;
  std::string token_;
  std::chrono::milliseconds timeout_;
};

// Percent-encodes one path segment or query value (all but A-Z a-z 0-9 - . _ ~),
// so that "node001 mlx5_0" or a GUID can go in a URL.
std::string percent_encode(std::string_view text);

}  // namespace railyard::ctl
