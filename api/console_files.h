// The web console's files (api/console/web/, built into the binary): GET /console/
// is the page, /console/NAME its scripts and styles, / redirects to it. No
// token is needed for these (they hold no fabric data; the page asks for a
// token and sends it with its /api/v1 calls). Served with a Content-Security-
// Policy that allows this origin only: the page loads nothing from elsewhere.
#pragma once

#include <optional>

#include "api/http_types.h"

namespace railyard::api {

// The answer when `request` is for a console file; nullopt otherwise.
std::optional<HttpResponse> console_file(const HttpRequest& request);

}  // namespace railyard::api
