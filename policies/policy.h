// Policy: what operators decide about the fabric, as a plain value.
//
// Loaded from YAML (policy_loader.h) and read alike by routing/ and the
// controller. Nodes are named by GUID ("0x..."), by record name ("S-...") or by
// node description; names are resolved against a fabric by the code that uses
// them, so a policy can be validated without a fabric.
#pragma once

#include <cstdint>
#include <string>
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
};

struct Drains {
  std::vector<PortRef> links;        // a link named by either end
  std::vector<PortRef> ports;        // a port (its link) taken out of routing
  std::vector<std::string> switches; // every link of the switch
  bool empty() const { return links.empty() && ports.empty() && switches.empty(); }
};

struct AdaptiveRouting {
  uint32_t max_groups_per_switch = 2048;
};

struct Sharp {
  uint32_t trees_per_switch = 4;
};

struct Policy {
  RailNaming rails;
  Drains drains;
  // Up*/down* roots for fabrics that are not fat trees; empty = automatic.
  std::vector<std::string> roots;
  AdaptiveRouting ar;
  Sharp sharp;
};

}  // namespace railyard::policies
