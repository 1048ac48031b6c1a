// One line of a topology file, parsed in isolation (internal to the reader).
//
// The reader works in two layers: this one turns a single line into a typed
// record with string_views into the caller's text (no allocation unless the
// line is bad), and topology_reader.cpp assembles records into a Fabric, which
// needs the whole file (remote nodes may be defined later). Everything a line
// can get wrong on its own (syntax, numbers out of range, unknown keywords) is
// reported here; everything that needs context (port beyond the node's count,
// unknown remote, disagreeing link ends) is reported by the assembler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "routing/fabric.h"
#include "routing/types.h"

namespace railyard::routing::topology_detail {

// Longest line accepted. Real lines stay under ~200 characters (node
// descriptions are at most 64 bytes on the wire); the cap keeps a corrupt file
// from turning into a huge description.
inline constexpr size_t kMaxLineLength = 4096;
inline constexpr unsigned kMaxPorts = 254;

enum class LineKind : uint8_t {
  kBlank,    // empty or whitespace only: ends a record
  kComment,  // "# ..."
  kSkip,     // ibsim "do <command>": a simulator command, not topology
  kKey,      // "vendid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid=" ...
  kHeader,   // "Switch 8 "name" # ..."
  kPort,     // "[1] "remote"[2] ..."
};

enum class Key : uint8_t { kVendorId, kDeviceId, kSystemGuid, kSwitchGuid, kCaGuid, kRouterGuid };

struct KeyLine {
  Key key = Key::kVendorId;
  Guid value;       // the GUID (or vendor/device id) after '='
  Guid port_guid;   // "switchguid=0x..(<port 0 GUID>)"
};

struct HeaderLine {
  NodeType type = NodeType::kCa;
  uint8_t num_ports = 0;
  std::string_view name;  // the quoted record id
  std::string_view desc;  // quoted string opening the comment, if any
  bool has_desc = false;
  Lid lid;                // "lid N" in the comment (switch base LID)
  uint8_t lmc = 0;
};

struct PortLine {
  PortNum port;
  Guid port_guid;               // "[1](guid)": this CA port's GUID
  std::string_view remote;      // quoted remote record id
  PortNum remote_port;
  Guid remote_port_guid;        // "..."[2](guid): the remote CA port's GUID
  LinkWidth width = LinkWidth::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;
  Lid lid;                      // "# lid N lmc M ..." before the remote description
  uint8_t lmc = 0;
  Lid remote_lid;               // "... "desc" lid N" after it
};

struct ParsedLine {
  LineKind kind = LineKind::kBlank;
  KeyLine key;
  HeaderLine header;
  PortLine port;
};

// Parses one line (without its '\n'). On failure returns false and sets
// `error` to the reason, without the "<source>:<line>: " prefix.
bool parse_line(std::string_view line, ParsedLine& out, std::string& error);

// "4xHDR" -> width and speed. Exposed for tests and the writer's symmetry.
bool parse_width_speed(std::string_view token, LinkWidth& width, LinkSpeed& speed);

}  // namespace railyard::routing::topology_detail
