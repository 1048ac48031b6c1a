// The controller's vocabularies: the states and kinds its records hold. Each
// has one to_string (the text the store keeps in SQLite and the API renders)
// and one parse_* (that text back; std::nullopt for any other text).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace railyard::controller {

// What a drain takes out of routing.
enum class DrainKind : uint8_t { kLink, kPort, kSwitch };  // "link", "port", "switch"
std::string_view to_string(DrainKind kind);
std::optional<DrainKind> parse_drain_kind(std::string_view text);

// A link's health as last reported.
enum class LinkState : uint8_t { kUp, kDown };  // "up", "down"
std::string_view to_string(LinkState state);
std::optional<LinkState> parse_link_state(std::string_view text);

// A reroute request: queued (waiting for the rate limit), pending (sent to
// the plugin), then applied or failed.
enum class RerouteStatus : uint8_t { kQueued, kPending, kApplied, kFailed };  // "queued", "pending", ...
std::string_view to_string(RerouteStatus status);
std::optional<RerouteStatus> parse_reroute_status(std::string_view text);

// A SHARP job: holding trees, dropped when its trees could not be rebuilt,
// or deleted by its owner.
enum class JobStatus : uint8_t { kActive, kRefused, kDeleted };  // "active", "refused", "deleted"
std::string_view to_string(JobStatus status);
std::optional<JobStatus> parse_job_status(std::string_view text);

// Who reported an event or a link state: the OpenSM plugin, a REST client
// (monitoring, operators) or the controller itself.
enum class Reporter : uint8_t { kPlugin, kRest, kController };  // "plugin", "rest", "controller"
std::string_view to_string(Reporter reporter);
std::optional<Reporter> parse_reporter(std::string_view text);

}  // namespace railyard::controller
