#include "controller/states.h"

#include <array>
#include <utility>

namespace railyard::controller {

namespace {

// One table per enum: to_string and parse_* read the same words.
template <class E, size_t N>
using Words = std::array<std::pair<E, std::string_view>, N>;

constexpr Words<DrainKind, 3> kDrainKinds = {{
    {DrainKind::kLink, "link"}, {DrainKind::kPort, "port"}, {DrainKind::kSwitch, "switch"}}};
constexpr Words<LinkState, 2> kLinkStates = {{{LinkState::kUp, "up"}, {LinkState::kDown, "down"}}};
constexpr Words<RerouteStatus, 4> kRerouteStatuses = {{{RerouteStatus::kQueued, "queued"},
                                                        {RerouteStatus::kPending, "pending"},
                                                        {RerouteStatus::kApplied, "applied"},
                                                        {RerouteStatus::kFailed, "failed"}}};
constexpr Words<JobStatus, 3> kJobStatuses = {
    {{JobStatus::kActive, "active"}, {JobStatus::kRefused, "refused"}, {JobStatus::kDeleted, "deleted"}}};
constexpr Words<Reporter, 3> kReporters = {
    {{Reporter::kPlugin, "plugin"}, {Reporter::kRest, "rest"}, {Reporter::kController, "controller"}}};

template <class E, size_t N>
std::string_view word(const Words<E, N>& words, E value) {
  for (const auto& [v, w] : words) {
    if (v == value) return w;
  }
  return "?";  // not reached: every enumerator has its word
}

template <class E, size_t N>
std::optional<E> parse(const Words<E, N>& words, std::string_view text) {
  for (const auto& [v, w] : words) {
    if (w == text) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(DrainKind kind) { return word(kDrainKinds, kind); }
std::optional<DrainKind> parse_drain_kind(std::string_view text) { return parse(kDrainKinds, text); }
std::string_view to_string(LinkState state) { return word(kLinkStates, state); }
std::optional<LinkState> parse_link_state(std::string_view text) { return parse(kLinkStates, text); }
std::string_view to_string(RerouteStatus status) { return word(kRerouteStatuses, status); }
std::optional<RerouteStatus> parse_reroute_status(std::string_view text) { return parse(kRerouteStatuses, text); }
std::string_view to_string(JobStatus status) { return word(kJobStatuses, status); }
std::optional<JobStatus> parse_job_status(std::string_view text) { return parse(kJobStatuses, text); }
std::string_view to_string(Reporter reporter) { return word(kReporters, reporter); }
std::optional<Reporter> parse_reporter(std::string_view text) { return parse(kReporters, text); }

}  // namespace railyard::controller
