// The OpenAPI 3 document of /api/v1, generated from the endpoint table.
#pragma once

#include <nlohmann/json.hpp>

namespace railyard::api {

nlohmann::json openapi_document();

}  // namespace railyard::api
