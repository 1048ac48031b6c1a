// HttpServer: HTTP/1.1 over Boost.Beast for the Api. Keep-alive, a header
// limit (16 KiB), a body limit (config: 413 beyond it), a 30 s idle/read
// timeout, one access-log line per request at debug level. Runs on the
// caller's io_context (any number of threads).
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "api/api.h"
#include "routing/result.h"

namespace railyard::api {

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, Api& api, uint64_t max_body_bytes);
  ~HttpServer();

  // Binds and starts accepting; returns the bound port (useful with port 0).
  Result<uint16_t> listen(const std::string& address, uint16_t port);
  void stop();

 private:
  void accept();

  boost::asio::io_context& io_;
  Api& api_;
  uint64_t max_body_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace railyard::api
