// http_exchange: one HTTP/1.1 request and its answer over a fresh TCP
// connection (Connection: close), with one deadline over every step (resolve,
// connect, send, receive), which Beast's synchronous calls would not honour.
// The clients of railyard's own HTTP peers use it: railyardctl (the REST API)
// and railyardd's etcd client (etcd's JSON gateway). Its own library
// (railyard_http_exchange): Boost.Beast, nothing of railyard's.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace railyard::http_exchange {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

struct Outcome {
  bool ok = false;
  bool timed_out = false;  // no answer within the deadline (no other error)
  std::string stage;       // failed: "resolve", "connect", "send" or "receive"
  std::string error;       // failed: the system's message
  Response response;       // ok: the answer (its body at most body_limit bytes)
};

// Sends `request` to host:port and reads the answer within `timeout`.
Outcome exchange(const std::string& host, const std::string& port, const Request& request,
                 std::chrono::milliseconds timeout, uint64_t body_limit);

}  // namespace railyard::http_exchange
