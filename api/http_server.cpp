#include "api/http_server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <array>
#include <chrono>

#include "api/request.h"
#include "controller/thread_priority.h"

namespace railyard::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kHeaderLimit = 16 * 1024;
// Descriptors kept for everything but HTTP clients: SQLite (database, WAL,
// shm), the plugin socket, the policy file, logs, accept itself.
constexpr uint64_t kReservedFds = 64;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Api& api, const ServerLimits& limits, std::shared_ptr<asio::thread_pool> mutations)
      : stream_(std::move(socket)), api_(api), stats_(api.http_stats()), limits_(limits),
        mutations_(std::move(mutations)) {
    ++stats_->open;
    boost::system::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) peer_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  // Touches nothing but its own members: a session dropped with a stopped
  // io_context may be destroyed after the server and the Api.
  ~Session() { --stats_->open; }

  void start() { wait_for_request(); }

 private:
  // Between requests a connection may be idle for idle_timeout; the first
  // byte of a request starts its request_timeout.
  void wait_for_request() {
    if (buffer_.size() > 0) {  // a pipelined request is already here
      read_request();
      return;
    }
    stream_.expires_after(limits_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) {
        self->close();
        return;
      }
      self->buffer_.commit(n);
      self->read_request();
    });
  }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(limits_.max_body_bytes);
    stream_.expires_after(limits_.request_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  // What the parser knew of a refused request, for the audit log.
  void refuse(int status, const std::string& message) {
    std::string method, target;
    if (parser_ && parser_->is_header_done()) {
      method = std::string(parser_->get().method_string());
      target = std::string(parser_->get().target());
    }
    api_.refused_before_routing(method, target, status, message);
    respond(error_response(status, message), false, 11);
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof) {
      close();
      return;
    }
    if (ec == http::error::body_limit) {
      refuse(413, "request body larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
      return;
    }
    if (ec == http::error::header_limit) {
      refuse(431, "request headers larger than 16 KiB");
      return;
    }
    if (ec) {
      refuse(400, "malformed HTTP request: " + ec.message());
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    auto req = std::make_shared<http::request<http::string_body>>(parser_->release());
    auto answer = [self = shared_from_this(), req, start] {
      HttpResponse out = answer_request(self->api_, *req, self->peer_);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      spdlog::debug("{} {} -> {} ({:.1f} ms)", self->peer_, std::string(req->method_string()), out.status, ms);
      return out;
    };
    const http::verb method = req->method();
    if (method == http::verb::post || method == http::verb::delete_ || method == http::verb::put ||
        method == http::verb::patch) {
      // Off the io_context: a mutation may wait for routing; readers must not.
      asio::post(*mutations_, [self = shared_from_this(), req, answer]() mutable {
        // Each worker thread lowers its priority once.
        static thread_local const int nice = controller::raise_thread_nice(self->limits_.mutation_nice);
        (void)nice;
        HttpResponse out = answer();
        asio::post(self->stream_.get_executor(), [self, req, out = std::move(out)]() mutable {
          self->respond(std::move(out), req->keep_alive(), req->version());
        });
      });
      return;
    }
    HttpResponse out = answer();
    if (out.events) {
      stream_events(std::move(out));
      return;
    }
    respond(std::move(out), req->keep_alive(), req->version());
  }

  // Server-sent events: the headers, then whatever the source has every
  // kEventPollMs (a keepalive comment after kEventKeepaliveS of silence),
  // until the client goes away or a write takes longer than request_timeout.
  // Nothing waits on an I/O thread: each poll is a timer.
  void stream_events(HttpResponse out) {
    events_ = std::move(out.events);
    event_timer_.emplace(stream_.get_executor());
    std::string head =
        "HTTP/1.1 200 OK\r\nServer: railyardd\r\nContent-Type: " + out.content_type +
        "\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n" + out.body;
    write_events(std::move(head));
    watch_peer();
  }

  // The client sends nothing more on an event stream: a read that ends is
  // the client gone (or misbehaving), and the stream closes at once rather
  // than at its next write.
  void watch_peer() {
    stream_.socket().async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        self->close();
        return;
      }
      self->watch_peer();
    });
  }

  void write_events(std::string text) {
    auto data = std::make_shared<std::string>(std::move(text));
    last_event_write_ = std::chrono::steady_clock::now();
    stream_.expires_after(limits_.request_timeout);
    asio::async_write(stream_, asio::buffer(*data), [self = shared_from_this(), data](beast::error_code ec, size_t) {
      if (ec) {
        self->close();
        return;
      }
      self->stream_.expires_never();
      self->poll_events();
    });
  }

  void poll_events() {
    event_timer_->expires_after(std::chrono::milliseconds(kEventPollMs));
    event_timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->stream_.socket().is_open()) return;
      std::string next;
      try {
        next = self->events_->next();
      } catch (const std::exception& e) {
        spdlog::error("{}: event stream: {}", self->peer_, e.what());
        self->close();
        return;
      }
      if (next.empty() &&
          std::chrono::steady_clock::now() - self->last_event_write_ > std::chrono::seconds(kEventKeepaliveS)) {
        next = ": keepalive\n\n";
      }
      if (next.empty()) {
        self->poll_events();
      } else {
        self->write_events(std::move(next));
      }
    });
  }

  void respond(HttpResponse out, bool keep_alive, unsigned version) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(out.status), version);
    res->set(http::field::server, "railyardd");
    res->set(http::field::content_type, out.content_type);
    for (const auto& [k, v] : out.headers) res->set(k, v);
    res->keep_alive(keep_alive);
    res->body() = std::move(out.body);
    res->prepare_payload();
    stream_.expires_after(limits_.request_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
      if (ec || !keep_alive) {
        self->close();
        return;
      }
      self->wait_for_request();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<EventSource> events_;  // an event stream in progress
  std::optional<asio::steady_timer> event_timer_;
  std::chrono::steady_clock::time_point last_event_write_;
  std::array<char, 512> discard_{};
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Api& api_;
  std::shared_ptr<HttpStats> stats_;
  const ServerLimits limits_;
  std::shared_ptr<asio::thread_pool> mutations_;
  std::string peer_;
};

// A connection over the cap: a 503 that says why, then closed. It is never
// read, and it gets one second to take the answer.
void refuse_connection(tcp::socket socket, Api& api) {
  ++api.http_stats()->refused;
  auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
  auto res = std::make_shared<http::response<http::string_body>>(http::status::service_unavailable, 11);
  res->set(http::field::server, "railyardd");
  res->set(http::field::content_type, "application/json");
  res->set(http::field::retry_after, "1");
  res->keep_alive(false);
  res->body() = error_response(503, "too many connections (limits.max_connections); retry").body;
  res->prepare_payload();
  stream->expires_after(std::chrono::seconds(1));
  http::async_write(*stream, *res, [stream, res](beast::error_code, size_t) {
    beast::error_code ec;
    stream->socket().shutdown(tcp::socket::shutdown_both, ec);
    stream->socket().close(ec);
  });
}

bool out_of_resources(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space || ec == asio::error::no_memory ||
         ec.value() == ENFILE;
}

}  // namespace

ServerLimits ServerLimits::from(const controller::ControllerConfig& c) {
  ServerLimits l;
  l.max_body_bytes = c.max_body_bytes;
  l.max_connections = c.max_connections;
  l.request_timeout = std::chrono::seconds(c.request_timeout_s);
  l.idle_timeout = std::chrono::seconds(c.idle_timeout_s);
  l.mutation_nice = static_cast<int>(c.mutation_nice);
  return l;
}

HttpResponse answer_request(Api& api, const http::request<http::string_body>& req, const std::string& peer) {
  try {
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.peer = peer;
    r.body = req.body();
    if (auto it = req.find(http::field::authorization); it != req.end()) r.authorization = std::string(it->value());
    if (auto it = req.find("Idempotency-Key"); it != req.end()) r.idempotency_key = std::string(it->value());
    if (!split_target(std::string(req.target()), &r.path, &r.query)) {
      return error_response(400, "the request target has a bad percent-escape, a control character or is not UTF-8");
    }
    return api.handle(r);
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", peer, e.what());
    return error_response(500, "internal error");
  } catch (...) {
    spdlog::error("{}: internal error", peer);
    return error_response(500, "internal error");
  }
}

HttpServer::HttpServer(asio::io_context& io, Api& api, ServerLimits limits)
    : io_(io), api_(api), limits_(limits), acceptor_(io), backoff_(io),
      mutations_(std::make_shared<asio::thread_pool>(2)) {}

HttpServer::~HttpServer() {
  stop();
  // Mutations under way finish (they are durable or rolled back whole);
  // their answers go nowhere once the io_context has stopped.
  mutations_->join();
}

Result<uint16_t> HttpServer::listen(const std::string& address, uint16_t port) {
  // Each connection is a descriptor (and a refused one briefly too): keep the
  // cap where accept() cannot run the process out of them.
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    const uint64_t room = nofile.rlim_cur > 2 * kReservedFds ? (nofile.rlim_cur - kReservedFds) / 2 : 4;
    if (limits_.max_connections > room) {
      spdlog::warn("limits.max_connections {} lowered to {}: the descriptor limit (ulimit -n) is {}",
                   limits_.max_connections, room, nofile.rlim_cur);
      limits_.max_connections = static_cast<uint32_t>(room);
    }
  }
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
  backoff_.cancel();
  if (acceptor_.is_open()) acceptor_.close(ec);
}

void HttpServer::accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (out_of_resources(ec)) {
      // Accepting again at once would fail again at once: the listen queue
      // keeps the clients while the process waits for a descriptor.
      const auto now = std::chrono::steady_clock::now();
      if (now - last_resource_warning_ > std::chrono::seconds(10)) {
        spdlog::warn("accept: {} ({} HTTP connections open); pausing accept for 100 ms", ec.message(),
                     api_.http_stats()->open.load());
        last_resource_warning_ = now;
      }
      backoff_.expires_after(std::chrono::milliseconds(100));
      backoff_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    if (!ec) {
      if (api_.http_stats()->open.load() >= limits_.max_connections) {
        refuse_connection(std::move(socket), api_);
      } else {
        std::make_shared<Session>(std::move(socket), api_, limits_, mutations_)->start();
      }
    }
    accept();
  });
}

}  // namespace railyard::api
