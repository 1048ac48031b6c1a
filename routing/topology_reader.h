// Reader for topology files: ibnetdiscover output and ibsim net files.
//
// Two dialects share one grammar (ibsim reads ibnetdiscover output):
//  - ibnetdiscover's: "switchguid=0x..(..)" / "caguid=0x.." / "sysimgguid=" lines
//    before a record, headers like  Switch 36 "S-<guid>"  # "desc" enhanced port 0 lid 5 lmc 0
//    and port lines with port GUIDs, LIDs and "4xHDR" speed comments;
//  - ibsim's hand-written form: "Switch 8 "Switch1"", "Hca 2 "Hca1"", port lines
//    "[1] "Hca1"[1]" with optional "w=4", no GUIDs (assigned deterministically).
// Pure: takes text, returns a Fabric or an Error "<source>:<line>: <what>".
#pragma once

#include <string_view>

#include "routing/fabric.h"
#include "routing/result.h"

namespace railyard::routing {

Result<Fabric> read_topology(std::string_view text, std::string_view source_name);

}  // namespace railyard::routing
