// Events: what the plugin tells the controller. The structs are the
// protocol's (api/protocol/plugin_events.h, the one definition the controller
// decodes too); the plugin names them here.
//
// report() and the routing pass turn OpenSM's data into one of these structs
// (copies of numbers and short strings, no pointers into OpenSM) and push it
// onto the EventChannel; the channel's thread encodes it and writes it. The
// one exception is FabricEvent: it shares an immutable Fabric, which the
// channel's thread serializes, so the topology text is never built under
// OpenSM's lock.
#pragma once

#include "api/protocol/plugin_events.h"

namespace railyard::sm_plugin {

using protocol::AckEvent;
using protocol::CounterPort;
using protocol::Digests;
using protocol::Event;
using protocol::EventBody;
using protocol::FabricEvent;
using protocol::FastPathEvent;
using protocol::HelloEvent;
using protocol::LftChangeEvent;
using protocol::PortCountersEvent;
using protocol::PortErrorsEvent;
using protocol::PortSelectEvent;
using protocol::RoutingPassEvent;
using protocol::RoutingReason;
using protocol::SimpleEvent;
using protocol::SimpleKind;
using protocol::StageTimes;
using protocol::TrapEvent;
using protocol::UcastRoutingDoneEvent;
using protocol::UnreachableCa;

// Unix time now, seconds.
double unix_time_now();

}  // namespace railyard::sm_plugin
