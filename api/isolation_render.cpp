#include "api/isolation_render.h"

#include "controller/failure.h"

namespace railyard::api {

namespace ctl = railyard::controller;
using nlohmann::json;

namespace {

json optional_time(const std::optional<double>& t) { return t ? json(*t) : json(nullptr); }

}  // namespace

json render_isolation(const ctl::IsolationSnapshot& s) {
  const ctl::IsolationConfig& c = s.config;
  json out;
  out["enabled"] = c.enabled;
  out["dry_run"] = c.dry_run;
  out["config"] = {{"flaps", c.flaps},
                   {"window_s", c.window_s},
                   {"errors_per_minute", c.errors_per_minute},
                   {"clean_s", c.clean_s},
                   {"max_links", c.max_links},
                   {"max_percent", c.max_percent}};
  out["cap"] = s.cap;
  out["switch_links"] = s.switch_links;
  out["breaker"] = {{"tripped", s.breaker.tripped},
                    {"tripped_at", s.breaker.tripped ? json(s.breaker.tripped_at) : json(nullptr)},
                    {"why", s.breaker.why},
                    {"reset_at", s.breaker.reset_at > 0 ? json(s.breaker.reset_at) : json(nullptr)},
                    {"reset_by", s.breaker.reset_by}};
  json isolated = json::array();
  for (const ctl::IsolatedLink& i : s.isolated) {
    isolated.push_back({{"link", i.link},
                        {"reason", i.reason},
                        {"since", i.since},
                        {"drain_id", i.drain_id > 0 ? json(i.drain_id) : json(nullptr)},
                        {"dry_run", i.dry_run},
                        {"last_bad", i.last_bad}});
  }
  out["isolated"] = isolated;
  json excluded = json::array();
  for (const ctl::ExcludeEntry& e : s.excluded) {
    excluded.push_back({{"target", e.target},
                        {"reason", e.reason},
                        {"by", e.by},
                        {"added_at", e.added_at},
                        {"expires_at", optional_time(e.expires_at)}});
  }
  out["excluded"] = excluded;
  json recent = json::object();
  for (const auto& [link, n] : s.recent_downs) recent[link] = n;
  out["recent_downs"] = recent;
  return out;
}

ctl::AutoIsolation* need_isolation(ctl::AutoIsolation* isolation) {
  if (!isolation) throw ctl::Failure::unavailable("automatic isolation is not running in this process");
  return isolation;
}

}  // namespace railyard::api
