// HttpServer: HTTP/1.1 over Boost.Beast for the Api. Bounded in every way a
// client controls (docs/controller.md "Security"):
//   - connections: at most ServerLimits::max_connections at once (and never
//     more than the file descriptor limit allows); one more is answered 503
//     at once and closed;
//   - time: a connection may sit idle between requests for idle_timeout, and
//     has request_timeout to send one whole request once it started;
//   - size: headers 16 KiB (431), body max_body_bytes (413);
//   - out of descriptors (EMFILE): accepting pauses 100 ms instead of
//     spinning.
// Runs on the caller's io_context (any number of threads). Mutations (POST,
// DELETE) are answered on the server's own worker threads, not the
// io_context's, at ServerLimits::mutation_nice: a drain that routes 16k CAs
// for a second never holds up a GET, not even for the CPU.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "api/api.h"
#include "controller/config.h"
#include "routing/result.h"

namespace railyard::api {

struct ServerLimits {
  uint64_t max_body_bytes = 64 * 1024;
  uint32_t max_connections = 512;
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds idle_timeout{30'000};
  // Nice of the threads that answer mutations (they route and render the
  // documents a change needs before it is acknowledged): readers first.
  int mutation_nice = 0;

  static ServerLimits from(const controller::ControllerConfig& config);
};

// One parsed request -> the Api's answer: splits and decodes the target, takes
// the Authorization header, calls Api::handle. Never throws (an escaped
// exception is a 500). The server calls it for every request; the request
// fuzzer (tests/fuzz/api_request_fuzz.cpp) calls it on whatever Beast parsed.
HttpResponse answer_request(Api& api, const boost::beast::http::request<boost::beast::http::string_body>& request,
                            const std::string& peer);

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, Api& api, ServerLimits limits);
  ~HttpServer();

  // Binds and starts accepting; returns the bound port (useful with port 0).
  // The connection cap is lowered to fit the process's descriptor limit.
  Result<uint16_t> listen(const std::string& address, uint16_t port);
  void stop();
  uint32_t max_connections() const { return limits_.max_connections; }

 private:
  void accept();

  boost::asio::io_context& io_;
  Api& api_;
  ServerLimits limits_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;
  // Where mutations are answered (shared: a session may outlive stop()).
  std::shared_ptr<boost::asio::thread_pool> mutations_;
  std::chrono::steady_clock::time_point last_resource_warning_{};
};

}  // namespace railyard::api
