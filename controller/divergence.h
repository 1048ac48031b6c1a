// Divergence: whether the tables the plugin wrote are the ones railyardd
// shows (docs/controller.md, "One routing, verified").
//
// The plugin routes the subnet inside OpenSM; railyardd routes its copy of the
// same fabric under the same policy to answer the API. Both should be equal,
// and nothing else checks it: the plugin falls back to its last good policy,
// railyardd drops drains it cannot resolve, a policy file can be pointed
// elsewhere. So the plugin reports digests (routing/lft_digest.h) of the
// policy it planned with and of the LFTs it wrote, and this compares them with
// the same digests of railyardd's views.
//
// A report agrees when one of the views it may answer equals it in both
// digests: the view in force, or one replaced less than `grace_s` ago (a pass
// that read the policy file just before a drain rewrote it answers the view
// before the drain). Otherwise it diverges, of kind
//  - "policy": no such view planned with the plugin's policy (the tables may
//    or may not agree; the policies differ);
//  - "lfts": a view had the same policy but other tables: the switches whose
//    tables differ are named when the report carries per-switch digests.
// The state stays diverged until a later report agrees.
//
// Not thread-safe: the controller calls it under its own serialization.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "controller/fabric_view.h"
#include "api/protocol/plugin_events.h"
#include "routing/lft_digest.h"

namespace railyard::controller {

// A view's route as digests.
struct ViewDigests {
  uint64_t version = 0;
  uint64_t policy = 0;
  routing::LftDigests lfts;
};
ViewDigests digests_of(const FabricView& view);

struct DivergenceCheck {
  bool compared = false;  // false: no view to compare with (nothing said)
  bool agrees = false;
  // !agrees: planned with a policy railyardd has replaced since, within grace
  // (a pass that read the policy file just before a drain rewrote it, on a
  // fabric railyardd then routed only under the drain): superseded by the
  // command already sent, whose own report is compared. Not a divergence.
  bool superseded = false;
  uint64_t view_version = 0;  // the view it agrees with, or the closest one
  std::string kind;           // !agrees: "policy" or "lfts"
  std::string reason;         // !agrees: for people
  // Compared, and neither agreed nor superseded: a divergence to report.
  bool diverged() const { return compared && !agrees && !superseded; }
  uint64_t switches_differing = 0;   // "lfts" with per-switch digests
  std::vector<std::string> switches;  // their GUIDs, at most 10
  uint64_t plugin_policy = 0, plugin_lfts = 0, our_policy = 0, our_lfts = 0;
};

class DivergenceTracker {
 public:
  explicit DivergenceTracker(double grace_s = 30, size_t keep = 8) : grace_s_(grace_s), keep_(keep) {}

  // `view` is in force from `now` (Unix time) on. Hashes its tables once.
  void note_view(const FabricView& view, double now);
  // Forgets every view (a new fabric source).
  void clear() { views_.clear(); }

  // The plugin reported `plugin` for `what` ("pass 7", "fast path"). Counts
  // and remembers divergences when `count` (false: a second report of tables
  // already checked, e.g. the routing-done after a pass).
  DivergenceCheck check(const protocol::Digests& plugin, const std::string& what, double now, bool count = true);

  uint64_t checks() const { return checks_; }
  uint64_t divergences() const { return divergences_; }
  uint64_t superseded() const { return superseded_; }
  // Why the last counted check diverged; nullopt when it agreed (or none ran).
  const std::optional<std::string>& standing() const { return standing_; }

 private:
  struct Entry {
    ViewDigests digests;
    double replaced_at = 0;  // 0: in force
  };
  double grace_s_;
  size_t keep_;
  std::deque<Entry> views_;  // oldest first
  uint64_t checks_ = 0;
  uint64_t divergences_ = 0;
  uint64_t superseded_ = 0;
  std::optional<std::string> standing_;
};

}  // namespace railyard::controller
