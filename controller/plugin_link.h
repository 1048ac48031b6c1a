// PluginLink: the controller's end of the plugin socket (docs/plugin_protocol.md).
// Listens on a Unix stream socket; lines in go to `on_line`; send() writes one
// command line. Runs on the caller's io_context (any number of threads), all
// of it on one strand: accepting, reading, writing, closing and the handlers
// (on_line, on_connection) never run at the same time, and a write is never
// beside another write. send() and stop() may be called from any thread: they
// post their work to the strand.
//
// The socket is a trust boundary: whoever talks on it feeds the controller
// fabric snapshots and routing outcomes. Hence:
//  - The socket file gets an explicit mode, 0600 or 0660 with a group, and is
//    never wider, not even for an instant: it is bound under umask 0177 and
//    only then chmod'ed/chown'ed.
//  - A live socket is never replaced. PATH.lock is flock'ed for the link's
//    lifetime (a second railyardd on the same path fails on it); then what is
//    at PATH is looked at with lstat: a socket that accepts a connection is
//    someone's live socket (refused), one that refuses (ECONNREFUSED) is stale
//    (removed), anything else (file, directory, symlink) is refused and left
//    alone. stop() removes the socket only if it is still the one this link
//    created.
//  - Each peer is checked with SO_PEERCRED: uid 0, the daemon's own uid, or,
//    with a group, a process whose group or supplementary groups hold it.
//    Others are closed at once, logged at warn and counted.
//  - A line is at most `max_line_bytes`; a longer one closes the connection.
// One plugin at a time: a connection becomes *the* plugin's on its first
// complete line and replaces the previous one (a peer that connects and says
// nothing, like another daemon's probe, evicts nobody).
#pragma once

#include <sys/types.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "routing/result.h"

namespace railyard::controller {

// A 16k-CA fabric snapshot is ~9 MB.
inline constexpr size_t kMaxPluginLineBytes = size_t{64} << 20;

struct PluginSocketOptions {
  std::string path;
  uint32_t mode = 0600;  // 0600, or 0660 with `group`
  std::string group;     // a group name; resolved by start(); empty: none
  size_t max_line_bytes = kMaxPluginLineBytes;
};

// The gid of a group name (getgrnam_r), or an error naming it.
Result<gid_t> resolve_group(const std::string& name);

class PluginLink {
 public:
  using LineHandler = std::function<void(const std::string&)>;
  using ConnectionHandler = std::function<void(bool connected)>;
  enum class LogLevel : uint8_t { kDebug, kInfo, kWarn, kError };
  using LogHandler = std::function<void(LogLevel, const std::string&)>;

  PluginLink(boost::asio::io_context& io, PluginSocketOptions options, LineHandler on_line,
             ConnectionHandler on_connection, LogHandler log = {});
  ~PluginLink();
  PluginLink(const PluginLink&) = delete;
  PluginLink& operator=(const PluginLink&) = delete;

  // Takes the lock, checks what is at the path, binds and starts accepting.
  // On error nothing at the path has been touched except a stale socket.
  Status start();
  // Closes every connection; removes the socket file if this link created it
  // and it is still there; releases the lock. From any thread: done on the
  // strand (at once when called on it, or once the io_context has stopped;
  // the destructor finishes it in any case).
  void stop();
  // False when no plugin is connected; else the line is queued for it.
  bool send(const std::string& line);

  // Connections closed because the peer was not allowed (SO_PEERCRED).
  uint64_t peers_refused() const { return peers_refused_.load(); }

 private:
  struct Session;
  struct Created {  // the socket file this link bound
    dev_t dev;
    ino_t ino;
  };
  void accept();
  bool peer_allowed(const Session& s) const;
  void read(std::shared_ptr<Session> s);
  void end_session(const std::shared_ptr<Session>& s, const std::string& why);
  void write_next(std::shared_ptr<Session> s);
  void log(LogLevel level, const std::string& text) const;
  void remove_own_socket();
  void close_all();  // on the strand, or once the io_context has stopped

  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  PluginSocketOptions options_;
  LineHandler on_line_;
  ConnectionHandler on_connection_;
  LogHandler log_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // after accept() failed (EMFILE...)
  int lock_fd_ = -1;
  std::optional<Created> created_;
  std::optional<gid_t> group_gid_;
  uid_t own_uid_;
  std::atomic<uint64_t> peers_refused_{0};
  std::atomic<bool> connected_{false};        // current_ is set (read by send())
  // On the strand only:
  std::shared_ptr<Session> current_;          // the plugin's connection
  std::set<std::shared_ptr<Session>> open_;   // every open connection
};

}  // namespace railyard::controller
