// Writes a fabric as an ibnetdiscover-dialect topology file, which ibsim loads
// and read_topology() reads back to the same fabric (GUIDs, descriptions,
// links, LIDs when assigned, width and speed).
#pragma once

#include <string>

#include "routing/fabric.h"

namespace railyard::routing {

struct TopologyWriteOptions {
  std::string header_comment;  // written as "# ..." lines at the top
};

std::string write_topology(const Fabric& fabric, const TopologyWriteOptions& options = {});

}  // namespace railyard::routing
