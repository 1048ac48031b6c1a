// libFuzzer target for the topology reader: any bytes must give a Fabric or an
// Error located as "<source>:", never a crash; whatever reads must survive
// write_topology -> read_topology with the same nodes and links (the
// round-trip promise of topology_writer.h).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "routing/topology_reader.h"
#include "routing/topology_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace railyard::routing;
  using railyard::NodeId;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto fabric = read_topology(text, "fuzz");
  if (!fabric.ok()) {
    if (fabric.error().message.rfind("fuzz:", 0) != 0) std::abort();
    return 0;
  }
  auto again = read_topology(write_topology(*fabric), "written");
  if (!again.ok()) std::abort();
  if (again->num_nodes() != fabric->num_nodes() || again->num_links() != fabric->num_links()) std::abort();
  for (uint32_t i = 0; i < fabric->num_nodes(); ++i) {
    const Node& a = fabric->node(NodeId(i));
    const Node& b = again->node(NodeId(i));
    if (a.guid != b.guid || a.type != b.type || a.num_ports != b.num_ports) std::abort();
  }
  return 0;
}
