// PortProber: the plugin's side of railyard-port-probe (probe/port_probe.cpp),
// the process that asks a switch the state of its ports by directed-route
// Get(PortInfo). Trap 128 names the switch whose port changed, not the port;
// the fast path asks that switch's linked ports and compares the answers with
// the fabric it last routed (link_changes) to learn which links went down or
// came up, before OpenSM's heavy sweep has rediscovered anything.
//
// The probe runs as a child with OpenSM's environment (so under ibsim it
// attaches through the same umad2sim), started on first use and again after
// it dies. Every call has a deadline; nothing here blocks OpenSM's lock (the
// caller copies what it needs from the subnet first). Not thread-safe: one
// caller (the fast path's thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::sm_plugin {

struct ProbedPort {
  uint8_t port = 0;
  bool answered = false;   // false: the switch did not answer for it
  uint8_t state = 0;       // PortState: 1 Down, 2 Init, 3 Armed, 4 Active
  uint8_t phys_state = 0;  // PortPhysicalState: 5 LinkUp
};

class PortProber {
 public:
  // `path`: the railyard-port-probe executable.
  explicit PortProber(std::string path, std::chrono::milliseconds deadline = std::chrono::milliseconds(2000))
      : path_(std::move(path)), deadline_(deadline) {}
  ~PortProber();
  PortProber(const PortProber&) = delete;
  PortProber& operator=(const PortProber&) = delete;

  // The ports of the switch at directed route `dr_path` ("0,1,17").
  Result<std::vector<ProbedPort>> probe(uint64_t m_key, const std::string& dr_path, std::span<const uint8_t> ports);

  // Starts the probe now rather than at the first probe() (which then does
  // not wait for the process to start).
  Status warm_up() { return pid_ != 0 ? Status{} : start(); }

  // The child's PID (0 when not running), for tests and logs.
  pid_t pid() const { return pid_; }

 private:
  Status start();
  void stop();
  // The next line from the child within `until`, without the newline.
  Result<std::string> read_line(std::chrono::steady_clock::time_point until);

  std::string path_;
  std::chrono::milliseconds deadline_;
  pid_t pid_ = 0;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_;  // read, not yet a whole line
  uint64_t next_id_ = 1;
};

// A probe answer read against the fabric routed last: the switch links of
// `sw` whose state the answers contradict (a link the fabric has live whose
// port reads Down, or one it has down whose port reads Active). Ports that
// did not answer count as unchanged.
struct LinkChange {
  LinkId link;
  bool up = false;  // came up (else went down)
};
std::vector<LinkChange> link_changes(const routing::Fabric& fabric, NodeId sw, std::span<const ProbedPort> ports);

// The fabric with those changes applied.
Result<routing::Fabric> apply_link_changes(const routing::Fabric& fabric, std::span<const LinkChange> changes);

}  // namespace railyard::sm_plugin
