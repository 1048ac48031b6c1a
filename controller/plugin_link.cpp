#include "controller/plugin_link.h"

#include <unistd.h>

namespace railyard::controller {

namespace asio = boost::asio;
using stream = asio::local::stream_protocol;

namespace {
constexpr size_t kMaxLine = 64u << 20;  // a 16k-CA snapshot is ~9 MB
}

struct PluginLink::Session {
  explicit Session(stream::socket s) : socket(std::move(s)), buffer(kMaxLine) {}
  stream::socket socket;
  asio::streambuf buffer;
  std::deque<std::string> outbox;  // guarded by PluginLink::mu_
  bool writing = false;
  bool closed = false;
};

PluginLink::PluginLink(asio::io_context& io, std::string path, LineHandler on_line, ConnectionHandler on_connection)
    : io_(io), path_(std::move(path)), on_line_(std::move(on_line)), on_connection_(std::move(on_connection)),
      acceptor_(io) {}

PluginLink::~PluginLink() { stop(); }

Status PluginLink::start() {
  boost::system::error_code ec;
  ::unlink(path_.c_str());
  acceptor_.open(stream(), ec);
  if (!ec) acceptor_.bind(stream::endpoint(path_), ec);
  if (!ec) acceptor_.listen(4, ec);
  if (ec) return Error{path_ + ": cannot listen for the plugin: " + ec.message()};
  accept();
  return {};
}

void PluginLink::stop() {
  boost::system::error_code ec;
  if (acceptor_.is_open()) {
    acceptor_.close(ec);
    ::unlink(path_.c_str());
  }
  std::lock_guard lock(mu_);
  if (current_) {
    current_->closed = true;
    current_->socket.close(ec);
    current_.reset();
  }
}

void PluginLink::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, stream::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      auto session = std::make_shared<Session>(std::move(socket));
      {
        std::lock_guard lock(mu_);
        if (current_) {
          boost::system::error_code ignored;
          current_->closed = true;
          current_->socket.close(ignored);
        }
        current_ = session;
      }
      on_connection_(true);
      read(session);
    }
    accept();
  });
}

void PluginLink::read(std::shared_ptr<Session> s) {
  asio::async_read_until(s->socket, s->buffer, '\n', [this, s](boost::system::error_code ec, size_t n) {
    if (ec) {
      bool was_current = false;
      {
        std::lock_guard lock(mu_);
        if (current_ == s) {
          current_.reset();
          was_current = true;
        }
        s->closed = true;
      }
      if (was_current) on_connection_(false);
      return;
    }
    std::string line(asio::buffers_begin(s->buffer.data()), asio::buffers_begin(s->buffer.data()) + n - 1);
    s->buffer.consume(n);
    try {
      on_line_(line);
    } catch (...) {
      // A bad line never ends the session; the handler logs what it can.
    }
    read(s);
  });
}

bool PluginLink::send(const std::string& line) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard lock(mu_);
    s = current_;
    if (!s || s->closed) return false;
    s->outbox.push_back(line + "\n");
    if (s->writing) return true;
    s->writing = true;
  }
  asio::post(io_, [this, s] { write_next(s); });
  return true;
}

void PluginLink::write_next(std::shared_ptr<Session> s) {
  std::string* front = nullptr;
  {
    std::lock_guard lock(mu_);
    if (s->outbox.empty() || s->closed) {
      s->writing = false;
      return;
    }
    front = &s->outbox.front();
  }
  asio::async_write(s->socket, asio::buffer(*front), [this, s](boost::system::error_code ec, size_t) {
    {
      std::lock_guard lock(mu_);
      s->outbox.pop_front();
      if (ec) {
        s->closed = true;
        s->writing = false;
        return;
      }
    }
    write_next(s);
  });
}

}  // namespace railyard::controller
