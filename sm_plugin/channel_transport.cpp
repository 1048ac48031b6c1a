#include "sm_plugin/channel_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace railyard::sm_plugin {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) { return std::strerror(err); }

// The last OpenSSL errors of this thread, oldest first; clears the queue.
std::string ssl_errors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail" : out;
}

// Takes the SIGPIPE an EPIPE left pending on this thread (SIGPIPE is blocked
// here, so it would stay pending).
void take_pending_sigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  const timespec zero{0, 0};
  while (::sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
  }
}

// Waits for `events` on fd until `deadline`; false with `why` when the time
// ran out, the wake fd fired (stop()), or poll failed.
bool wait_for(int fd, short events, int wake_fd, Clock::time_point deadline, std::string& why) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      why = "timed out";
      return false;
    }
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(left));
    if (n < 0) {
      if (errno == EINTR) continue;
      why = "poll: " + errno_text(errno);
      return false;
    }
    if (n > 0 && wake_fd >= 0 && fds[1].revents) {
      why = "stopping";
      return false;
    }
    if (n > 0 && fds[0].revents) return true;
  }
}

class UnixConnection final : public ChannelConnection {
 public:
  explicit UnixConnection(int fd) : fd_(fd) {}
  ~UnixConnection() override { ::close(fd_); }
  int fd() const override { return fd_; }
  ssize_t send(const char* data, size_t size, std::string& why) override {
    const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return kWouldBlock;
    why = errno_text(errno);
    return kFailed;
  }
  ssize_t recv(char* data, size_t size, std::string& why) override {
    const ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return kWouldBlock;
    why = errno_text(errno);
    return kFailed;
  }

 private:
  int fd_;
};

class TlsConnection final : public ChannelConnection {
 public:
  TlsConnection(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~TlsConnection() override {
    // No close_notify exchange: the connection is ending either way, and a
    // shutdown could block on a peer that does not read.
    SSL_free(ssl_);
    ::close(fd_);
  }
  int fd() const override { return fd_; }
  bool wants_write() const override { return want_write_; }
  ssize_t send(const char* data, size_t size, std::string& why) override {
    ERR_clear_error();
    const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return result(n, why);
  }
  ssize_t recv(char* data, size_t size, std::string& why) override {
    ERR_clear_error();
    const int n = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (n <= 0 && SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
    return result(n, why);
  }

 private:
  ssize_t result(int n, std::string& why) {
    want_write_ = false;
    if (n > 0) return n;
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ) return kWouldBlock;
    if (err == SSL_ERROR_WANT_WRITE) {
      want_write_ = true;
      return kWouldBlock;
    }
    if (err == SSL_ERROR_SYSCALL) {
      const int e = errno;
      if (e == EPIPE) take_pending_sigpipe();
      // EOF without close_notify: the controller's process ended.
      if (e == 0 && ERR_peek_error() == 0) return 0;
      why = e != 0 ? errno_text(e) : ssl_errors();
      return kFailed;
    }
    why = "TLS: " + ssl_errors();
    return kFailed;
  }

  int fd_;
  SSL* ssl_;
  bool want_write_ = false;
};

std::unique_ptr<ChannelConnection> connect_unix(const ControllerAddress& address, std::string& why) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.path.size() >= sizeof addr.sun_path) {
    why = "socket path longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return nullptr;
  }
  std::memcpy(addr.sun_path, address.path.data(), address.path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = errno_text(errno);
    return nullptr;
  }
  // A Unix-socket connect completes at once or fails (EAGAIN: backlog full).
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    why = errno_text(errno);
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<UnixConnection>(fd);
}

// A TCP connection to host:port within the deadline (every address the name
// resolves to, in order). getaddrinfo may block on DNS: this is the channel's
// thread, never OpenSM's.
int connect_tcp(const ControllerAddress& address, int wake_fd, Clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    why = "cannot resolve " + address.host + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      why = errno_text(errno);
      continue;
    }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      std::string wait_why;
      int err = errno;
      if (err == EINPROGRESS) {
        if (wait_for(fd, POLLOUT, wake_fd, deadline, wait_why)) {
          socklen_t len = sizeof err;
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        } else {
          err = -1;
        }
      }
      if (err != 0) {
        why = err == -1 ? "connect: " + wait_why : errno_text(err);
        ::close(fd);
        fd = -1;
      }
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return -1;
  const int on = 1, idle = 5, interval = 2, count = 3;
  const unsigned user_timeout_ms = 15000;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
  return fd;
}

std::unique_ptr<ChannelConnection> connect_tls(const ControllerAddress& address, const TlsClientOptions& tls,
                                               int wake_fd, std::string& why) {
  const Clock::time_point deadline = Clock::now() + tls.timeout;
  if (tls.ca_file.empty()) {
    why = "no controller_ca to verify the controller's certificate with";
    return nullptr;
  }
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) {
    why = "TLS: " + ssl_errors();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1) {
    why = "controller_ca " + tls.ca_file + ": cannot load: " + ssl_errors();
    return nullptr;
  }
  const int fd = connect_tcp(address, wake_fd, deadline, why);
  if (fd < 0) return nullptr;
  SSL* ssl = SSL_new(ctx.get());
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    why = "TLS: " + ssl_errors();
    if (ssl != nullptr) SSL_free(ssl);
    ::close(fd);
    return nullptr;
  }
  auto conn = std::make_unique<TlsConnection>(fd, ssl);  // owns fd and ssl from here
  // The certificate must name the host we asked for: an IP address as an IP
  // SAN, a name as a DNS SAN (and SNI).
  in6_addr probe{};
  const bool is_ip = ::inet_pton(AF_INET, address.host.c_str(), &probe) == 1 ||
                     ::inet_pton(AF_INET6, address.host.c_str(), &probe) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), address.host.c_str());
  } else {
    SSL_set1_host(ssl, address.host.c_str());
    SSL_set_tlsext_host_name(ssl, address.host.c_str());
  }
  for (;;) {
    ERR_clear_error();
    const int rc = SSL_connect(ssl);
    if (rc == 1) break;
    const int err = SSL_get_error(ssl, rc);
    std::string wait_why;
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (wait_for(fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, wake_fd, deadline, wait_why)) continue;
      why = "TLS handshake: " + wait_why;
      return nullptr;
    }
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      why = "TLS handshake: the controller's certificate is not trusted: " +
            std::string(X509_verify_cert_error_string(verify));
    } else if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      why = "TLS handshake: connection closed" + (errno != 0 ? " (" + errno_text(errno) + ")" : std::string());
    } else {
      why = "TLS handshake: " + ssl_errors();
    }
    return nullptr;
  }
  return conn;
}

}  // namespace

std::unique_ptr<ChannelConnection> connect_controller(const ControllerAddress& address, const TlsClientOptions& tls,
                                                      int wake_fd, std::string& why) {
  if (address.kind == ControllerAddress::Kind::kUnix) return connect_unix(address, why);
  return connect_tls(address, tls, wake_fd, why);
}

void block_sigpipe_on_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace railyard::sm_plugin
