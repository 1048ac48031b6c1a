// GET /api/v1/events/stream: the recorded events (GET /api/v1/events) as
// server-sent events, for the web console's live log. From ?since=N (default:
// the newest event now, so only new ones), one `event` per record, its data
// the JSON of GET /events' items, its SSE id the event id. The server polls
// every kEventPollMs; a poll costs one indexed MAX(id) read of the store.
#pragma once

#include <cstdint>
#include <memory>

#include "api/api.h"

namespace railyard::api {

// Throws Failure (unavailable) over kMaxEventStreams.
std::shared_ptr<EventSource> open_event_stream(Api& api, int64_t since);

}  // namespace railyard::api
