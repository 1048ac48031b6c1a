#include "sm_plugin/event_channel.h"

#include "routing/fabric_changes.h"
#include "routing/fabric_fingerprint.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <vector>

namespace railyard::sm_plugin {

namespace {

// docs/plugin_protocol.md: a line is at most 64 MiB.
constexpr size_t kMaxLine = size_t{64} << 20;

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

EventChannel::EventChannel(Options options, CommandHandler on_command, LogSink log)
    : options_(std::move(options)), on_command_(std::move(on_command)), log_(std::move(log)) {
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "event channel: pipe2");
  }
  wake_r_ = fds[0];
  wake_w_ = fds[1];
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    ::close(wake_r_);
    ::close(wake_w_);
    throw;
  }
}

EventChannel::~EventChannel() { stop(); }

void EventChannel::stop() noexcept {
  if (!stopping_.exchange(true)) wake();
  if (thread_.joinable()) thread_.join();
  if (wake_r_ >= 0) ::close(wake_r_);
  if (wake_w_ >= 0) ::close(wake_w_);
  wake_r_ = wake_w_ = -1;
}

bool EventChannel::push(EventBody body) { return enqueue(std::move(body), unix_time_now()); }

bool EventChannel::push_fabric(uint64_t pass, std::shared_ptr<const routing::Fabric> fabric) {
  {
    std::lock_guard lock(mu_);
    fabric_pass_ = pass;
    fabric_ = fabric;
  }
  return enqueue(FabricEvent{pass, std::move(fabric)}, unix_time_now());
}

bool EventChannel::enqueue(EventBody body, double time) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu_);
    const uint64_t seq = next_seq_++;
    if (!connected_ || queue_.size() >= options_.capacity) {
      ++dropped_;
      return false;
    }
    was_empty = queue_.empty();
    queue_.push_back(Event{seq, time, std::move(body)});
  }
  // The thread drains the whole queue each time it wakes: one wake per batch.
  if (was_empty) wake();
  return true;
}

uint64_t EventChannel::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

bool EventChannel::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

void EventChannel::wake() const {
  if (wake_w_ < 0) return;
  const char b = 1;
  // Non-blocking: a full pipe already holds a wake-up.
  [[maybe_unused]] ssize_t n = ::write(wake_w_, &b, 1);
}

void EventChannel::drain_wake() {
  char buf[64];
  while (::read(wake_r_, buf, sizeof buf) > 0) {
  }
}

void EventChannel::wait_wake(std::chrono::milliseconds timeout) {
  pollfd p{wake_r_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) > 0) drain_wake();
}

void EventChannel::log(LogLevel level, const std::string& text) const {
  if (log_) log_(level, text);
}

int EventChannel::connect_once(std::string& why) const {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options_.socket_path.size() >= sizeof addr.sun_path) {
    why = "socket path longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes";
    return -1;
  }
  std::memcpy(addr.sun_path, options_.socket_path.data(), options_.socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = errno_text(errno);
    return -1;
  }
  // A Unix-socket connect completes at once or fails (EAGAIN: backlog full).
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    why = errno_text(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

void EventChannel::run() noexcept {
  std::string last_why;
  while (!stopping_.load()) {
    std::string why;
    const int fd = connect_once(why);
    if (fd < 0) {
      // Said once per kind of failure, not every second.
      if (why != last_why) {
        log(LogLevel::kInfo, "controller socket " + options_.socket_path + ": cannot connect (" + why +
                                 "); events are dropped and counted, retrying every " +
                                 std::to_string(options_.retry.count()) + " ms");
        last_why = why;
      }
      wait_wake(options_.retry);
      continue;
    }
    last_why.clear();
    try {
      serve(fd);
    } catch (const std::exception& e) {
      log(LogLevel::kError, std::string("controller connection dropped: internal error: ") + e.what());
    } catch (...) {
      log(LogLevel::kError, "controller connection dropped: internal error");
    }
    ::close(fd);
    uint64_t lost = 0;
    {
      std::lock_guard lock(mu_);
      connected_ = false;
      lost = queue_.size();
      dropped_ += lost;
      queue_.clear();
    }
    if (!stopping_.load()) {
      log(LogLevel::kInfo, "controller disconnected from " + options_.socket_path + "; reconnecting");
      wait_wake(options_.retry);
    }
  }
}

void EventChannel::serve(int fd) {
  // Lines to write; the first is written from offset `off`.
  std::deque<std::string> out;
  size_t off = 0;
  // Sequence numbers and the fabric are taken under the lock; the encoding
  // (megabytes of topology text for a big fabric) is done outside it, so
  // push() from OpenSM's threads never waits for it.
  Event hello{0, unix_time_now(), options_.hello};
  Event fabric{0, 0, FabricEvent{}};
  // The fabric the controller has from this connection: changes are sent
  // from it; none yet, so the first is the whole fabric.
  std::shared_ptr<const routing::Fabric> sent_fabric;
  uint64_t sent_fingerprint = 0;
  // A fabric event as it goes out: the whole fabric, or what changed since
  // the last one this connection carried (docs/plugin_protocol.md).
  auto line_of = [&](const Event& e) {
    const auto* f = std::get_if<FabricEvent>(&e.body);
    if (f == nullptr) return event_line(e);
    protocol::FabricChangesEvent changes;
    changes.pass = f->pass;
    const routing::Fabric empty;
    const routing::Fabric& now = f->fabric ? *f->fabric : empty;
    changes.fingerprint = routing::fabric_fingerprint(now);
    changes.full = sent_fabric == nullptr;
    changes.base = changes.full ? 0 : sent_fingerprint;
    changes.changes = changes.full ? routing::full_changes(now) : routing::fabric_changes(*sent_fabric, now);
    sent_fabric = f->fabric ? f->fabric : std::make_shared<const routing::Fabric>();
    sent_fingerprint = changes.fingerprint;
    const bool full = changes.full;
    const size_t nodes = changes.changes.nodes.size() + changes.changes.nodes_removed.size();
    const size_t links = changes.changes.links.size() + changes.changes.links_removed.size();
    std::string line = event_line(Event{e.seq, e.time, std::move(changes)});
    fabric_bytes_.fetch_add(line.size());
    log(LogLevel::kInfo, "fabric of pass " + std::to_string(f->pass) + " sent " +
                             (full ? "whole" : "as changes") + ": " + std::to_string(nodes) + " nodes, " +
                             std::to_string(links) + " links, " + std::to_string(line.size()) + " bytes");
    return line;
  };
  {
    std::lock_guard lock(mu_);
    connected_ = true;
    hello.seq = next_seq_++;
    std::get<HelloEvent>(hello.body).dropped = dropped_;
    if (fabric_) {
      fabric = Event{next_seq_++, hello.time, FabricEvent{fabric_pass_, fabric_}};
    }
  }
  const uint64_t hello_dropped = std::get<HelloEvent>(hello.body).dropped;
  out.push_back(event_line(hello));
  if (fabric.seq != 0) out.push_back(line_of(fabric));
  log(LogLevel::kInfo, "controller connected on " + options_.socket_path + " (" + std::to_string(hello_dropped) +
                           " events dropped so far)");

  // Whatever is not written when the connection ends counts as dropped.
  struct CountUnsent {
    EventChannel* self;
    std::deque<std::string>* out;
    ~CountUnsent() {
      std::lock_guard lock(self->mu_);
      self->dropped_ += out->size();
    }
  } count_unsent{this, &out};

  std::string in;
  std::deque<Event> batch;
  while (!stopping_.load()) {
    // Refill only when everything before is written: a controller that does
    // not read stalls here, the queue fills and push() drops (bounded memory).
    if (out.empty()) {
      {
        std::lock_guard lock(mu_);
        batch.swap(queue_);
      }
      for (const Event& e : batch) out.push_back(line_of(e));
      batch.clear();
    }
    pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0}, {wake_r_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds[1].revents) drain_wake();
    if (stopping_.load()) return;

    if (fds[0].revents & POLLOUT) {
      while (!out.empty()) {
        const std::string& line = out.front();
        const ssize_t n = ::send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
          log(LogLevel::kInfo, "controller socket write failed: " + errno_text(errno));
          return;
        }
        off += static_cast<size_t>(n);
        if (off == line.size()) {
          out.pop_front();
          off = 0;
          sent_.fetch_add(1);
        }
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0) return;  // the controller closed
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        log(LogLevel::kInfo, "controller socket read failed: " + errno_text(errno));
        return;
      }
      in.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string_view line(in.data() + start, nl - start);
        if (line.empty()) continue;
        auto parsed = parse_command_line(line);
        if (!parsed) {
          log(LogLevel::kError, "controller line skipped: " + parsed.error().message);
          continue;
        }
        if (!parsed->has_value()) continue;  // another type: ignored (forward compatibility)
        const Command& c = **parsed;
        if (c.kind == CommandKind::kSendFabric) {
          // The controller's copy does not match: the whole fabric again,
          // numbered in queue order like any event.
          std::shared_ptr<const routing::Fabric> latest;
          uint64_t pass = 0;
          {
            std::lock_guard lock(mu_);
            latest = fabric_;
            pass = fabric_pass_;
          }
          log(LogLevel::kInfo, "controller asked for the whole fabric again");
          sent_fabric.reset();
          if (latest) enqueue(FabricEvent{pass, std::move(latest)}, unix_time_now());
          continue;
        }
        try {
          if (on_command_) on_command_(c);
        } catch (const std::exception& e) {
          log(LogLevel::kError, std::string("command ") + std::string(to_string(c.kind)) + " '" + c.id +
                                    "' failed: " + e.what());
          continue;
        }
        push(AckEvent{c.id, std::string(to_string(c.kind))});
      }
      in.erase(0, start);
      if (in.size() > kMaxLine) {
        log(LogLevel::kError, "controller line longer than 64 MiB; dropping the connection");
        return;
      }
    }
  }
}

}  // namespace railyard::sm_plugin
