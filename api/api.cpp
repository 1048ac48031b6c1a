#include "api/api.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <set>

#include "api/endpoints.h"
#include "api/openapi.h"
#include "api/render.h"
#include "api/request.h"

namespace railyard::api {

using nlohmann::json;
using controller::Role;

controller::Actor Api::authenticate(const std::string& authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() || authorization.compare(0, kBearer.size(), kBearer) != 0) return {};
  const std::string_view token = std::string_view(authorization).substr(kBearer.size());
  for (const controller::TokenEntry& t : c_.config().tokens) {
    // Constant-time over the configured token's length.
    if (t.token.size() != token.size()) continue;
    unsigned char diff = 0;
    for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(t.token[i] ^ token[i]);
    if (diff == 0) return {t.name, t.role};
  }
  return {};
}

HttpResponse Api::handle(const HttpRequest& req) {
  const Match m = match(req.method, req.path);
  if (!m.endpoint) {
    return m.path_known ? error_response(405, req.method + " is not allowed on " + req.path)
                        : error_response(404, "no endpoint " + req.path + " (GET /api/v1 lists them)");
  }
  const Endpoint& e = *m.endpoint;
  const controller::Actor actor = authenticate(req.authorization);
  if (e.role != Role::kNone) {
    if (actor.role == Role::kNone) {
      HttpResponse r = error_response(401, req.authorization.empty() ? "a bearer token is required"
                                                                     : "the bearer token is not valid");
      r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"railyard\"");
      return r;
    }
    if (actor.role < e.role) {
      HttpResponse r = error_response(403, "'" + actor.name + "' has the role " +
                                               std::string(controller::to_string(actor.role)) + "; " + req.method +
                                               " " + std::string(e.pattern) + " needs " +
                                               std::string(controller::to_string(e.role)));
      if (e.mutation) c_.audit(actor, req.method + " " + req.path, req.body, r.status, "forbidden");
      return r;
    }
  }
  HttpResponse r;
  try {
    check_query(req, e);
    r = dispatch(e, m.params, req, actor);
  } catch (const BadRequest& b) {
    r = error_response(b.status, b.message);
  } catch (const std::exception& ex) {
    spdlog::error("{} {}: internal error: {}", req.method, req.path, ex.what());
    r = error_response(500, std::string("internal error: ") + ex.what());
  }
  if (e.mutation) {
    std::string result;
    json body = json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error")) {
      result = body["error"].value("message", "");
    } else if (body.is_object()) {
      result = body.value("message", "");
    }
    try {
      std::string action = req.method + " " + req.path;
      char sep = '?';
      for (const auto& [k, v] : req.query) {
        action += sep + k + "=" + v;
        sep = '&';
      }
      c_.audit(actor, action, req.body, r.status, result);
    } catch (const std::exception& ex) {
      spdlog::error("audit of {} {} failed: {}", req.method, req.path, ex.what());
      return error_response(500, std::string("the change was made but its audit record failed: ") + ex.what());
    }
  }
  return r;
}

}  // namespace railyard::api
