#include "controller/plugin_fabric.h"

#include "routing/fabric_changes.h"
#include "routing/fabric_fingerprint.h"
#include "routing/lft_digest.h"

namespace railyard::controller {

using routing::digest_text;

void PluginFabric::reset() {
  fabric_.reset();
  fingerprint_ = 0;
  waiting_ = false;
  asked_at_ = 0;
}

void PluginFabric::set_unchained(std::shared_ptr<const routing::Fabric> fabric) {
  fabric_ = std::move(fabric);
  fingerprint_ = 0;
}

PluginFabric::Outcome PluginFabric::refuse(std::string error, double now) {
  Outcome o;
  o.error = std::move(error);
  if (!waiting_ || now - asked_at_ >= reask_s_) {
    o.ask_whole = true;
    waiting_ = true;
    asked_at_ = now;
    ++resyncs_;
  }
  return o;
}

PluginFabric::Outcome PluginFabric::take(const protocol::FabricChangesEvent& event, double now) {
  const std::string pass = "pass " + std::to_string(event.pass);
  if (!event.full) {
    if (!fabric_ || fingerprint_ == 0) return refuse(pass + ": changes without the whole fabric before them", now);
    if (event.base != fingerprint_) {
      return refuse(pass + ": changes from fabric " + digest_text(event.base) + ", railyardd has " +
                        digest_text(fingerprint_),
                    now);
    }
  }
  static const routing::Fabric kEmpty;
  Result<routing::Fabric> next = routing::apply_changes(event.full ? kEmpty : *fabric_, event.changes);
  if (!next) return refuse(pass + ": the changes do not apply: " + next.error().message, now);
  const uint64_t fingerprint = routing::fabric_fingerprint(*next);
  std::string warning;
  if (fingerprint != event.fingerprint) {
    const std::string what = pass + ": the fabric built is " + digest_text(fingerprint) + ", the plugin's " +
                             digest_text(event.fingerprint);
    // Changes are asked again whole; a whole fabric is the plugin's own
    // records: kept (the divergence check compares what it routes to), said.
    if (!event.full) return refuse(what, now);
    warning = what;
  }
  fabric_ = std::make_shared<const routing::Fabric>(std::move(*next));
  // Changes name their base by the plugin's fingerprint.
  fingerprint_ = event.fingerprint;
  if (event.full) {
    waiting_ = false;
    ++wholes_;
  } else {
    ++changes_;
  }
  return Outcome{fabric_, warning, false};
}

}  // namespace railyard::controller
