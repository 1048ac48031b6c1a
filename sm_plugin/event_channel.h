// EventChannel: events out to the controller, commands in, over a Unix
// stream socket or TCP with TLS (channel_transport.h), to the first of the
// configured controllers that answers (docs/plugin_protocol.md).
//
// Guarantees:
//  - push() never blocks OpenSM: a short critical section on the channel's own
//    mutex (never OpenSM's lock), a bounded queue (Options::capacity), and at
//    most one write() of one byte to a non-blocking pipe to wake the thread.
//    When the queue is full the event is dropped and counted (with no
//    controller connected, the oldest one instead). Sequence numbers are
//    taken by dropped events too, so the controller sees a gap exactly where
//    events were lost.
//  - Events are not lost across a controller switch (at least once): the
//    controller confirms the lines it handled (`received`); an event written
//    but not confirmed when the connection ends, or not written yet, goes back
//    to the head of the queue, and the queue is kept while no controller is
//    connected. The next connection sends them after its hello and whole
//    fabric, renumbered after the hello (the controller's new baseline);
//    fabric snapshots and SM states are not kept (the hello and the whole
//    fabric say them again). Beyond the queue's capacity the oldest are
//    dropped and counted. A controller that handled an event but whose
//    `received` was lost with the connection sees it again.
//  - One background thread connects (retrying every Options::retry), writes a
//    `hello` then the last fabric snapshot after each connect, encodes and
//    writes queued events, and reads command lines; each command goes to the
//    handler on that thread and, when the handler returns, an `ack` is queued.
//  - Fabric snapshots go out as `fabric_changes`: the whole fabric first on
//    each connection, then only what changed since the one before (computed
//    on this thread, off OpenSM's lock); `send_fabric` from the controller
//    makes the next one whole again.
//  - Several controllers: tried in order from the preferred one (the first,
//    or the leader a `not_leader` named); a `not_leader` moves on at once to
//    the address it names when it is one of ours, else to the next one; after
//    a disconnect the channel waits Options::retry and starts again from the
//    preferred one. A round in which no address answered waits
//    Options::retry too: never a busy loop.
//  - OpenSM's SM state (Options::sm_state, read off OpenSM's lock: two plain
//    fields) goes in every hello, and an `sm_state` event is queued whenever
//    it changed: checked before each event is numbered (so a new master's
//    first fabric follows its sm_state) and every Options::sm_state_interval
//    on the channel's thread (a standby reports few events).
//  - A controller that confirms nothing for Options::confirm_timeout while
//    lines wait for it (a frozen process: its host's TCP still answers) is
//    left for the next address at once.
//  - `policy` commands go to the handler like reroutes (acknowledged when it
//    returns); `not_leader`, `send_fabric` and `received` are the channel's own.
//  - stop() (and the destructor) wakes the thread through a self-pipe and joins
//    it; nothing is left running. Exceptions never leave the thread: they are
//    logged and the connection is dropped.
// No OpenSM dependency: unit-tested with a real socket (tests/sm_plugin/).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sm_plugin/channel_transport.h"
#include "sm_plugin/controller_address.h"
#include "sm_plugin/event_json.h"
#include "sm_plugin/events.h"
#include "sm_plugin/log_level.h"

namespace railyard::sm_plugin {

class EventChannel {
 public:
  // OpenSM's SM state as the wire says it (protocol::kSmStates) and its port GUID.
  struct SmStatus {
    std::string state;
    uint64_t port_guid = 0;
    bool operator==(const SmStatus&) const = default;
  };
  struct Options {
    std::string socket_path;                     // one Unix socket: `controllers` of one unix: address
    std::vector<ControllerAddress> controllers;  // tried in order (after socket_path, if both)
    TlsClientOptions tls;                        // for tls:// addresses
    size_t capacity = 4096;                      // queued events
    std::chrono::milliseconds retry{1000};       // between connection attempts
    HelloEvent hello;                            // `dropped` and the SM state are filled in at each connect
    // Called from OpenSM's threads (in push) and the channel's; must be
    // cheap, never block, never throw. Null: no SM state reported.
    std::function<SmStatus()> sm_state;
    std::chrono::milliseconds sm_state_interval{200};
    // A controller that confirms nothing (`received`) for this long while
    // lines are waiting for it is left for the next address: a frozen
    // process whose host still answers TCP (the events go again elsewhere).
    std::chrono::milliseconds confirm_timeout{15000};
  };
  // Runs on the channel's thread. May throw: the error is logged and no ack is sent.
  using CommandHandler = std::function<void(const Command&)>;
  // Runs on the channel's thread; must not throw.
  using LogSink = std::function<void(LogLevel, const std::string&)>;

  // Starts the thread (throws std::system_error if it cannot).
  EventChannel(Options options, CommandHandler on_command, LogSink log);
  ~EventChannel();
  EventChannel(const EventChannel&) = delete;
  EventChannel& operator=(const EventChannel&) = delete;

  // Queues an event stamped with the current time; false when it was dropped.
  bool push(EventBody body);
  // Queues a fabric snapshot and keeps it, to be sent again after every hello.
  bool push_fabric(uint64_t pass, std::shared_ptr<const routing::Fabric> fabric);

  // Stops and joins the thread; idempotent, never throws.
  void stop() noexcept;

  uint64_t dropped() const;
  uint64_t sent() const { return sent_.load(); }
  // Bytes of fabric_changes lines encoded so far (whole fabrics and changes).
  uint64_t fabric_bytes() const { return fabric_bytes_.load(); }
  bool connected() const;
  // The address of the controller connected to (text()), or "".
  std::string controller() const;

 private:
  // How a connection ended: not_leader (with the leader it named) or otherwise.
  struct Ended {
    bool not_leader = false;
    std::string leader;
    bool stalled = false;  // confirmed nothing for Options::confirm_timeout
  };
  // A line of a connection: its number there (1: the hello) and, when it
  // is one, the event to send again if the controller does not confirm it.
  struct Outgoing {
    std::string line;
    uint64_t number = 0;
    std::optional<Event> event;
  };
  // A connection's lines not yet confirmed (`received`): written or not.
  // When the connection ends, their events go back to the head of the queue.
  struct Unconfirmed {
    EventChannel* self;
    std::deque<Outgoing> out;                        // to write, in order
    std::deque<std::pair<uint64_t, Event>> sent;     // written: line number, event
    void written();                                  // out.front() is written
    void confirm(uint64_t lines);                    // the first `lines` lines are handled
    ~Unconfirmed();
  };
  static bool superseded_by_hello(const Event& e);
  bool enqueue(EventBody body, double time);
  void note_sm_state_locked(double time);
  void run() noexcept;
  Ended serve(ChannelConnection& conn, const ControllerAddress& address);
  void wait_wake(std::chrono::milliseconds timeout);
  void drain_wake();
  void wake() const;
  void log(LogLevel level, const std::string& text) const;

  const Options options_;
  std::vector<ControllerAddress> addresses_;  // socket_path then controllers
  const CommandHandler on_command_;
  const LogSink log_;

  mutable std::mutex mu_;
  std::deque<Event> queue_;
  bool connected_ = false;
  uint64_t next_seq_ = 1;
  uint64_t dropped_ = 0;
  uint64_t fabric_pass_ = 0;
  std::shared_ptr<const routing::Fabric> fabric_;  // the last snapshot, for resends
  SmStatus sm_status_;                             // the last one reported
  std::string controller_;                         // connected to (text)

  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> fabric_bytes_{0};
  int wake_r_ = -1;
  int wake_w_ = -1;
  std::thread thread_;
};

}  // namespace railyard::sm_plugin
