#include "sm_plugin/event_channel.h"

#include "routing/fabric_changes.h"
#include "routing/fabric_fingerprint.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <vector>

namespace railyard::sm_plugin {

namespace {

// docs/plugin_protocol.md: a line is at most 64 MiB.
constexpr size_t kMaxLine = size_t{64} << 20;

// How log lines name an address: a Unix socket by its path (as before there
// were several), a TLS address as written.
std::string shown(const ControllerAddress& a) {
  return a.kind == ControllerAddress::Kind::kUnix ? a.path : a.text();
}

}  // namespace

EventChannel::EventChannel(Options options, CommandHandler on_command, LogSink log)
    : options_(std::move(options)), on_command_(std::move(on_command)), log_(std::move(log)) {
  if (!options_.socket_path.empty()) {
    addresses_.push_back(ControllerAddress{ControllerAddress::Kind::kUnix, options_.socket_path});
  }
  addresses_.insert(addresses_.end(), options_.controllers.begin(), options_.controllers.end());
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

// With mu_ held. An sm_state event goes ahead of the event being numbered
// when OpenSM's state moved since the last one reported.
void EventChannel::note_sm_state_locked(double time) {
  if (!options_.sm_state) return;
  SmStatus now = options_.sm_state();
  if (now == sm_status_) return;
  sm_status_ = now;
  if (!connected_) return;  // the next hello carries it
  const uint64_t seq = next_seq_++;
  if (queue_.size() >= options_.capacity) {
    ++dropped_;
    return;
  }
  queue_.push_back(Event{seq, time, protocol::SmStateEvent{now.state, now.port_guid}});
}

// An event the next connection's hello or whole fabric says again: not kept
// for it.
bool EventChannel::superseded_by_hello(const Event& e) {
  return std::holds_alternative<FabricEvent>(e.body) || std::holds_alternative<protocol::SmStateEvent>(e.body);
}

bool EventChannel::enqueue(EventBody body, double time) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu_);
    const size_t before = queue_.size();
    if (stopping_.load()) {  // nothing will send it
      ++dropped_;
      return false;
    }
    note_sm_state_locked(time);
    // With no controller the fabric waits as fabric_: the next connection
    // sends the last one whole.
    if (!connected_ && std::holds_alternative<FabricEvent>(body)) return true;
    const uint64_t seq = next_seq_++;
    if (queue_.size() >= options_.capacity) {
      ++dropped_;
      // Connected, the controller is slow: this one is the gap it will see.
      // With none connected the newest are the ones worth keeping.
      if (connected_ || queue_.empty()) return false;
      queue_.pop_front();
    }
    // Only a connection's loop is woken for events: while the thread
    // connects, a wake-up would cancel the handshake (it means "stop"
    // there), and the connection takes the queue as it starts anyway.
    was_empty = before == 0 && connected_;
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

std::string EventChannel::controller() const {
  std::lock_guard lock(mu_);
  return controller_;
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

void EventChannel::run() noexcept {
  block_sigpipe_on_this_thread();
  const size_t n = addresses_.size();
  std::vector<std::string> last_why(n);
  size_t preferred = 0;  // where a round starts: the first address, or the last leader named
  size_t start = 0;      // where the next round starts
  size_t redirects = 0;  // not_leader redirects in a row
  while (!stopping_.load()) {
    if (n == 0) {
      wait_wake(options_.retry);
      continue;
    }
    bool redirected = false;
    bool served = false;
    for (size_t k = 0; k < n && !stopping_.load(); ++k) {
      const size_t i = (start + k) % n;
      const ControllerAddress& address = addresses_[i];
      std::string why;
      std::unique_ptr<ChannelConnection> conn;
      // A wake-up left from the last connection (an event pushed as it
      // ended) would cancel this one: during a connect it means "stop".
      drain_wake();
      if (stopping_.load()) return;
      try {
        conn = connect_controller(address, options_.tls, wake_r_, why);
      } catch (const std::exception& e) {
        why = std::string("internal error: ") + e.what();
      }
      if (!conn) {
        if (stopping_.load()) return;
        // Said once per address and kind of failure, not every second.
        if (why != last_why[i]) {
          const bool unix_socket = address.kind == ControllerAddress::Kind::kUnix;
          log(LogLevel::kInfo, std::string(unix_socket ? "controller socket " : "controller ") + shown(address) +
                                   ": cannot connect (" + why + ")" +
                                   (n > 1 ? "; trying the next address" : "") +
                                   "; events wait in the queue (" + std::to_string(options_.capacity) +
                                   " at most), retrying every " + std::to_string(options_.retry.count()) + " ms");
          last_why[i] = why;
        }
        continue;
      }
      last_why[i].clear();
      Ended ended;
      try {
        ended = serve(*conn, address);
      } catch (const std::exception& e) {
        log(LogLevel::kError, std::string("controller connection dropped: internal error: ") + e.what());
      } catch (...) {
        log(LogLevel::kError, "controller connection dropped: internal error");
      }
      conn.reset();
      {
        std::lock_guard lock(mu_);
        connected_ = false;
        controller_.clear();
      }
      served = true;
      if (ended.stalled) {
        const size_t next = (i + 1) % n;
        log(LogLevel::kInfo, "controller " + address.text() + " has confirmed nothing for " +
                                 std::to_string(options_.confirm_timeout.count()) + " ms; trying " +
                                 addresses_[next].text());
        start = next;
        redirected = true;
      } else if (ended.not_leader) {
        // To the leader it named when it is one of ours, else the next one.
        size_t next = (i + 1) % n;
        for (size_t j = 0; j < n; ++j) {
          if (!ended.leader.empty() && addresses_[j].text() == ended.leader) {
            next = j;
            preferred = j;  // where to start again after a disconnect
          }
        }
        log(LogLevel::kInfo, "controller " + address.text() + " is not the leader (leader: " +
                                 (ended.leader.empty() ? "unknown" : ended.leader) + "); trying " +
                                 addresses_[next].text());
        start = next;
        redirected = true;
      } else if (!stopping_.load()) {
        log(LogLevel::kInfo, "controller disconnected from " + shown(address) + "; reconnecting");
        start = preferred;
      }
      break;
    }
    if (stopping_.load()) return;
    // A redirect goes on at once, but a round of redirects only once: two
    // members naming each other never make a busy loop.
    if (redirected && ++redirects <= n) continue;
    redirects = 0;
    if (!served) start = preferred;
    wait_wake(options_.retry);
  }
}

EventChannel::Ended EventChannel::serve(ChannelConnection& conn, const ControllerAddress& address) {
  Ended ended;
  // Lines to write, numbered 1, 2, ... on this connection (the hello is 1);
  // the first is written from offset `off`.
  Unconfirmed unconfirmed{this};
  std::deque<Outgoing>& out = unconfirmed.out;
  uint64_t lines = 0;
  auto put = [&](std::string line, std::optional<Event> event) {
    out.push_back(Outgoing{std::move(line), ++lines, std::move(event)});
  };
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
  size_t kept = 0;
  {
    std::lock_guard lock(mu_);
    connected_ = true;
    controller_ = address.text();
    hello.seq = next_seq_++;
    auto& h = std::get<HelloEvent>(hello.body);
    h.dropped = dropped_;
    if (options_.sm_state) {
      sm_status_ = options_.sm_state();
      h.sm_state = sm_status_.state;
      h.sm_port_guid = sm_status_.port_guid;
    }
    if (fabric_) {
      fabric = Event{next_seq_++, hello.time, FabricEvent{fabric_pass_, fabric_}};
    }
    // The events kept from before this connection (not confirmed by the
    // last controller, or raised with none connected) follow the hello and
    // the fabric, renumbered after them in their order: the hello is the
    // controller's new baseline. What the hello and the fabric say again
    // is left out.
    std::erase_if(queue_, superseded_by_hello);
    for (Event& e : queue_) e.seq = next_seq_++;
    kept = queue_.size();
  }
  const uint64_t hello_dropped = std::get<HelloEvent>(hello.body).dropped;
  put(event_line(hello), std::nullopt);
  if (fabric.seq != 0) put(line_of(fabric), std::nullopt);
  log(LogLevel::kInfo, "controller connected on " + shown(address) + " (" + std::to_string(hello_dropped) +
                           " events dropped so far" +
                           (kept ? ", " + std::to_string(kept) + " kept from before sent now" : std::string()) + ")");

  std::string in;
  std::deque<Event> batch;
  const int fd = conn.fd();
  auto next_sm_check = std::chrono::steady_clock::now();
  // Lines written whole, and since when the controller has confirmed none of
  // those still waiting (unset: none waits).
  uint64_t written = 0;
  std::optional<std::chrono::steady_clock::time_point> waiting_since;
  while (!stopping_.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (waiting_since && now - *waiting_since >= options_.confirm_timeout) {
      ended.stalled = true;
      return ended;
    }
    if (options_.sm_state && std::chrono::steady_clock::now() >= next_sm_check) {
      // A standby reports few events: its state is looked at here too.
      std::lock_guard lock(mu_);
      note_sm_state_locked(unix_time_now());
      next_sm_check = std::chrono::steady_clock::now() + options_.sm_state_interval;
    }
    // Refill only when everything before is written: a controller that does
    // not read stalls here, the queue fills and push() drops (bounded memory).
    if (out.empty()) {
      {
        std::lock_guard lock(mu_);
        batch.swap(queue_);
      }
      for (Event& e : batch) {
        std::string line = line_of(e);
        put(std::move(line), superseded_by_hello(e) ? std::nullopt : std::optional<Event>(std::move(e)));
      }
      batch.clear();
    }
    const bool want_out = !out.empty() || conn.wants_write();
    pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (want_out ? POLLOUT : 0)), 0}, {wake_r_, POLLIN, 0}};
    int timeout = options_.sm_state ? static_cast<int>(options_.sm_state_interval.count()) : -1;
    if (waiting_since) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *waiting_since + options_.confirm_timeout - std::chrono::steady_clock::now());
      const int left_ms = static_cast<int>(std::max<int64_t>(left.count() + 1, 0));
      timeout = timeout < 0 ? left_ms : std::min(timeout, left_ms);
    }
    if (::poll(fds, 2, timeout) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds[1].revents) drain_wake();
    if (stopping_.load()) return ended;

    if (fds[0].revents & (POLLOUT | POLLIN | POLLERR | POLLHUP)) {
      while (!out.empty()) {
        const std::string& line = out.front().line;
        std::string why;
        const ssize_t n = conn.send(line.data() + off, line.size() - off, why);
        if (n == ChannelConnection::kWouldBlock) break;
        if (n < 0) {
          log(LogLevel::kInfo, "controller " + address.text() + ": write failed: " + why);
          return ended;
        }
        off += static_cast<size_t>(n);
        if (off == line.size()) {
          written = out.front().number;
          unconfirmed.written();
          off = 0;
          sent_.fetch_add(1);
          if (!waiting_since) waiting_since = std::chrono::steady_clock::now();
        }
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      // Everything readable now: TLS may hold decrypted bytes poll cannot see.
      // When the controller closed, the lines that came before its end are
      // still carried out (a not_leader is followed at once by the close).
      bool ending = false;
      std::string read_error;
      for (;;) {
        char buf[16384];
        std::string why;
        const ssize_t n = conn.recv(buf, sizeof buf, why);
        if (n == ChannelConnection::kWouldBlock) break;
        if (n == 0) {  // the controller closed
          ending = true;
          break;
        }
        if (n < 0) {  // logged below unless a not_leader came before it
          read_error = why;
          ending = true;
          break;
        }
        in.append(buf, static_cast<size_t>(n));
        if (in.size() > kMaxLine + sizeof buf) break;
      }
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
        if (c.kind == CommandKind::kNotLeader) {
          // The rest of this connection is not read: the controller closes it.
          ended.not_leader = true;
          ended.leader = c.leader;
          return ended;
        }
        if (c.kind == CommandKind::kReceived) {
          unconfirmed.confirm(c.lines);
          // All confirmed: nothing waits; else it moves, so it lives.
          if (c.lines >= written) {
            waiting_since.reset();
          } else {
            waiting_since = std::chrono::steady_clock::now();
          }
          continue;
        }
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
      if (ending) {
        if (!read_error.empty()) log(LogLevel::kInfo, "controller " + address.text() + ": read failed: " + read_error);
        return ended;
      }
      if (in.size() > kMaxLine) {
        log(LogLevel::kError, "controller line longer than 64 MiB; dropping the connection");
        return ended;
      }
    }
  }
  return ended;
}

void EventChannel::Unconfirmed::written() {
  Outgoing& line = out.front();
  if (line.event) {
    sent.emplace_back(line.number, std::move(*line.event));
    // A controller that never confirms (older than `received`): what it
    // was sent is forgotten beyond one queue's worth.
    if (sent.size() > self->options_.capacity) sent.pop_front();
  }
  out.pop_front();
}

void EventChannel::Unconfirmed::confirm(uint64_t lines) {
  while (!sent.empty() && sent.front().first <= lines) sent.pop_front();
}

// Everything not confirmed goes back to the head of the queue, in order,
// for the next connection; beyond the queue's capacity the oldest are
// dropped and counted.
EventChannel::Unconfirmed::~Unconfirmed() {
  std::deque<Event> back;
  for (auto& [number, e] : sent) back.push_back(std::move(e));
  for (Outgoing& o : out) {
    if (o.event) back.push_back(std::move(*o.event));
  }
  std::lock_guard lock(self->mu_);
  self->queue_.insert(self->queue_.begin(), std::make_move_iterator(back.begin()),
                      std::make_move_iterator(back.end()));
  while (self->queue_.size() > self->options_.capacity) {
    self->queue_.pop_front();
    ++self->dropped_;
  }
}

}  // namespace railyard::sm_plugin
