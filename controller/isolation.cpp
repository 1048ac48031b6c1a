#include "controller/isolation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace railyard::controller {

std::string_view to_string(IsolationAction::Kind kind) {
  switch (kind) {
    case IsolationAction::Kind::kIsolate: return "isolate";
    case IsolationAction::Kind::kRestore: return "restore";
    case IsolationAction::Kind::kExcluded: return "excluded";
    case IsolationAction::Kind::kTrip: return "trip";
  }
  return "isolate";
}

std::optional<std::pair<std::string, uint32_t>> split_link_key(const std::string& key) {
  const size_t open = key.find('[');
  if (open == std::string::npos || open < 3 || key.back() != ']' || key.rfind("0x", 0) != 0) return std::nullopt;
  const std::string node = key.substr(0, open);
  const std::string port = key.substr(open + 1, key.size() - open - 2);
  if (port.empty() || port.size() > 3 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const unsigned long n = std::stoul(port);
  if (n > 255) return std::nullopt;
  return std::make_pair(node, static_cast<uint32_t>(n));
}

IsolationEngine::IsolationEngine(IsolationConfig config) : config_(config) {}

uint32_t IsolationEngine::cap() const {
  const uint64_t percent = (static_cast<uint64_t>(switch_links_) * config_.max_percent + 99) / 100;
  return std::max<uint32_t>(config_.max_links, static_cast<uint32_t>(percent));
}

void IsolationEngine::forget_old(LinkWatch& w, double now) const {
  while (!w.downs.empty() && w.downs.front() <= now - config_.window_s) w.downs.pop_front();
}

bool IsolationEngine::excluded(const std::string& link, double now) const {
  auto live = [now](const ExcludeEntry& e) { return !e.expires_at || *e.expires_at > now; };
  if (auto it = excluded_.find(link); it != excluded_.end() && live(it->second)) return true;
  if (auto parts = split_link_key(link)) {
    if (auto it = excluded_.find(parts->first); it != excluded_.end() && live(it->second)) return true;
  }
  return false;
}

std::vector<IsolationAction> IsolationEngine::decide_isolate(const std::string& link, const std::string& reason,
                                                             const std::string& detail, double now) {
  if (!config_.enabled || breaker_.tripped) return {};
  if (isolated_.contains(link) || in_flight_.contains(link)) return {};
  if (excluded(link, now)) {
    watch_[link].downs.clear();  // decided once per crossing
    return {IsolationAction{IsolationAction::Kind::kExcluded, link, reason, detail + "; excluded", config_.dry_run, 0}};
  }
  size_t held = isolated_.size();
  for (const auto& [other, r] : in_flight_) held += isolated_.contains(other) ? 0 : 1;
  if (held >= cap()) {
    breaker_.tripped = true;
    breaker_.tripped_at = now;
    breaker_.why = "isolating " + link + " (" + detail + ") would exceed the cap of " + std::to_string(cap()) +
                   " links isolated";
    return {IsolationAction{IsolationAction::Kind::kTrip, link, reason, breaker_.why, config_.dry_run, 0}};
  }
  in_flight_[link] = reason;
  watch_[link].downs.clear();
  return {IsolationAction{IsolationAction::Kind::kIsolate, link, reason, detail, config_.dry_run, 0}};
}

std::vector<IsolationAction> IsolationEngine::on_link_state(const std::string& link, LinkState state, double now) {
  LinkWatch& w = watch_[link];
  const bool was_down = w.down;
  w.down = state == LinkState::kDown;
  if (was_down == w.down) return {};  // a down counts once, when it goes down
  // Down is not clean until it is up again: the clean period starts at either edge.
  w.last_bad = now;
  if (auto it = isolated_.find(link); it != isolated_.end()) it->second.last_bad = now;
  if (!w.down) return {};
  w.downs.push_back(now);
  forget_old(w, now);
  if (config_.flaps == 0 || w.downs.size() < config_.flaps) return {};
  const std::string detail =
      std::to_string(w.downs.size()) + " downs in " + std::to_string(config_.window_s) + " s";
  return decide_isolate(link, kReasonFlapping, detail, now);
}

std::vector<IsolationAction> IsolationEngine::on_error_rate(const std::string& link, double errors_per_minute,
                                                            double now) {
  if (config_.errors_per_minute == 0 || !std::isfinite(errors_per_minute) ||
      errors_per_minute < config_.errors_per_minute) {
    return {};
  }
  LinkWatch& w = watch_[link];
  w.last_bad = now;
  if (auto it = isolated_.find(link); it != isolated_.end()) it->second.last_bad = now;
  char detail[96];
  std::snprintf(detail, sizeof detail, "%.0f errors/min (threshold %u)", errors_per_minute, config_.errors_per_minute);
  return decide_isolate(link, kReasonErrors, detail, now);
}

std::vector<IsolationAction> IsolationEngine::tick(double now) {
  for (auto it = excluded_.begin(); it != excluded_.end();) {
    it = it->second.expires_at && *it->second.expires_at <= now ? excluded_.erase(it) : std::next(it);
  }
  for (auto it = watch_.begin(); it != watch_.end();) {
    forget_old(it->second, now);
    const bool idle = it->second.downs.empty() && !it->second.down && !isolated_.contains(it->first);
    it = idle ? watch_.erase(it) : std::next(it);
  }
  std::vector<IsolationAction> out;
  if (!config_.enabled || breaker_.tripped) return out;
  for (auto& [link, iso] : isolated_) {
    auto w = watch_.find(link);
    if (w != watch_.end() && w->second.down) continue;  // still down: not clean
    const double clean_since = std::max(iso.since, iso.last_bad);
    if (now - clean_since < config_.clean_s) continue;
    if (in_flight_.contains(link)) continue;
    in_flight_[link] = iso.reason;
    out.push_back(IsolationAction{IsolationAction::Kind::kRestore, link, iso.reason,
                                  "clean for " + std::to_string(static_cast<int64_t>(now - clean_since)) + " s",
                                  iso.dry_run, iso.drain_id});
  }
  return out;
}

void IsolationEngine::isolated(const std::string& link, int64_t drain_id, double now) {
  std::string reason = kReasonFlapping;
  if (auto it = in_flight_.find(link); it != in_flight_.end()) reason = it->second;
  in_flight_.erase(link);
  IsolatedLink& iso = isolated_[link];
  iso.reason = reason;
  iso.link = link;
  iso.since = now;
  iso.drain_id = drain_id;
  iso.dry_run = drain_id == 0;
  auto w = watch_.find(link);
  iso.last_bad = w != watch_.end() ? w->second.last_bad : now;
}

void IsolationEngine::not_isolated(const std::string& link) {
  in_flight_.erase(link);
}

void IsolationEngine::restored(const std::string& link) {
  in_flight_.erase(link);
  isolated_.erase(link);
}

void IsolationEngine::adopt(const std::string& link, const std::string& reason, int64_t drain_id, double since) {
  IsolatedLink& iso = isolated_[link];
  iso.link = link;
  iso.reason = reason;
  iso.drain_id = drain_id;
  iso.since = since;
  iso.last_bad = since;
  iso.dry_run = false;
}

void IsolationEngine::exclude(ExcludeEntry entry) {
  const std::string target = entry.target;
  excluded_[target] = std::move(entry);
}

bool IsolationEngine::unexclude(const std::string& target) { return excluded_.erase(target) > 0; }

bool IsolationEngine::reset(const std::string& by, double now) {
  const bool was = breaker_.tripped;
  breaker_.tripped = false;
  breaker_.reset_at = now;
  breaker_.reset_by = by;
  for (auto& [link, w] : watch_) w.downs.clear();  // the storm that tripped it is not counted again
  return was;
}

IsolationSnapshot IsolationEngine::snapshot() const {
  IsolationSnapshot s;
  s.config = config_;
  s.cap = cap();
  s.switch_links = switch_links_;
  s.breaker = breaker_;
  for (const auto& [link, iso] : isolated_) s.isolated.push_back(iso);
  for (const auto& [target, e] : excluded_) s.excluded.push_back(e);
  for (const auto& [link, w] : watch_) {
    if (!w.downs.empty()) s.recent_downs[link] = static_cast<uint32_t>(w.downs.size());
  }
  return s;
}

}  // namespace railyard::controller
