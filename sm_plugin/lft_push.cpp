#include "sm_plugin/lft_push.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "routing/fabric.h"

extern "C" {
#define delete delete_
#include <opensm/osm_madw.h>
#include <opensm/osm_sm.h>
#undef delete
}

namespace railyard::sm_plugin {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Blocks posted per hold of OpenSM's lock: long enough to amortize taking
// it, short enough that SA queries and the LFT receiver (which needs the lock
// to record our acknowledgements) are not held up for long (measured ~0.03-
// 0.06 ms per post).
constexpr size_t kBatch = 256;


}  // namespace

std::string_view to_string(PushStatus status) {
  switch (status) {
    case PushStatus::kApplied: return "applied";
    case PushStatus::kNotMaster: return "not master";
    case PushStatus::kStale: return "stale";
    case PushStatus::kSendFailed: return "send failed";
    case PushStatus::kNoAck: return "no acknowledgement";
    case PushStatus::kWrongAnswer: return "wrong answer";
    case PushStatus::kExiting: return "exiting";
  }
  return "?";
}

bool may_push(const osm_subn_t& subn) {
  return subn.sm_state == IB_SMINFO_STATE_MASTER && !subn.first_time_master_sweep && !subn.coming_out_of_standby;
}

LftPush::LftPush(osm_opensm_t* osm, const OsmLogger& logger) : osm_(osm), logger_(logger) {
  // OpenSM's own give-up time for a Set (transaction_timeout per try, 1 +
  // transaction_retries tries), plus a margin; at least a second (a heavy
  // sweep's SMPs can queue ahead of ours in the one VL15 FIFO).
  const auto& opt = osm->subn.opt;
  const uint64_t give_up = uint64_t{opt.transaction_timeout} * (uint64_t{opt.transaction_retries} + 1) + 500;
  ack_timeout_ = std::chrono::milliseconds(std::max<uint64_t>(give_up, 1000));
}

void LftPush::stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

bool LftPush::on_lft_change(const osm_epi_lft_change_event_t& event) noexcept {
  if (!(event.flags & LFT_CHANGED_BLOCK) || event.p_sw == nullptr || event.p_sw->p_node == nullptr) return false;
  const osm_switch_t& sw = *event.p_sw;
  const Key key{cl_ntoh64(osm_node_get_node_guid(sw.p_node)), event.block_num};
  std::lock_guard lock(mu_);
  if (in_flight_.empty()) return false;
  auto it = in_flight_.find(key);
  if (it == in_flight_.end()) return false;
  InFlight& f = it->second;
  if (f.state != State::kPending) return true;
  // The receiver holds OpenSM's lock exclusively: p_sw->lft is the switch's
  // answer to this Set (or to another Set of the same block, OpenSM's own).
  const size_t off = size_t{event.block_num} * 64;
  const bool same = sw.lft != nullptr && off + 64 <= sw.lft_size &&
                    std::memcmp(sw.lft + off, f.block->entries.data(), 64) == 0;
  --pending_;
  if (same) {
    f.state = State::kAcked;
    ++acked_;
  } else {
    f.state = State::kWrong;
    if (wrong_++ == 0) {
      try {
        wrong_detail_ = "switch " + routing::to_string(Guid{key.guid}) + " block " + std::to_string(key.block) +
                        " answered with other entries";
      } catch (...) {
        // Out of memory: the status still says what happened.
      }
    }
  }
  if (pending_ == 0 || !same) cv_.notify_all();
  return true;
}

bool LftPush::post(const PushPlan& plan, const std::vector<uint32_t>& which,
                   const std::function<bool()>& still_valid, bool repost, PushOutcome& out) {
  const auto t0 = Clock::now();
  // Released on every way out, exceptions included: OpenSM must never be
  // left with its lock held.
  struct Hold {
    osm_opensm_t* osm;
    Clock::time_point since;
    double& held_ms;
    ~Hold() {
      cl_plock_release(&osm->lock);
      held_ms += ms_between(since, Clock::now());
    }
  };
  cl_plock_excl_acquire(&osm_->lock);
  const auto t1 = Clock::now();
  Hold hold{osm_, t1, out.lock_ms};
  out.lock_wait_ms += ms_between(t0, t1);
  auto fail = [&](PushStatus status, std::string detail) {
    out.status = status;
    out.detail = std::move(detail);
    return false;
  };
  if (osm_exit_flag) return fail(PushStatus::kExiting, "OpenSM is exiting");
  if (!may_push(osm_->subn)) {
    return fail(PushStatus::kNotMaster, "sm_state " + std::to_string(osm_->subn.sm_state) +
                                            (osm_->subn.first_time_master_sweep ? ", first master sweep" : "") +
                                            (osm_->subn.coming_out_of_standby ? ", coming out of standby" : ""));
  }
  if (!still_valid()) return fail(PushStatus::kStale, "OpenSM routed since the patch was computed");
  for (uint32_t i : which) {
    const PushBlock& b = plan.blocks[i];
    osm_switch_t* sw = osm_get_switch_by_guid(&osm_->subn, cl_hton64(b.switch_guid));
    const size_t off = size_t{b.block} * 64;
    if (sw == nullptr || sw->p_node == nullptr || sw->lft == nullptr || sw->new_lft == nullptr ||
        off + 64 > sw->lft_size) {
      return fail(PushStatus::kStale, "switch " + routing::to_string(Guid{b.switch_guid}) + " is gone or has no block " +
                                          std::to_string(b.block) + " in its table");
    }
    osm_physp_t* port0 = osm_node_get_physp_ptr(sw->p_node, 0);
    if (port0 == nullptr) return fail(PushStatus::kStale, "switch " + routing::to_string(Guid{b.switch_guid}) + " has no port 0");
    const Key key{b.switch_guid, b.block};
    {
      std::lock_guard lock(mu_);
      auto [it, fresh] = in_flight_.try_emplace(key, InFlight{&b, State::kPending});
      if (fresh) {
        ++pending_;
      } else if (!repost || it->second.state != State::kPending) {
        // One Set in flight per (switch, block): a plan never names a block
        // twice in one round.
        return fail(PushStatus::kStale, "switch " + routing::to_string(Guid{b.switch_guid}) + " block " +
                                            std::to_string(b.block) + " twice in one round");
      }
    }
    std::memcpy(sw->new_lft + off, b.entries.data(), 64);
    std::memset(sw->lft + off, 0, 64);
    osm_madw_context_t context;
    std::memset(&context, 0, sizeof context);
    context.lft_context.node_guid = osm_node_get_node_guid(sw->p_node);
    context.lft_context.set_method = TRUE;
    const osm_dr_path_t* route = osm_physp_get_dr_path_ptr(port0);
    osm_dr_path_t detour;
    if (auto it = plan.routes.find(b.switch_guid); it != plan.routes.end() && it->second.size() < IB_SUBNET_PATH_HOPS_MAX) {
      std::memset(&detour, 0, sizeof detour);
      detour.hop_count = static_cast<uint8_t>(it->second.size());
      for (size_t h = 0; h < it->second.size(); ++h) detour.path[h + 1] = it->second[h];
      route = &detour;  // osm_req_set copies it into the MAD
    }
    const ib_api_status_t st = osm_req_set(&osm_->sm, route, b.entries.data(), 64,
                                           IB_MAD_ATTR_LIN_FWD_TBL, cl_hton32(b.block), FALSE,
                                           ib_port_info_get_m_key(&port0->port_info), 0, CL_DISP_MSGID_NONE,
                                           &context);
    if (st != IB_SUCCESS) {
      {
        std::lock_guard lock(mu_);
        in_flight_.erase(key);
        --pending_;
      }
      return fail(PushStatus::kSendFailed, "osm_req_set for switch " + routing::to_string(Guid{b.switch_guid}) + " block " +
                                               std::to_string(b.block) + ": status " + std::to_string(static_cast<int>(st)));
    }
    ++out.posted;
    if (repost) ++out.reposted;
  }
  return true;
}

bool LftPush::wait_round(const PushPlan& plan, const std::function<bool()>& still_valid, PushOutcome& out) {
  bool reposted = false;
  std::unique_lock lock(mu_);
  auto last_progress = Clock::now();
  uint64_t seen = acked_;
  for (;;) {
    if (stopping_) {
      out.status = PushStatus::kExiting;
      out.detail = "the plugin is unloading";
      return false;
    }
    if (wrong_) {
      out.status = PushStatus::kWrongAnswer;
      out.detail = wrong_detail_;
      return false;
    }
    if (pending_ == 0) return true;
    cv_.wait_for(lock, std::chrono::milliseconds(20));
    const auto now = Clock::now();
    if (acked_ != seen) {
      seen = acked_;
      last_progress = now;
      continue;
    }
    if (now - last_progress < ack_timeout_ || pending_ == 0) continue;
    std::vector<uint32_t> silent;
    std::string first;
    for (const auto& [key, f] : in_flight_) {
      if (f.state != State::kPending) continue;
      if (first.empty()) first = "switch " + routing::to_string(Guid{key.guid}) + " block " + std::to_string(key.block);
      silent.push_back(static_cast<uint32_t>(f.block - plan.blocks.data()));
    }
    if (reposted) {
      out.status = PushStatus::kNoAck;
      out.detail = std::to_string(silent.size()) + " blocks unanswered after a re-post, e.g. " + first;
      return false;
    }
    logger_.log(LogLevel::kInfo, "fast path: %zu blocks unanswered after %lld ms (e.g. %s): posting them once more",
                silent.size(), static_cast<long long>(ack_timeout_.count()), first.c_str());
    reposted = true;
    lock.unlock();
    std::sort(silent.begin(), silent.end());
    for (size_t i = 0; i < silent.size(); i += kBatch) {
      const std::vector<uint32_t> batch(silent.begin() + static_cast<std::ptrdiff_t>(i),
                                        silent.begin() + static_cast<std::ptrdiff_t>(std::min(i + kBatch, silent.size())));
      if (!post(plan, batch, still_valid, true, out)) return false;
    }
    lock.lock();
    last_progress = Clock::now();
  }
}

PushOutcome LftPush::run(const PushPlan& plan, const std::function<bool()>& still_valid) {
  PushOutcome out;
  const uint32_t rounds = plan.round_begin.empty() ? 0 : static_cast<uint32_t>(plan.round_begin.size() - 1);
  for (uint32_t r = 0; r < rounds && out.status == PushStatus::kApplied; ++r) {
    {
      std::lock_guard lock(mu_);
      in_flight_.clear();
      pending_ = 0;
      wrong_ = 0;
      wrong_detail_.clear();
    }
    const uint32_t begin = plan.round_begin[r];
    const uint32_t end = plan.round_begin[r + 1];
    bool ok = true;
    std::vector<uint32_t> batch;
    for (uint32_t i = begin; i < end && ok; i += kBatch) {
      batch.clear();
      for (uint32_t k = i; k < std::min<uint32_t>(end, i + kBatch); ++k) batch.push_back(k);
      ok = post(plan, batch, still_valid, false, out);
    }
    if (ok) ok = wait_round(plan, still_valid, out);
    if (ok) ++out.rounds_done;
  }
  std::lock_guard lock(mu_);
  out.acked += acked_;
  acked_ = 0;
  in_flight_.clear();
  pending_ = 0;
  return out;
}

}  // namespace railyard::sm_plugin
