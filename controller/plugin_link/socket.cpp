// PluginLink: the Unix socket (its file, lock and peers' credentials), and
// the link's start and stop (controller/plugin_link.h).
#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "controller/plugin_link.h"
#include "controller/plugin_link/session.h"

namespace railyard::controller {

namespace {

std::string socket_errno_text(int err) { return std::strerror(err); }

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
  if (fd < 0) return Error{"cannot create a socket: " + socket_errno_text(errno)};
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::close(fd);
  if (rc == 0 || err == EAGAIN) return true;
  if (err == ECONNREFUSED) return false;
  return Error{"cannot tell whether the socket " + path + " is in use (" + socket_errno_text(err) +
               "); not replacing it"};
}

// Removes a stale socket at `path`; refuses a live one and anything that is
// not a socket. Nothing at the path is fine.
Status clear_path(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return Error{path + ": " + socket_errno_text(errno)};
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Error{path + " exists and is " + file_kind(st.st_mode) +
                 ", not a socket: not replacing it (remove it, or set another fabric.plugin_socket)"};
  }
  Result<bool> live = socket_is_live(path);
  if (!live) return live.error();
  if (*live) return Error{"another railyardd is listening on " + path};
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Error{path + ": cannot remove the stale socket: " + socket_errno_text(errno)};
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
    if (rc != 0) return Error{"cannot look up group '" + name + "': " + socket_errno_text(rc)};
    if (found == nullptr) return Error{"group '" + name + "' does not exist"};
    return found->gr_gid;
  }
}

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
  if (lock_fd_ < 0) return Error{lock_path + ": cannot open the lock file: " + socket_errno_text(errno)};
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) return Error{"another railyardd is listening on " + path + " (it holds " + lock_path + ")"};
    return Error{lock_path + ": cannot lock: " + socket_errno_text(err)};
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
  acceptor_.open(plugin_stream(), ec);
  if (ec) return give_up(path + ": cannot create the plugin socket: " + ec.message());
  const mode_t umask_before = ::umask(0177);
  acceptor_.bind(plugin_stream::endpoint(path), ec);
  ::umask(umask_before);
  if (ec) return give_up(path + ": cannot bind the plugin socket: " + ec.message());
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return give_up(path + ": the socket vanished after bind: " + socket_errno_text(errno));
  }
  created_ = Created{st.st_dev, st.st_ino};
  if (group_gid_ && ::chown(path.c_str(), static_cast<uid_t>(-1), *group_gid_) != 0) {
    return give_up(path + ": cannot give the socket to group '" + options_.group + "': " + socket_errno_text(errno));
  }
  if (::chmod(path.c_str(), static_cast<mode_t>(options_.mode)) != 0) {
    return give_up(path + ": cannot set the socket's mode: " + socket_errno_text(errno));
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
  acceptor_.async_accept(strand_, [this](boost::system::error_code ec, plugin_stream::socket socket) {
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
                               socket_errno_text(errno) + ")");
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

}  // namespace railyard::controller
