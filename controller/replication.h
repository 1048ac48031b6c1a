// Replicator: railyardd as one of several members sharing one state through
// etcd (docs/ha.md). etcd holds
//
//   <prefix>leader             {"member", "api", "plugin"}, put with the
//                              leader's lease: gone when its keepalives stop
//   <prefix>log/<seq, 20 digits>  one Store transaction's ops (store_ops.h)
//
// Election: a member that sees no leader key grants itself a lease (ttl
// lease_ttl_s) and creates the key if it still does not exist (one txn).
// Before it acts as leader it applies the whole log, then the controller
// re-reads its state and reconciles (Hooks::becoming_leader); only then does
// it accept mutations. Its keepalive goes every ttl/3; when none has
// succeeded for ttl/2 it steps down at once.
//
// Fencing: the leader ships each transaction (Store::Journal) as one txn
// "create_revision(leader) == mine AND create_revision(log/<next>) == 0 ->
// put log/<next>", before SQLite commits it: a member that lost its lease
// (a new leader key has another create_revision) cannot append, whatever it
// believes. A failed compare makes it step down.
//
// Followers poll the log every 100 ms and apply new entries in order, each
// in one SQLite transaction with applied_seq (Store::apply_entry), then let
// the controller refresh what it publishes (Hooks::applied).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "controller/config.h"
#include "controller/etcd_client.h"
#include "controller/store.h"

namespace railyard::controller {

enum class HaRole : uint8_t { kLeader, kFollower, kNoLeader };
std::string_view to_string(HaRole role);  // "leader", "follower", "no-leader"

struct HaStatus {
  HaRole role = HaRole::kNoLeader;
  std::string member;
  std::string leader;         // the leader's member name ("" when none is known)
  std::string leader_api;     // its advertise_api
  std::string leader_plugin;  // its advertise_plugin
  int64_t applied_seq = 0;
  bool etcd_ok = false;
  std::string etcd_error;     // the last etcd failure, while etcd_ok is false
  std::string etcd_endpoint;  // the member that answered last
  uint64_t elections_won = 0;
  uint64_t step_downs = 0;
  std::string last_step_down;  // why
};

// What the leader key holds (pure; the tests feed it bad values).
struct LeaderInfo {
  std::string member, api, plugin;
};
std::string encode_leader(const LeaderInfo& info);
std::optional<LeaderInfo> decode_leader(const std::string& value);
// "<prefix>log/00000000000000000042"; the seq of such a key, or nullopt.
std::string log_key(const std::string& prefix, int64_t seq);
std::optional<int64_t> log_seq(const std::string& prefix, const std::string& key);

class Replicator : public Store::Journal {
 public:
  struct Hooks {
    std::function<void()> applied;          // entries applied (follower): refresh what is published
    std::function<void()> becoming_leader;  // leader, before mutations are accepted: refresh and reconcile
    std::function<void(bool leader)> leadership;  // after the role changed (the plugin link may drop plugins)
    std::function<void(bool warn, const std::string& text)> log;
  };

  Replicator(HaConfig config, Store& store, Hooks hooks);
  ~Replicator() override;
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;

  void start();  // the election and the log's follower, on a thread of their own
  void stop();   // steps down (revokes the lease) if leader

  // Store::Journal: throws StoreError when this member may not append.
  int64_t ship(const std::string& batch) override;

  // The leader, accepting mutations.
  bool serving() const { return serving_.load(); }
  HaStatus status() const;
  // Why a mutation is refused here; nullopt when this member is the serving leader.
  std::optional<std::string> refusal() const;
  // For the plugin link (docs/plugin_protocol.md "not_leader"): nullopt when
  // this member is the leader; else the leader's plugin address ("" unknown).
  std::optional<std::string> plugin_redirect() const;

 private:
  void run();
  void follower_step();
  void leader_step();
  // Applies log entries after applied_seq; true when some were. All of them
  // (`all`), or one page.
  bool catch_up(bool all);
  void campaign();
  void step_down(const std::string& why);  // thread only
  void note_etcd(bool ok, const std::string& error = {});
  void log(bool warn, const std::string& text) const;
  double now() const;

  const HaConfig config_;
  Store& store_;
  Hooks hooks_;
  etcd::Client etcd_;
  const std::string leader_key_;

  std::thread thread_;
  std::mutex wait_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // under wait_mu_

  // The leader's: may ship (leader_), accepts mutations (serving_).
  std::atomic<bool> leader_{false};
  std::atomic<bool> serving_{false};
  std::atomic<bool> lost_{false};  // a ship found the leadership gone: the thread steps down
  std::mutex ship_mu_;             // one append at a time; guards the two below
  int64_t leader_rev_ = 0;         // create_revision of our leader key
  int64_t next_seq_ = 0;
  int64_t lease_ = 0;              // thread only
  double last_keepalive_ok_ = 0;   // thread only (steady seconds)
  double last_keepalive_sent_ = 0;

  mutable std::mutex status_mu_;
  HaStatus status_;  // under status_mu_ (role, applied_seq filled in by status())
};

}  // namespace railyard::controller
