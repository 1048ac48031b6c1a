// Automatic isolation (UFM's "unhealthy ports"; off by default,
// railyardd.yaml `isolation:`): a link that goes down `flaps` times within
// `window_s`, or whose error rate crosses `errors_per_minute`, is drained
// automatically (reason "auto: flapping" / "auto: errors") and undrained once
// it has been clean (up, no down, no error rate over the threshold) for
// `clean_s`. With:
//   - dry run: every decision is made and audited, nothing is drained;
//   - an exclude list (link keys or node GUIDs, each with an optional expiry):
//     an excluded link is never isolated (the decision "excluded" is audited);
//   - a breaker: automation may hold at most max(max_links, max_percent% of
//     the fabric's switch links) links isolated; one more trips it, and then
//     nothing is isolated or restored until an operator resets it.
//
// This file is the pure part: events and the clock in, Actions out. No I/O,
// no clock of its own (every call takes `now`, Unix seconds). The caller
// carries actions out (drain/undrain through the operator's path with actor
// "auto", audit records) and tells the engine what happened (isolated(),
// not_isolated(), restored()).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/states.h"

namespace railyard::controller {

struct IsolationConfig {
  bool enabled = false;
  bool dry_run = false;
  uint32_t flaps = 3;               // downs ...
  uint32_t window_s = 60;           // ... within this many seconds: flapping
  uint32_t errors_per_minute = 0;   // error counters' rate threshold; 0: not used
  uint32_t clean_s = 600;           // clean this long: restored
  uint32_t max_links = 4;           // the breaker: at most max(max_links,
  uint32_t max_percent = 1;         //   max_percent% of the switch links) isolated
};

inline constexpr const char* kAutoActor = "auto";
inline constexpr const char* kReasonFlapping = "auto: flapping";
inline constexpr const char* kReasonErrors = "auto: errors";

// What the engine decided. kIsolate/kRestore are to be carried out (unless
// dry_run); kExcluded and kTrip are decisions to audit only.
struct IsolationAction {
  enum class Kind : uint8_t { kIsolate, kRestore, kExcluded, kTrip };
  Kind kind = Kind::kIsolate;
  std::string link;    // canonical "0x<guid>[port]"
  std::string reason;  // kIsolate: "auto: flapping" | "auto: errors"
  std::string detail;  // for people and the audit record: "4 downs in 60 s"
  bool dry_run = false;
  int64_t drain_id = 0;  // kRestore: the drain to remove (0 in dry run)
};
std::string_view to_string(IsolationAction::Kind kind);

struct ExcludeEntry {
  std::string target;  // a link key "0x<guid>[port]" or a node GUID "0x<guid>" (all its ports)
  std::optional<double> expires_at;
  std::string reason;
  std::string by;
  double added_at = 0;
};

struct IsolatedLink {
  std::string link;
  std::string reason;
  double since = 0;
  int64_t drain_id = 0;  // 0: dry run (nothing drained)
  bool dry_run = false;
  double last_bad = 0;   // the last down or error rate over the threshold
};

struct LinkWatch {
  std::deque<double> downs;  // within the window
  bool down = false;         // the last state reported
  double last_bad = 0;
};

struct Breaker {
  bool tripped = false;
  double tripped_at = 0;
  std::string why;
  double reset_at = 0;
  std::string reset_by;
};

struct IsolationSnapshot {
  IsolationConfig config;
  uint32_t cap = 0;  // for the fabric's switch links
  uint32_t switch_links = 0;
  Breaker breaker;
  std::vector<IsolatedLink> isolated;
  std::vector<ExcludeEntry> excluded;
  std::map<std::string, uint32_t> recent_downs;  // links with downs in the window
};

class IsolationEngine {
 public:
  explicit IsolationEngine(IsolationConfig config = {});

  const IsolationConfig& config() const { return config_; }
  // The fabric's switch-to-switch links (for the cap).
  void set_switch_links(uint32_t count) { switch_links_ = count; }
  uint32_t cap() const;

  // A link went down or up (plugin: the subnet; REST: monitoring).
  std::vector<IsolationAction> on_link_state(const std::string& link, LinkState state, double now);
  // The link's error counters rose by `errors_per_minute` (telemetry).
  std::vector<IsolationAction> on_error_rate(const std::string& link, double errors_per_minute, double now);
  // Restores due, expired exclusions dropped, old downs forgotten.
  std::vector<IsolationAction> tick(double now);

  // Outcomes of the caller's actions: isolated (drain_id, 0 in dry run);
  // not_isolated: an isolation refused (decided again at the next crossing)
  // or a restore that failed (tried again at the next tick).
  void isolated(const std::string& link, int64_t drain_id, double now);
  void not_isolated(const std::string& link);
  // The drain is gone (restored, or removed by an operator): no longer ours.
  void restored(const std::string& link);
  // Drains with actor "auto" found at start: automation's again.
  void adopt(const std::string& link, const std::string& reason, int64_t drain_id, double since);

  // Operators.
  void exclude(ExcludeEntry entry);  // replaces an entry with the same target
  bool unexclude(const std::string& target);
  bool excluded(const std::string& link, double now) const;
  // Clears the breaker; true if it was tripped.
  bool reset(const std::string& by, double now);

  IsolationSnapshot snapshot() const;

 private:
  std::vector<IsolationAction> decide_isolate(const std::string& link, const std::string& reason,
                                              const std::string& detail, double now);
  void forget_old(LinkWatch& w, double now) const;

  IsolationConfig config_;
  uint32_t switch_links_ = 0;
  Breaker breaker_;
  std::map<std::string, LinkWatch> watch_;
  std::map<std::string, IsolatedLink> isolated_;
  std::map<std::string, std::string> in_flight_;  // decided (reason), waiting for the caller's outcome
  std::map<std::string, ExcludeEntry> excluded_;
};

// "0x0002c90300000001[3]" -> {"0x0002c90300000001", 3}; nullopt when malformed.
std::optional<std::pair<std::string, uint32_t>> split_link_key(const std::string& key);

}  // namespace railyard::controller
