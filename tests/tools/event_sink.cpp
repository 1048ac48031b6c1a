// event_sink: a minimal controller end of the plugin socket, for integration
// tests (docs/plugin_protocol.md).
//
//   event_sink SOCKET_PATH EVENTS_FILE [COMMANDS_FILE]
//
// Listens on SOCKET_PATH (removed first, and again at exit), accepts the
// plugin's connection (a new connection replaces the old one, as after a
// plugin reconnect), and appends every line it receives to EVENTS_FILE,
// flushed line by line so a test can wait on it with grep. COMMANDS_FILE, when
// given, is followed like `tail -f`: each complete line appended to it is sent
// to the plugin (kept until a plugin is connected). The lines written to
// EVENTS_FILE are confirmed to the plugin (`received`, as railyardd does), so
// it does not send them again after a reconnect. Prints "listening" on
// stdout once the socket is bound. Exits 0 on SIGTERM or SIGINT.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s SOCKET_PATH EVENTS_FILE [COMMANDS_FILE]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const std::string commands_path = argc == 4 ? argv[3] : "";
  FILE* events = std::fopen(argv[2], "a");
  if (events == nullptr) {
    std::fprintf(stderr, "event_sink: %s: %s\n", argv[2], std::strerror(errno));
    return 1;
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    std::fprintf(stderr, "event_sink: socket path too long\n");
    return 1;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::unlink(path.c_str());
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, 4) != 0) {
    std::fprintf(stderr, "event_sink: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  std::printf("listening\n");
  std::fflush(stdout);

  int conn = -1;
  unsigned long long lines = 0;  // complete lines of this connection
  std::string in;           // received, not yet a full line
  std::string commands;     // read from COMMANDS_FILE, not yet sent
  off_t commands_off = 0;   // how far COMMANDS_FILE has been read
  while (!g_stop) {
    pollfd fds[2] = {{lfd, POLLIN, 0}, {conn, POLLIN, 0}};
    const int n = ::poll(fds, conn >= 0 ? 2 : 1, 100);
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && (fds[0].revents & POLLIN)) {
      const int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        if (conn >= 0) ::close(conn);
        conn = c;
        in.clear();
        lines = 0;
      }
    }
    if (n > 0 && conn >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[65536];
      const ssize_t r = ::read(conn, buf, sizeof buf);
      if (r <= 0) {
        ::close(conn);
        conn = -1;
      } else {
        in.append(buf, static_cast<size_t>(r));
        const size_t last = in.rfind('\n');
        if (last != std::string::npos) {
          std::fwrite(in.data(), 1, last + 1, events);
          std::fflush(events);
          for (size_t i = 0; i <= last; ++i) lines += in[i] == '\n';
          in.erase(0, last + 1);
          write_all(conn, "{\"lines\":" + std::to_string(lines) + ",\"type\":\"received\"}\n");
        }
      }
    }
    // Follow COMMANDS_FILE; send complete lines once a plugin is connected.
    if (!commands_path.empty()) {
      const int cfd = ::open(commands_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (cfd >= 0) {
        char buf[4096];
        ssize_t r;
        while ((r = ::pread(cfd, buf, sizeof buf, commands_off)) > 0) {
          commands.append(buf, static_cast<size_t>(r));
          commands_off += r;
        }
        ::close(cfd);
      }
      const size_t last = commands.rfind('\n');
      if (conn >= 0 && last != std::string::npos) {
        if (write_all(conn, commands.substr(0, last + 1))) commands.erase(0, last + 1);
      }
    }
  }
  if (conn >= 0) ::close(conn);
  ::close(lfd);
  ::unlink(path.c_str());
  std::fclose(events);
  return 0;
}
