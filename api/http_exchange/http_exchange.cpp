#include "api/http_exchange/http_exchange.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

namespace railyard::http_exchange {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

Outcome exchange(const std::string& host, const std::string& port, const Request& request,
                 std::chrono::milliseconds timeout, uint64_t body_limit) {
  // Asynchronous operations under one run_for(): the deadline covers every step.
  asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_limit);
  Outcome out;
  beast::error_code failure;
  bool done = false;
  auto fail = [&](beast::error_code ec, const char* what) {
    failure = ec;
    out.stage = what;
  };
  resolver.async_resolve(host, port, [&](beast::error_code ec, tcp::resolver::results_type results) {
    if (ec) return fail(ec, "resolve");
    stream.async_connect(results, [&](beast::error_code ec, const tcp::endpoint&) {
      if (ec) return fail(ec, "connect");
      http::async_write(stream, request, [&](beast::error_code ec, size_t) {
        if (ec) return fail(ec, "send");
        http::async_read(stream, buffer, parser, [&](beast::error_code ec, size_t) {
          if (ec) return fail(ec, "receive");
          done = true;
        });
      });
    });
  });
  io.run_for(timeout);
  if (failure) {
    out.error = failure.message();
    return out;
  }
  if (!done) {
    out.timed_out = true;
    return out;
  }
  out.ok = true;
  out.response = parser.release();
  return out;
}

}  // namespace railyard::http_exchange
