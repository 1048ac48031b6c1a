// PluginLink: the controller's end of the plugin socket (docs/plugin_protocol.md).
// Listens on a Unix stream socket; one plugin at a time (a new connection
// replaces the old one). Lines in go to `on_line`; send() writes one command
// line. Runs on the caller's io_context; send() may be called from any thread.
#pragma once

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "routing/result.h"

namespace railyard::controller {

class PluginLink {
 public:
  using LineHandler = std::function<void(const std::string&)>;
  using ConnectionHandler = std::function<void(bool connected)>;

  PluginLink(boost::asio::io_context& io, std::string path, LineHandler on_line, ConnectionHandler on_connection);
  ~PluginLink();

  // Binds (replacing a stale socket file) and starts accepting.
  Status start();
  void stop();
  // False when no plugin is connected.
  bool send(const std::string& line);

 private:
  struct Session;
  void accept();
  void read(std::shared_ptr<Session> s);
  void write_next(std::shared_ptr<Session> s);

  boost::asio::io_context& io_;
  std::string path_;
  LineHandler on_line_;
  ConnectionHandler on_connection_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::mutex mu_;
  std::shared_ptr<Session> current_;
};

}  // namespace railyard::controller
