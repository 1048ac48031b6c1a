#include "controller/replication.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>

namespace railyard::controller {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr int64_t kPage = 256;  // log entries read per range

}  // namespace

std::string_view to_string(HaRole role) {
  switch (role) {
    case HaRole::kLeader: return "leader";
    case HaRole::kFollower: return "follower";
    case HaRole::kNoLeader: return "no-leader";
  }
  return "no-leader";
}

std::string encode_leader(const LeaderInfo& info) {
  return nlohmann::json{{"member", info.member}, {"api", info.api}, {"plugin", info.plugin}}.dump();
}

std::optional<LeaderInfo> decode_leader(const std::string& value) {
  const nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  LeaderInfo out;
  for (auto [name, field] : {std::pair{"member", &out.member}, std::pair{"api", &out.api},
                             std::pair{"plugin", &out.plugin}}) {
    auto it = j.find(name);
    if (it == j.end()) continue;
    if (!it->is_string()) return std::nullopt;
    *field = it->get<std::string>();
  }
  if (out.member.empty()) return std::nullopt;
  return out;
}

std::string log_key(const std::string& prefix, int64_t seq) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(seq));
  return prefix + "log/" + digits;
}

std::optional<int64_t> log_seq(const std::string& prefix, const std::string& key) {
  const std::string head = prefix + "log/";
  if (key.size() != head.size() + 20 || key.compare(0, head.size(), head) != 0) return std::nullopt;
  int64_t seq = 0;
  for (size_t i = head.size(); i < key.size(); ++i) {
    if (key[i] < '0' || key[i] > '9') return std::nullopt;
    if (seq > (INT64_MAX - 9) / 10) return std::nullopt;
    seq = seq * 10 + (key[i] - '0');
  }
  return seq;
}

Replicator::Replicator(HaConfig config, Store& store, Hooks hooks)
    : config_(std::move(config)),
      store_(store),
      hooks_(std::move(hooks)),
      etcd_(config_.etcd, std::chrono::milliseconds(config_.etcd_timeout_ms)),
      leader_key_(config_.prefix + "leader") {
  status_.member = config_.member;
}

Replicator::~Replicator() { stop(); }

void Replicator::start() {
  thread_ = std::thread([this] { run(); });
}

void Replicator::stop() {
  {
    std::lock_guard lock(wait_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double Replicator::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Replicator::log(bool warn, const std::string& text) const {
  if (hooks_.log) hooks_.log(warn, text);
}

void Replicator::note_etcd(bool ok, const std::string& error) {
  std::lock_guard lock(status_mu_);
  status_.etcd_ok = ok;
  status_.etcd_error = ok ? std::string() : error;
  status_.etcd_endpoint = etcd_.current_endpoint();
}

HaStatus Replicator::status() const {
  HaStatus s;
  {
    std::lock_guard lock(status_mu_);
    s = status_;
  }
  if (serving_) {
    s.role = HaRole::kLeader;
    s.leader = config_.member;
    s.leader_api = config_.advertise_api;
    s.leader_plugin = config_.advertise_plugin;
  } else {
    if (s.leader == config_.member) {
      // Stepping down: this member no longer serves and has not yet read
      // who leads now. It never names itself.
      s.leader.clear();
      s.leader_api.clear();
      s.leader_plugin.clear();
    }
    s.role = s.leader.empty() ? HaRole::kNoLeader : HaRole::kFollower;
  }
  try {
    s.applied_seq = store_.applied_seq();
  } catch (const StoreError&) {
  }
  return s;
}

std::optional<std::string> Replicator::refusal() const {
  if (serving_) return std::nullopt;
  const HaStatus s = status();
  if (!s.leader.empty()) {
    return "not the leader: this member (" + config_.member + ") serves reads only; mutations go to the leader " +
           s.leader + (s.leader_api.empty() ? "" : " at " + s.leader_api);
  }
  if (!s.etcd_ok && !s.etcd_error.empty()) {
    return "no leader: etcd has no quorum or cannot be reached (" + s.etcd_error +
           "); mutations are refused until it has, reads are served";
  }
  return "no leader: an election is under way; retry in a few seconds";
}

std::optional<std::string> Replicator::plugin_redirect() const {
  if (serving_) return std::nullopt;
  std::lock_guard lock(status_mu_);
  return status_.leader == config_.member ? std::string() : status_.leader_plugin;
}

int64_t Replicator::ship(const std::string& batch) {
  std::lock_guard lock(ship_mu_);
  if (!leader_) {
    std::optional<std::string> why = refusal();
    throw StoreError(why ? *why : "not the leader");
  }
  const std::string key = log_key(config_.prefix, next_seq_);
  Result<etcd::TxnReply> r =
      etcd_.txn({etcd::Compare{leader_key_, etcd::Compare::Target::kCreate, leader_rev_, {}},
                 etcd::Compare{key, etcd::Compare::Target::kCreate, 0, {}}},
                {etcd::TxnOp{etcd::TxnOp::Kind::kPut, key, batch, 0, {}}});
  if (!r) {
    // Not known to be appended: refused here. If it was after all, the next
    // append finds log/<next> taken and this member steps down and replays it.
    note_etcd(false, r.error().message);
    throw StoreError("etcd: the change could not be replicated (" + r.error().message + ")");
  }
  note_etcd(true);
  if (!r->succeeded) {
    leader_ = false;
    serving_ = false;
    lost_ = true;
    wake_.notify_all();
    throw StoreError("not the leader any more (another member leads, or this member's log is behind)");
  }
  return next_seq_++;
}

void Replicator::run() {
  for (;;) {
    {
      std::unique_lock lock(wait_mu_);
      if (stopping_) break;
    }
    try {
      if (leader_ || lost_) {
        leader_step();
      } else {
        follower_step();
      }
    } catch (const std::exception& e) {
      log(true, std::string("replication: ") + e.what());
    }
    std::unique_lock lock(wait_mu_);
    if (wake_.wait_for(lock, kPoll, [this] { return stopping_; })) break;
  }
  if (leader_ || lease_ != 0) step_down("stopping");
}

void Replicator::leader_step() {
  if (lost_) {
    step_down("an append found the leadership gone");
    return;
  }
  const double t = now();
  const double ttl = config_.lease_ttl_s;
  if (t - last_keepalive_sent_ >= ttl / 3.0) {
    last_keepalive_sent_ = t;
    Result<int64_t> left = etcd_.lease_keepalive(lease_);
    if (!left) {
      note_etcd(false, left.error().message);
    } else if (*left <= 0) {
      note_etcd(true);
      step_down("the lease expired");
      return;
    } else {
      note_etcd(true);
      last_keepalive_ok_ = now();
    }
  }
  if (now() - last_keepalive_ok_ > ttl / 2.0) {
    step_down("no keepalive succeeded for " + std::to_string(static_cast<int>((now() - last_keepalive_ok_) * 1000)) +
              " ms (etcd unreachable or without quorum)");
  }
}

void Replicator::step_down(const std::string& why) {
  const bool was = serving_ || leader_;
  {
    std::lock_guard lock(ship_mu_);
    serving_ = false;
    leader_ = false;
    lost_ = false;
  }
  {
    std::lock_guard lock(status_mu_);
    status_.leader.clear();
    status_.leader_api.clear();
    status_.leader_plugin.clear();
    if (was) {
      ++status_.step_downs;
      status_.last_step_down = why;
    }
  }
  if (lease_ != 0) {
    // Best effort: the others take over at once instead of after the TTL.
    (void)etcd_.lease_revoke(lease_);
    lease_ = 0;
  }
  if (was) {
    log(true, "replication: stepped down: " + why);
    if (hooks_.leadership) hooks_.leadership(false);
  }
}

bool Replicator::catch_up(bool all) {
  bool applied = false;
  const std::string end = etcd::prefix_end(config_.prefix + "log/");
  for (;;) {
    const int64_t from = store_.applied_seq() + 1;
    Result<etcd::RangeReply> r = etcd_.range(log_key(config_.prefix, from), end, kPage);
    if (!r) {
      note_etcd(false, r.error().message);
      return applied;
    }
    note_etcd(true);
    int64_t expect = from;
    for (const etcd::KeyValue& kv : r->kvs) {
      std::optional<int64_t> seq = log_seq(config_.prefix, kv.key);
      if (!seq) throw StoreError("etcd: a log key that is not one: '" + kv.key.substr(0, 80) + "'");
      if (*seq != expect) {
        throw StoreError("the log misses entry " + std::to_string(expect) + " (next is " + std::to_string(*seq) + ")");
      }
      store_.apply_entry(*seq, kv.value);
      applied = true;
      ++expect;
    }
    if (!all || !r->more) break;
  }
  if (applied && hooks_.applied) hooks_.applied();
  return applied;
}

void Replicator::follower_step() {
  Result<etcd::RangeReply> r = etcd_.range(leader_key_);
  if (!r) {
    note_etcd(false, r.error().message);
    std::lock_guard lock(status_mu_);
    status_.leader.clear();
    status_.leader_api.clear();
    status_.leader_plugin.clear();
    return;
  }
  note_etcd(true);
  if (!r->kvs.empty()) {
    std::optional<LeaderInfo> info = decode_leader(r->kvs.front().value);
    {
      std::lock_guard lock(status_mu_);
      status_.leader = info ? info->member : "?";
      status_.leader_api = info ? info->api : "";
      status_.leader_plugin = info ? info->plugin : "";
    }
    catch_up(true);
    return;
  }
  {
    std::lock_guard lock(status_mu_);
    status_.leader.clear();
    status_.leader_api.clear();
    status_.leader_plugin.clear();
  }
  catch_up(true);
  campaign();
}

void Replicator::campaign() {
  Result<etcd::Lease> lease = etcd_.lease_grant(config_.lease_ttl_s);
  if (!lease) {
    note_etcd(false, lease.error().message);
    return;
  }
  const double granted_at = now();
  const std::string value = encode_leader({config_.member, config_.advertise_api, config_.advertise_plugin});
  Result<etcd::TxnReply> r =
      etcd_.txn({etcd::Compare{leader_key_, etcd::Compare::Target::kCreate, 0, {}}},
                {etcd::TxnOp{etcd::TxnOp::Kind::kPut, leader_key_, value, lease->id, {}}});
  if (!r || !r->succeeded) {
    if (!r) note_etcd(false, r.error().message);
    (void)etcd_.lease_revoke(lease->id);
    return;
  }
  lease_ = lease->id;
  last_keepalive_ok_ = granted_at;
  last_keepalive_sent_ = granted_at;
  {
    std::lock_guard lock(ship_mu_);
    leader_rev_ = r->revision;  // the txn's revision: the key's create_revision
    leader_ = true;
  }
  // Nobody else can append now: the whole log, then the controller.
  try {
    catch_up(true);
    {
      std::lock_guard lock(ship_mu_);
      next_seq_ = store_.applied_seq() + 1;
    }
    // The log must end where this member's database does.
    Result<etcd::RangeReply> next = etcd_.range(log_key(config_.prefix, next_seq_));
    if (!next || !next->kvs.empty()) {
      step_down(!next ? next.error().message : "the log goes on after entry " + std::to_string(next_seq_ - 1));
      return;
    }
    if (now() - last_keepalive_ok_ > config_.lease_ttl_s / 2.0) {
      step_down("catching up took longer than half the lease");
      return;
    }
    {
      std::lock_guard lock(status_mu_);
      status_.leader = config_.member;
      status_.leader_api = config_.advertise_api;
      status_.leader_plugin = config_.advertise_plugin;
      ++status_.elections_won;
    }
    if (hooks_.becoming_leader) hooks_.becoming_leader();
    serving_ = true;
  } catch (const std::exception& e) {
    step_down(std::string("could not take over: ") + e.what());
    return;
  }
  log(false, "replication: " + config_.member + " is the leader (log at " + std::to_string(next_seq_ - 1) + ")");
  if (hooks_.leadership) hooks_.leadership(true);
}

}  // namespace railyard::controller
