#include "controller/plugin_link.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/protocol/command_codec.h"
#include "controller/bounded_json.h"

namespace railyard::controller {

namespace asio = boost::asio;
using stream = asio::local::stream_protocol;
using tcp = asio::ip::tcp;
using tls_stream = asio::ssl::stream<tcp::socket>;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a socket";
}

// Is anyone listening on the socket file at `path`? A connect that succeeds
// (or finds the backlog full) says yes; ECONNREFUSED says the listener is
// gone. Anything else is an error: we cannot tell, so we do not touch it.
Result<bool> socket_is_live(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{"cannot create a socket: " + errno_text(errno)};
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::close(fd);
  if (rc == 0 || err == EAGAIN) return true;
  if (err == ECONNREFUSED) return false;
  return Error{"cannot tell whether the socket " + path + " is in use (" + errno_text(err) + "); not replacing it"};
}

// Removes a stale socket at `path`; refuses a live one and anything that is
// not a socket. Nothing at the path is fine.
Status clear_path(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return Error{path + ": " + errno_text(errno)};
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Error{path + " exists and is " + file_kind(st.st_mode) +
                 ", not a socket: not replacing it (remove it, or set another fabric.plugin_socket)"};
  }
  Result<bool> live = socket_is_live(path);
  if (!live) return live.error();
  if (*live) return Error{"another railyardd is listening on " + path};
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Error{path + ": cannot remove the stale socket: " + errno_text(errno)};
  }
  return {};
}

// Is `want` among the peer's supplementary groups (SO_PEERGROUPS, Linux 4.13)?
bool peer_in_supplementary_group(int fd, gid_t want) {
#ifdef SO_PEERGROUPS
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 2; ++attempt) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      for (gid_t g : groups) {
        if (g == want) return true;
      }
      return false;
    }
    if (errno != ERANGE) return false;
    groups.resize(len / sizeof(gid_t) + 1);
  }
#else
  (void)fd;
  (void)want;
#endif
  return false;
}

// Equal tokens, in time that does not depend on where they differ (nor on
// their lengths: both are hashed first).
bool same_token(const std::string& a, const std::string& b) {
  unsigned char da[SHA256_DIGEST_LENGTH], db[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(a.data()), a.size(), da);
  SHA256(reinterpret_cast<const unsigned char*>(b.data()), b.size(), db);
  return CRYPTO_memcmp(da, db, sizeof da) == 0;
}

// `"type":"<t>"` can only be the structure of a line (inside a JSON string
// the quotes are escaped): a cheap look before parsing a line that may be
// a 9 MB fabric.
bool may_be_type(const std::string& line, std::string_view type) {
  return line.find("\"type\":\"" + std::string(type) + "\"") != std::string::npos;
}

// A hello is a few hundred bytes.
constexpr size_t kMaxHelloBytes = 64 * 1024;

// FNV-1a: the id of a policy line names its YAML (the same on every member).
std::string policy_id(const std::string& yaml) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : yaml) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "policy-%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

Result<gid_t> resolve_group(const std::string& name) {
  long hint = ::sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 16384);
  for (;;) {
    group entry{};
    group* found = nullptr;
    const int rc = ::getgrnam_r(name.c_str(), &entry, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (size_t{1} << 24)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0) return Error{"cannot look up group '" + name + "': " + errno_text(rc)};
    if (found == nullptr) return Error{"group '" + name + "' does not exist"};
    return found->gr_gid;
  }
}

Result<std::unique_ptr<asio::ssl::context>> make_plugin_tls_context(const std::string& cert_file,
                                                                     const std::string& key_file) {
  boost::system::error_code ec;
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                   ec);
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) return Error{"plugin_tls_cert " + cert_file + ": cannot load: " + ec.message()};
  ctx->use_private_key_file(key_file, asio::ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it.
  if (ec && ec.message().find("key values mismatch") == std::string::npos) {
    return Error{"plugin_tls_key " + key_file + ": cannot load: " + ec.message()};
  }
  if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return Error{"plugin_tls_key " + key_file + " does not match plugin_tls_cert " + cert_file};
  }
  return ctx;
}

struct PluginLink::Session {
  Session(stream::socket s, size_t max_buffer, asio::any_io_executor ex)
      : unix_socket(std::make_unique<stream::socket>(std::move(s))), buffer(max_buffer), hello_timer(ex) {}
  Session(tcp::socket s, asio::ssl::context& ctx, size_t max_buffer, asio::any_io_executor ex)
      : tls(std::make_unique<tls_stream>(std::move(s), ctx)),
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
  std::unique_ptr<stream::socket> unix_socket;  // one of these two
  std::unique_ptr<tls_stream> tls;
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
  std::deque<std::string> outbox;
  bool writing = false;
  bool closed = false;
};

PluginLink::PluginLink(asio::io_context& io, PluginSocketOptions options, LineHandler on_line,
                       ConnectionHandler on_connection, LogHandler log)
    : io_(io), strand_(asio::make_strand(io)), options_(std::move(options)), on_line_(std::move(on_line)),
      on_connection_(std::move(on_connection)), log_(std::move(log)), acceptor_(strand_), tls_acceptor_(strand_),
      accept_retry_(strand_), own_uid_(::geteuid()) {}

// The io_context no longer runs this link's handlers (it has stopped, or
// never ran them): whatever stop() left is done here.
PluginLink::~PluginLink() { close_all(); }

void PluginLink::log(LogLevel level, const std::string& text) const {
  if (log_) log_(level, text);
}

Status PluginLink::start() {
  const bool tls = options_.tls_port != 0 || !options_.tls_host.empty();
  if (options_.path.empty() && !tls) return Error{"no plugin socket path"};
  if (!options_.path.empty()) {
    if (Status s = start_unix(); !s) return s;
  }
  if (tls) {
    if (Status s = start_tls(); !s) {
      close_all();
      return s;
    }
  }
  if (acceptor_.is_open()) accept();
  if (tls_acceptor_.is_open()) accept_tls();
  return {};
}

Status PluginLink::start_tls() {
  const std::string where = "plugin_listen " + options_.tls_host + ":" + std::to_string(options_.tls_port);
  if (options_.token.empty()) return Error{where + ": TLS needs a token (plugin_token_file)"};
  if (options_.tls_cert_file.empty() || options_.tls_key_file.empty()) {
    return Error{where + ": TLS needs plugin_tls_cert and plugin_tls_key"};
  }
  Result<std::unique_ptr<asio::ssl::context>> ctx = make_plugin_tls_context(options_.tls_cert_file, options_.tls_key_file);
  if (!ctx) return ctx.error();
  boost::system::error_code ec;
  tls_context_ = std::move(*ctx);
  tcp::resolver resolver(io_);
  const std::string host = options_.tls_host.empty() ? "127.0.0.1" : options_.tls_host;
  auto found = resolver.resolve(host, std::to_string(options_.tls_port), tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return Error{where + ": cannot resolve " + host + ": " + ec.message()};
  const tcp::endpoint endpoint = found.begin()->endpoint();
  tls_acceptor_.open(endpoint.protocol(), ec);
  if (!ec) tls_acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) tls_acceptor_.bind(endpoint, ec);
  if (!ec) tls_acceptor_.listen(16, ec);
  if (ec) {
    boost::system::error_code ignored;
    tls_acceptor_.close(ignored);
    return Error{where + ": cannot listen: " + ec.message()};
  }
  tls_port_ = tls_acceptor_.local_endpoint(ec).port();
  return {};
}

Status PluginLink::start_unix() {
  const std::string& path = options_.path;
  if (acceptor_.is_open() || lock_fd_ >= 0) return Error{path + ": the plugin socket is already open"};
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Error{path + ": a socket path must be shorter than " + std::to_string(sizeof(sockaddr_un{}.sun_path)) +
                 " bytes"};
  }
  if (options_.mode != 0600 && options_.mode != 0660) {
    return Error{path + ": the plugin socket's mode must be 0600 or 0660"};
  }
  group_gid_.reset();
  if (!options_.group.empty()) {
    Result<gid_t> gid = resolve_group(options_.group);
    if (!gid) return Error{"plugin_socket_group: " + gid.error().message};
    group_gid_ = *gid;
  }
  if (options_.mode == 0660 && !group_gid_) return Error{path + ": mode 0660 needs a group (plugin_socket_group)"};

  // 1. The lock, held until stop(): one railyardd per socket path. The lock
  //    file is never removed (removing it would let two daemons lock two
  //    different files of the same name); O_NOFOLLOW: not through a symlink.
  const std::string lock_path = path + ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return Error{lock_path + ": cannot open the lock file: " + errno_text(errno)};
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) return Error{"another railyardd is listening on " + path + " (it holds " + lock_path + ")"};
    return Error{lock_path + ": cannot lock: " + errno_text(err)};
  }
  auto give_up = [this](const std::string& message) -> Status {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    remove_own_socket();
    ::close(lock_fd_);
    lock_fd_ = -1;
    return Error{message};
  };

  // 2. What is at the path: nothing, a stale socket (removed), or refused.
  if (Status s = clear_path(path); !s) return give_up(s.error().message);

  // 3. Bind. The file a bind creates has mode 0777 & ~umask; under 0177 it
  //    is 0600 from the start, so it is never wider than asked. umask is
  //    process-wide: a file another thread creates meanwhile is at worst
  //    created narrower, never wider (railyardd binds before its I/O threads).
  boost::system::error_code ec;
  acceptor_.open(stream(), ec);
  if (ec) return give_up(path + ": cannot create the plugin socket: " + ec.message());
  const mode_t umask_before = ::umask(0177);
  acceptor_.bind(stream::endpoint(path), ec);
  ::umask(umask_before);
  if (ec) return give_up(path + ": cannot bind the plugin socket: " + ec.message());
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return give_up(path + ": the socket vanished after bind: " + errno_text(errno));
  created_ = Created{st.st_dev, st.st_ino};
  if (group_gid_ && ::chown(path.c_str(), static_cast<uid_t>(-1), *group_gid_) != 0) {
    return give_up(path + ": cannot give the socket to group '" + options_.group + "': " + errno_text(errno));
  }
  if (::chmod(path.c_str(), static_cast<mode_t>(options_.mode)) != 0) {
    return give_up(path + ": cannot set the socket's mode: " + errno_text(errno));
  }
  acceptor_.listen(8, ec);
  if (ec) return give_up(path + ": cannot listen on the plugin socket: " + ec.message());
  return {};
}

void PluginLink::remove_own_socket() {
  if (!created_) return;
  // Only the file this link bound: if someone replaced it since, it is theirs.
  struct stat st {};
  if (::lstat(options_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == created_->dev &&
      st.st_ino == created_->ino) {
    ::unlink(options_.path.c_str());
  }
  created_.reset();
}

void PluginLink::stop() {
  if (strand_.running_in_this_thread() || io_.stopped()) {
    close_all();
    return;
  }
  asio::post(strand_, [this] { close_all(); });
}

void PluginLink::close_all() {
  boost::system::error_code ec;
  accept_retry_.cancel();
  if (acceptor_.is_open()) acceptor_.close(ec);
  if (tls_acceptor_.is_open()) tls_acceptor_.close(ec);
  remove_own_socket();
  if (lock_fd_ >= 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  for (const std::shared_ptr<Session>& s : open_) {
    s->closed = true;
    s->close();
  }
  open_.clear();
  connections_ = 0;
  current_.reset();
  connected_ = false;
}

bool PluginLink::peer_allowed(const Session& s) const {
  if (s.uid == 0 || s.uid == own_uid_) return true;
  return group_gid_ && (s.gid == *group_gid_ || s.in_group);
}

void PluginLink::accept() {
  acceptor_.async_accept(strand_, [this](boost::system::error_code ec, stream::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors and the like: try again shortly, not in a busy loop.
      log(LogLevel::kWarn, options_.path + ": accept failed: " + ec.message());
      accept_retry_.expires_after(std::chrono::milliseconds(200));
      accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec && acceptor_.is_open()) accept();
      });
      return;
    }
    auto s = std::make_shared<Session>(std::move(socket), options_.max_line_bytes + 1, strand_);
    const int fd = s->unix_socket->native_handle();
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      ++peers_refused_;
      log(LogLevel::kWarn, options_.path + ": refused a connection: cannot read its credentials (" +
                               errno_text(errno) + ")");
      s->close();
      accept();
      return;
    }
    s->pid = cred.pid;
    s->uid = cred.uid;
    s->gid = cred.gid;
    s->in_group = group_gid_ && peer_in_supplementary_group(fd, *group_gid_);
    if (!peer_allowed(*s)) {
      const uint64_t refused = ++peers_refused_;
      std::string allowed = "uid 0 and uid " + std::to_string(own_uid_);
      if (group_gid_) allowed += " and group " + options_.group + " (gid " + std::to_string(*group_gid_) + ")";
      log(LogLevel::kWarn, options_.path + ": refused a connection from " + s->who() + ": only " + allowed +
                               " may connect (" + std::to_string(refused) + " refused so far)");
      s->close();
      accept();
      return;
    }
    const size_t served = static_cast<size_t>(std::count_if(
        open_.begin(), open_.end(), [](const std::shared_ptr<Session>& o) { return o->authenticated; }));
    if (served >= options_.max_connections) {
      ++peers_refused_;
      log(LogLevel::kWarn, options_.path + ": refused a connection from " + s->who() + ": already " +
                               std::to_string(served) + " connections (the most)");
      s->close();
      accept();
      return;
    }
    log(LogLevel::kInfo, options_.path + ": connection from " + s->who());
    s->authenticated = true;  // SO_PEERCRED said so
    open_.insert(s);
    connections_ = open_.size();
    read(s);
    accept();
  });
}

void PluginLink::accept_tls() {
  tls_acceptor_.async_accept(strand_, [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !tls_acceptor_.is_open()) return;
    const std::string where = "plugin_listen :" + std::to_string(tls_port_.load());
    if (ec) {
      log(LogLevel::kWarn, where + ": accept failed: " + ec.message());
      // Out of descriptors and the like: again shortly, not in a busy loop.
      auto retry = std::make_shared<asio::steady_timer>(strand_, std::chrono::milliseconds(200));
      retry->async_wait([this, retry](boost::system::error_code wait_ec) {
        if (!wait_ec && tls_acceptor_.is_open()) accept_tls();
      });
      return;
    }
    boost::system::error_code ignored;
    const tcp::endpoint remote = socket.remote_endpoint(ignored);
    std::string peer = remote.address().to_string() + ":" + std::to_string(remote.port());
    const size_t waiting = static_cast<size_t>(std::count_if(
        open_.begin(), open_.end(), [](const std::shared_ptr<Session>& o) { return !o->authenticated; }));
    if (waiting >= options_.max_connections) {
      ++peers_refused_;
      log(LogLevel::kWarn, where + ": refused a connection from " + peer + ": already " + std::to_string(waiting) +
                               " connections waiting for their hello (the most)");
      socket.close(ignored);
      accept_tls();
      return;
    }
    // A controller host that vanished (power, partition) ends the
    // connection within ~11 s rather than never.
    socket.set_option(tcp::no_delay(true), ignored);
    socket.set_option(asio::socket_base::keep_alive(true), ignored);
    const int idle = 5, interval = 2, count = 3;
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    auto s = std::make_shared<Session>(std::move(socket), *tls_context_, options_.max_line_bytes + 1, strand_);
    s->peer = std::move(peer);
    log(LogLevel::kInfo, where + ": connection from " + s->who());
    open_.insert(s);
    connections_ = open_.size();
    // The handshake and a hello with the token, within hello_timeout.
    s->hello_timer.expires_after(options_.hello_timeout);
    s->hello_timer.async_wait([this, s](boost::system::error_code wait_ec) {
      if (wait_ec || s->closed || s->authenticated) return;
      const uint64_t refused = ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": no TLS handshake and hello with the token within " +
                               std::to_string(options_.hello_timeout.count()) + " ms (" + std::to_string(refused) +
                               " refused so far)");
      end_session(s, "");
    });
    s->tls->async_handshake(asio::ssl::stream_base::server,
                            asio::bind_executor(strand_, [this, s](boost::system::error_code hs_ec) {
                              if (s->closed) return;
                              if (hs_ec) {
                                const uint64_t refused = ++peers_refused_;
                                log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": TLS handshake: " +
                                                         hs_ec.message() + " (" + std::to_string(refused) +
                                                         " refused so far)");
                                end_session(s, "");
                                return;
                              }
                              read(s);
                            }));
    accept_tls();
  });
}

void PluginLink::end_session(const std::shared_ptr<Session>& s, const std::string& why) {
  const bool was_plugin = current_ == s;
  if (was_plugin) {
    current_.reset();
    connected_ = false;
  }
  s->closed = true;
  s->close();
  open_.erase(s);
  connections_ = open_.size();
  if (!why.empty()) {
    log(LogLevel::kInfo, (s->tls ? "plugin_listen" : options_.path) + ": connection from " + s->who() +
                             " ended: " + why);
  }
  if (!was_plugin) return;
  elect(nullptr);
  if (!current_) on_connection_(false);
}

void PluginLink::read(std::shared_ptr<Session> s) {
  asio::streambuf& into = s->hello_buffer ? *s->hello_buffer : s->buffer;
  s->with_stream([&](auto& stream) {
    asio::async_read_until(
        stream, into, '\n', asio::bind_executor(strand_, [this, s, &into](boost::system::error_code ec, size_t n) {
          if (ec == asio::error::not_found) {
            // The buffer is full and holds no newline: the peer broke the protocol.
            log(LogLevel::kWarn, (s->tls ? "plugin_listen" : options_.path) + ": " + s->who() +
                                     " sent a line longer than " +
                                     std::to_string(s->hello_buffer ? kMaxHelloBytes : options_.max_line_bytes) +
                                     " bytes; closing its connection");
            end_session(s, "line too long");
            return;
          }
          if (ec) {
            if (s->closed) return;
            end_session(s, ec == asio::error::operation_aborted ? ""
                           : ec == asio::error::eof || ec == asio::ssl::error::stream_truncated
                               ? "closed by the peer"
                               : ec.message());
            return;
          }
          std::string line(n - 1, '\0');
          asio::buffer_copy(asio::buffer(line), into.data(), n - 1);
          into.consume(n);
          if (s->closed) return;  // replaced or stopped while this line was read
          on_line(s, std::move(line));
          if (s->hello_buffer && s->authenticated && !s->closed) {
            // The hello was accepted: what came after it moves to the full-size buffer.
            const size_t rest = s->hello_buffer->size();
            s->buffer.commit(asio::buffer_copy(s->buffer.prepare(rest), s->hello_buffer->data()));
            s->hello_buffer.reset();
          }
          if (!s->closed) read(s);
        }));
  });
}

void PluginLink::on_line(const std::shared_ptr<Session>& s, std::string line) {
  const bool hello = may_be_type(line, "hello");
  const bool sm_state = !hello && may_be_type(line, "sm_state");
  const bool ack = !hello && !sm_state && may_be_type(line, "ack");
  nlohmann::json j;
  std::string type;
  if (hello || sm_state) {
    std::string error;
    j = parse_bounded_json(line, &error);
    if (j.is_object() && j.contains("type") && j["type"].is_string()) type = j["type"].get<std::string>();
  }
  if (!s->authenticated) {
    // TLS: the first line must be a hello with the right token.
    const bool good = type == "hello" && j.contains("token") && j["token"].is_string() &&
                      same_token(j["token"].get<std::string>(), options_.token);
    if (!good) {
      const uint64_t refused = ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": its first line is not a hello with the right token (" +
                               std::to_string(refused) + " refused so far)");
      end_session(s, "");
      return;
    }
    const size_t served = static_cast<size_t>(std::count_if(
        open_.begin(), open_.end(), [](const std::shared_ptr<Session>& o) { return o->authenticated; }));
    if (served >= options_.max_connections) {
      ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": already " + std::to_string(served) +
                               " plugins connected (the most)");
      end_session(s, "");
      return;
    }
    s->authenticated = true;
    s->hello_timer.cancel();
  }
  if (type == "hello") {
    // Hellos are stored by the controller: never with the secret in them.
    if (j.contains("token")) {
      j.erase("token");
      line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    s->hello_line = line;
    if (j.contains("sm_state") && j["sm_state"].is_string()) s->sm_state = j["sm_state"].get<std::string>();
  } else if (type == "sm_state" && j.contains("state") && j["state"].is_string()) {
    s->sm_state = j["state"].get<std::string>();
  }
  if ((type == "hello" || type == "sm_state") && s->sm_state == "master") s->master_order = ++order_;
  bool first = false;
  if (!s->spoke) {
    s->spoke = true;
    s->spoke_order = ++order_;
    first = true;
    // Not the leader: say who is, and close.
    LeaderHook hook;
    {
      std::lock_guard lock(leader_mu_);
      hook = leader_hook_;
    }
    if (hook) {
      if (std::optional<std::string> leader = hook()) {
        log(LogLevel::kInfo, "not the leader: " + s->who() + " sent to " + (leader->empty() ? "(unknown)" : *leader));
        s->leaving = true;
        queue(s, protocol::encode_command({protocol::CommandKind::kNotLeader, "", *leader}) + "\n");
        return;
      }
    }
    if (!policy_line_.empty()) queue(s, policy_line_);
  }
  if (s->leaving) return;
  elect(first ? s : nullptr);
  if (current_ != s) {
    if (!hello && !sm_state && !ack) ++lines_ignored_;
    return;
  }
  try {
    on_line_(line);
  } catch (const std::exception& e) {
    // A bad line never ends the session.
    log(LogLevel::kError, "a line from " + s->who() + " failed: " + e.what());
  } catch (...) {
    log(LogLevel::kError, "a line from " + s->who() + " failed");
  }
}

void PluginLink::elect(const std::shared_ptr<Session>& first_line_of) {
  std::shared_ptr<Session> master;
  for (const std::shared_ptr<Session>& s : open_) {
    if (s->closed || s->leaving || !s->spoke || s->sm_state != "master") continue;
    if (!master || s->master_order > master->master_order) master = s;
  }
  std::shared_ptr<Session> next = current_;
  if (master) {
    next = master;
  } else if (first_line_of) {
    next = first_line_of;  // today's rule: a plugin that speaks takes over
  } else if (!current_) {
    for (const std::shared_ptr<Session>& s : open_) {
      if (s->closed || s->leaving || !s->spoke) continue;
      if (!next || s->spoke_order > next->spoke_order) next = s;
    }
  }
  if (next == current_) return;
  const std::shared_ptr<Session> old = current_;
  current_ = next;
  connected_ = next != nullptr;
  if (old && old->sm_state.empty() && next == first_line_of) {
    // An older plugin (no SM state): replaced and closed, as always.
    log(LogLevel::kInfo, "the connection from " + next->who() + " replaces the one from " + old->who());
    old->closed = true;
    old->close();
    open_.erase(old);
    connections_ = open_.size();
  } else {
    log(LogLevel::kInfo, "the plugin is now " + next->who() + " (sm_state " +
                             (next->sm_state.empty() ? "unknown" : next->sm_state) + ")");
  }
  on_connection_(true);
  if (next != first_line_of && !next->hello_line.empty()) {
    // Its earlier lines were not read: its hello (a new seq baseline), then
    // its whole fabric.
    try {
      on_line_(next->hello_line);
    } catch (...) {
    }
    queue(next, protocol::encode_command({protocol::CommandKind::kSendFabric, ""}) + "\n");
  }
}

bool PluginLink::send(const std::string& line) {
  if (!connected_.load()) return false;
  asio::post(strand_, [this, text = line + "\n"]() mutable {
    const std::shared_ptr<Session> s = current_;
    if (!s || s->closed) return;  // gone meanwhile: as if the write had failed
    queue(s, std::move(text));
  });
  return true;
}

void PluginLink::broadcast_policy(const std::string& yaml) {
  asio::post(strand_, [this, yaml] {
    if (yaml == policy_yaml_) return;
    policy_yaml_ = yaml;
    policy_line_ = protocol::encode_command({protocol::CommandKind::kPolicy, policy_id(yaml), "", yaml}) + "\n";
    for (const std::shared_ptr<Session>& s : open_) {
      if (!s->closed && !s->leaving && s->spoke) queue(s, policy_line_);
    }
  });
}

void PluginLink::drop_all_not_leader(const std::string& leader) {
  asio::post(strand_, [this, leader] {
    const std::string line = protocol::encode_command({protocol::CommandKind::kNotLeader, "", leader}) + "\n";
    for (const std::shared_ptr<Session>& s : open_) {
      if (s->closed || s->leaving) continue;
      s->leaving = true;
      queue(s, line);
    }
    const bool had = current_ != nullptr;
    current_.reset();
    connected_ = false;
    if (had) on_connection_(false);
    log(LogLevel::kInfo, "stepped down: every plugin told the leader is " + (leader.empty() ? "(unknown)" : leader));
  });
}

// On the strand.
void PluginLink::queue(const std::shared_ptr<Session>& s, std::string text) {
  if (s->closed) return;
  s->outbox.push_back(std::move(text));
  if (s->writing) return;
  s->writing = true;
  write_next(s);
}

// On the strand; one write at a time per connection.
void PluginLink::write_next(std::shared_ptr<Session> s) {
  if (s->closed) {
    s->writing = false;
    return;
  }
  if (s->outbox.empty()) {
    s->writing = false;
    // Told not_leader: closed once it is written.
    if (s->leaving) end_session(s, "");
    return;
  }
  s->with_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(s->outbox.front()),
                      asio::bind_executor(strand_, [this, s](boost::system::error_code ec, size_t) {
                        s->outbox.pop_front();
                        if (ec) {
                          s->closed = true;
                          s->writing = false;
                          return;
                        }
                        write_next(s);
                      }));
  });
}

}  // namespace railyard::controller
