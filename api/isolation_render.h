// JSON of automatic isolation's state (GET /api/v1/isolation and the answers
// of its POST/DELETE): what railyardctl isolation prints.
#pragma once

#include <nlohmann/json.hpp>

#include "controller/auto_isolation.h"

namespace railyard::api {

nlohmann::json render_isolation(const controller::IsolationSnapshot& s);
// The running AutoIsolation, or a Failure unavailable (503) when there is none.
controller::AutoIsolation* need_isolation(controller::AutoIsolation* isolation);

}  // namespace railyard::api
