// LftPush: sends LFT blocks to the switches through OpenSM's own MAD path,
// round by round, and waits until the switches acknowledged them.
//
// How (OpenSM 3.3.23; research in docs/fast_path.md):
//  - Per batch of blocks, under OpenSM's exclusive lock (cl_plock_excl_acquire):
//    re-check that this SM may push (may_push) and that the caller's plan still
//    holds (`still_valid`: no routing pass since it was computed), look the
//    switch up by GUID (never a pointer kept across a release: OpenSM
//    reallocates tables and drops switches), write the block into
//    p_sw->new_lft (what OpenSM intends: SA path queries read it, and its next
//    pass compares against it), zero it in p_sw->lft (OpenSM's record of what
//    the switch acknowledged: a block whose Set is lost stays different, so
//    OpenSM's next sweep re-sends it — what set_lft_block does), and post
//    Set(LinearForwardingTable) with osm_req_set and an LFT context.
//  - The answer goes OpenSM's normal way to osm_lft_rcv_process, which copies
//    the switch's answer into p_sw->lft under the exclusive lock and reports
//    OSM_EVENT_ID_LFT_CHANGE (switch, block): on_lft_change() matches it to
//    the in-flight table keyed by (switch GUID, block) and checks that the
//    switch holds what was sent. One Set in flight per (switch, block).
//  - A round is done when every block of it is acknowledged; the next round
//    starts then (the order's guarantee needs it). No acknowledgement for
//    `ack_timeout` (no progress at all while blocks are pending): the pending
//    blocks are posted once more; a second silence ends the push (kNoAck).
//    OpenSM logged the failed Set (ERR 3113/3119) and will sweep heavy; the
//    block, zeroed in p_sw->lft, is re-sent by its next pass.
// Lock order: OpenSM's lock, then the push's own mutex (report() runs under
// OpenSM's lock and takes only the mutex). run() never holds the mutex while
// taking OpenSM's lock.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"

namespace railyard::sm_plugin {

struct PushBlock {
  uint64_t switch_guid = 0;  // node GUID, host order
  uint32_t block = 0;        // LIDs 64 * block .. 64 * block + 63
  std::array<uint8_t, 64> entries{};
};

struct PushPlan {
  std::vector<PushBlock> blocks;       // in the order to send
  std::vector<uint32_t> round_begin;   // round r: blocks[round_begin[r] .. round_begin[r + 1])
  // Directed routes (out ports from the SM's port, hop by hop) to use instead
  // of OpenSM's for these switches (node GUID): OpenSM's route to them
  // crosses a link that went down and its sweep has not found another yet.
  std::unordered_map<uint64_t, std::vector<uint8_t>> routes;
};

enum class PushStatus : uint8_t {
  kApplied,      // every block acknowledged with the content sent
  kNotMaster,    // this SM may not push (any more)
  kStale,        // a routing pass ran, or a switch is gone or its table is too small
  kSendFailed,   // osm_req_set refused a post
  kNoAck,        // blocks unanswered after one re-post
  kWrongAnswer,  // a switch answered with other content
  kExiting,      // OpenSM or the plugin is shutting down
};
std::string_view to_string(PushStatus status);

struct PushOutcome {
  PushStatus status = PushStatus::kApplied;
  std::string detail;         // why, for anything but kApplied
  uint64_t posted = 0;        // Sets posted, re-posts included
  uint64_t acked = 0;         // blocks acknowledged with the content sent
  uint64_t reposted = 0;
  uint32_t rounds_done = 0;
  double lock_ms = 0;         // time spent holding OpenSM's lock
  double lock_wait_ms = 0;    // time spent waiting for it
};

// This SM may send LFT blocks: master, and past its first sweep as master
// (LFT_CHANGE is not reported during it, so no acknowledgement would come)
// and not coming out of standby (OpenSM re-programs everything then).
// Call with OpenSM's lock held (sm_state is written without it; re-checked at
// every batch).
bool may_push(const osm_subn_t& subn);

class LftPush {
 public:
  LftPush(osm_opensm_t* osm, const OsmLogger& logger);

  // Sends `plan`; the calling thread waits for the acknowledgements. One run
  // at a time. `still_valid` is called under OpenSM's exclusive lock before
  // each batch: false stops the push (kStale).
  PushOutcome run(const PushPlan& plan, const std::function<bool()>& still_valid);

  // report(OSM_EVENT_ID_LFT_CHANGE), under OpenSM's exclusive lock: true when
  // the block is one a run is waiting for (the caller need not forward it).
  // O(1), never blocks on anything but the push's own mutex, never throws.
  bool on_lft_change(const osm_epi_lft_change_event_t& event) noexcept;

  // Any thread: a waiting run() returns kExiting. Final.
  void stop();

 private:
  struct Key {
    uint64_t guid;
    uint32_t block;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return static_cast<size_t>(k.guid * 0x9E3779B97F4A7C15ULL) ^ k.block;
    }
  };
  enum class State : uint8_t { kPending, kAcked, kWrong };
  struct InFlight {
    const PushBlock* block;
    State state;
  };

  // Posts blocks[begin, end) under one hold of OpenSM's exclusive lock.
  bool post(const PushPlan& plan, const std::vector<uint32_t>& which, const std::function<bool()>& still_valid,
            bool repost, PushOutcome& out);
  // Waits until the round's blocks are acknowledged; re-posts once.
  bool wait_round(const PushPlan& plan, const std::function<bool()>& still_valid, PushOutcome& out);

  osm_opensm_t* osm_;
  const OsmLogger& logger_;
  std::chrono::milliseconds ack_timeout_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<Key, InFlight, KeyHash> in_flight_;
  uint64_t pending_ = 0;
  uint64_t acked_ = 0;
  uint64_t wrong_ = 0;
  std::string wrong_detail_;
  bool stopping_ = false;
};

}  // namespace railyard::sm_plugin
