// Text forms of forwarding tables: OpenSM's `opensm-lfts.dump`, the output of
// infiniband-diags' `ibroute`, and railyard's JSON.
//
// The dump is what OpenSM 3.3.23 writes (osm_dump.c, dump_ucast_lfts) when
// ROUTING logging is on, and what its `file` routing engine loads back
// (osm_ucast_file.c, `opensm -R file -U FILE`). Writing it lets any table set,
// ours or another engine's, be loaded by stock OpenSM; reading it and ibroute's
// output lets tools compare what an engine computed with what is on the switches.
//
// Format (one section per switch, switches in OpenSM's sw_guid_tbl order,
// which is ascending GUID *in network byte order* on a little-endian host):
//   Unicast lids [0-<max lid>] of switch Lid <lid> guid 0x<guid %016x> ('<desc>'):
//   0x<lid %04x> <port %03u> # <node type> portguid 0x<guid %016x>: '<desc>'
//   0x<lid %04x> <port %03u> # unknown node and type
//   <max lid> lids dumped
// LIDs 0..max lid in order; entries whose port is not a port of the switch
// (OSM_NO_PATH = 255 included) are left out. Node types are "Channel Adapter",
// "Switch" and "Router"; descriptions are cut to 63 characters with
// non-printable bytes shown as spaces, as OpenSM's clean_nodedesc() does.
//
// ibroute prints the same entries with ": (<type> portguid 0x..: '<desc>')"
// annotations, hex LID ranges in the header, two column-title lines, and a
// "<n> valid lids dumped " trailer; `ibroute -a` adds ": (illegal port)" lines.
//
// Reading rules (both formats). Errors are "<source>:<line>: <what>":
//  - a switch is matched by its GUID; unknown GUIDs, CAs and repeated sections
//    are errors (OpenSM's file engine skips unknown switches silently);
//  - ports must be ports of that switch (0 = the switch itself); in ibroute
//    output an "illegal port" entry means no path;
//  - LIDs must be unicast; the table has num_lids = max(fabric max LID, highest
//    LID read) + 1, so a dump naming LIDs the topology lacks still loads;
//  - an entry naming a port GUID that the fabric knows must use one of that
//    port's LIDs: a dump taken under another LID assignment is refused rather
//    than silently misread (OpenSM's file engine would remap such an entry
//    to the port's current LID instead);
//  - a LID listed twice for one switch, an entry before any switch header, a
//    section without its "... lids dumped" trailer (truncated output), a
//    multicast table and any other line are errors.
// Switches absent from the text keep rows of kNoPath.
//
// Pure and linear: no iostreams, one pass over the text. The writer streams:
// a 16k-CA fabric's dump is 1.65 GB, so it hands the text to a sink in chunks
// of at most kDumpChunkBytes, each ending at a line end, and never holds more
// than one chunk; the caller decides where the bytes go (routing/ does no I/O).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "routing/chunked_text.h"
#include "routing/fabric.h"
#include "routing/lft.h"
#include "routing/result.h"

namespace railyard::routing {

enum class LftFormat : uint8_t { kOpenSmDump, kIbroute };
std::string_view to_string(LftFormat f);

// OpenSM's opensm-lfts.dump for `tables` (rows = fabric.switches()), streamed
// to `sink` in chunks of at most chunk_bytes (>= kMinChunkBytes) that end at
// line ends.
void write_lft_dump(const Fabric& fabric, const ForwardingTables& tables, const TextSink& sink,
                    size_t chunk_bytes = kDumpChunkBytes);
// The same text as one string (the concatenated chunks), for small fabrics and tests.
std::string write_lft_dump(const Fabric& fabric, const ForwardingTables& tables);

Result<ForwardingTables> read_lft_dump(const Fabric& fabric, std::string_view text, std::string_view source);
Result<ForwardingTables> read_ibroute(const Fabric& fabric, std::string_view text, std::string_view source);

// Which of the two formats `text` is, from its first switch header; nullopt
// when it is neither.
std::optional<LftFormat> detect_lft_format(std::string_view text);
// Reads either format, detected with detect_lft_format.
Result<ForwardingTables> read_tables(const Fabric& fabric, std::string_view text, std::string_view source);

}  // namespace railyard::routing
