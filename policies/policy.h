// Policy: what operators decide about the fabric, as a plain value.
//
// Loaded from YAML (policy_loader.h) and read alike by routing/ and the
// controller. Nodes are named by GUID ("0x..."), by record name ("S-...") or by
// node description; names are resolved against a fabric by the code that uses
// them, so a policy can be validated without a fabric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::policies {

// A port of a node: "node" is a GUID (0x...), a record name or a node description.
struct PortRef {
  std::string node;
  uint8_t port = 0;
  bool operator==(const PortRef&) const = default;
};

struct RailNaming {
  // ECMAScript regular expressions matched against a CA's node description;
  // capture group 1 is the host, group 2 the rail number. Tried in order.
  std::vector<std::string> patterns = {R"(^(.+?)[ -]mlx5_([0-9]+)$)"};
  // When no pattern gives a rail, infer it from structure (the CA's rank among
  // its host's CAs). When false such CAs keep no rail.
  bool infer_from_structure = true;
  bool operator==(const RailNaming&) const = default;
};

struct Drains {
  std::vector<PortRef> links;        // a link named by either end
  std::vector<PortRef> ports;        // a port (its link) taken out of routing
  std::vector<std::string> switches; // every link of the switch
  bool empty() const { return links.empty() && ports.empty() && switches.empty(); }
  bool operator==(const Drains&) const = default;
};

struct AdaptiveRouting {
  uint32_t max_groups_per_switch = 2048;
  bool operator==(const AdaptiveRouting&) const = default;
};

struct Sharp {
  uint32_t trees_per_switch = 4;
  bool operator==(const Sharp&) const = default;
};

struct Policy {
  RailNaming rails;
  Drains drains;
  // Up*/down* roots for fabrics that are not fat trees; empty = automatic.
  std::vector<std::string> roots;
  AdaptiveRouting ar;
  Sharp sharp;
  bool operator==(const Policy&) const = default;
};

// The GUID in a node reference written "0x<1..16 hex digits>", or nullopt when
// `ref` is not written that way (then it is a record name or description).
// Shared by the loader, which validates, and routing/node_lookup, which
// resolves, so both read the same references the same way.
std::optional<uint64_t> parse_guid_ref(std::string_view ref);

// True when `ref` starts like a GUID ("0x" and hex digits only) but is not a
// valid one: zero, or more than 16 digits. The loader rejects such references
// rather than silently treating them as names.
bool is_malformed_guid_ref(std::string_view ref);

// The string form of a port reference, "NODE[PORT]". Parsing splits at the last
// '[', so node names that contain brackets survive the round trip.
std::string to_string(const PortRef& ref);
// Splits "NODE[PORT]" into node and port text; nullopt when not of that shape.
// The port text is returned unchecked so the caller can report its range.
struct PortRefText {
  std::string_view node;
  std::string_view port;
};
std::optional<PortRefText> split_port_ref(std::string_view text);

}  // namespace railyard::policies
