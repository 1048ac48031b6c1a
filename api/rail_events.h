// GET /api/v1/rails/events: server-sent events of rail health, for job
// launchers. On connect one `rails` event per host (or only the hosts named
// by ?host=A,B), then one per host whose rails changed (health, leaf,
// uplinks), within kEventPollMs of the change. Each event's data is the JSON
// of GET /hosts/{host}/rails. The SSE id is the controller's generation.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "api/api.h"

namespace railyard::api {

// The stream's source; throws Failure (not found) for an unknown host and
// (unavailable) over kMaxEventStreams.
std::shared_ptr<EventSource> open_rail_events(Api& api, const std::set<std::string>& hosts);

}  // namespace railyard::api
