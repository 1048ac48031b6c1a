#include "routing/lft_dump.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>
#include <memory>
#include <vector>

namespace railyard::routing {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr uint32_t kLidSpace = 0x10000;  // every 16-bit LID, for per-LID scratch arrays

// ---------------------------------------------------------------------------
// Small formatting helpers (no iostreams: they run per line on 1 GB dumps).

char* put_hex(char* w, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    w[i] = kHexDigits[v & 0xF];
    v >>= 4;
  }
  return w + digits;
}

char* put_dec3(char* w, unsigned v) {
  w[0] = static_cast<char>('0' + v / 100);
  w[1] = static_cast<char>('0' + v / 10 % 10);
  w[2] = static_cast<char>('0' + v % 10);
  return w + 3;
}

std::string hex_lid(uint32_t lid) {
  char b[8] = {'0', 'x'};
  put_hex(b + 2, lid, 4);
  return std::string(b, 6);
}

// What OpenSM prints for a node description: clean_nodedesc() cuts it at 63
// bytes (or an embedded NUL) and shows non-printable bytes as spaces.
std::string clean_desc(std::string_view d) {
  d = d.substr(0, std::min<size_t>(63, d.find('\0')));
  std::string s(d);
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E) c = ' ';
  }
  return s;
}

// ib_get_node_type_str() in OpenSM; ibroute prints the same words.
std::string_view node_type_words(NodeType t) {
  switch (t) {
    case NodeType::kSwitch: return "Switch";
    case NodeType::kCa: return "Channel Adapter";
    case NodeType::kRouter: return "Router";
  }
  return "UNKNOWN";
}

std::string label(const Fabric& f, NodeId n) {
  std::string_view d = f.desc(n);
  return "\"" + std::string(d.empty() ? f.name(n) : d) + "\"";
}

// OpenSM walks sw_guid_tbl, a cl_qmap keyed by the GUID in network byte order
// compared as a host integer: on x86 the least significant GUID byte sorts first.
uint64_t osm_map_key(Guid g) { return __builtin_bswap64(g.value); }

}  // namespace

std::string_view to_string(LftFormat f) {
  return f == LftFormat::kOpenSmDump ? "opensm-lfts.dump" : "ibroute";
}

// ---------------------------------------------------------------------------
// Writer (osm_dump.c, dump_ucast_lfts).

void write_lft_dump(const Fabric& fabric, const ForwardingTables& tables, const TextSink& sink,
                    size_t chunk_bytes) {
  // Rows are the fabric's switches by ForwardingTables' contract.
  assert(tables.num_switches() == fabric.switches().size());
  const uint32_t num_lids = tables.num_lids();
  const uint32_t max_lid = num_lids ? num_lids - 1 : 0;

  // An entry line depends only on its LID but for the port: build every LID's
  // line once with "000" for the port, then copy it and patch the three digits.
  constexpr size_t kPortAt = 7;  // "0x%04x " then "%03u"
  std::string lines;
  std::vector<uint32_t> line_at(num_lids + 1);
  for (uint32_t lid = 0; lid < num_lids; ++lid) {
    line_at[lid] = static_cast<uint32_t>(lines.size());
    lines += hex_lid(lid);
    lines += " 000";
    PortId p = fabric.lid_owner(Lid{static_cast<uint16_t>(lid)});
    if (!p.valid()) {
      lines += " # unknown node and type\n";
      continue;
    }
    NodeId n = fabric.port(p).node;
    lines += " # ";
    lines += node_type_words(fabric.node(n).type);
    lines += " portguid ";
    lines += to_string(Guid{fabric.port(p).guid.value});
    lines += ": '";
    lines += clean_desc(fabric.desc(n));
    lines += "'\n";
  }
  line_at[num_lids] = static_cast<uint32_t>(lines.size());

  std::vector<uint32_t> order(tables.num_switches());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return osm_map_key(fabric.node(fabric.switches()[a]).guid) <
           osm_map_key(fabric.node(fabric.switches()[b]).guid);
  });

  std::string trailer = std::to_string(max_lid) + " lids dumped\n";
  ChunkedText out(sink, chunk_bytes);
  for (uint32_t row : order) {
    NodeId sw = fabric.switches()[row];
    const Node& nd = fabric.node(sw);
    // "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx ('%s'):\n"
    std::string head = "Unicast lids [0-" + std::to_string(max_lid) + "] of switch Lid " +
                       std::to_string(fabric.port(nd.first_port).lid.value) + " guid " + to_string(nd.guid) +
                       " ('" + clean_desc(fabric.desc(sw)) + "'):\n";
    out.append(head);
    // OpenSM skips port >= p_sw->num_ports, i.e. anything past the last physical port.
    const uint8_t num_ports = nd.num_ports;
    std::span<const uint8_t> ports = tables.row(row);
    for (uint32_t lid = 0; lid < num_lids; ++lid) {
      if (ports[lid] > num_ports) continue;
      const size_t n = line_at[lid + 1] - line_at[lid];
      char* w = out.reserve(n);
      std::memcpy(w, lines.data() + line_at[lid], n);
      put_dec3(w + kPortAt, ports[lid]);
      out.commit(w + n);
    }
    out.append(trailer);
  }
  out.flush();
}

std::string write_lft_dump(const Fabric& fabric, const ForwardingTables& tables) {
  std::string text;
  write_lft_dump(fabric, tables, [&text](std::string_view chunk) { text += chunk; });
  return text;
}

// ---------------------------------------------------------------------------
// Readers: one line scanner for both formats; the differences are the extra
// lines each tool prints and ibroute's "illegal port" entries.

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses 1..max_digits hex digits at the front of s; advances s.
bool take_hex(std::string_view& s, int max_digits, uint64_t& v) {
  v = 0;
  size_t i = 0;
  int d;
  while (i < s.size() && (d = hex_value(s[i])) >= 0) {
    if (static_cast<int>(i) == max_digits) return false;
    v = v << 4 | static_cast<uint64_t>(d);
    ++i;
  }
  s.remove_prefix(i);
  return i > 0;
}

bool take_dec(std::string_view& s, int max_digits, uint64_t& v) {
  v = 0;
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (static_cast<int>(i) == max_digits) return false;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
  }
  s.remove_prefix(i);
  return i > 0;
}

// A line as it can be quoted in a message: short and printable.
std::string excerpt(std::string_view line) {
  constexpr size_t kMax = 60;
  std::string s(line.substr(0, kMax));
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E) c = '?';
  }
  if (line.size() > kMax) s += "...";
  return "'" + s + "'";
}

class TableReader {
 public:
  TableReader(const Fabric& fabric, std::string_view source, LftFormat format)
      : fabric_(fabric), source_(source), format_(format),
        base_lids_(static_cast<uint32_t>(fabric.max_lid().value) + 1),
        tables_(static_cast<uint32_t>(fabric.switches().size()), base_lids_),
        section_line_(fabric.switches().size(), 0),
        lid_section_(kLidSpace, 0),
        lid_line_(kLidSpace, 0),
        lid_guid_(kLidSpace, 0) {}

  Result<ForwardingTables> read(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
      const char* nl = static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
      size_t end = nl ? static_cast<size_t>(nl - text.data()) : text.size();
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no_;
      Status s = parse_line(line);
      if (!s.ok()) return s.error();
    }
    if (row_ >= 0) {
      return fail("the table of switch " + label(fabric_, fabric_.switches()[row_]) + " (line " +
                  std::to_string(section_start_) + ") ends without its '... lids dumped' line: truncated?");
    }
    if (sections_ == 0) return Error{std::string(source_) + ": no switch tables ('Unicast lids ...' lines) found"};
    return finish();
  }

 private:
  Error fail(const std::string& what) const {
    return Error{std::string(source_) + ":" + std::to_string(line_no_) + ": " + what};
  }

  bool is_ibroute() const { return format_ == LftFormat::kIbroute; }

  Status parse_line(std::string_view raw) {
    std::string_view line = raw;
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    if (line.empty()) return {};
    if (line.size() > 1 && line[0] == '0' && line[1] == 'x') return entry(line.substr(2));
    if (line.starts_with("Unicast lids")) return header(line);
    if (line[0] == '#' && !is_ibroute()) return {};  // comment lines, skipped by OpenSM too
    if (line.starts_with("Multicast mlids")) {
      return fail("this is a multicast forwarding table; expected unicast LFTs");
    }
    std::string_view t = trim(line);
    if (is_ibroute() && row_ >= 0 && (t == "Lid  Out   Destination" || t == "Port     Info")) return {};
    if (t.size() > 0 && t[0] >= '0' && t[0] <= '9') return trailer(t);
    return fail("unexpected line " + excerpt(trim(raw)));
  }

  Status header(std::string_view line) {
    if (row_ >= 0) {
      return fail("the table of switch " + label(fabric_, fabric_.switches()[row_]) + " (line " +
                  std::to_string(section_start_) + ") ends without its '... lids dumped' line: truncated?");
    }
    // "Unicast lids [0-26] ..." is OpenSM's dump, "Unicast lids [0x0-0x1a] ..." ibroute's.
    std::string_view range = line.substr(12);
    while (!range.empty() && is_space(range.front())) range.remove_prefix(1);
    if (range.starts_with("[0x") != is_ibroute() && range.starts_with("[")) {
      return fail(is_ibroute() ? "this is an OpenSM LFT dump header, not ibroute output"
                               : "this is an ibroute header, not an OpenSM LFT dump");
    }
    size_t at = line.find(" guid 0x");
    if (at == std::string_view::npos) return fail("cannot parse switch header " + excerpt(line));
    std::string_view g = line.substr(at + 8);
    uint64_t guid = 0;
    if (!take_hex(g, 16, guid) || g.empty() || !is_space(g.front())) {
      return fail("cannot parse switch GUID in " + excerpt(line));
    }
    NodeId n = fabric_.find_node_guid(Guid{guid});
    if (!n.valid()) return fail("unknown switch GUID " + to_string(Guid{guid}));
    if (!fabric_.is_switch(n)) return fail("GUID " + to_string(Guid{guid}) + " is " + label(fabric_, n) + ", not a switch");
    auto sws = fabric_.switches();
    auto it = std::lower_bound(sws.begin(), sws.end(), n);  // switches() is in node order
    assert(it != sws.end() && *it == n);  // every switch node is listed in switches()
    int64_t row = it - sws.begin();
    if (section_line_[row] != 0) {
      return fail("switch " + label(fabric_, n) + " is listed twice (first at line " +
                  std::to_string(section_line_[row]) + ")");
    }
    row_ = row;
    num_ports_ = fabric_.node(n).num_ports;
    section_line_[row] = line_no_;
    section_start_ = line_no_;
    entries_ = 0;
    ++sections_;
    return {};
  }

  Status trailer(std::string_view t) {
    uint64_t n = 0;
    std::string_view rest = t;
    if (!take_dec(rest, 10, n) || (rest != " lids dumped" && rest != " valid lids dumped")) {
      return fail("unexpected line " + excerpt(t));
    }
    if (row_ < 0) return fail("'" + std::string(t) + "' outside a switch table");
    // ibroute counts the entries it printed; a short count means lost lines.
    if (is_ibroute() && n != entries_) {
      return fail("ibroute reports " + std::to_string(n) + " lids for switch " +
                  label(fabric_, fabric_.switches()[row_]) + " but its table has " + std::to_string(entries_));
    }
    row_ = -1;
    return {};
  }

  // After "0x": "<lid> <port> [annotation]".
  Status entry(std::string_view s) {
    if (row_ < 0) return fail("LID entry outside a switch table (no 'Unicast lids ...' line before it)");
    uint64_t lid = 0;
    if (!take_hex(s, 4, lid) || s.empty() || !is_space(s.front())) {
      return fail("cannot parse LID in " + excerpt("0x" + std::string(s)));
    }
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    uint64_t port = 0;
    if (!take_dec(s, 3, port) || (!s.empty() && !is_space(s.front()))) {
      return fail("cannot parse the port of LID " + hex_lid(static_cast<uint32_t>(lid)));
    }
    if (lid > Lid::kMaxUnicast) return fail("LID " + hex_lid(static_cast<uint32_t>(lid)) + " is not a unicast LID");
    const NodeId sw = fabric_.switches()[row_];
    uint8_t out = static_cast<uint8_t>(port);
    if (is_ibroute() && s.find("illegal port") != std::string_view::npos) {
      out = ForwardingTables::kNoPath;  // ibroute -a: the switch holds no usable port
    } else if (port > num_ports_) {
      return fail("port " + std::to_string(port) + " for LID " + hex_lid(static_cast<uint32_t>(lid)) +
                  " is beyond switch " + label(fabric_, sw) + "'s " + std::to_string(num_ports_) + " ports");
    }
    if (lid_section_[lid] == sections_) {
      return fail("LID " + hex_lid(static_cast<uint32_t>(lid)) + " is listed twice for switch " + label(fabric_, sw) +
                  " (first at line " + std::to_string(lid_line_[lid]) + ")");
    }
    lid_section_[lid] = sections_;
    lid_line_[lid] = line_no_;
    ++entries_;

    if (Status st = check_guid(static_cast<uint32_t>(lid), s); !st.ok()) return st;

    if (lid < base_lids_) {
      tables_.row(static_cast<uint32_t>(row_))[lid] = out;
    } else {
      overflow_.push_back({static_cast<uint32_t>(row_), static_cast<uint16_t>(lid), out});
      max_lid_ = std::max<uint32_t>(max_lid_, static_cast<uint32_t>(lid));
    }
    return {};
  }

  // The destination's port GUID, when the annotation names one the fabric
  // knows, must own the LID: else the text and the topology disagree on LIDs.
  Status check_guid(uint32_t lid, std::string_view note) {
    size_t at = note.find(" portguid 0x");
    if (at == std::string_view::npos) return {};
    std::string_view g = note.substr(at + 12);
    uint64_t guid = 0;
    // Like OpenSM's file engine, an unreadable GUID is no GUID.
    if (!take_hex(g, 16, guid) || guid == 0 || (!g.empty() && !is_space(g.front()) && g.front() != ':' &&
                                                 g.front() != ')')) {
      return {};
    }
    if (lid_guid_[lid] == guid) return {};  // already checked for an earlier switch
    PortId p = fabric_.find_port_guid(Guid{guid});
    if (p.valid()) {
      const Port& port = fabric_.port(p);
      uint32_t first = port.lid.value, last = first + (1u << port.lmc) - 1;
      if (first != 0 && (lid < first || lid > last)) {
        std::string lids = first == last ? "LID " + std::to_string(first)
                                         : "LIDs " + std::to_string(first) + "-" + std::to_string(last);
        return fail("LID " + hex_lid(lid) + " is given to port GUID " + to_string(Guid{guid}) + " (" +
                    label(fabric_, port.node) + "), which has " + lids + " in the topology");
      }
    }
    lid_guid_[lid] = guid;
    return {};
  }

  Result<ForwardingTables> finish() {
    if (overflow_.empty()) return std::move(tables_);
    // LIDs past the topology's highest: widen every row once.
    ForwardingTables wide(tables_.num_switches(), max_lid_ + 1);
    for (uint32_t r = 0; r < tables_.num_switches(); ++r) {
      std::span<const uint8_t> from = tables_.row(r);
      std::copy(from.begin(), from.end(), wide.row(r).begin());
    }
    for (const Overflow& o : overflow_) wide.row(o.row)[o.lid] = o.port;
    return wide;
  }

  struct Overflow {
    uint32_t row;
    uint16_t lid;
    uint8_t port;
  };

  const Fabric& fabric_;
  std::string_view source_;
  LftFormat format_;
  uint32_t base_lids_;
  ForwardingTables tables_;
  std::vector<Overflow> overflow_;
  uint32_t max_lid_ = 0;

  uint32_t line_no_ = 0;
  int64_t row_ = -1;  // the switch whose table is being read, -1 between tables
  uint8_t num_ports_ = 0;
  uint32_t section_start_ = 0;
  uint32_t sections_ = 0;
  uint64_t entries_ = 0;
  std::vector<uint32_t> section_line_;  // per switch row: its header line, 0 if not seen
  std::vector<uint32_t> lid_section_;   // per LID: the last table (1-based) listing it
  std::vector<uint32_t> lid_line_;      // per LID: where that table listed it
  std::vector<uint64_t> lid_guid_;      // per LID: a port GUID already checked against it
};

}  // namespace

Result<ForwardingTables> read_lft_dump(const Fabric& fabric, std::string_view text, std::string_view source) {
  return TableReader(fabric, source, LftFormat::kOpenSmDump).read(text);
}

Result<ForwardingTables> read_ibroute(const Fabric& fabric, std::string_view text, std::string_view source) {
  return TableReader(fabric, source, LftFormat::kIbroute).read(text);
}

std::optional<LftFormat> detect_lft_format(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (!line.starts_with("Unicast lids")) return std::nullopt;
    line = trim(line.substr(12));
    if (line.starts_with("[0x")) return LftFormat::kIbroute;
    if (line.starts_with("[")) return LftFormat::kOpenSmDump;
    return std::nullopt;
  }
  return std::nullopt;
}

Result<ForwardingTables> read_tables(const Fabric& fabric, std::string_view text, std::string_view source) {
  std::optional<LftFormat> f = detect_lft_format(text);
  if (!f) {
    return Error{std::string(source) +
                 ": neither an OpenSM LFT dump nor ibroute output (no leading 'Unicast lids [...' line)"};
  }
  return *f == LftFormat::kIbroute ? read_ibroute(fabric, text, source) : read_lft_dump(fabric, text, source);
}

}  // namespace railyard::routing
