// SwitchGraph: the switch-to-switch part of a fabric as compact adjacency
// arrays (CSR), plus where every CA port hangs off.
//
// Switch i is fabric.switches()[i]. Each switch's entries list its usable
// switch-switch ports; entry e has the local port, the remote switch and the
// index of the same cable seen from the other side (rev), so per-direction
// counters are one array indexed by entry. Links in state kDown are left out;
// links marked in `excluded` (drained) are left out too, so routing over this
// graph avoids them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/fabric.h"

namespace railyard::routing {

// Whether routing may use link l: it exists, is not down, and is not marked
// in `excluded` (one byte per LinkId; empty: nothing excluded).
bool link_usable(const Fabric& f, std::span<const uint8_t> excluded, LinkId l);

class SwitchGraph {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // `excluded`, when not empty, has one byte per LinkId: nonzero = leave out.
  SwitchGraph(const Fabric& fabric, std::span<const uint8_t> excluded = {});
  // The graph of `fabric` (nothing excluded) where `like` is the graph of
  // a fabric with the same nodes, ports and cables whose switch links
  // differ from fabric's only in the state of `changed`: like's arrays with
  // the entries of those links taken out or put in, O(entries) copies
  // instead of a walk of every port. Reads only like's arrays (the fabric
  // like was built from may be gone).
  SwitchGraph(const SwitchGraph& like, const Fabric& fabric, std::span<const LinkId> changed) {
    derive(like, fabric, changed);
  }
  // The same into this graph, in the storage it has (no fresh pages when it
  // is as large: a reroute alternates two graphs). `like` must be another.
  void derive(const SwitchGraph& like, const Fabric& fabric, std::span<const LinkId> changed);

  uint32_t num_switches() const { return static_cast<uint32_t>(begin_.size() - 1); }
  uint32_t num_entries() const { return static_cast<uint32_t>(remote_.size()); }
  NodeId node(uint32_t sw) const { return switches_[sw]; }
  uint32_t switch_index(NodeId n) const { return n.value() < sw_of_node_.size() ? sw_of_node_[n.value()] : kNone; }

  uint32_t begin(uint32_t sw) const { return begin_[sw]; }
  uint32_t end(uint32_t sw) const { return begin_[sw + 1]; }
  uint32_t remote(uint32_t e) const { return remote_[e]; }
  uint8_t port(uint32_t e) const { return port_[e]; }
  uint32_t rev(uint32_t e) const { return rev_[e]; }
  LinkId link(uint32_t e) const { return link_[e]; }

  // Where a CA port attaches: the switch index and the switch's port number,
  // or kNone if the CA port is not cabled to a switch (or its link is out).
  uint32_t attach_switch(PortId ca_port) const;
  uint8_t attach_port(PortId ca_port) const;
  // Number of CA ports cabled to each switch.
  uint32_t num_cas(uint32_t sw) const { return ca_count_[sw]; }

 private:
  const Fabric* fabric_ = nullptr;
  std::span<const uint8_t> excluded_;
  std::span<const NodeId> switches_;
  std::vector<uint32_t> sw_of_node_;
  std::vector<uint32_t> begin_;
  std::vector<uint32_t> remote_;
  std::vector<uint8_t> port_;
  std::vector<uint32_t> rev_;
  std::vector<LinkId> link_;
  std::vector<uint32_t> ca_count_;
  std::vector<uint32_t> moved_, origin_;  // derive's scratch
};

// The graph entry of every (switch, port) at [switch * 256 + port], kNone for
// port 0, CA ports and ports not in the graph: for walks that read ports out
// of forwarding tables.
std::vector<uint32_t> entries_by_port(const SwitchGraph& g);

// The piece of the switch graph each switch is in (0, 1, ... in switch
// order): no route crosses from one piece to another.
std::vector<uint32_t> switch_pieces(const SwitchGraph& g);

}  // namespace railyard::routing
