// What `railyard topo show` says about a fabric: switches per level, CAs and
// hosts, rails, links between levels, and the links that are missing or odd.
//
// "Missing or odd" is judged against the fabric itself, not against a plan:
//  - a switch with fewer up-links than the most common count at its level
//    (a leaf that lost an uplink);
//  - a switch port left unconnected although the same port number is cabled on
//    some other switch of the same level (the far end of a missing link);
//  - a CA with no cabled port; a switch with no level (not reachable from any
//    CA-bearing switch); a link between two switches of the same level.
// Plus the rail misfits of map_rails(). Built once, rendered as text or JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "routing/fabric.h"
#include "routing/rails.h"

namespace railyard::cli {

struct OddLink {
  enum class Kind : uint8_t { kFewerUplinks, kUnconnectedPort, kCaNotCabled, kSwitchWithoutLevel, kSameLevelLink };
  Kind kind;
  NodeId node;
  uint8_t port = 0;  // 0 when the finding is about the whole node
  std::string detail;
};

struct LevelSummary {
  int32_t level = 0;
  std::vector<NodeId> switches;
  std::vector<uint8_t> ports_in_use;  // port numbers cabled on any switch of the level
  uint32_t min_up = 0, max_up = 0, common_up = 0;  // up-links per switch
  uint32_t min_down = 0, max_down = 0;             // down-links (to CAs for leaves)
};

struct RailSummary {
  int32_t rail = 0;
  std::vector<NodeId> cas;
  std::vector<NodeId> leaves;  // leaves whose majority rail this is
};

struct TopologyReport {
  std::string source;
  std::vector<LevelSummary> levels;         // index = level
  std::vector<NodeId> unleveled;   // switches without a level
  size_t cas = 0;
  size_t cas_cabled = 0;
  std::map<uint32_t, uint32_t> hosts_by_ca_count;  // #CAs on a host -> #hosts
  std::vector<RailSummary> rails;           // rails 0..num_rails-1 (empty ones included)
  size_t cas_without_rail = 0;
  // Links counted by the levels of their ends: (lower, upper), -1 = a CA.
  std::map<std::pair<int32_t, int32_t>, uint32_t> links_by_level;
  uint32_t parallel_links = 0;  // extra cables between an already-linked switch pair
  std::vector<OddLink> odd;
};

TopologyReport build_topology_report(const routing::Fabric& fabric, const routing::RailMap& rails,
                                     std::string source);

// `long_form` lists every switch and every leaf of a rail instead of a sample.
std::string render_topology_text(const routing::Fabric& fabric, const routing::RailMap& rails,
                                 const TopologyReport& report, bool long_form);
nlohmann::ordered_json render_topology_json(const routing::Fabric& fabric, const routing::RailMap& rails,
                                    const TopologyReport& report);

// Shared formatting helpers (also used by topo diff).
std::string guid_string(Guid g);           // "0x0000000000200001"
std::string level_name(int32_t level);     // "CA", "leaf", "spine", "core", "level 4"
std::string port_label(const routing::Fabric& fabric, NodeId n, uint8_t port);  // "desc"[p]

}  // namespace railyard::cli
