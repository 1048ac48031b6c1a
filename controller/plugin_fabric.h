// PluginFabric: railyardd's copy of the fabric the plugin routes, kept from
// its `fabric_changes` events (docs/plugin_protocol.md): a whole fabric once
// per connection, then changes. Changes apply only to a copy whose
// fingerprint is their `base`, and the result must have their `fingerprint`;
// otherwise the copy is not touched and the plugin is asked for the whole
// fabric again (`send_fabric`), at most once per `reask_s` while waiting.
//
// Not thread-safe: the controller calls it under its own serialization.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "api/protocol/plugin_events.h"
#include "routing/fabric.h"

namespace railyard::controller {

class PluginFabric {
 public:
  explicit PluginFabric(double reask_s = 10) : reask_s_(reask_s) {}

  struct Outcome {
    std::shared_ptr<const routing::Fabric> fabric;  // the new copy; null when not applied
    // Why not applied; or, with a fabric, a whole fabric whose fingerprint
    // differs from the plugin's (kept: the plugin's own records).
    std::string error;
    bool ask_whole = false;                         // send `send_fabric` now
  };
  Outcome take(const protocol::FabricChangesEvent& event, double now);

  // A new connection: the plugin starts with the whole fabric.
  void reset();
  // A whole fabric from elsewhere (an older plugin's `fabric` text): changes
  // cannot chain on it (its fingerprint is railyardd's reading).
  void set_unchained(std::shared_ptr<const routing::Fabric> fabric);

  const std::shared_ptr<const routing::Fabric>& fabric() const { return fabric_; }
  uint64_t fingerprint() const { return fingerprint_; }
  uint64_t wholes() const { return wholes_; }
  uint64_t changes() const { return changes_; }
  uint64_t resyncs() const { return resyncs_; }

 private:
  Outcome refuse(std::string error, double now);

  double reask_s_;
  std::shared_ptr<const routing::Fabric> fabric_;
  uint64_t fingerprint_ = 0;
  bool waiting_ = false;  // asked for the whole fabric, not received yet
  double asked_at_ = 0;
  uint64_t wholes_ = 0, changes_ = 0, resyncs_ = 0;
};

}  // namespace railyard::controller
