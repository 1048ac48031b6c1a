// FastPath: the controller's drains, undrains and reroutes (`policy_changed`,
// `reroute`) applied by sending only the LFT blocks that change, in a safe
// order, instead of OpenSM's force_reroute (which re-sends every block of
// every switch OpenSM still marks for update: ~333k SMPs at 16k CAs right after
// start-up, for 8,902 changed blocks; docs/fast_path.md).
//
// On its own thread (commands never wait on OpenSM, and the event channel's
// thread keeps writing while a push waits for acknowledgements):
//  1. read (OpenSM's read lock): may this SM push (lft_push.h may_push); the
//     subnet as a Fabric (subnet_snapshot.h); the tables OpenSM holds
//     (p_sw->new_lft), which must equal what the switches acknowledged
//     (p_sw->lft) — else OpenSM is still sending and the read is retried;
//  2. route: the policy file read again (RoutingPass::read_policy: the pass
//     and the fast path share one last good policy), planned, routed.
//     Incremental (routing/reroute.h) from the route of OpenSM's last
//     railyard pass (RoutingPass::take_routed) or of the fast path's last
//     push, whichever is of this fabric and gives the tables OpenSM holds;
//     a full route otherwise. Either way the tables are those OpenSM's next routing pass
//     computes (same fabric, same policy), so that pass finds nothing to send;
//  3. order the changed blocks (routing/update_order.h: no intermediate
//     state loops or black-holes a pair both tables deliver; rounds of
//     blocks that may go out together) and send them (lft_push.h);
//  4. when the last block is acknowledged: `ucast_routing_done` (reason
//     "fast_path") with the request ids, which is what the controller waits
//     for, and a `fast_path` event with the counts.
// Commands queued while one is being applied are applied together.
//
// Falls back to OpenSM's path (the ids go to the RequestBook, force_reroute,
// osm_opensm_sweep; the routing pass's events then serve them) when the push
// path cannot be used: not master, OpenSM's tables not settled, the policy
// file not readable or not applicable, routing or ordering refused, a switch
// gone, a send failed or went unanswered, or OpenSM routed meanwhile. Every
// command logs which path it took and why.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "routing/reroute.h"
#include "sm_plugin/event_channel.h"
#include "sm_plugin/event_json.h"
#include "sm_plugin/lft_push.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"
#include "sm_plugin/policy_source.h"
#include "sm_plugin/port_prober.h"
#include "sm_plugin/request_book.h"
#include "sm_plugin/routing_pass.h"

namespace railyard::sm_plugin {

struct SubnetReading;  // subnet_reading.h: what step 1 reads from OpenSM

class FastPath {
 public:
  // Everything referenced outlives the FastPath.
  FastPath(osm_opensm_t* osm, const OsmLogger& logger, RequestBook& requests, RoutingPass& pass);
  ~FastPath();
  FastPath(const FastPath&) = delete;
  FastPath& operator=(const FastPath&) = delete;

  // Where its events go (null: nowhere); set once the channel exists.
  void set_events(EventChannel* events) { events_.store(events); }

  // Any thread (the channel's): queues the command; never blocks on OpenSM.
  void submit(const Command& command);

  // report(OSM_EVENT_ID_LFT_CHANGE): true when the block was one the fast
  // path sent (counted in its `fast_path` event, not forwarded one by one).
  bool on_lft_change(const osm_epi_lft_change_event_t& event) noexcept { return push_.on_lft_change(event); }

  // report(OSM_EVENT_ID_SUBNET_UP): the first one has the thread route the
  // subnet once in the background. OpenSM's first pass routed it before its
  // ports were active, so that route cannot be continued incrementally; this
  // one can (the first command then costs a reroute, not a full route).
  // Never blocks.
  void on_subnet_up() noexcept;

  // report(OSM_EVENT_ID_TRAP) of trap 128 (a port of the switch at `lid`
  // changed state): queued; the thread asks that switch's linked ports
  // (port_prober.h), and if a link the subnet has went down (or one it has
  // down came up), routes the subnet with that change and pushes the changed
  // blocks at once, before OpenSM's heavy sweep has rediscovered anything.
  // OpenSM's sweep then finds its tables already on the switches. Without a
  // probe (set_port_probe) traps are left to OpenSM. Never blocks.
  void on_trap(uint16_t lid) noexcept;
  // The railyard-port-probe executable; empty: traps are left to OpenSM.
  // Before the first trap.
  void set_port_probe(std::string path) { probe_path_ = std::move(path); }
  // PluginConfig::ca_first_blocks. Before the first push.
  void set_ca_first_blocks(uint64_t blocks) { ca_first_blocks_ = blocks; }

  // Stops and joins the thread; queued commands are dropped. Idempotent.
  void stop() noexcept;

 private:

  void run() noexcept;
  void apply(std::vector<Command> commands);
  void prime();
  void handle_traps(std::vector<uint16_t> lids);
  // Steps 2-4 for `fabric` (the subnet read, or it with the links a trap
  // found changed): route, order, push; sets routed_ when the switches
  // acknowledged every block. Empty on success, else why not.
  // `routes`: directed routes replacing OpenSM's (lft_push.h PushPlan).
  std::string route_and_push(SubnetReading& r, routing::Fabric fabric, FastPathEvent& ev, std::string& route_how,
                             double& lock_ms, double& lock_wait_ms,
                             std::unordered_map<uint64_t, std::vector<uint8_t>> routes);
  // OpenSM's path for `commands`; `why` is logged and reported.
  void fall_back(const std::vector<Command>& commands, const std::string& why, FastPathEvent ev);

  osm_opensm_t* osm_;
  const OsmLogger& logger_;
  RequestBook& requests_;
  RoutingPass& pass_;
  std::atomic<EventChannel*> events_{nullptr};
  LftPush push_;
  uint64_t ca_first_blocks_ = 16384;
  // What the fast path routed last, for the next incremental reroute.
  std::unique_ptr<RoutingPass::Routed> routed_;
  // The tables of the last subnet reading, once it is done with: the next
  // reading fills them again (read_subnet's `reuse`), so that it does not
  // map and fault in fresh pages (~20 MB at 16k CAs) under OpenSM's lock.
  routing::ForwardingTables spare_tables_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> queue_;
  std::vector<uint16_t> traps_;  // switch LIDs of trap 128s not yet handled
  std::string probe_path_;
  std::unique_ptr<PortProber> prober_;
  // Links the probe found down that OpenSM's model may still have up (its
  // sweep has not unlinked them yet), by one end (node GUID, port): every
  // read applies them, so that a second failure or a command before that
  // sweep is not routed over a dead link. Dropped once the model no longer
  // has the cable, or the probe finds the port up again.
  std::vector<std::pair<uint64_t, uint8_t>> known_down_;
  uint32_t apply_known_down(SubnetReading& r);  // how many it applied
  bool prime_ = false;       // a background route is wanted
  bool subnet_up_seen_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace railyard::sm_plugin
