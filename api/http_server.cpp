#include "api/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "api/request.h"

namespace railyard::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kTimeout = std::chrono::seconds(30);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Api& api, uint64_t max_body) : stream_(std::move(socket)), api_(api), max_body_(max_body) {
    boost::system::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) peer_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(16 * 1024);
    parser_->body_limit(max_body_);
    stream_.expires_after(kTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof) {
      close();
      return;
    }
    if (ec == http::error::body_limit) {
      respond(error_response(413, "request body larger than " + std::to_string(max_body_) + " bytes"), false, 11);
      return;
    }
    if (ec == http::error::header_limit) {
      respond(error_response(431, "request headers larger than 16 KiB"), false, 11);
      return;
    }
    if (ec) {
      respond(error_response(400, "malformed HTTP request: " + ec.message()), false, 11);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    http::request<http::string_body> req = parser_->release();
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.peer = peer_;
    r.body = std::move(req.body());
    if (auto it = req.find(http::field::authorization); it != req.end()) r.authorization = std::string(it->value());
    HttpResponse out;
    if (!split_target(std::string(req.target()), &r.path, &r.query)) {
      out = error_response(400, "bad percent-escape in the request target");
    } else {
      out = api_.handle(r);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    spdlog::debug("{} {} {} -> {} ({:.1f} ms)", peer_, r.method, r.path, out.status, ms);
    respond(std::move(out), req.keep_alive(), req.version());
  }

  void respond(HttpResponse out, bool keep_alive, unsigned version) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(out.status), version);
    res->set(http::field::server, "railyardd");
    res->set(http::field::content_type, out.content_type);
    for (const auto& [k, v] : out.headers) res->set(k, v);
    res->keep_alive(keep_alive);
    res->body() = std::move(out.body);
    res->prepare_payload();
    stream_.expires_after(kTimeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
      if (ec || !keep_alive) {
        self->close();
        return;
      }
      self->read();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Api& api_;
  uint64_t max_body_;
  std::string peer_;
};

}  // namespace

HttpServer::HttpServer(asio::io_context& io, Api& api, uint64_t max_body_bytes)
    : io_(io), api_(api), max_body_(max_body_bytes), acceptor_(io) {}

HttpServer::~HttpServer() { stop(); }

Result<uint16_t> HttpServer::listen(const std::string& address, uint16_t port) {
  boost::system::error_code ec;
  const asio::ip::address addr = asio::ip::make_address(address, ec);
  if (ec) return Error{"listen address '" + address + "' is not an IP address"};
  const tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error{"cannot listen on " + address + ":" + std::to_string(port) + ": " + ec.message()};
  const uint16_t bound = acceptor_.local_endpoint(ec).port();
  accept();
  return bound;
}

void HttpServer::stop() {
  boost::system::error_code ec;
  if (acceptor_.is_open()) acceptor_.close(ec);
}

void HttpServer::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<Session>(std::move(socket), api_, max_body_)->start();
    accept();
  });
}

}  // namespace railyard::api
