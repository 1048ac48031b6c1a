#include "sm_plugin/port_prober.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace railyard::sm_plugin {

namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

PortProber::~PortProber() { stop(); }

Status PortProber::start() {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  char* argv[] = {const_cast<char*>(path_.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path_.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return Error{"cannot start " + path_ + ": " + std::strerror(rc)};
  }
  pid_ = pid;
  to_child_ = in[1];
  from_child_ = out[0];
  pending_.clear();
  auto ready = read_line(Clock::now() + deadline_);
  if (!ready.ok()) {
    stop();
    return Error{path_ + " did not start: " + ready.error().message};
  }
  if (ready.value().rfind("ready", 0) != 0) {
    const std::string said = ready.value();
    stop();
    return Error{path_ + ": " + said};
  }
  return {};
}

void PortProber::stop() {
  if (to_child_ >= 0) ::close(to_child_);  // EOF: the probe exits
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    // A short grace period, then the end.
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      ::usleep(2000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
}

Result<std::string> PortProber::read_line(Clock::time_point until) {
  for (;;) {
    const size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return Error{"no answer in time"};
    pollfd p{from_child_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline check above ends it
    char buf[4096];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{"the probe exited"};
    pending_.append(buf, static_cast<size_t>(n));
    if (pending_.size() > (1u << 20)) return Error{"the probe sent a line over 1 MB"};
  }
}

Result<std::vector<ProbedPort>> PortProber::probe(uint64_t m_key, const std::string& dr_path,
                                                  std::span<const uint8_t> ports) {
  if (ports.empty()) return std::vector<ProbedPort>{};
  if (pid_ == 0) {
    Status s = start();
    if (!s.ok()) return s.error();
  }
  const uint64_t id = next_id_++;
  std::ostringstream req;
  req << "probe " << id << ' ' << std::hex << m_key << std::dec << ' ' << dr_path;
  for (uint8_t p : ports) req << ' ' << static_cast<unsigned>(p);
  req << '\n';
  if (!write_all(to_child_, req.str())) {
    stop();
    return Error{"the probe is gone"};
  }
  const auto until = Clock::now() + deadline_;
  for (;;) {
    auto line = read_line(until);
    if (!line.ok()) {
      stop();  // a late answer would be taken for the next request's
      return Error{line.error().message};
    }
    std::istringstream in(line.value());
    std::string got_id, word;
    in >> got_id >> word;
    if (got_id != std::to_string(id)) continue;  // an earlier request's
    if (word != "ok") {
      std::string rest;
      std::getline(in, rest);
      return Error{"probe: " + word + rest};
    }
    std::vector<ProbedPort> out;
    for (std::string t; in >> t;) {
      const size_t c1 = t.find(':');
      if (c1 == std::string::npos) continue;  // ms=...
      ProbedPort p;
      p.port = static_cast<uint8_t>(std::atoi(t.substr(0, c1).c_str()));
      const size_t c2 = t.find(':', c1 + 1);
      if (c2 != std::string::npos) {
        p.answered = true;
        p.state = static_cast<uint8_t>(std::atoi(t.substr(c1 + 1, c2 - c1 - 1).c_str()));
        p.phys_state = static_cast<uint8_t>(std::atoi(t.substr(c2 + 1).c_str()));
      }
      out.push_back(p);
    }
    return out;
  }
}

std::vector<LinkChange> link_changes(const routing::Fabric& fabric, NodeId sw, std::span<const ProbedPort> ports) {
  std::vector<LinkChange> out;
  if (!sw.valid() || sw.value() >= fabric.num_nodes()) return out;
  const routing::Node& node = fabric.node(sw);
  for (const ProbedPort& p : ports) {
    if (!p.answered || p.port == 0 || p.port > node.num_ports) continue;
    const routing::Port& port = fabric.port(fabric.port_id(sw, PortNum{p.port}));
    if (!port.link.valid()) continue;  // no cable we know of: the sweep will find it
    const bool live = fabric.link(port.link).state != routing::PortState::kDown;
    const bool active = p.state == 4;  // Active; Init and Armed are on the way up
    const bool down = p.state == 1;
    if (live && down) out.push_back({port.link, false});
    if (!live && active) out.push_back({port.link, true});
  }
  return out;
}

Result<routing::Fabric> apply_link_changes(const routing::Fabric& fabric, std::span<const LinkChange> changes) {
  routing::FabricBuilder b(fabric);
  for (const LinkChange& c : changes) {
    Status s = b.set_link_state(c.link, c.up ? routing::PortState::kActive : routing::PortState::kDown);
    if (!s.ok()) return s.error();
  }
  return b.build();
}

}  // namespace railyard::sm_plugin
