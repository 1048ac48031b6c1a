// Topology reader: assembles parsed lines (topology_line.h) into a Fabric.
//
// Guarantees: pure (text in, Fabric or Error out); every error names
// "<source>:<line>:" and the reason; no input makes it crash, assert or skip a
// line it does not understand (comments, "vendid="/"devid=" and ibsim's
// "do ..." lines carry nothing for routing and are the only lines ignored).
// Linear in the input: one scan over the lines with string_views into the
// text, one name -> record hash map, then the FabricBuilder.
//
// Semantics, where the two dialects leave room:
//  - A record ends at a blank line or a "key=" line; a port line outside a
//    record is an error rather than being attached to the previous node.
//  - Links are listed from both ends and recorded once. A link listed from one
//    end only is accepted when the other record does not list that port; two
//    ends that name different peers are an error.
//  - A record's own lines are authoritative for its ports (GUID, LID); the
//    "(guid)" and "lid N" printed for the remote end only fill in ports whose
//    own record does not list them. Two different port GUIDs for one port are
//    an error.
//  - Records without a GUID (ibsim's hand-written form) get ibsim's own scheme,
//    so a file loaded by ibsim and read here name nodes alike: in file order,
//    switches 0x200000, 0x200001, ...; CAs from 0x100000, each taking its node
//    GUID and then node GUID + port for its ports (a 2-port CA uses 3 values);
//    routers the same from 0x300000.
#include "routing/topology_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "routing/topology_line.h"

namespace railyard::routing {
namespace {

using topology_detail::Key;
using topology_detail::LineKind;
using topology_detail::ParsedLine;
using topology_detail::PortLine;

constexpr uint64_t kFirstCaGuid = 0x100000;
constexpr uint64_t kFirstSwitchGuid = 0x200000;
constexpr uint64_t kFirstRouterGuid = 0x300000;

struct Record {
  NodeType type = NodeType::kCa;
  uint8_t num_ports = 0;
  std::string_view name;
  std::string_view desc;
  uint32_t line = 0;
  uint32_t first_slot = 0;  // index of port 0 in Assembler::slots_
  Guid guid;
  Guid system_guid;
  Guid port0_guid;          // switch port 0, when switchguid= gives it
  Lid lid;                  // switch base LID (port 0)
  uint8_t lmc = 0;
};

// One port of one record.
struct Slot {
  uint32_t listed = kNone;  // entry listing this port in its own record
  Guid guid;                // CA/router port GUID
  uint32_t guid_line = 0;
  Lid lid;                  // CA/router port base LID
  uint8_t lmc = 0;
};

// One port line.
struct Entry {
  PortLine port;
  uint32_t record = 0;
  uint32_t remote_record = kNone;
  uint32_t line = 0;
};

struct LinkSpec {
  uint32_t a_record, b_record;
  PortNum a_port, b_port;
  LinkWidth width;
  LinkSpeed speed;
  uint32_t line;
};

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

class Assembler {
 public:
  explicit Assembler(std::string_view source) : source_(source) {}

  Result<Fabric> run(std::string_view text) {
    if (Status s = read_lines(text); !s) return s.error();
    if (Status s = resolve_links(); !s) return s.error();
    assign_guids();
    if (Status s = check_unique_guids(); !s) return s.error();
    if (Status s = check_lids(); !s) return s.error();
    return build();
  }

 private:
  Error error_at(uint32_t line, std::string_view what) const {
    return Error{std::string(source_) + ":" + std::to_string(line) + ": " + std::string(what)};
  }
  std::string label(uint32_t record, PortNum p) const {
    return quote(records_[record].name) + "[" + std::to_string(p.value) + "]";
  }
  Slot& slot(uint32_t record, PortNum p) { return slots_[records_[record].first_slot + p.value]; }

  // Pass 1: every line on its own, plus what one record can check by itself.
  Status read_lines(std::string_view text) {
    ParsedLine parsed;
    std::string why;
    uint32_t current = kNone;
    // "key=" lines describe the record that follows them.
    Guid pending_sys, pending_guid, pending_port0;
    Key pending_key = Key::kVendorId;
    uint32_t pending_line = 0;
    names_.reserve(text.size() / 256 + 16);

    uint32_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      size_t end = nl == std::string_view::npos ? text.size() : nl;
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line_no == UINT32_MAX) return error_at(line_no, "too many lines");
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > topology_detail::kMaxLineLength) {
        return error_at(line_no, "line is longer than " + std::to_string(topology_detail::kMaxLineLength) +
                                     " characters");
      }
      if (std::memchr(line.data(), '\0', line.size()) != nullptr) return error_at(line_no, "NUL byte in line");
      if (!topology_detail::parse_line(line, parsed, why)) return error_at(line_no, why);

      switch (parsed.kind) {
        case LineKind::kBlank:
          current = kNone;
          break;
        case LineKind::kComment:
        case LineKind::kSkip:
          break;
        case LineKind::kKey: {
          current = kNone;
          if (pending_line == 0) pending_line = line_no;
          const auto& k = parsed.key;
          if (k.key == Key::kSystemGuid) {
            pending_sys = k.value;
          } else if (k.key != Key::kVendorId && k.key != Key::kDeviceId) {
            pending_key = k.key;
            pending_guid = k.value;
            pending_port0 = k.port_guid;
          }
          break;
        }
        case LineKind::kHeader: {
          const auto& h = parsed.header;
          if (pending_guid.valid()) {
            Key want = h.type == NodeType::kSwitch ? Key::kSwitchGuid
                       : h.type == NodeType::kCa   ? Key::kCaGuid
                                                   : Key::kRouterGuid;
            if (pending_key != want) {
              static constexpr const char* kKeyNames[] = {"vendid", "devid", "sysimgguid",
                                                          "switchguid", "caguid", "rtguid"};
              return error_at(line_no, std::string(to_string(h.type)) + " record follows a " +
                                           kKeyNames[static_cast<int>(pending_key)] + "= line");
            }
          }
          auto [it, inserted] = names_.try_emplace(h.name, static_cast<uint32_t>(records_.size()));
          if (!inserted) {
            return error_at(line_no, "duplicate node name " + quote(h.name) + " (first defined on line " +
                                         std::to_string(records_[it->second].line) + ")");
          }
          Record r;
          r.type = h.type;
          r.num_ports = h.num_ports;
          r.name = h.name;
          r.desc = h.has_desc ? h.desc : h.name;
          r.line = line_no;
          r.first_slot = static_cast<uint32_t>(slots_.size());
          r.guid = pending_guid;
          r.system_guid = pending_sys;
          if (h.type == NodeType::kSwitch) {
            r.port0_guid = pending_port0;
            r.lid = h.lid;
            r.lmc = h.lmc;
          }
          current = static_cast<uint32_t>(records_.size());
          records_.push_back(r);
          slots_.resize(slots_.size() + h.num_ports + 1u);
          pending_sys = pending_guid = pending_port0 = Guid{};
          pending_line = 0;
          break;
        }
        case LineKind::kPort: {
          if (current == kNone) {
            return error_at(line_no, "port line outside any node record (a blank line ends a record)");
          }
          const PortLine& p = parsed.port;
          const Record& r = records_[current];
          if (p.port.value > r.num_ports) {
            return error_at(line_no, "port " + std::to_string(p.port.value) + " is beyond " + quote(r.name) +
                                         "'s " + std::to_string(r.num_ports) + " ports");
          }
          Slot& s = slot(current, p.port);
          if (s.listed != kNone) {
            return error_at(line_no, "port " + std::to_string(p.port.value) + " of " + quote(r.name) +
                                         " is listed twice (also on line " +
                                         std::to_string(entries_[s.listed].line) + ")");
          }
          s.listed = static_cast<uint32_t>(entries_.size());
          // Switch ports other than 0 have no GUID or LID of their own.
          if (r.type != NodeType::kSwitch) {
            if (p.port_guid.valid()) {
              s.guid = p.port_guid;
              s.guid_line = line_no;
            }
            s.lid = p.lid;
            s.lmc = p.lmc;
          }
          entries_.push_back(Entry{p, current, kNone, line_no});
          break;
        }
      }
    }
    if (pending_line != 0) return error_at(pending_line, "key line is not followed by a node record");
    return {};
  }

  // Pass 2: remote names, link consistency, and what the remote end says
  // about ports whose own record does not list them.
  Status resolve_links() {
    for (Entry& e : entries_) {
      auto it = names_.find(e.port.remote);
      if (it == names_.end()) return error_at(e.line, "remote node " + quote(e.port.remote) + " is not defined");
      const Record& rr = records_[it->second];
      if (e.port.remote_port.value > rr.num_ports) {
        return error_at(e.line, "remote port " + std::to_string(e.port.remote_port.value) + " is beyond " +
                                    quote(rr.name) + "'s " + std::to_string(rr.num_ports) + " ports");
      }
      e.remote_record = it->second;
    }
    links_.reserve(entries_.size() / 2 + 1);
    for (uint32_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      const PortNum p = e.port.port, q = e.port.remote_port;
      const uint32_t m = e.remote_record;
      if (m == e.record && p == q) return error_at(e.line, "port " + label(m, q) + " is cabled to itself");
      Slot& far = slot(m, q);
      if (far.listed != kNone) {
        const Entry& o = entries_[far.listed];
        if (o.remote_record != e.record || o.port.remote_port != p) {
          return error_at(e.line, label(e.record, p) + " is cabled to " + label(m, q) + ", but line " +
                                      std::to_string(o.line) + " cables " + label(m, q) + " to " +
                                      label(o.remote_record, o.port.remote_port));
        }
        if (far.listed < i) continue;  // recorded when its other end was seen
      } else if (records_[m].type != NodeType::kSwitch) {
        far.lid = e.port.remote_lid;
      }
      if (e.port.remote_port_guid.valid() && records_[m].type != NodeType::kSwitch) {
        if (!far.guid.valid()) {
          far.guid = e.port.remote_port_guid;
          far.guid_line = e.line;
        } else if (far.guid != e.port.remote_port_guid) {
          return error_at(e.line, "port GUID " + to_string(e.port.remote_port_guid) + " of " + label(m, q) +
                                      " disagrees with " + to_string(far.guid) + " on line " +
                                      std::to_string(far.guid_line));
        }
      }
      LinkSpec l{e.record, m, p, q, e.port.width, e.port.speed, e.line};
      if (far.listed != kNone) {
        // Both ends listed; either may carry the width/speed comment.
        const PortLine& o = entries_[far.listed].port;
        if (l.width == LinkWidth::kUnknown) l.width = o.width;
        if (l.speed == LinkSpeed::kUnknown) l.speed = o.speed;
      }
      links_.push_back(l);
    }
    return {};
  }

  void assign_guids() {
    uint64_t next_switch = kFirstSwitchGuid, next_ca = kFirstCaGuid, next_router = kFirstRouterGuid;
    for (uint32_t i = 0; i < records_.size(); ++i) {
      Record& r = records_[i];
      if (r.guid.valid()) continue;
      if (r.type == NodeType::kSwitch) {
        r.guid = Guid{next_switch++};
        continue;
      }
      uint64_t& next = r.type == NodeType::kCa ? next_ca : next_router;
      r.guid = Guid{next};
      for (uint8_t p = 1; p <= r.num_ports; ++p) {
        Slot& s = slot(i, PortNum{p});
        if (!s.guid.valid()) {
          s.guid = Guid{next + p};
          s.guid_line = r.line;
        }
      }
      next += r.num_ports + 1u;
    }
  }

  // Done here rather than left to FabricBuilder::build() so that the error
  // can name the lines involved.
  Status check_unique_guids() {
    struct Use {
      Guid guid;
      uint32_t line;
      uint32_t record;
    };
    auto find_duplicate = [&](std::vector<Use>& uses, std::string_view what) -> Status {
      std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
        return a.guid != b.guid ? a.guid < b.guid : a.line < b.line;
      });
      for (size_t i = 1; i < uses.size(); ++i) {
        if (uses[i].guid != uses[i - 1].guid) continue;
        return error_at(uses[i].line, "duplicate " + std::string(what) + " GUID " + to_string(uses[i].guid) + " of " +
                                          quote(records_[uses[i].record].name) + " (also " +
                                          quote(records_[uses[i - 1].record].name) + " on line " +
                                          std::to_string(uses[i - 1].line) + ")");
      }
      return {};
    };
    std::vector<Use> uses;
    uses.reserve(records_.size());
    for (uint32_t i = 0; i < records_.size(); ++i) uses.push_back({records_[i].guid, records_[i].line, i});
    if (Status s = find_duplicate(uses, "node"); !s) return s;

    // Addressable ports: switch port 0 and CA/router ports (as the builder).
    uses.clear();
    for (uint32_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      if (r.type == NodeType::kSwitch) {
        uses.push_back({r.port0_guid.valid() ? r.port0_guid : r.guid, r.line, i});
        continue;
      }
      for (uint8_t p = 1; p <= r.num_ports; ++p) {
        const Slot& s = slot(i, PortNum{p});
        if (s.guid.valid()) uses.push_back({s.guid, s.guid_line, i});
      }
    }
    return find_duplicate(uses, "port");
  }

  Status check_lids() {
    std::vector<uint32_t> owner;  // LID -> record + 1, allocated on first LID
    auto claim = [&](uint32_t record, Lid lid, uint8_t lmc, uint32_t line) -> Status {
      if (!lid.valid()) return {};
      uint32_t last = lid.value + (1u << lmc) - 1;
      if (last > Lid::kMaxUnicast) {
        return error_at(line, "LID range " + std::to_string(lid.value) + ".." + std::to_string(last) + " of " +
                                  quote(records_[record].name) + " ends above the unicast limit 0xBFFF");
      }
      if (owner.empty()) owner.assign(Lid::kMaxUnicast + 1u, 0);
      for (uint32_t l = lid.value; l <= last; ++l) {
        if (owner[l] != 0) {
          const Record& other = records_[owner[l] - 1];
          return error_at(line, "LID " + std::to_string(l) + " of " + quote(records_[record].name) +
                                    " is already assigned to " + quote(other.name) + " (line " +
                                    std::to_string(other.line) + ")");
        }
        owner[l] = record + 1;
      }
      return {};
    };
    for (uint32_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      if (r.type == NodeType::kSwitch) {
        if (Status s = claim(i, r.lid, r.lmc, r.line); !s) return s;
        continue;
      }
      for (uint8_t p = 1; p <= r.num_ports; ++p) {
        const Slot& s = slot(i, PortNum{p});
        uint32_t line = s.listed != kNone ? entries_[s.listed].line : r.line;
        if (Status st = claim(i, s.lid, s.lmc, line); !st) return st;
      }
    }
    return {};
  }

  Result<Fabric> build() {
    FabricBuilder b;
    b.reserve(records_.size(), slots_.size(), links_.size());
    for (uint32_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      NodeId n = b.add_node(r.type, r.num_ports, r.guid, r.system_guid, r.desc, r.name);
      Status st;
      if (r.type == NodeType::kSwitch) {
        if (r.lid.valid() || r.port0_guid.valid()) st = b.set_port(n, PortNum{0}, r.port0_guid, r.lid, r.lmc);
      } else {
        for (uint8_t p = 1; p <= r.num_ports && st.ok(); ++p) {
          const Slot& s = slot(i, PortNum{p});
          if (s.guid.valid() || s.lid.valid()) st = b.set_port(n, PortNum{p}, s.guid, s.lid, s.lmc);
        }
      }
      if (!st) return error_at(r.line, st.error().message);
    }
    for (const LinkSpec& l : links_) {
      auto linked = b.connect(NodeId(l.a_record), l.a_port, NodeId(l.b_record), l.b_port, l.width, l.speed);
      if (!linked) return error_at(l.line, linked.error().message);
    }
    auto fabric = b.build();
    // Every check build() makes was made above with line numbers; keep its
    // message anyway in case the builder learns new ones.
    if (!fabric) return Error{std::string(source_) + ": " + fabric.error().message};
    return fabric;
  }

  std::string_view source_;
  std::vector<Record> records_;
  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::vector<LinkSpec> links_;
  std::unordered_map<std::string_view, uint32_t> names_;
};

}  // namespace

Result<Fabric> read_topology(std::string_view text, std::string_view source_name) {
  return Assembler(source_name).run(text);
}

}  // namespace railyard::routing
