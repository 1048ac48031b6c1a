// PluginLink's connections (controller/plugin_link.h), shared by the files
// of its implementation: plugin_link/socket.cpp (the Unix socket and the
// link's life), plugin_link/tls.cpp (the TLS listener and the token),
// plugin_link/plugins.cpp (lines, who is *the* plugin, what is sent).
// Private to them.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "controller/plugin_link.h"

namespace railyard::controller {

namespace asio = boost::asio;
using plugin_stream = asio::local::stream_protocol;
using plugin_tcp = asio::ip::tcp;
using plugin_tls_stream = asio::ssl::stream<plugin_tcp::socket>;

// A hello is a few hundred bytes: what a TLS peer may send before its hello
// is accepted.
inline constexpr size_t kMaxHelloBytes = 64 * 1024;

struct PluginLink::Session {
  Session(plugin_stream::socket s, size_t max_buffer, asio::any_io_executor ex)
      : unix_socket(std::make_unique<plugin_stream::socket>(std::move(s))), buffer(max_buffer), hello_timer(ex) {}
  Session(plugin_tcp::socket s, asio::ssl::context& ctx, size_t max_buffer, asio::any_io_executor ex)
      : tls(std::make_unique<plugin_tls_stream>(std::move(s), ctx)),
        buffer(max_buffer),
        hello_buffer(std::make_unique<asio::streambuf>(kMaxHelloBytes)),
        hello_timer(ex) {}
  std::string who() const {
    if (tls) return "TLS peer " + peer;
    return "pid " + std::to_string(pid) + ", uid " + std::to_string(uid) + ", gid " + std::to_string(gid);
  }
  void close() {
    boost::system::error_code ignored;
    hello_timer.cancel();
    if (tls) {
      tls->lowest_layer().close(ignored);
    } else {
      unix_socket->close(ignored);
    }
  }
  template <class F>
  void with_stream(F&& f) {
    if (tls) {
      f(*tls);
    } else {
      f(*unix_socket);
    }
  }
  std::unique_ptr<plugin_stream::socket> unix_socket;  // one of these two
  std::unique_ptr<plugin_tls_stream> tls;
  asio::streambuf buffer;
  // TLS until the hello is accepted: what a stranger can make us hold.
  std::unique_ptr<asio::streambuf> hello_buffer;
  asio::steady_timer hello_timer;  // TLS: the handshake and a hello with the token, in time
  std::string peer;                // TLS: address:port
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  bool in_group = false;           // the configured group is among its supplementary groups
  // On the link's strand:
  bool authenticated = false;      // Unix: at once (SO_PEERCRED); TLS: a hello with the token
  bool spoke = false;              // has sent a complete line
  uint64_t spoke_order = 0;        // when its first line came
  std::string sm_state;            // from its hello and sm_state lines; empty: never said
  uint64_t master_order = 0;       // when it last said "master"
  std::string hello_line;          // its last hello, without the token
  bool leaving = false;            // told not_leader: closed once written, never elected
  uint64_t lines_read = 0;         // complete lines read (the hello is 1)
  bool confirm_due = false;        // lines_read not yet confirmed with `received`
  std::deque<std::string> outbox;
  bool writing = false;
  bool closed = false;
};

}  // namespace railyard::controller
