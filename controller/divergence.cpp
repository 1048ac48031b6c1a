#include "controller/divergence.h"

#include <algorithm>
#include <map>

namespace railyard::controller {

using routing::digest_text;

ViewDigests digests_of(const FabricView& view) {
  ViewDigests d;
  d.version = view.version;
  d.policy = routing::policy_digest(view.policy);
  d.lfts = routing::lft_digests(view.fabric, view.routing.tables);
  return d;
}

void DivergenceTracker::note_view(const FabricView& view, double now) {
  if (!views_.empty() && views_.back().digests.version == view.version) return;
  if (!views_.empty()) views_.back().replaced_at = now;
  views_.push_back(Entry{digests_of(view), 0});
  while (views_.size() > keep_) views_.pop_front();
}

DivergenceCheck DivergenceTracker::check(const protocol::Digests& plugin, const std::string& what, double now,
                                         bool count) {
  DivergenceCheck c;
  c.plugin_policy = plugin.policy;
  c.plugin_lfts = plugin.lfts;
  // Views the report may answer, newest first.
  std::vector<const Entry*> open;
  for (auto it = views_.rbegin(); it != views_.rend(); ++it) {
    if (it->replaced_at == 0 || now - it->replaced_at <= grace_s_) open.push_back(&*it);
  }
  if (open.empty()) return c;
  c.compared = true;
  if (count) ++checks_;
  for (const Entry* e : open) {
    if (e->digests.policy == plugin.policy && e->digests.lfts.total == plugin.lfts) {
      c.agrees = true;
      c.view_version = e->digests.version;
      c.our_policy = e->digests.policy;
      c.our_lfts = e->digests.lfts.total;
      if (count) standing_.reset();
      return c;
    }
  }
  const Entry* same_policy = nullptr;
  for (const Entry* e : open) {
    if (e->digests.policy == plugin.policy) {
      same_policy = e;
      break;
    }
  }
  const Entry& ours = same_policy ? *same_policy : *open.front();
  c.view_version = ours.digests.version;
  c.our_policy = ours.digests.policy;
  c.our_lfts = ours.digests.lfts.total;
  const std::string view = "view " + std::to_string(ours.digests.version);
  // The plugin's policy was railyardd's until a newer one replaced it (the
  // view in force plans with another): the plugin routed its fabric under
  // the file it had read, railyardd routed that fabric only under the newer
  // policy, so no view can be equal. The command carrying the newer policy
  // is on its way and its report is compared. A plugin that stays on the
  // older policy diverges ("policy") once that view is past grace_s.
  if (same_policy && same_policy->replaced_at != 0 && open.front()->digests.policy != plugin.policy) {
    c.superseded = true;
    c.kind = "superseded";
    c.reason = what + ": planned with policy " + digest_text(plugin.policy) + " of railyardd's " + view +
               ", replaced since by " + digest_text(open.front()->digests.policy) + " (view " +
               std::to_string(open.front()->digests.version) + "): superseded by the change already sent";
    if (count) ++superseded_;
    return c;
  }
  if (!same_policy) {
    c.kind = "policy";
    c.reason = what + ": the plugin planned with policy " + digest_text(plugin.policy) + ", railyardd's " + view +
               " with " + digest_text(ours.digests.policy) + "; tables " +
               (plugin.lfts == ours.digests.lfts.total ? "equal" : "differ") + " (" + digest_text(plugin.lfts) +
               " vs " + digest_text(ours.digests.lfts.total) + ")";
  } else {
    c.kind = "lfts";
    c.reason = what + ": the plugin wrote tables " + digest_text(plugin.lfts) + ", railyardd's " + view +
               " routes " + digest_text(ours.digests.lfts.total) + " under the same policy " +
               digest_text(plugin.policy);
  }
  if (!plugin.switches.empty()) {
    std::map<uint64_t, std::pair<std::optional<uint64_t>, std::optional<uint64_t>>> both;
    for (const routing::SwitchDigest& s : plugin.switches) both[s.guid.value].first = s.lft;
    for (const routing::SwitchDigest& s : ours.digests.lfts.switches) both[s.guid.value].second = s.lft;
    for (const auto& [guid, pair] : both) {
      if (pair.first == pair.second) continue;
      ++c.switches_differing;
      if (c.switches.size() < 10) c.switches.push_back(routing::to_string(Guid{guid}));
    }
    c.reason += "; " + std::to_string(c.switches_differing) + " of " + std::to_string(both.size()) +
                " switches' tables differ";
    if (!c.switches.empty()) c.reason += " (first " + c.switches.front() + ")";
  }
  if (count) {
    ++divergences_;
    standing_ = c.reason;
  }
  return c;
}

}  // namespace railyard::controller
