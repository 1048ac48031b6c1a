// PluginLink: the controller's end of the plugin socket (docs/plugin_protocol.md).
// Implemented in controller/plugin_link/: socket.cpp (the Unix socket, start,
// stop), tls.cpp (plugin_listen, the token), plugins.cpp (lines, which
// connection is *the* plugin, what is sent to whom).
// Listens on a Unix stream socket, and/or on TCP with TLS (plugin_listen);
// lines in from *the* plugin go to `on_line`; send() writes one command line
// to it; broadcast_policy() writes the policy to every plugin. Runs on the caller's io_context (any number of threads), all
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
//  - TLS (boost::asio::ssl over OpenSSL, TLS 1.2 at least): the peer has
//    `hello_timeout` to finish the handshake and send its first line, which
//    must be a hello whose `token` equals the configured one (compared in
//    constant time: SHA-256 of both, CRYPTO_memcmp); anything else closes the
//    connection, logged at warn and counted (peers_refused). The token is
//    taken out of the hello before on_line sees it (hellos are stored).
//    TCP keepalive ends connections to hosts that vanished.
//  - At most `max_connections` connections at once, and at most as many TLS
//    connections still without their hello (whose first line is read into a
//    64 KiB buffer, not max_line_bytes): more are closed at once. A stranger
//    can delay plugins by at most hello_timeout, never hold their places.
//
// Several plugins (a master SM and standbys), one of them *the* plugin:
//  - the connection whose hello or latest sm_state says "master" (the one
//    that said it last, if several do);
//  - with no master, today's rule: a connection becomes the plugin's on its
//    first complete line, and replaces the previous one (which is closed if
//    it never said an SM state: an older plugin, a restarted one; kept as a
//    standby otherwise). A peer that connects and says nothing, like another
//    daemon's probe, evicts nobody. When the plugin's connection ends, the
//    master, else the last to have spoken, takes over.
//  - the plugin's lines go to on_line; send() goes to it alone. When another
//    connection takes over, on_line first gets its hello (a new seq baseline)
//    and it is asked for its whole fabric (`send_fabric`): its earlier lines
//    were not read. on_connection(true) says the plugin changed;
//    on_connection(false) that none is left.
//  - the others' hello, sm_state and ack lines are taken here; their other
//    lines are ignored and counted (lines_ignored).
//  - every plugin gets the policy in force (broadcast_policy) after its
//    first line and whenever it changes (only when the YAML differs).
//  - each connection's lines are confirmed once handled: `received` with the
//    count read so far, one for every line read while the last write was out
//    (the plugin sends what was not confirmed again on its next connection).
//    Only the leader confirms.
// Leadership (several railyardd, docs/ha.md): the leader hook is asked at each
// connection's first line; a member that is not the leader answers
// `not_leader` with the leader's plugin address and closes.
// drop_all_not_leader() does that to every connection (on step-down).
#pragma once

#include <sys/types.h>

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <atomic>
#include <chrono>
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
  std::string path;      // the Unix socket; empty: none (then tls_port must be set)
  uint32_t mode = 0600;  // 0600, or 0660 with `group`
  std::string group;     // a group name; resolved by start(); empty: none
  size_t max_line_bytes = kMaxPluginLineBytes;
  // TCP with TLS (fabric.plugin_listen). tls_port 0 with tls_host empty: none;
  // tls_port 0 with a host: any free port (tls_port() says which).
  std::string tls_host;
  uint16_t tls_port = 0;
  std::string tls_cert_file;  // PEM chain
  std::string tls_key_file;   // PEM
  std::string token;          // what a TLS peer's hello must carry (not empty with TLS)
  std::chrono::milliseconds hello_timeout{10000};
  size_t max_connections = 8;
};

// The gid of a group name (getgrnam_r), or an error naming it.
Result<gid_t> resolve_group(const std::string& name);

// The TLS server context of plugin_listen (TLS 1.2 at least): the
// certificate chain and its key, loaded and checked to match; errors name
// the file. start() uses it, and `railyardd config check`.
Result<std::unique_ptr<boost::asio::ssl::context>> make_plugin_tls_context(const std::string& cert_file,
                                                                           const std::string& key_file);

class PluginLink {
 public:
  using LineHandler = std::function<void(const std::string&)>;
  using ConnectionHandler = std::function<void(bool connected)>;
  enum class LogLevel : uint8_t { kDebug, kInfo, kWarn, kError };
  using LogHandler = std::function<void(LogLevel, const std::string&)>;
  // nullopt: this member is the leader (the default); a string: the leader's
  // plugin address (possibly empty: unknown). Called on the link's strand.
  using LeaderHook = std::function<std::optional<std::string>()>;

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
  // The policy in force (canonical YAML) to every plugin, now and to each
  // later one after its first line; nothing when it is the YAML they have.
  // From any thread; a later send() goes out after it.
  void broadcast_policy(const std::string& yaml);
  // From any thread; asked at each connection's first line.
  void set_leader_hook(LeaderHook hook) {
    std::lock_guard lock(leader_mu_);
    leader_hook_ = std::move(hook);
  }
  // Every connection gets `not_leader` naming `leader` and is closed (this
  // member stepped down). From any thread.
  void drop_all_not_leader(const std::string& leader);

  // Connections closed because the peer was not allowed (SO_PEERCRED; a TLS
  // peer without the right token), or beyond max_connections.
  uint64_t peers_refused() const { return peers_refused_.load(); }
  // Lines of plugins other than *the* plugin, not hello/sm_state/ack: ignored.
  uint64_t lines_ignored() const { return lines_ignored_.load(); }
  // The TLS port bound by start() (0: none).
  uint16_t tls_port() const { return tls_port_.load(); }
  // Connections open now (any state).
  size_t connections() const { return connections_.load(); }

 private:
  struct Session;
  struct Created {  // the socket file this link bound
    dev_t dev;
    ino_t ino;
  };
  Status start_unix();
  Status start_tls();
  void accept();
  void accept_tls();
  bool peer_allowed(const Session& s) const;
  void read(std::shared_ptr<Session> s);
  void on_line(const std::shared_ptr<Session>& s, std::string line);
  void end_session(const std::shared_ptr<Session>& s, const std::string& why);
  // Who is *the* plugin after `first_line_of` spoke first (or after a change
  // of state or an end); switches when it is someone else.
  void elect(const std::shared_ptr<Session>& first_line_of);
  void queue(const std::shared_ptr<Session>& s, std::string text);
  std::optional<std::string> confirmation(const std::shared_ptr<Session>& s);
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
  boost::asio::ip::tcp::acceptor tls_acceptor_;
  std::unique_ptr<boost::asio::ssl::context> tls_context_;
  std::mutex leader_mu_;
  LeaderHook leader_hook_;  // guarded by leader_mu_
  boost::asio::steady_timer accept_retry_;  // after accept() failed (EMFILE...)
  int lock_fd_ = -1;
  std::optional<Created> created_;
  std::optional<gid_t> group_gid_;
  uid_t own_uid_;
  std::atomic<uint64_t> peers_refused_{0};
  std::atomic<uint64_t> lines_ignored_{0};
  std::atomic<uint16_t> tls_port_{0};
  std::atomic<size_t> connections_{0};
  std::atomic<bool> connected_{false};        // current_ is set (read by send())
  // On the strand only:
  std::shared_ptr<Session> current_;          // the plugin's connection
  std::set<std::shared_ptr<Session>> open_;   // every open connection
  uint64_t order_ = 0;                        // numbers first lines and "master"s, in order
  std::string policy_yaml_;                   // the last broadcast
  std::string policy_line_;                   // its `policy` line, with '\n'
};

}  // namespace railyard::controller
