// HopMatrices (sm_plugin/hop_matrices.h) against OpenSM 3.3.23's own min-hop
// builder, on seeded random switch graphs built from OpenSM's real structs
// (headers of libopensm-dev, cl_qmap from libosmcomp): parallel and loopback
// cables, unhealthy links (which ibsim cannot produce), CA ports, LID-less
// switches, several components. The reference below follows
// osm_ucast_mgr_build_lid_matrices step by step (hop 0/1 for every cable,
// then rounds of "least hops of the neighbour + 1" over healthy links until
// nothing changes), through the same osm_switch_set_hops. Every row of every
// switch must be equal, on the first pass and on later passes of the same
// object (reused distances, rows rewritten in place, nothing allocated).
//
// The plugin links against /usr/sbin/opensm for osm_switch_set_hops and
// osm_link_is_healthy; here they are defined as OpenSM 3.3.23 defines them
// (osm_switch.c, osm_port.c).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sm_plugin/hop_matrices.h"

extern "C" {
cl_status_t osm_switch_set_hops(osm_switch_t* p_sw, uint16_t lid_ho, uint8_t port_num, uint8_t num_hops) {
  if (!lid_ho || lid_ho > p_sw->max_lid_ho) return CL_ERROR;
  if (port_num >= p_sw->num_ports) return CL_ERROR;
  if (!p_sw->hops[lid_ho]) {
    p_sw->hops[lid_ho] = static_cast<uint8_t*>(malloc(p_sw->num_ports));
    if (!p_sw->hops[lid_ho]) return CL_ERROR;
    memset(p_sw->hops[lid_ho], OSM_NO_PATH, p_sw->num_ports);
  }
  p_sw->hops[lid_ho][port_num] = num_hops;
  if (p_sw->hops[lid_ho][0] > num_hops) p_sw->hops[lid_ho][0] = num_hops;
  return CL_SUCCESS;
}

boolean_t osm_link_is_healthy(const osm_physp_t* p_physp) {
  const osm_physp_t* remote = p_physp->p_remote_physp;
  if (remote != nullptr) return static_cast<boolean_t>(p_physp->healthy & remote->healthy);
  return TRUE;
}
}

namespace railyard::sm_plugin {
namespace {

// A subnet of switches (and one stand-in CA node) as OpenSM holds it.
class FakeSubnet {
 public:
  FakeSubnet() : subn_(static_cast<osm_subn_t*>(calloc(1, sizeof(osm_subn_t)))) {
    cl_qmap_init(&subn_->sw_guid_tbl);
    ca_node_ = new_node(2);
  }
  ~FakeSubnet() {
    for (osm_switch_t* sw : switches_) {
      for (unsigned l = 0; l < sw->num_hops; ++l) free(sw->hops[l]);
      free(sw->hops);
      free(sw);
    }
    for (osm_node_t* node : nodes_) free(node);
    free(subn_);
  }
  FakeSubnet(const FakeSubnet&) = delete;
  FakeSubnet& operator=(const FakeSubnet&) = delete;

  osm_switch_t* add_switch(uint64_t guid, uint8_t ports, uint16_t lid, uint16_t max_lid) {
    osm_node_t* node = new_node(ports);
    node->physp_table[0].port_info.base_lid = cl_hton16(lid);
    auto* sw = static_cast<osm_switch_t*>(calloc(1, sizeof(osm_switch_t)));
    sw->p_node = node;
    sw->num_ports = ports;
    sw->max_lid_ho = max_lid;
    sw->num_hops = static_cast<uint16_t>(max_lid + 1);
    sw->hops = static_cast<uint8_t**>(calloc(sw->num_hops, sizeof(uint8_t*)));
    node->sw = sw;
    cl_qmap_insert(&subn_->sw_guid_tbl, guid, &sw->map_item);
    switches_.push_back(sw);
    return sw;
  }
  void cable(osm_switch_t* a, uint8_t pa, osm_switch_t* b, uint8_t pb) {
    osm_physp_t* x = &a->p_node->physp_table[pa];
    osm_physp_t* y = &b->p_node->physp_table[pb];
    x->p_remote_physp = y;
    y->p_remote_physp = x;
  }
  void cable_ca(osm_switch_t* a, uint8_t pa) { a->p_node->physp_table[pa].p_remote_physp = &ca_node_->physp_table[1]; }
  void set_healthy(osm_switch_t* a, uint8_t pa, bool healthy) {
    a->p_node->physp_table[pa].healthy = healthy ? TRUE : FALSE;
  }
  // osm_switch_prepare_path_rebuild's part for the matrices.
  void clear_rows() {
    for (osm_switch_t* sw : switches_) {
      for (unsigned l = 0; l < sw->num_hops; ++l) {
        if (sw->hops[l] != nullptr) memset(sw->hops[l], OSM_NO_PATH, sw->num_ports);
      }
    }
  }
  // The first row that differs from `other`'s, as "switch S, LID L: counts
  // vs counts", or "" if none does. Only rows that hold a path count: what
  // OpenSM's readers can tell apart (an absent row and an all-OSM_NO_PATH one
  // read the same).
  std::string first_different_row(const FakeSubnet& other) const {
    if (switches_.size() != other.switches_.size()) {
      return std::to_string(switches_.size()) + " switches vs " + std::to_string(other.switches_.size());
    }
    auto held = [](const osm_switch_t* sw, unsigned l) -> const uint8_t* {
      const uint8_t* row = l < sw->num_hops ? sw->hops[l] : nullptr;
      if (row == nullptr || std::all_of(row, row + sw->num_ports, [](uint8_t h) { return h == OSM_NO_PATH; })) {
        return nullptr;
      }
      return row;
    };
    auto text = [](const osm_switch_t* sw, const uint8_t* row) {
      if (row == nullptr) return std::string(" none");
      std::string out;
      for (unsigned p = 0; p < sw->num_ports; ++p) out += " " + std::to_string(row[p]);
      return out;
    };
    for (size_t i = 0; i < switches_.size(); ++i) {
      const osm_switch_t* a = switches_[i];
      const osm_switch_t* b = other.switches_[i];
      for (unsigned l = 0; l < std::max(a->num_hops, b->num_hops); ++l) {
        const uint8_t* ra = held(a, l);
        const uint8_t* rb = held(b, l);
        if (ra == nullptr && rb == nullptr) continue;
        if (ra != nullptr && rb != nullptr && a->num_ports == b->num_ports && std::equal(ra, ra + a->num_ports, rb)) {
          continue;
        }
        return "switch " + std::to_string(i) + ", LID " + std::to_string(l) + ":" + text(a, ra) + " vs" + text(b, rb);
      }
    }
    return "";
  }
  uint64_t allocated_rows() const {
    uint64_t n = 0;
    for (const osm_switch_t* sw : switches_) {
      for (unsigned l = 0; l < sw->num_hops; ++l) n += sw->hops[l] != nullptr ? 1 : 0;
    }
    return n;
  }

  // osm_ucast_mgr_build_lid_matrices (OpenSM 3.3.23), without the log lines.
  void opensm_build() {
    auto lid_of = [](const osm_switch_t* s) { return cl_ntoh16(osm_node_get_base_lid(s->p_node, 0)); };
    for (osm_switch_t* sw : switches_) {
      for (uint8_t i = 1; i < sw->num_ports; ++i) sw->p_node->physp_table[i].hop_wf = 1;
    }
    for (osm_switch_t* sw : in_map_order()) {  // ucast_mgr_process_hop_0_1
      osm_switch_set_hops(sw, lid_of(sw), 0, 0);
      for (uint8_t i = 1; i < sw->num_ports; ++i) {
        osm_physp_t* p = osm_node_get_physp_ptr(sw->p_node, i);
        osm_node_t* remote = (p && p->p_remote_physp) ? p->p_remote_physp->p_node : nullptr;
        if (remote && remote->sw && remote != sw->p_node) osm_switch_set_hops(sw, lid_of(remote->sw), i, p->hop_wf);
      }
    }
    const auto order = in_map_order();
    bool changed = true;
    for (size_t round = 0; round + 1 < order.size() && changed; ++round) {  // ucast_mgr_process_neighbors
      changed = false;
      for (osm_switch_t* sw : order) {
        for (uint32_t port = 1; port < sw->p_node->physp_tbl_size; ++port) {
          osm_physp_t* p = osm_node_get_physp_ptr(sw->p_node, port);
          osm_node_t* remote = (p && p->p_remote_physp) ? p->p_remote_physp->p_node : nullptr;
          if (!remote || !remote->sw || remote == sw->p_node || !osm_link_is_healthy(p)) continue;
          for (osm_switch_t* t : order) {  // ucast_mgr_process_neighbor
            uint16_t hops = osm_switch_get_least_hops(remote->sw, lid_of(t));
            if (hops == OSM_NO_PATH) continue;
            hops = static_cast<uint16_t>(hops + p->hop_wf);
            if (hops < osm_switch_get_hop_count(sw, lid_of(t), static_cast<uint8_t>(port))) {
              osm_switch_set_hops(sw, lid_of(t), static_cast<uint8_t>(port), static_cast<uint8_t>(hops));
              changed = true;
            }
          }
        }
      }
    }
  }

  osm_subn_t& subn() { return *subn_; }
  const std::vector<osm_switch_t*>& switches() const { return switches_; }

 private:
  osm_node_t* new_node(uint8_t ports) {
    const uint32_t tbl = ports;  // port 0 .. ports-1, as OpenSM sizes a switch's table
    auto* node = static_cast<osm_node_t*>(calloc(1, sizeof(osm_node_t) + tbl * sizeof(osm_physp_t)));
    node->physp_tbl_size = tbl;
    for (uint32_t p = 0; p < tbl; ++p) {
      node->physp_table[p].port_guid = cl_hton64(0x1000 + p);  // valid (osm_physp_is_valid)
      node->physp_table[p].p_node = node;
      node->physp_table[p].port_num = static_cast<uint8_t>(p);
      node->physp_table[p].healthy = TRUE;
    }
    nodes_.push_back(node);
    return node;
  }
  std::vector<osm_switch_t*> in_map_order() {
    std::vector<osm_switch_t*> out;
    for (cl_map_item_t* it = cl_qmap_head(&subn_->sw_guid_tbl); it != cl_qmap_end(&subn_->sw_guid_tbl);
         it = cl_qmap_next(it)) {
      out.push_back(reinterpret_cast<osm_switch_t*>(it));
    }
    return out;
  }

  osm_subn_t* subn_;
  osm_node_t* ca_node_ = nullptr;
  std::vector<osm_node_t*> nodes_;
  std::vector<osm_switch_t*> switches_;
};

struct Shape {
  int switches;
  int max_ports;
  int cables;
  double unhealthy;  // share of switch ports marked unhealthy
  int lidless;       // switches without a LID
};

// A random subnet; `ports_used` gets both ends of every switch-to-switch cable.
void build_random(FakeSubnet& net, const Shape& shape, std::mt19937& rng,
                  std::vector<std::pair<osm_switch_t*, uint8_t>>& ports_used) {
  std::uniform_int_distribution<int> nports(3, shape.max_ports);
  const uint16_t max_lid = static_cast<uint16_t>(shape.switches * 5 + 10);
  std::vector<uint16_t> lids(max_lid);
  for (uint16_t l = 0; l < max_lid; ++l) lids[l] = static_cast<uint16_t>(l + 1);
  std::shuffle(lids.begin(), lids.end(), rng);
  std::vector<osm_switch_t*> sws;
  for (int i = 0; i < shape.switches; ++i) {
    const uint16_t lid = i < shape.lidless ? 0 : lids[static_cast<size_t>(i)];
    // Random GUIDs (OpenSM's map order), unique through the low byte.
    const uint64_t guid = (static_cast<uint64_t>(rng() % 1000000) << 8) | static_cast<uint64_t>(i);
    const auto ports = static_cast<uint8_t>(nports(rng));
    sws.push_back(net.add_switch(guid, ports, lid, max_lid));
  }
  std::vector<std::pair<osm_switch_t*, uint8_t>> free_ports;
  for (osm_switch_t* sw : sws) {
    for (uint8_t p = 1; p < sw->num_ports; ++p) free_ports.emplace_back(sw, p);
  }
  std::shuffle(free_ports.begin(), free_ports.end(), rng);
  for (int c = 0; c < shape.cables && free_ports.size() >= 2; ++c) {
    auto [a, pa] = free_ports.back();
    free_ports.pop_back();
    auto [b, pb] = free_ports.back();
    free_ports.pop_back();
    net.cable(a, pa, b, pb);  // may be a loopback (a == b) or a parallel cable
    ports_used.emplace_back(a, pa);
    ports_used.emplace_back(b, pb);
  }
  for (size_t i = 0; i < free_ports.size(); i += 3) net.cable_ca(free_ports[i].first, free_ports[i].second);
  std::bernoulli_distribution sick(shape.unhealthy);
  for (auto [sw, p] : ports_used) {
    if (sick(rng)) net.set_healthy(sw, p, false);
  }
}

// Two copies of one random subnet (the same draws): `ours` for the plugin's
// builder, `theirs` for OpenSM's reference one.
struct TwinSubnets {
  FakeSubnet ours, theirs;
  std::vector<std::pair<osm_switch_t*, uint8_t>> ours_ports, theirs_ports;

  TwinSubnets(const Shape& shape, std::mt19937& rng) {
    std::mt19937 rng2 = rng;
    build_random(ours, shape, rng, ours_ports);
    build_random(theirs, shape, rng2, theirs_ports);
  }

  // Flips the health of `flips` random cabled ports, the same on both copies;
  // false when there is no cabled port.
  bool flip_health(std::mt19937& rng, int flips) {
    if (ours_ports.empty()) return false;
    std::uniform_int_distribution<size_t> pick(0, ours_ports.size() - 1);
    for (int k = 0; k < flips; ++k) {
      const size_t i = pick(rng);
      const bool healthy = ours_ports[i].first->p_node->physp_table[ours_ports[i].second].healthy == FALSE;
      ours.set_healthy(ours_ports[i].first, ours_ports[i].second, healthy);
      theirs.set_healthy(theirs_ports[i].first, theirs_ports[i].second, healthy);
    }
    return true;
  }
};

// check(twins, rng) on `seeds` seeded twin subnets of every shape; rng is
// seeded with seed * mult + switches and has drawn the twins.
template <class Check>
void for_each_twin(std::span<const Shape> shapes, uint32_t seeds, uint32_t mult, Check&& check) {
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(shape.switches) + " switches");
      std::mt19937 rng(seed * mult + static_cast<uint32_t>(shape.switches));
      TwinSubnets twins(shape, rng);
      check(twins, rng);
    }
  }
}

TEST(HopMatricesTest, EqualsOpenSMsBuilderOnRandomSubnets) {
  const Shape shapes[] = {
      {1, 6, 2, 0.0, 0},     {2, 4, 3, 0.0, 0},      {12, 8, 20, 0.0, 0},  {30, 12, 60, 0.1, 2},
      {60, 16, 120, 0.05, 3}, {70, 24, 90, 0.2, 0},  {130, 10, 200, 0.02, 5},
  };
  int cases = 0, recomputed = 0;
  for_each_twin(shapes, 12, 7919, [&](TwinSubnets& twins, std::mt19937& rng) {
    FakeSubnet &ours = twins.ours, &theirs = twins.theirs;

    HopMatrices matrices;
    auto first = matrices.build(ours.subn());
    ASSERT_TRUE(first.ok()) << first.error().message;
    theirs.opensm_build();
    ASSERT_EQ(theirs.first_different_row(ours), "") << "OpenSM's row vs ours";
    EXPECT_EQ(first->rows_allocated, ours.allocated_rows());
    EXPECT_FALSE(first->distances_reused);
    // Every switch's hops[] array is new to this builder: faulted in once
    // (the rows above are unchanged by it).
    EXPECT_EQ(first->arrays_prefaulted, first->switches);

    // The next pass on the same graph: distances reused, rows rewritten
    // over OpenSM's cleared ones, none allocated.
    ours.clear_rows();
    auto again = matrices.build(ours.subn());
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_TRUE(again->distances_reused);
    EXPECT_EQ(0u, again->rows_allocated);
    EXPECT_EQ(0u, again->arrays_prefaulted);
    ASSERT_EQ(theirs.first_different_row(ours), "") << "OpenSM's row vs ours";

    // Link health flips on both copies (same ports): new distances.
    if (twins.flip_health(rng, 3)) {
      ours.clear_rows();
      theirs.clear_rows();
      auto changed = matrices.build(ours.subn());
      ASSERT_TRUE(changed.ok()) << changed.error().message;
      // A flip on a loopback cable, or one undone by a second flip, leaves
      // the graph as it was: reusing the distances is then right.
      recomputed += changed->distances_reused ? 0 : 1;
      theirs.opensm_build();
      ASSERT_EQ(theirs.first_different_row(ours), "") << "OpenSM's row vs ours";
    }
    ++cases;
  });
  EXPECT_EQ(12 * 7, cases);
  EXPECT_GE(recomputed, 12 * 5) << "health flips that changed the graph (new distances)";
}

// Every (switch, LID, port) count of OpenSM's reference rows, against what
// the plugin answers from its distances (mcast_tree.cpp's reads): "" if all
// equal, else the first difference. first_least_port against the port
// osm_switch_recommend_mcast_path takes from the rows: the lowest with the
// least count (none toward the switch's own LID or where there is no path).
std::string first_different_lookup(const HopMatrices& matrices, const FakeSubnet& ours, const FakeSubnet& theirs) {
  for (size_t i = 0; i < theirs.switches().size(); ++i) {
    const osm_switch_t* a = ours.switches()[i];
    const osm_switch_t* b = theirs.switches()[i];
    for (uint16_t lid = 0; lid <= b->max_lid_ho + 2; ++lid) {
      const std::string where = "switch " + std::to_string(i) + ", LID " + std::to_string(lid);
      const uint8_t least = osm_switch_get_least_hops(b, lid);
      for (uint8_t port = 0; port < b->num_ports; ++port) {
        const uint8_t want = osm_switch_get_hop_count(b, lid, port);
        const uint8_t got = matrices.hop_count(a, lid, port);
        if (want != got) {
          return where + ", port " + std::to_string(port) + ": " + std::to_string(want) + " vs " + std::to_string(got);
        }
      }
      if (matrices.least_hops(a, lid) != least) return where + ": least differs";
      uint8_t first = OSM_NO_PATH;
      if (least != OSM_NO_PATH && least != 0) {
        for (uint8_t port = 1; port < b->num_ports && first == OSM_NO_PATH; ++port) {
          if (osm_switch_get_hop_count(b, lid, port) == least) first = port;
        }
      }
      if (matrices.first_least_port(a, lid) != first) {
        return where + ": first least port " + std::to_string(first) + " vs " +
               std::to_string(matrices.first_least_port(a, lid));
      }
    }
  }
  return "";
}

TEST(HopMatricesTest, DistancesWithoutRowsAnswerAsOpenSMsRows) {
  const Shape shapes[] = {
      {1, 6, 2, 0.0, 0}, {12, 8, 20, 0.0, 0}, {30, 12, 60, 0.1, 2}, {60, 16, 120, 0.05, 3}, {70, 24, 90, 0.2, 0},
  };
  int cases = 0;
  for_each_twin(shapes, 8, 104729, [&](TwinSubnets& twins, std::mt19937& rng) {
    FakeSubnet &ours = twins.ours, &theirs = twins.theirs;

    HopMatrices matrices;
    EXPECT_FALSE(matrices.current());
    auto built = matrices.build(ours.subn(), /*rows=*/false);
    ASSERT_TRUE(built.ok()) << built.error().message;
    EXPECT_FALSE(built->rows_written);
    EXPECT_EQ(0u, ours.allocated_rows()) << "no row written";
    EXPECT_TRUE(matrices.current());
    theirs.opensm_build();
    ASSERT_EQ("", first_different_lookup(matrices, ours, theirs));

    // Health flips on both copies: the answers follow the new distances.
    if (twins.flip_health(rng, 3)) {
      theirs.clear_rows();
      ASSERT_TRUE(matrices.build(ours.subn(), false).ok());
      theirs.opensm_build();
      ASSERT_EQ("", first_different_lookup(matrices, ours, theirs));
    }
    ++cases;
  });
  EXPECT_EQ(8 * 5, cases);
}

TEST(HopMatricesTest, LookupsKnowOnlyTheSwitchesOfTheLastBuild) {
  FakeSubnet net;
  osm_switch_t* a = net.add_switch(1, 4, 1, 10);
  osm_switch_t* b = net.add_switch(2, 4, 2, 10);
  net.cable(a, 1, b, 2);
  HopMatrices matrices;
  ASSERT_TRUE(matrices.build(net.subn(), false).ok());
  EXPECT_EQ(1, matrices.least_hops(a, 2));
  EXPECT_EQ(1, matrices.first_least_port(a, 2));
  EXPECT_EQ(2, matrices.first_least_port(b, 1));
  EXPECT_EQ(OSM_NO_PATH, matrices.first_least_port(a, 1)) << "its own LID";
  EXPECT_EQ(OSM_NO_PATH, matrices.least_hops(a, 3)) << "a LID no switch had";
  // The same object now another switch (OpenSM freed the old one and
  // allocated the new one at its address): its GUID tells them apart.
  b->p_node->node_info.node_guid = cl_hton64(0xabc);
  EXPECT_EQ(OSM_NO_PATH, matrices.least_hops(b, 1));
  EXPECT_EQ(OSM_NO_PATH, matrices.first_least_port(b, 1));
  // A build that declines leaves nothing to answer from.
  net.add_switch(3, 4, 1, 10);  // shares LID 1
  ASSERT_FALSE(matrices.build(net.subn(), false).ok());
  EXPECT_FALSE(matrices.current());
  EXPECT_EQ(OSM_NO_PATH, matrices.least_hops(a, 2));
}

TEST(HopMatricesTest, StaleRowsFromAnotherEngineAreOverwritten) {
  // A row that holds counts another engine wrote (OpenSM did not clear it in
  // between) must read as railyard's afterwards, also where there is no path.
  FakeSubnet net;
  osm_switch_t* a = net.add_switch(1, 4, 1, 10);
  osm_switch_t* b = net.add_switch(2, 4, 2, 10);
  osm_switch_t* c = net.add_switch(3, 4, 3, 10);  // not cabled: unreachable
  net.cable(a, 1, b, 1);
  osm_switch_set_hops(a, 3, 2, 7);  // a stale path to c
  osm_switch_set_hops(a, 2, 3, 9);  // a stale extra port towards b
  HopMatrices matrices;
  ASSERT_TRUE(matrices.build(net.subn()).ok());
  EXPECT_EQ(OSM_NO_PATH, osm_switch_get_least_hops(a, 3));
  EXPECT_EQ(OSM_NO_PATH, osm_switch_get_hop_count(a, 3, 2));
  EXPECT_EQ(1, osm_switch_get_least_hops(a, 2));
  EXPECT_EQ(1, osm_switch_get_hop_count(a, 2, 1));
  EXPECT_EQ(OSM_NO_PATH, osm_switch_get_hop_count(a, 2, 3));
  EXPECT_EQ(0, osm_switch_get_least_hops(c, 3));
}

TEST(HopMatricesTest, DeclinesWhatOnlyOpenSMCanDo) {
  {
    FakeSubnet net;
    net.add_switch(1, 4, 1, 10);
    net.add_switch(2, 4, 1, 10);  // two switches on LID 1
    HopMatrices matrices;
    auto r = matrices.build(net.subn());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ("switches share LID 1", r.error().message);
    EXPECT_EQ(0u, net.allocated_rows()) << "nothing written before declining";
  }
  {
    FakeSubnet net;
    net.add_switch(1, 4, 1, 10);
    osm_switch_t* far = net.add_switch(2, 4, 12, 10);  // beyond max_lid_ho
    far->max_lid_ho = 12;
    HopMatrices matrices;
    auto r = matrices.build(net.subn());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ("switch LID 12 beyond OpenSM's hop arrays (max LID 10)", r.error().message);
    EXPECT_EQ(0u, net.allocated_rows());
  }
  {
    FakeSubnet net;
    net.add_switch(1, 4, 1, 10);
    char file[] = "/etc/opensm/hop-weights";
    net.subn().opt.hop_weights_file = file;
    HopMatrices matrices;
    auto r = matrices.build(net.subn());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ("hop_weights_file /etc/opensm/hop-weights is set", r.error().message);
  }
  {
    FakeSubnet net;  // no switches at all
    HopMatrices matrices;
    auto r = matrices.build(net.subn());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(0u, r->switches);
    EXPECT_EQ(0u, r->entries);
  }
}

}  // namespace
}  // namespace railyard::sm_plugin
