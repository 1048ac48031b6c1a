#include "api/schema.h"

#include <string>

namespace railyard::api {

using nlohmann::json;

json json_schema(const Schema& schema, bool closed) {
  json properties = json::object();
  json required = json::array();
  for (const Field& f : schema.fields) {
    json p;
    if (f.type.ends_with("[]")) {
      p = {{"type", "array"}, {"items", {{"type", f.type.substr(0, f.type.size() - 2)}}}};
    } else if (const size_t bar = f.type.find('|'); bar != std::string_view::npos) {
      p["oneOf"] = {{{"type", f.type.substr(0, bar)}}, {{"type", f.type.substr(bar + 1)}}};
    } else {
      p["type"] = f.type;
    }
    if (f.nested) {
      if (f.type == "array") {
        p["items"] = json_schema(*f.nested, closed);
      } else {
        p.update(json_schema(*f.nested, closed));
      }
    }
    if (f.type == "array" && !f.nested) p["items"] = json::object();
    if (!f.description.empty()) p["description"] = f.description;
    properties[std::string(f.name)] = p;
    if (f.required) required.push_back(f.name);
  }
  json out = {{"type", "object"}, {"properties", properties}};
  if (!required.empty()) out["required"] = required;
  if (closed) out["additionalProperties"] = false;
  return out;
}

namespace {

constexpr Field kHealthFields[] = {
    {"status", "string", true, "ok or degraded (then 503, with reasons)"},
    {"fabric", "object", true, "the fabric's version and origin; null without one"},
    {"source", "string", true, "live (the OpenSM plugin) or offline (a topology file)"},
    {"database", "string", true, "ok or failing"},
    {"policy_file", "string", true, "ok or failing"},
    {"reasons", "string[]", false, "why it is degraded"},
    {"plugin", "string", false, "live: connected or disconnected"},
    {"plugin_status", "object", false, "live: what the plugin last reported"},
    {"ha", "object", false,
     "with ha: in the config (docs/ha.md): role (leader, follower, no-leader), member, leader, leader_url, "
     "applied_seq, etcd (ok, failing), etcd_error, elections_won, step_downs, mutations (why refused here)"},
};

constexpr Field kLinkCountFields[] = {
    {"up", "integer", true, ""}, {"down", "integer", true, ""}, {"drained", "integer", true, ""}};
constexpr Schema kLinkCounts{kLinkCountFields};

constexpr Field kRoutingFields[] = {
    {"engine", "string", true, ""},
    {"ca_ports", "integer", true, ""},
    {"lids_routed", "integer", true, ""},
    {"unreachable_pairs", "integer", true, "CA pairs without a path"},
    {"pairs_through_drains", "integer", true, "CA pairs whose only path crosses a drain"},
    {"route_ms", "number", true, "the routing's time"},
};
constexpr Schema kRouting{kRoutingFields};

constexpr Field kFabricFields[] = {
    {"version", "integer", true, "the fabric view's version: moves with every change"},
    {"origin", "string", true, ""},
    {"built_at", "number", true, "Unix time"},
    {"switches", "integer", true, ""},
    {"cas", "integer", true, ""},
    {"hosts", "integer", true, ""},
    {"rails", "integer", true, ""},
    {"levels", "integer", true, ""},
    {"switches_per_level", "integer[]", true, ""},
    {"links", "object", true, "links per state", &kLinkCounts},
    {"drains", "integer", true, "active drains"},
    {"misfits", "integer", true, "CAs that fit no rail"},
    {"routing", "object", true, "the routing's quality", &kRouting},
};

constexpr Field kDrainFields[] = {
    {"id", "integer", true, ""},
    {"target", "string", true, "link, port or switch"},
    {"key", "string", true, "the canonical target: 0x<guid>[port] or 0x<guid>"},
    {"name", "string", true, "the target by name"},
    {"reason", "string", true, ""},
    {"created_by", "string", true, "the token's name"},
    {"created_at", "number", true, "Unix time"},
    {"expires_at", "number", true, "Unix time; null: never"},
    {"active", "boolean", true, ""},
    {"removed_at", "number", false, "Unix time (undrained)"},
    {"removed_by", "string", false, ""},
};
constexpr Schema kDrain{kDrainFields};

constexpr Field kDrainsFields[] = {{"drains", "array", true, "", &kDrain}};

constexpr Field kImpactFields[] = {
    {"pairs_cut", "integer", true, "CA pairs left without a path"},
    {"cut", "array", true, "examples of the pairs cut"},
    {"pairs_rerouted", "integer", true, ""},
    {"lft_entries_changed", "integer", true, ""},
    {"lft_blocks_changed", "integer", true, ""},
    {"switches_touched", "integer", true, ""},
    {"route_ms", "number", true, ""},
};
constexpr Schema kImpact{kImpactFields};

constexpr Field kRerouteFields[] = {
    {"id", "string", true, ""},
    {"status", "string", true, "pending, applied or failed"},
    {"requested_at", "number", true, "Unix time"},
    {"requested_by", "string", true, ""},
    {"reason", "string", true, ""},
    {"finished_at", "number", true, "Unix time; null while pending"},
    {"latency_ms", "number", true, "null while pending"},
    {"detail", "string", true, ""},
};

constexpr Field kDrainOutcomeFields[] = {
    {"dry_run", "boolean", true, ""},
    {"impact", "object", true, "what the change does to the routing", &kImpact},
    {"drain", "object", false, "", &kDrain},
    {"reroute", "object", false, "the reroute request that carries the change out", &kRerouteDocument},
    {"message", "string", true, ""},
};

constexpr Field kReroutesFields[] = {{"reroutes", "array", true, "the last 100", &kRerouteDocument}};

constexpr Field kRerouteAcceptedFields[] = {
    {"reroute", "object", true, "follow it with GET /reroutes/{id}", &kRerouteDocument},
    {"message", "string", true, ""},
};

constexpr Field kErrorBodyFields[] = {
    {"status", "integer", true, "the HTTP status again"},
    {"message", "string", true, "what is wrong, naming the field, node or limit"},
};
constexpr Schema kErrorBody{kErrorBodyFields};
constexpr Field kErrorFields[] = {{"error", "object", true, "", &kErrorBody}};

}  // namespace

const Schema kHealthDocument{kHealthFields};
const Schema kFabricDocument{kFabricFields};
const Schema kDrainsDocument{kDrainsFields};
const Schema kDrainOutcomeDocument{kDrainOutcomeFields};
const Schema kRerouteDocument{kRerouteFields};
const Schema kReroutesDocument{kReroutesFields};
const Schema kRerouteAccepted{kRerouteAcceptedFields};
const Schema kErrorDocument{kErrorFields};

}  // namespace railyard::api
