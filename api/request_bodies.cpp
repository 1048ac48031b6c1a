#include "api/request_bodies.h"

#include <charconv>
#include <cmath>

#include "api/http_types.h"
#include "api/request.h"

namespace railyard::api {

using nlohmann::json;
namespace ctl = railyard::controller;
using ctl::Failure;

namespace {

// "expires": a Unix time (number) or "+SECONDS" from now.
std::optional<double> parse_expires(const json& j) {
  if (!j.contains("expires") || j["expires"].is_null()) return std::nullopt;
  const double now = ctl::unix_now();
  if (j["expires"].is_number()) {
    const double t = j["expires"].get<double>();
    if (!std::isfinite(t) || t <= now) throw Failure::invalid("field 'expires' must be a Unix time in the future");
    return t;
  }
  if (j["expires"].is_string()) {
    const std::string s = j["expires"].get<std::string>();
    uint64_t secs = 0;
    if (s.size() > 1 && s[0] == '+') {
      auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), secs);
      if (ec == std::errc() && end == s.data() + s.size() && secs > 0 && secs <= 366ull * 86400) return now + double(secs);
    }
  }
  throw Failure::invalid("field 'expires' must be a Unix time or \"+SECONDS\" (at most a year)");
}

// The order of each list is the order an unknown field's message names them.
constexpr Field kDrainBodyFields[] = {
    {"target", "string", true, "link, port or switch"},
    {"node", "string", true, "GUID, name or description"},
    {"port", "integer", false, "1..254; required for a link or port, refused for a switch"},
    {"reason", "string", true, "why (not empty)"},
    {"expires", "number|string", false, "a Unix time in the future, or \"+SECONDS\" from now (at most a year)"},
};

constexpr Field kLinkEventBodyFields[] = {
    {"id", "string", true, "the monitor's event id (1..256 printable ASCII, no blanks): the same id is one event"},
    {"node", "string", true, "either end of the link: GUID, name or description"},
    {"port", "integer", true, "1..254"},
    {"state", "string", true, "down or up"},
    {"reason", "string", false, ""},
    {"time", "number", false, "Unix time of the event"},
};

constexpr Field kJobBodyFields[] = {
    {"id", "string", true, "1..128 printable ASCII, no blanks"},
    {"hosts", "string[]", false, "host names (all their CAs); hosts or cas is required"},
    {"cas", "string[]", false, "CA names or GUIDs"},
    {"rails", "integer[]", false, "only these rails (integers 0..1023); default: all of the job's"},
};

constexpr Field kExcludeBodyFields[] = {
    {"target", "string", true, "a link \"0x<guid>[port]\" or a node \"0x<guid>\""},
    {"reason", "string", false, ""},
    {"expires", "number|string", false, "a Unix time in the future, or \"+SECONDS\" from now (at most a year)"},
};

constexpr Field kRerouteBodyFields[] = {{"reason", "string", false, ""}};

}  // namespace

const Schema kDrainBody{kDrainBodyFields};
const Schema kLinkEventBody{kLinkEventBodyFields};
const Schema kJobBody{kJobBodyFields};
const Schema kExcludeBody{kExcludeBodyFields};
const Schema kRerouteBody{kRerouteBodyFields, true};
const Schema kEmptyBody{{}, true};

ctl::DrainRequest parse_drain_request(const std::string& body) {
  const json j = parse_object(body, kDrainBody);
  const std::string target = get_string(j, "target", true);
  std::optional<ctl::DrainKind> kind = ctl::parse_drain_kind(target);
  if (!kind) throw Failure::invalid("field 'target' must be link, port or switch");
  ctl::DrainRequest d;
  d.kind = *kind;
  d.node = get_string(j, "node", true);
  if (d.node.empty()) throw Failure::invalid("field 'node' must not be empty");
  d.port = get_port(j, d.kind != ctl::DrainKind::kSwitch);
  if (d.kind == ctl::DrainKind::kSwitch && j.contains("port")) throw Failure::invalid("a switch drain takes no 'port'");
  d.reason = get_string(j, "reason", true);
  if (d.reason.empty()) throw Failure::invalid("field 'reason' must say why");
  d.expires_at = parse_expires(j);
  return d;
}

ctl::LinkEventRequest parse_link_event_request(const std::string& body) {
  const json j = parse_object(body, kLinkEventBody);
  ctl::LinkEventRequest l;
  l.event_id = get_id(j, "id", 256);
  l.node = get_string(j, "node", true);
  l.port = get_port(j, true);
  const std::optional<ctl::LinkState> state = ctl::parse_link_state(get_string(j, "state", true));
  if (!state) throw Failure::invalid("field 'state' must be down or up");
  l.state = *state;
  l.reason = get_string(j, "reason", false);
  if (j.contains("time")) {
    if (!j["time"].is_number() || !std::isfinite(j["time"].get<double>())) {
      throw Failure::invalid("field 'time' must be a Unix time");
    }
    l.time = j["time"].get<double>();
  }
  return l;
}

ctl::JobRequest parse_job_request(const std::string& body) {
  const json j = parse_object(body, kJobBody);
  ctl::JobRequest job;
  job.id = get_id(j, "id", 128);
  auto strings = [&](const char* key, std::vector<std::string>* out) {
    if (!j.contains(key)) return;
    if (!j[key].is_array()) throw Failure::invalid(std::string("field '") + key + "' must be a list of names");
    for (const json& v : j[key]) {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 1024 ||
          !is_clean_utf8(v.get<std::string>())) {
        throw Failure::invalid(std::string("field '") + key + "' must hold names (1..1024 bytes, no control characters)");
      }
      if (out->size() >= 65536) throw Failure::invalid(std::string("field '") + key + "' names more than 65,536");
      out->push_back(v.get<std::string>());
    }
  };
  strings("hosts", &job.hosts);
  strings("cas", &job.cas);
  if (job.hosts.empty() && job.cas.empty()) throw Failure::invalid("a job needs 'hosts' or 'cas'");
  if (j.contains("rails")) {
    if (!j["rails"].is_array()) throw Failure::invalid("field 'rails' must be a list of rail numbers");
    for (const json& r : j["rails"]) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > 1023) {
        throw Failure::invalid("field 'rails' must hold integers 0..1023");
      }
      job.rails.push_back(static_cast<int32_t>(r.get<int64_t>()));
    }
  }
  return job;
}

ctl::ExcludeEntry parse_exclude_request(const std::string& body) {
  const json j = parse_object(body, kExcludeBody);
  ctl::ExcludeEntry x;
  x.target = get_string(j, "target", true);
  x.reason = get_string(j, "reason", false);
  x.expires_at = parse_expires(j);
  return x;
}

RerouteRequest parse_reroute_request(const std::string& body) {
  const json j = parse_object(body, kRerouteBody);
  return {get_string(j, "reason", false)};
}

void parse_empty_request(const std::string& body) { parse_object(body, kEmptyBody); }

}  // namespace railyard::api
