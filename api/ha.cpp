// The API's side of high availability (docs/ha.md): mutations on a member
// that is not the leader, Idempotency-Key replays, the view-version header
// and the role in /health.
#include <charconv>

#include "api/api.h"
#include "api/render.h"
#include "api/request.h"

namespace railyard::api {

using nlohmann::json;

namespace {

// Visible ASCII, 1..128 bytes: what an Idempotency-Key may be.
bool valid_idempotency_key(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

}  // namespace

std::optional<HttpResponse> Api::not_leader_refusal(const HttpRequest& req) const {
  if (replicator_ == nullptr || replicator_->serving()) return std::nullopt;
  // A dry run changes nothing: any member answers it from its own view.
  if (auto it = req.query.find("dry_run"); it != req.query.end() && (it->second == "true" || it->second == "1")) {
    return std::nullopt;
  }
  const controller::HaStatus s = replicator_->status();
  const std::optional<std::string> why = replicator_->refusal();
  json body = {{"error",
                {{"status", 503},
                 {"message", why ? *why : "not the leader"},
                 {"role", controller::to_string(s.role)},
                 {"leader", s.leader.empty() ? json(nullptr) : json(s.leader)},
                 {"leader_url", s.leader_api.empty() ? json(nullptr) : json(s.leader_api)}}}};
  HttpResponse r = json_response(503, body);
  if (!s.leader_api.empty()) {
    r.headers.emplace_back("X-Railyard-Leader", s.leader_api);
    r.headers.emplace_back("Location", s.leader_api + req.path);
  }
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

std::optional<HttpResponse> Api::idempotent_replay(const Call& call) {
  const HttpRequest& req = call.request;
  if (!valid_idempotency_key(req.idempotency_key)) {
    throw controller::Failure::invalid("Idempotency-Key must be 1 to 128 visible ASCII characters");
  }
  std::optional<controller::IdempotencyRecord> done = c_.store().idempotency(req.idempotency_key);
  if (!done) return std::nullopt;
  const std::string request = req.method + " " + req.path + " by " + call.actor.name;
  if (done->request != request) {
    throw controller::Failure::conflict("Idempotency-Key '" + req.idempotency_key + "' was used for another request (" +
                                        done->request + ")");
  }
  json body = {{"idempotent_replay", true}, {"result", done->result}, {"first_at", done->time}};
  // "drain 12" / "undrain 12": the drain as it is now.
  for (const char* prefix : {"drain ", "undrain "}) {
    const std::string_view p(prefix);
    if (done->result.compare(0, p.size(), p) != 0) continue;
    int64_t id = 0;
    const char* first = done->result.data() + p.size();
    const char* last = done->result.data() + done->result.size();
    if (std::from_chars(first, last, id).ec == std::errc()) {
      if (std::optional<controller::DrainRecord> d = c_.store().drain(id)) body["drain"] = render_drain(*d);
    }
  }
  HttpResponse r = json_response(200, body);
  r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

void Api::add_ha_headers(HttpResponse& r) const {
  if (replicator_ == nullptr) return;
  r.headers.emplace_back("X-Railyard-View-Version", std::to_string(c_.store().applied_seq()));
}

json Api::ha_health() const {
  const controller::HaStatus s = replicator_->status();
  json out = {{"role", controller::to_string(s.role)},
              {"member", s.member},
              {"leader", s.leader.empty() ? json(nullptr) : json(s.leader)},
              {"leader_url", s.leader_api.empty() ? json(nullptr) : json(s.leader_api)},
              {"applied_seq", s.applied_seq},
              {"etcd", s.etcd_ok ? "ok" : "failing"},
              {"etcd_endpoint", s.etcd_endpoint},
              {"elections_won", s.elections_won},
              {"step_downs", s.step_downs}};
  if (!s.etcd_ok) out["etcd_error"] = s.etcd_error;
  if (!s.last_step_down.empty()) out["last_step_down"] = s.last_step_down;
  if (std::optional<std::string> why = replicator_->refusal()) out["mutations"] = *why;
  return out;
}

}  // namespace railyard::api
