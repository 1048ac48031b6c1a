// railyard's JSON form of forwarding tables (`railyard route --format json`).
#pragma once

#include <cstddef>

#include "routing/chunked_text.h"
#include "routing/fabric.h"
#include "routing/lft.h"

namespace railyard::routing {

// railyard's JSON form of the tables (`railyard route --format json`), streamed
// the same way (chunks of at most chunk_bytes, cut anywhere), ending
// with a newline:
//   {"switches":[{"guid":"0x<%016x>","lft":{"<lid>":<port>,...},"lid":<lid>,"name":"<desc>"},...]}
// Switches in fabric.switches() order; every LID from 1 whose port is not
// kNoPath, keys ordered as strings ("10" before "2"). Byte for byte what
// nlohmann::json::dump() printed when the CLI built this as one object (2.3 GB
// of nodes at 16k CAs); a description byte that is not valid UTF-8 is written
// as U+FFFD instead of making the dump throw.
void write_lft_json(const Fabric& fabric, const ForwardingTables& tables, const TextSink& sink,
                    size_t chunk_bytes = kDumpChunkBytes);

}  // namespace railyard::routing
