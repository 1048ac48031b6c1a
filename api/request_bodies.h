// The typed request bodies of /api/v1: one parse function per body, each
// against its schema (schema.h), whose fields are the ones accepted (any
// other is refused, naming the expected ones) and the ones OpenAPI
// documents. What a body gets wrong is a Failure invalid (400) naming the
// field; what the fields refer to (nodes, jobs) is the controller's to judge.
#pragma once

#include <string>

#include "api/schema.h"
#include "controller/controller.h"

namespace railyard::api {

// POST /drains
extern const Schema kDrainBody;
controller::DrainRequest parse_drain_request(const std::string& body);

// POST /events/link
extern const Schema kLinkEventBody;
controller::LinkEventRequest parse_link_event_request(const std::string& body);

// POST /jobs
extern const Schema kJobBody;
controller::JobRequest parse_job_request(const std::string& body);

// POST /isolation/exclude
extern const Schema kExcludeBody;
controller::ExcludeEntry parse_exclude_request(const std::string& body);

// POST /reroute: the body is optional.
struct RerouteRequest {
  std::string reason;
};
extern const Schema kRerouteBody;
RerouteRequest parse_reroute_request(const std::string& body);

// POST /isolation/reset: no fields; nothing or {}.
extern const Schema kEmptyBody;
void parse_empty_request(const std::string& body);

}  // namespace railyard::api
