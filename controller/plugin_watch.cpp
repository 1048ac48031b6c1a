#include "controller/plugin_watch.h"

#include "api/protocol/command_codec.h"
#include "routing/lft_digest.h"

namespace railyard::controller {

using nlohmann::json;
using routing::digest_text;

void PluginWatch::on_connection(bool connected) {
  // A new connection starts with the whole fabric; the copy is kept until
  // then (the view stays as it was).
  if (connected) fabric_.reset();
}

void PluginWatch::on_view(const FabricView& view, double now) { divergence_.note_view(view, now); }

PluginWatch::Effects PluginWatch::on_hello(const protocol::HelloEvent& hello, double time) {
  identity_ = PluginIdentity{hello.version, hello.opensm, hello.pid};
  hello_time_ = time;
  return {};
}

PluginWatch::Effects PluginWatch::on_fabric_changes(const protocol::FabricChangesEvent& event, double now) {
  Effects fx;
  PluginFabric::Outcome o = fabric_.take(event, now);
  if (!o.error.empty()) {
    json body = {{"pass", event.pass}, {"full", event.full}, {"error", o.error}};
    if (o.ask_whole) body["asked_whole_fabric"] = true;
    fx.events.emplace_back(o.fabric ? "fabric_fingerprint_mismatch" : "fabric_changes_rejected", std::move(body));
  }
  if (o.ask_whole) fx.commands.push_back(protocol::encode_command({protocol::CommandKind::kSendFabric, ""}));
  fx.fabric = std::move(o.fabric);
  return fx;
}

void PluginWatch::on_fabric_text(std::shared_ptr<const routing::Fabric> fabric) {
  fabric_.set_unchained(std::move(fabric));
}

json PluginWatch::divergence_event(const DivergenceCheck& c, const std::string& source) const {
  json body = {{"source", source},
               {"kind", c.kind},
               {"reason", c.reason},
               {"view", c.view_version},
               {"plugin", {{"policy", digest_text(c.plugin_policy)}, {"lfts", digest_text(c.plugin_lfts)}}},
               {"railyardd", {{"policy", digest_text(c.our_policy)}, {"lfts", digest_text(c.our_lfts)}}}};
  if (c.switches_differing) {
    body["switches_differing"] = c.switches_differing;
    body["switches"] = c.switches;
  }
  if (!policy_.policy.empty()) body["plugin_policy"] = policy_.policy;
  if (!policy_.policy_error.empty()) body["plugin_policy_error"] = policy_.policy_error;
  return body;
}

PluginWatch::Effects PluginWatch::on_routing_pass(const protocol::RoutingPassEvent& pass, double now, double time) {
  Effects fx;
  if (time < hello_time_) {
    ++earlier_;
    return fx;
  }
  const bool error_changed = pass.policy_error != policy_.policy_error;
  policy_ = PluginPolicy{pass.pass, pass.ok, pass.policy, pass.policy_file, pass.policy_error};
  if (error_changed && !pass.policy_error.empty()) {
    fx.events.emplace_back("plugin_policy_error",
                           json{{"pass", pass.pass}, {"error", pass.policy_error}, {"policy", pass.policy}});
  }
  if (!pass.ok) return fx;
  if (!pass.digests) {
    ++unverified_;
    return fx;
  }
  const DivergenceCheck c = divergence_.check(*pass.digests, "pass " + std::to_string(pass.pass), now);
  if (c.diverged()) fx.events.emplace_back("routing_divergence", divergence_event(c, "routing_pass"));
  return fx;
}

PluginWatch::Effects PluginWatch::on_fast_path(const protocol::FastPathEvent& push, double now) {
  Effects fx;
  // A trap's push routes a fabric railyardd learns of only with OpenSM's
  // next pass: not comparable. A command's push is checked with its
  // routing-done (on_routing_done).
  (void)push;
  (void)now;
  return fx;
}

PluginWatch::Effects PluginWatch::on_routing_done(const protocol::UcastRoutingDoneEvent& done, uint64_t blocks,
                                                 double now, double time) {
  Effects fx;
  if (time < hello_time_) {
    ++earlier_;
    for (const std::string& id : done.requests) {
      fx.finished.push_back(Verdict{id, false,
                                    "not verified: the plugin reported it before its connection to this railyardd "
                                    "(sent again after a controller switch)"});
    }
    return fx;
  }
  const bool pushed = done.reason == protocol::RoutingReason::kFastPath;
  std::optional<DivergenceCheck> check;
  if (done.engine_ok && done.digests) {
    // The pass before it was checked already (routing_pass); a push is
    // checked here, once.
    check = divergence_.check(*done.digests, pushed ? "fast path" : "routing done", now, /*count=*/pushed);
    if (pushed && check->diverged()) {
      fx.events.emplace_back("routing_divergence", divergence_event(*check, "fast_path"));
    }
  } else if (done.engine_ok && pushed) {
    ++unverified_;
  }
  for (const std::string& id : done.requests) {
    Verdict v{id, false, {}};
    if (!done.engine_ok) {
      v.detail = "OpenSM routed with a fallback engine";
    } else if (!done.digests) {
      v.detail = "the plugin reported no digests of the tables it wrote: not verified (a plugin older than railyardd)";
    } else if (!check->compared) {
      v.detail = "no routed view to compare the plugin's tables with";
    } else if (check->superseded) {
      v.detail = "not verified: " + check->reason;
    } else if (!check->agrees) {
      v.detail = "the tables the plugin wrote are not railyardd's route: " + check->reason;
    } else {
      v.applied = true;
      v.detail = "LFTs in place (" + std::to_string(blocks) + " blocks changed" +
                 (pushed ? ", pushed by the plugin" : "") + "), digest " + digest_text(check->our_lfts) +
                 " = view " + std::to_string(check->view_version);
    }
    fx.finished.push_back(std::move(v));
  }
  return fx;
}

std::vector<std::string> PluginWatch::health_reasons() const {
  std::vector<std::string> out;
  if (divergence_.standing()) out.push_back("the plugin's tables diverge from railyardd's: " + *divergence_.standing());
  if (!policy_.policy_error.empty()) {
    out.push_back("the plugin's policy file does not load (it routes with " +
                  (policy_.policy.empty() ? std::string("its last good policy") : "'" + policy_.policy + "'") +
                  "): " + policy_.policy_error);
  }
  return out;
}

json PluginWatch::status() const {
  json j = {{"divergences", divergence_.divergences()},
            {"checks", divergence_.checks()},
            {"superseded", divergence_.superseded()},
            {"unverified", unverified_},
            {"earlier_reports", earlier_},
            {"diverged", divergence_.standing().has_value()}};
  if (!identity_.version.empty()) {
    j["version"] = identity_.version;
    j["opensm"] = identity_.opensm;
    j["pid"] = identity_.pid;
  }
  if (policy_.pass) {
    j["pass"] = policy_.pass;
    j["policy"] = policy_.policy;
    j["policy_file"] = policy_.policy_file.empty() ? json(nullptr) : json(policy_.policy_file);
    if (!policy_.policy_error.empty()) j["policy_error"] = policy_.policy_error;
  }
  j["fabric"] = {{"whole", fabric_.wholes()},
                 {"changes", fabric_.changes()},
                 {"resyncs", fabric_.resyncs()},
                 {"fingerprint", fabric_.fingerprint() ? json(digest_text(fabric_.fingerprint())) : json(nullptr)}};
  return j;
}

}  // namespace railyard::controller
