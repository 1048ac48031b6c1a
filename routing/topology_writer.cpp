// Topology writer: ibnetdiscover's output format, which ibsim loads.
//
// Layout per node, in node order (so node ids survive a round trip):
//   vendid=0x0 / devid=0x0 / sysimgguid=0x.. / switchguid=0x..(port 0 GUID)
//   Switch<TAB>N "S-<guid16>"<TAB><TAB># "desc" enhanced port 0 lid L lmc M
//   [p]<TAB>"H-<guid16>"[q](remote port GUID) <TAB><TAB># "remote desc" lid L 4xHDR
// and for CAs (routers alike, with rtguid= / Rt / "R-"):
//   Ca<TAB>N "H-<guid16>"<TAB><TAB># "desc"
//   [p](port GUID) <TAB>"S-<guid16>"[q]<TAB><TAB># lid L lmc M "remote desc" lid L 4xHDR
// Only cabled ports are listed, as ibnetdiscover does. LIDs print as 0 when the
// fabric has none assigned (the reader reads 0 as unassigned).
//
// Record names are "S-"/"H-"/"R-" + the 16-digit node GUID, the names
// ibnetdiscover prints, so a file written here, loaded by ibsim and discovered
// again names every node the same way. Nodes without a GUID get
// "<prefix>-node<index>" and no guid= line; the reader then assigns GUIDs.
//
// Lossy by design: descriptions have '"' and control characters replaced by
// spaces (the format has no escapes); descriptions and header comment lines
// are cut at 1024 bytes; port state and GUIDs/LIDs of uncabled CA ports are
// not written.
#include "routing/topology_writer.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

namespace railyard::routing {
namespace {

constexpr size_t kMaxDescLength = 1024;

void append_hex(std::string& out, uint64_t v, bool pad16) {
  char buf[16];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, 16);
  size_t n = static_cast<size_t>(end - buf);
  if (pad16) out.append(16 - n, '0');
  out.append(buf, n);
}

void append_dec(std::string& out, uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void append_desc(std::string& out, std::string_view desc) {
  out += '"';
  for (size_t i = 0; i < desc.size() && i < kMaxDescLength; ++i) {
    auto c = static_cast<unsigned char>(desc[i]);
    out += (c < 0x20 || c == 0x7f || c == '"') ? ' ' : static_cast<char>(c);
  }
  out += '"';
}

char type_letter(NodeType t) {
  switch (t) {
    case NodeType::kSwitch: return 'S';
    case NodeType::kCa: return 'H';
    case NodeType::kRouter: return 'R';
  }
  return 'H';
}

bool is_canonical_name(std::string_view name, char letter, Guid guid) {
  if (name.size() != 18 || name[0] != letter || name[1] != '-') return false;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(name.data() + 2, name.data() + name.size(), v, 16);
  return ec == std::errc() && end == name.data() + name.size() && v == guid.value;
}

std::string record_name(const Fabric& f, NodeId n) {
  const Node& nd = f.node(n);
  char letter = type_letter(nd.type);
  if (!nd.guid.valid()) return std::string{letter} + "-node" + std::to_string(n.value());
  if (is_canonical_name(f.name(n), letter, nd.guid)) return std::string(f.name(n));
  std::string s{letter, '-'};
  append_hex(s, nd.guid.value, true);
  return s;
}

// The LID ibnetdiscover prints for a port: a switch answers on port 0.
uint16_t lid_of(const Fabric& f, PortId p) {
  const Port& port = f.port(p);
  if (f.is_switch(port.node)) return f.port(f.node(port.node).first_port).lid.value;
  return port.lid.value;
}

}  // namespace

std::string write_topology(const Fabric& f, const TopologyWriteOptions& options) {
  std::vector<std::string> names;
  names.reserve(f.num_nodes());
  for (uint32_t i = 0; i < f.num_nodes(); ++i) names.push_back(record_name(f, NodeId(i)));

  std::string out;
  out.reserve(f.num_nodes() * 160 + f.num_links() * 2 * 100 + options.header_comment.size() + 64);

  if (!options.header_comment.empty()) {
    std::string_view c = options.header_comment;
    while (!c.empty()) {
      size_t nl = c.find('\n');
      // Cut so the reader's line limit holds.
      std::string_view line = c.substr(0, std::min(nl, kMaxDescLength));
      out += line.empty() ? "#" : "# ";
      // The reader refuses NUL bytes anywhere, and a lone CR would end the
      // line for some tools.
      for (char ch : line) out += (ch == '\0' || ch == '\r') ? ' ' : ch;
      out += '\n';
      c = nl == std::string_view::npos ? std::string_view{} : c.substr(nl + 1);
    }
  }

  for (uint32_t i = 0; i < f.num_nodes(); ++i) {
    const NodeId n(i);
    const Node& nd = f.node(n);
    const bool is_switch = nd.type == NodeType::kSwitch;
    const Port& port0 = f.port(nd.first_port);
    if (!out.empty()) out += '\n';

    out += "vendid=0x0\ndevid=0x0\n";
    if (nd.system_guid.valid()) {
      out += "sysimgguid=0x";
      append_hex(out, nd.system_guid.value, false);
      out += '\n';
    }
    if (nd.guid.valid()) {
      out += is_switch ? "switchguid=0x" : nd.type == NodeType::kCa ? "caguid=0x" : "rtguid=0x";
      append_hex(out, nd.guid.value, false);
      if (is_switch) {
        out += '(';
        append_hex(out, (port0.guid.valid() ? port0.guid : nd.guid).value, false);
        out += ')';
      }
      out += '\n';
    }

    out += to_string(nd.type);
    out += '\t';
    append_dec(out, nd.num_ports);
    out += " \"";
    out += names[i];
    out += "\"\t\t# ";
    append_desc(out, f.desc(n));
    if (is_switch) {
      out += " enhanced port 0 lid ";
      append_dec(out, port0.lid.value);
      out += " lmc ";
      append_dec(out, port0.lmc);
    }
    out += '\n';

    for (uint32_t p = 1; p <= nd.num_ports; ++p) {
      const PortId pid(nd.first_port.value() + p);
      const Port& port = f.port(pid);
      if (!port.remote.valid()) continue;
      const Port& rport = f.port(port.remote);
      const NodeId rn = rport.node;
      const bool remote_switch = f.is_switch(rn);

      out += '[';
      append_dec(out, p);
      out += ']';
      if (!is_switch && port.guid.valid()) {
        out += '(';
        append_hex(out, port.guid.value, false);
        out += ") ";
      }
      out += "\t\"";
      out += names[rn.value()];
      out += "\"[";
      append_dec(out, rport.num.value);
      out += ']';
      if (!remote_switch && rport.guid.valid()) {
        out += '(';
        append_hex(out, rport.guid.value, false);
        out += ") ";
      }
      out += "\t\t# ";
      if (!is_switch) {
        out += "lid ";
        append_dec(out, port.lid.value);
        out += " lmc ";
        append_dec(out, port.lmc);
        out += ' ';
      }
      append_desc(out, f.desc(rn));
      out += " lid ";
      append_dec(out, lid_of(f, port.remote));
      if (port.link.valid()) {
        const Link& link = f.link(port.link);
        // ibnetdiscover's placeholders for what it cannot name: "??", "???".
        if (link.width != LinkWidth::kUnknown || link.speed != LinkSpeed::kUnknown) {
          out += ' ';
          out += link.width == LinkWidth::kUnknown ? "??" : to_string(link.width);
          out += link.speed == LinkSpeed::kUnknown ? "???" : to_string(link.speed);
        }
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace railyard::routing
