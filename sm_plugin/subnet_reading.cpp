#include "sm_plugin/subnet_reading.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "sm_plugin/lft_push.h"
#include "sm_plugin/subnet_snapshot.h"

namespace railyard::sm_plugin {

namespace {

// OpenSM may still be sending the blocks of its own last pass (p_sw->lft
// differs from p_sw->new_lft until each is acknowledged): the read is retried
// this often before the command is left to OpenSM.
constexpr int kSettleTries = 100;
constexpr std::chrono::milliseconds kSettleWait{20};

}  // namespace

std::unordered_map<uint64_t, std::vector<uint8_t>> detours(const SubnetReading& r, const routing::Fabric& now) {
  std::unordered_map<uint64_t, std::vector<uint8_t>> out;
  const NodeId sm = now.find_node_guid(Guid{r.sm_node_guid});
  if (!sm.valid()) return out;
  auto live = [&](PortId p) {
    const LinkId l = now.port(p).link;
    return l.valid() && now.link(l).state != routing::PortState::kDown && now.port(p).remote.valid();
  };
  std::vector<uint32_t> broken;
  for (uint32_t i = 0; i < r.routes.size() && i < now.switches().size(); ++i) {
    NodeId at = sm;
    bool whole = true;
    for (uint8_t hop : r.routes[i]) {
      if (hop == 0 || hop > now.node(at).num_ports || !live(now.port_id(at, PortNum{hop}))) {
        whole = false;
        break;
      }
      at = now.remote_node(now.port_id(at, PortNum{hop}));
    }
    if (!whole || at != now.switches()[i]) broken.push_back(i);
  }
  if (broken.empty()) return out;
  // Breadth first from the SM: the port each node was reached by, and from where.
  std::vector<uint32_t> prev(now.num_nodes(), UINT32_MAX);
  std::vector<uint8_t> via(now.num_nodes(), 0);
  std::vector<uint32_t> queue{sm.value()};
  prev[sm.value()] = sm.value();
  for (size_t h = 0; h < queue.size(); ++h) {
    const NodeId n(queue[h]);
    if (h > 0 && !now.is_switch(n)) continue;  // only switches forward SMPs
    const routing::Node& node = now.node(n);
    for (uint32_t p = 1; p <= node.num_ports; ++p) {
      if (h == 0 && !now.is_switch(n) && p != r.sm_port) continue;
      const PortId port = now.port_id(n, PortNum{static_cast<uint8_t>(p)});
      if (!live(port)) continue;
      const NodeId far = now.remote_node(port);
      if (!far.valid() || prev[far.value()] != UINT32_MAX) continue;
      prev[far.value()] = n.value();
      via[far.value()] = static_cast<uint8_t>(p);
      queue.push_back(far.value());
    }
  }
  for (uint32_t i : broken) {
    const NodeId target = now.switches()[i];
    if (prev[target.value()] == UINT32_MAX) continue;  // unreachable: its blocks will go unanswered
    std::vector<uint8_t> hops;
    for (uint32_t n = target.value(); n != sm.value(); n = prev[n]) hops.push_back(via[n]);
    out[r.guids[i]].assign(hops.rbegin(), hops.rend());
  }
  return out;
}

// read_subnet, retried while OpenSM is still sending its own blocks.
std::variant<SubnetReading, ReadFailure> read_settled(osm_opensm_t* osm, const RoutingPass& pass, int& attempt,
                                                      routing::ForwardingTables* reuse) {
  std::variant<SubnetReading, ReadFailure> read = ReadFailure{};
  for (attempt = 0;; ++attempt) {
    if (osm_exit_flag) return ReadFailure{"OpenSM is exiting"};
    read = read_subnet(osm, pass, reuse);
    const auto* failure = std::get_if<ReadFailure>(&read);
    if (failure == nullptr || !failure->retry || attempt + 1 == kSettleTries) break;
    std::this_thread::sleep_for(kSettleWait);
  }
  return read;
}

// Under OpenSM's read lock. OpenSM's routing pass (which writes new_lft and
// the pass count) runs under its exclusive lock.
std::variant<SubnetReading, ReadFailure> read_subnet(osm_opensm_t* osm, const RoutingPass& pass,
                                                     routing::ForwardingTables* reuse) {
  struct Unlock {
    osm_opensm_t* osm;
    ~Unlock() { cl_plock_release(&osm->lock); }
  };
  cl_plock_acquire(&osm->lock);
  Unlock unlock{osm};
  if (!may_push(osm->subn)) {
    return ReadFailure{"this SM may not push (sm_state " + std::to_string(osm->subn.sm_state) +
                       (osm->subn.first_time_master_sweep ? ", first master sweep" : "") +
                       (osm->subn.coming_out_of_standby ? ", coming out of standby" : "") + ")"};
  }
  if (pass.passes() == 0) return ReadFailure{"railyard has not routed this subnet yet"};
  if (!pass.last_ok()) return ReadFailure{"railyard's last routing pass was refused (OpenSM's tables are another engine's)"};
  SubnetReading r;
  r.pass = pass.passes();
  auto snap = take_snapshot(osm->subn);
  if (!snap) return ReadFailure{"subnet not usable: " + snap.error().message};
  if (snap->fabric.switches().empty() || !snap->fabric.has_lids()) return ReadFailure{"no switches or no LIDs"};
  const uint32_t num_lids = uint32_t{snap->fabric.max_lid().value} + 1;
  const uint32_t num_switches = static_cast<uint32_t>(snap->switches.size());
  if (reuse != nullptr) r.before = std::move(*reuse);  // its storage, if any: no fresh pages under the lock
  r.before.reset(num_switches, num_lids);
  r.guids.resize(num_switches);
  r.routes.resize(num_switches);
  if (const osm_port_t* sm = osm_get_port_by_guid(&osm->subn, osm->subn.sm_port_guid);
      sm != nullptr && sm->p_node != nullptr && sm->p_physp != nullptr) {
    r.sm_node_guid = cl_ntoh64(osm_node_get_node_guid(sm->p_node));
    r.sm_port = sm->p_physp->port_num;
  }
  uint32_t unsettled = 0;
  for (uint32_t i = 0; i < num_switches; ++i) {
    const osm_switch_t* sw = snap->switches[i];
    if (sw == nullptr || sw->new_lft == nullptr || sw->lft == nullptr) {
      return ReadFailure{"a switch has no forwarding table yet", true};
    }
    const uint32_t end = std::min<uint32_t>(uint32_t{sw->max_lid_ho} + 1, sw->lft_size);
    if (std::memcmp(sw->new_lft, sw->lft, end) != 0) ++unsettled;
    std::memcpy(r.before.row(i).data(), sw->new_lft, std::min(end, num_lids));
    r.guids[i] = snap->fabric.node(snap->fabric.switches()[i]).guid.value;
    const osm_physp_t* port0 = osm_node_get_physp_ptr(sw->p_node, 0);
    const osm_dr_path_t* dr = port0 != nullptr ? osm_physp_get_dr_path_ptr(port0) : nullptr;
    if (dr != nullptr && dr->hop_count < IB_SUBNET_PATH_HOPS_MAX) {
      r.routes[i].assign(dr->path + 1, dr->path + 1 + dr->hop_count);
    }
  }
  if (unsettled) {
    return ReadFailure{std::to_string(unsettled) + " switches hold blocks other than OpenSM's last tables "
                                                   "(OpenSM is still sending, or a Set failed)",
                       true};
  }
  r.fabric = std::move(snap->fabric);
  return r;
}

}  // namespace railyard::sm_plugin
