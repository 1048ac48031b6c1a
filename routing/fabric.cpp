#include "routing/fabric.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace railyard::routing {

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::kSwitch: return "Switch";
    case NodeType::kCa: return "Ca";
    case NodeType::kRouter: return "Rt";
  }
  return "?";
}

std::string_view to_string(LinkWidth w) {
  switch (w) {
    case LinkWidth::kUnknown: return "";
    case LinkWidth::k1x: return "1x";
    case LinkWidth::k2x: return "2x";
    case LinkWidth::k4x: return "4x";
    case LinkWidth::k8x: return "8x";
    case LinkWidth::k12x: return "12x";
  }
  return "";
}

std::string_view to_string(LinkSpeed s) {
  switch (s) {
    case LinkSpeed::kUnknown: return "";
    case LinkSpeed::kSdr: return "SDR";
    case LinkSpeed::kDdr: return "DDR";
    case LinkSpeed::kQdr: return "QDR";
    case LinkSpeed::kFdr10: return "FDR10";
    case LinkSpeed::kFdr: return "FDR";
    case LinkSpeed::kEdr: return "EDR";
    case LinkSpeed::kHdr: return "HDR";
    case LinkSpeed::kNdr: return "NDR";
    case LinkSpeed::kXdr: return "XDR";
  }
  return "";
}

std::string_view to_string(PortState s) {
  switch (s) {
    case PortState::kUnknown: return "unknown";
    case PortState::kDown: return "down";
    case PortState::kInit: return "init";
    case PortState::kArmed: return "armed";
    case PortState::kActive: return "active";
  }
  return "unknown";
}

std::string to_string(Guid guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid.value));
  return buf;
}

Fabric::Fabric(const Fabric& other)
    : nodes_(other.nodes_), ports_(other.ports_), links_(other.links_), switches_(other.switches_),
      cas_(other.cas_), strings_(other.strings_), node_guids_(other.node_guids_),
      port_guids_(other.port_guids_), names_(other.names_), lid_owner_(other.lid_owner_),
      cabling_(other.cabling_) {
  rebase_names(other.strings_.data());
}

Fabric::Fabric(Fabric&& other) noexcept {
  *this = std::move(other);
}

Fabric& Fabric::operator=(const Fabric& other) {
  if (this != &other) *this = Fabric(other);
  return *this;
}

Fabric& Fabric::operator=(Fabric&& other) noexcept {
  if (this == &other) return *this;
  // Taken before the move: with SSO the characters stay in `other`.
  const char* old_base = other.strings_.data();
  nodes_ = std::move(other.nodes_);
  ports_ = std::move(other.ports_);
  links_ = std::move(other.links_);
  switches_ = std::move(other.switches_);
  cas_ = std::move(other.cas_);
  strings_ = std::move(other.strings_);
  node_guids_ = std::move(other.node_guids_);
  port_guids_ = std::move(other.port_guids_);
  names_ = std::move(other.names_);
  lid_owner_ = std::move(other.lid_owner_);
  cabling_ = other.cabling_;
  rebase_names(old_base);
  other.names_.clear();
  return *this;
}

// Every view in names_ points into the strings_ that started at old_base.
void Fabric::rebase_names(const char* old_base) {
  const char* base = strings_.data();
  if (base == old_base) return;
  for (auto& [view, node] : names_) view = std::string_view(base + (view.data() - old_base), view.size());
}

std::string_view Fabric::desc(NodeId n) const {
  const Node& nd = node(n);
  return std::string_view(strings_).substr(nd.desc_offset, nd.desc_len);
}

std::string_view Fabric::name(NodeId n) const {
  const Node& nd = node(n);
  if (nd.name_len == 0) return desc(n);
  return std::string_view(strings_).substr(nd.name_offset, nd.name_len);
}

NodeId Fabric::find_node_guid(Guid g) const {
  auto it = std::lower_bound(node_guids_.begin(), node_guids_.end(), std::make_pair(g, NodeId(0)),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  return (it != node_guids_.end() && it->first == g) ? it->second : NodeId();
}

PortId Fabric::find_port_guid(Guid g) const {
  auto it = std::lower_bound(port_guids_.begin(), port_guids_.end(), std::make_pair(g, PortId(0)),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  return (it != port_guids_.end() && it->first == g) ? it->second : PortId();
}

NodeId Fabric::find_name(std::string_view name) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), name,
                             [](const auto& a, std::string_view b) { return a.first < b; });
  return (it != names_.end() && it->first == name) ? it->second : NodeId();
}

PortId Fabric::primary_port(NodeId n) const {
  const Node& nd = node(n);
  if (nd.type == NodeType::kSwitch) return nd.first_port;
  for (uint32_t p = 1; p <= nd.num_ports; ++p) {
    PortId id(nd.first_port.value() + p);
    if (port(id).remote.valid()) return id;
  }
  return PortId(nd.first_port.value() + (nd.num_ports > 0 ? 1 : 0));
}

size_t Fabric::memory_bytes() const {
  return nodes_.capacity() * sizeof(Node) + ports_.capacity() * sizeof(Port) +
         links_.capacity() * sizeof(Link) + (switches_.capacity() + cas_.capacity()) * sizeof(NodeId) +
         strings_.capacity() + node_guids_.capacity() * sizeof(node_guids_[0]) +
         port_guids_.capacity() * sizeof(port_guids_[0]) + names_.capacity() * sizeof(names_[0]) +
         lid_owner_.capacity() * sizeof(PortId) + sizeof(Fabric);
}

FabricBuilder::FabricBuilder(const Fabric& base) {
  f_.nodes_ = base.nodes_;
  f_.ports_ = base.ports_;
  f_.links_ = base.links_;
  f_.strings_ = base.strings_;
  f_.cabling_ = base.cabling_;
  cabling_kept_ = true;
}

Status FabricBuilder::set_link_state(LinkId link, PortState state) {
  if (!link.valid() || link.value() >= f_.links_.size()) return Error{"no link " + std::to_string(link.value())};
  f_.links_[link.value()].state = state;
  return {};
}

void FabricBuilder::reserve(size_t nodes, size_t ports, size_t links) {
  f_.nodes_.reserve(nodes);
  f_.ports_.reserve(ports);
  f_.links_.reserve(links);
}

NodeId FabricBuilder::add_node(NodeType type, uint8_t num_ports, Guid guid, Guid system_guid,
                               std::string_view desc, std::string_view name) {
  cabling_kept_ = false;
  NodeId id(static_cast<uint32_t>(f_.nodes_.size()));
  Node n;
  n.type = type;
  n.num_ports = num_ports;
  n.guid = guid;
  n.system_guid = system_guid.valid() ? system_guid : guid;
  n.first_port = PortId(static_cast<uint32_t>(f_.ports_.size()));
  n.desc_offset = static_cast<uint32_t>(f_.strings_.size());
  n.desc_len = static_cast<uint32_t>(desc.size());
  f_.strings_.append(desc);
  if (!name.empty() && name != desc) {
    n.name_offset = static_cast<uint32_t>(f_.strings_.size());
    n.name_len = static_cast<uint32_t>(name.size());
    f_.strings_.append(name);
  }
  f_.nodes_.push_back(n);
  for (uint32_t p = 0; p <= num_ports; ++p) {
    Port port;
    port.node = id;
    port.num = PortNum{static_cast<uint8_t>(p)};
    if (type == NodeType::kSwitch && p == 0) port.guid = guid;
    f_.ports_.push_back(port);
  }
  return id;
}

std::string_view FabricBuilder::node_label(NodeId n) const {
  const Node& nd = f_.nodes_[n.value()];
  if (nd.name_len) return std::string_view(f_.strings_).substr(nd.name_offset, nd.name_len);
  return std::string_view(f_.strings_).substr(nd.desc_offset, nd.desc_len);
}

static std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Status FabricBuilder::set_port(NodeId n, PortNum p, Guid guid, Lid lid, uint8_t lmc, PortState state) {
  if (!n.valid() || n.value() >= f_.nodes_.size()) return Error{"no such node"};
  const Node& nd = f_.nodes_[n.value()];
  if (p.value > nd.num_ports) {
    return Error{"port " + std::to_string(p.value) + " is beyond " + quote(node_label(n)) + "'s " +
                 std::to_string(nd.num_ports) + " ports"};
  }
  if (lmc > 7) return Error{"LMC " + std::to_string(lmc) + " of " + quote(node_label(n)) + " is above 7"};
  if (lid.value > Lid::kMaxUnicast) {
    return Error{"LID " + std::to_string(lid.value) + " of " + quote(node_label(n)) + " is not unicast"};
  }
  cabling_kept_ = false;
  Port& port = f_.ports_[nd.first_port.value() + p.value];
  if (guid.valid()) port.guid = guid;
  port.lid = lid;
  port.lmc = lmc;
  if (state != PortState::kUnknown) port.state = state;
  return {};
}

Result<LinkId> FabricBuilder::connect(NodeId a, PortNum pa, NodeId b, PortNum pb, LinkWidth width,
                                      LinkSpeed speed, PortState state) {
  for (auto [n, p] : {std::pair{a, pa}, std::pair{b, pb}}) {
    if (!n.valid() || n.value() >= f_.nodes_.size()) return Error{"no such node"};
    const Node& nd = f_.nodes_[n.value()];
    if (p.value == 0 || p.value > nd.num_ports) {
      return Error{"port " + std::to_string(p.value) + " is beyond " + quote(node_label(n)) + "'s " +
                   std::to_string(nd.num_ports) + " ports"};
    }
  }
  if (a == b && pa == pb) return Error{"port " + std::to_string(pa.value) + " of " + quote(node_label(a)) + " is cabled to itself"};
  PortId ia(f_.nodes_[a.value()].first_port.value() + pa.value);
  PortId ib(f_.nodes_[b.value()].first_port.value() + pb.value);
  Port& A = f_.ports_[ia.value()];
  Port& B = f_.ports_[ib.value()];
  for (auto [port, n] : {std::pair{&A, a}, std::pair{&B, b}}) {
    if (port->remote.valid()) {
      const Port& other = f_.ports_[port->remote.value()];
      return Error{"port " + std::to_string(port->num.value) + " of " + quote(node_label(n)) +
                   " is already cabled to " + quote(node_label(other.node)) + "[" +
                   std::to_string(other.num.value) + "]"};
    }
  }
  cabling_kept_ = false;
  LinkId id(static_cast<uint32_t>(f_.links_.size()));
  f_.links_.push_back(Link{ia, ib, width, speed, state});
  A.remote = ib;
  B.remote = ia;
  A.link = B.link = id;
  if (A.state == PortState::kUnknown) A.state = state;
  if (B.state == PortState::kUnknown) B.state = state;
  return id;
}

Result<Fabric> FabricBuilder::build() {
  Fabric f = std::move(f_);
  f_ = Fabric();
  // A process-wide count: equal tokens mean the same cabling (same_cabling).
  static std::atomic<uint64_t> cablings{0};
  if (!cabling_kept_ || f.cabling_ == 0) f.cabling_ = ++cablings;
  cabling_kept_ = false;
  for (uint32_t i = 0; i < f.nodes_.size(); ++i) {
    (f.nodes_[i].type == NodeType::kSwitch ? f.switches_ : f.cas_).push_back(NodeId(i));
  }

  f.node_guids_.reserve(f.nodes_.size());
  for (uint32_t i = 0; i < f.nodes_.size(); ++i) {
    if (f.nodes_[i].guid.valid()) f.node_guids_.emplace_back(f.nodes_[i].guid, NodeId(i));
  }
  std::sort(f.node_guids_.begin(), f.node_guids_.end());
  for (size_t i = 1; i < f.node_guids_.size(); ++i) {
    if (f.node_guids_[i].first == f.node_guids_[i - 1].first) {
      return Error{"duplicate node GUID " + to_string(f.node_guids_[i].first) + " on " + quote(f.name(f.node_guids_[i - 1].second)) +
                   " and " + quote(f.name(f.node_guids_[i].second))};
    }
  }

  f.port_guids_.reserve(f.ports_.size() / 2);
  for (uint32_t i = 0; i < f.ports_.size(); ++i) {
    const Port& p = f.ports_[i];
    if (!p.guid.valid()) continue;
    // A CA's port 0 slot is unused; switches answer on port 0 only.
    bool addressable = f.nodes_[p.node.value()].type == NodeType::kSwitch ? p.num.value == 0 : p.num.value != 0;
    if (addressable) f.port_guids_.emplace_back(p.guid, PortId(i));
  }
  std::sort(f.port_guids_.begin(), f.port_guids_.end());
  for (size_t i = 1; i < f.port_guids_.size(); ++i) {
    if (f.port_guids_[i].first == f.port_guids_[i - 1].first) {
      return Error{"duplicate port GUID " + to_string(f.port_guids_[i].first) + " on " +
                   quote(f.name(f.ports_[f.port_guids_[i - 1].second.value()].node)) + " and " +
                   quote(f.name(f.ports_[f.port_guids_[i].second.value()].node))};
    }
  }

  f.names_.reserve(f.nodes_.size() * 2);
  for (uint32_t i = 0; i < f.nodes_.size(); ++i) {
    f.names_.emplace_back(f.name(NodeId(i)), NodeId(i));
    if (f.nodes_[i].name_len) f.names_.emplace_back(f.desc(NodeId(i)), NodeId(i));
  }
  std::stable_sort(f.names_.begin(), f.names_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  // LID table, with LMC ranges; overlapping ranges are an error.
  uint32_t max_lid = 0;
  for (const Port& p : f.ports_) {
    if (p.lid.value) max_lid = std::max<uint32_t>(max_lid, p.lid.value + (1u << p.lmc) - 1);
  }
  if (max_lid > Lid::kMaxUnicast) return Error{"LID range ends above the unicast limit 0xBFFF"};
  if (max_lid > 0) {
    f.lid_owner_.assign(max_lid + 1, PortId());
    for (uint32_t i = 0; i < f.ports_.size(); ++i) {
      const Port& p = f.ports_[i];
      if (!p.lid.value) continue;
      for (uint32_t l = p.lid.value; l < p.lid.value + (1u << p.lmc); ++l) {
        if (f.lid_owner_[l].valid()) {
          return Error{"LID " + std::to_string(l) + " is assigned to both " +
                       quote(f.name(f.ports_[f.lid_owner_[l].value()].node)) + " and " + quote(f.name(p.node))};
        }
        f.lid_owner_[l] = PortId(i);
      }
    }
  }
  return f;
}

}  // namespace railyard::routing
