// osm_events: OpenSM's event-plugin data (osm_event_plugin.h) as the plain
// values of events.h.
//
// Called from report(), on OpenSM's sweeper, dispatcher and perfmgr threads,
// sometimes with OpenSM's lock held (LFT_CHANGE: exclusively, TRAP: shared):
// it copies numbers and names out of the event data and touches nothing else
// -- no lock, no allocation beyond the short strings, no lookup in the subnet.
// LFT_CHANGE reads the switch object it is handed, which is safe because the
// caller holds the lock.
#pragma once

#include <optional>

#include "sm_plugin/events.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

// std::nullopt for an event id this version does not know, or missing data.
// UCAST_ROUTING_DONE: only the reason; the caller adds requests and engine_ok.
std::optional<EventBody> event_from_osm(osm_epi_event_id_t id, const void* data);

}  // namespace railyard::sm_plugin
