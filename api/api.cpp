#include "api/api.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <set>

#include "api/console_files.h"
#include "api/endpoints.h"
#include "api/openapi.h"
#include "api/render.h"
#include "api/request.h"
#include "api/status_codes.h"

namespace railyard::api {

using nlohmann::json;
using controller::Role;

controller::Actor Api::authenticate(const std::string& authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() || authorization.compare(0, kBearer.size(), kBearer) != 0) return {};
  const std::string_view token = std::string_view(authorization).substr(kBearer.size());
  // Every configured token is compared over its whole length, whatever was
  // presented and whether an earlier one matched: the time depends on the
  // configuration only, never on how much of a guess was right.
  const controller::TokenEntry* found = nullptr;
  for (const controller::TokenEntry& t : c_.config().tokens) {
    unsigned char diff = t.token.size() != token.size() ? 1 : 0;
    for (size_t i = 0; i < t.token.size(); ++i) {
      const unsigned char presented = i < token.size() ? static_cast<unsigned char>(token[i]) : 0;
      diff |= static_cast<unsigned char>(static_cast<unsigned char>(t.token[i]) ^ presented);
    }
    if (diff == 0 && !found) found = &t;
  }
  if (!found) return {};
  return {found->name, found->role};
}

namespace {

// "POST /api/v1/drains?force=true": what the audit log names.
std::string audited_action(const HttpRequest& req) {
  std::string action = req.method + " " + req.path;
  char sep = '?';
  for (const auto& [k, v] : req.query) {
    action += sep + k + "=" + v;
    sep = '&';
  }
  return action;
}

// The message of a JSON response: error.message, else message.
std::string response_message(const HttpResponse& r) {
  const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  if (!body.is_object()) return {};
  if (body.contains("error") && body["error"].is_object()) return body["error"].value("message", "");
  return body.value("message", "");
}

bool is_mutation_method(std::string_view method) {
  return method == "POST" || method == "DELETE" || method == "PUT" || method == "PATCH";
}

}  // namespace

HttpResponse Api::handle(const HttpRequest& req) {
  if (std::optional<HttpResponse> file = console_file(req)) return *std::move(file);
  // Every answer is timed, refusals included (railyard_http_request_duration_seconds).
  struct Timer {
    HttpStats& stats;
    double start = controller::steady_now();
    ~Timer() { stats.observe_request(controller::steady_now() - start); }
  } timer{*http_stats_};
  const Match m = match(req.method, req.path);
  if (!m.endpoint) {
    return m.path_known ? error_response(405, req.method + " is not allowed on " + req.path)
                        : error_response(404, "no endpoint " + req.path + " (GET /api/v1 lists them)");
  }
  const Endpoint& e = *m.endpoint;
  controller::Actor actor = authenticate(req.authorization);
  if (e.mutation) {
    actor.action = audited_action(req);
    actor.request = req.body;
  }
  HttpResponse r;
  // Outside the try: a change the controller audited stays audited even if
  // answering it throws.
  Call call{e, m.params, req, actor};
  if (e.role != Role::kNone && actor.role == Role::kNone) {
    r = error_response(401, req.authorization.empty() ? "a bearer token is required" : "the bearer token is not valid");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"railyard\"");
  } else if (actor.role < e.role) {
    r = error_response(403, "'" + actor.name + "' has the role " + std::string(controller::to_string(actor.role)) +
                                "; " + req.method + " " + std::string(e.pattern) + " needs " +
                                std::string(controller::to_string(e.role)));
  } else if (std::optional<HttpResponse> refusal = e.mutation ? not_leader_refusal(req) : std::nullopt) {
    r = std::move(*refusal);
  } else {
    try {
      check_query(req, e);
      if (e.mutation && !req.idempotency_key.empty()) {
        if (std::optional<HttpResponse> replay = idempotent_replay(call)) {
          r = std::move(*replay);
        } else {
          // The key is recorded with the change, in its transaction (and
          // its log entry): a retry finds it exactly when the change is durable.
          controller::Store::IdempotencyScope scope(req.idempotency_key,
                                                    req.method + " " + req.path + " by " + actor.name);
          r = (this->*e.handler)(call);
        }
      } else {
        r = (this->*e.handler)(call);
      }
    } catch (const controller::Failure& f) {
      r = failure_response(f);
    } catch (const controller::StoreError& ex) {
      spdlog::error("{} {}: database: {}", req.method, req.path, ex.what());
      r = failure_response(controller::Failure::unavailable(std::string("the database cannot be used (") + ex.what() +
                                                            "): nothing changed"));
    } catch (const std::exception& ex) {
      spdlog::error("{} {}: internal error: {}", req.method, req.path, ex.what());
      r = failure_response(controller::Failure::internal(std::string("internal error: ") + ex.what()));
    }
  }
  // A change is audited with the change itself; everything else a mutation
  // endpoint answers (refused, failed, dry run) is audited here, bounded.
  if (e.mutation && !call.audited) c_.audit_refused(actor, r.status, response_message(r));
  // A change is answered once the documents read so far show it: whoever
  // made it reads it back, and readers meanwhile got the last whole ones.
  if (e.mutation && call.audited) {
    try {
      refresh_documents();
    } catch (const std::exception& ex) {
      spdlog::warn("{} {}: documents not refreshed: {}", req.method, req.path, ex.what());
    }
  }
  add_ha_headers(r);
  return r;
}

void Api::refused_before_routing(const std::string& method, const std::string& target, int status,
                                 const std::string& message) {
  if (!method.empty() && !is_mutation_method(method)) return;
  controller::Actor actor;
  actor.name = "anonymous";
  actor.action = (method.empty() ? "?" : method) + " " + target.substr(0, 256);
  c_.audit_refused(actor, status, message);
}

}  // namespace railyard::api
