// Store: railyardd's durable state in one SQLite database (WAL journal,
// synchronous=FULL: a call that returned has reached the disk, so a kill -9
// right after an acknowledged request loses nothing).
//
// Tables: drains, events, link_health (state history), audit (every mutation:
// who, what, when, result) and reroutes (requests and their outcome). The
// schema has a version (PRAGMA user_version, kSchemaVersion): open() brings
// an older database forward one migration at a time, each in its own
// transaction with its version, and refuses one made by a newer railyardd. All
// methods are thread-safe (one connection behind a mutex; requests are short).
// Errors of SQLite itself (disk full, corrupt file) are thrown as StoreError:
// nothing is half-written (each call is one transaction). A state column
// holding a word its enum does not know (states.h) is a StoreError too, naming
// the table, the column and the word. The states are kept as their words
// (to_string), as they always were.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/states.h"
#include "routing/result.h"

namespace railyard::controller {

struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DrainRecord {
  int64_t id = 0;
  DrainKind kind = DrainKind::kLink;
  std::string target;      // canonical: "0x<node guid>[port]" or "0x<switch guid>"
  std::string target_name; // for people: "leaf g000 r0[33]"
  std::string reason;
  std::string created_by;
  double created_at = 0;
  std::optional<double> expires_at;
  std::optional<double> removed_at;
  std::string removed_by;
};

struct EventRecord {
  int64_t id = 0;
  double time = 0;
  Reporter source = Reporter::kController;
  std::string type;
  std::string external_id;  // the reporter's id (idempotency), may be empty
  std::string body;         // JSON object text
};

struct AuditRecord {
  int64_t id = 0;
  double time = 0;
  std::string actor;
  std::string role;
  std::string action;  // "POST /api/v1/drains"
  std::string request; // body (truncated)
  int status = 0;      // the caller's reply code (api/: the HTTP status); 0: the controller's own action
  std::string result;  // short outcome
};

struct RerouteRecord {
  std::string id;
  double requested_at = 0;
  std::string requested_by;
  std::string reason;
  RerouteStatus status = RerouteStatus::kPending;
  std::optional<double> finished_at;
  std::optional<double> latency_ms;
  std::string detail;
};

struct LinkStateRecord {
  std::string link;  // canonical "0x<guid>[port]" of one end
  LinkState state = LinkState::kUp;
  double time = 0;
  Reporter source = Reporter::kRest;
  std::string reason;
};

// A SHARP job: the scheduler's request and the trees it holds now.
struct JobRecord {
  std::string id;
  std::string request;   // JSON: {"hosts": [...], "cas": [...], "rails": [...]}
  std::string trees;     // JSON array of trees (controller/sharp_jobs.h), "[]" when none
  JobStatus status = JobStatus::kActive;
  std::string detail;    // why refused/deleted, what changed
  std::string created_by;
  double created_at = 0;
  double updated_at = 0;
  int64_t version = 1;   // +1 whenever its trees are recomputed
};

// A mutation's Idempotency-Key (api/: the request header): the first request
// with the key made `result` ("drain 12"); a retry with it is answered from
// this record, whichever member it reaches, and changes nothing.
struct IdempotencyRecord {
  std::string key;
  std::string request;  // "POST /api/v1/drains" and the caller: a key reused for another request is refused
  double time = 0;
  std::string result;   // what the first request made: "drain 12", "undrain 12", "reroute R", "event 7", "job J"
};

// The schema version this build writes (store.cpp lists the migrations).
inline constexpr int kSchemaVersion = 3;

// What prune() removed.
struct Pruned {
  uint64_t events = 0;
  uint64_t audit = 0;
};

class Store {
 public:
  // Replication (controller/replication.h, docs/ha.md): with a journal set,
  // every transaction's writes (and every write outside one, made a
  // transaction of its own) are encoded as ops (store_ops.h) and shipped,
  // before the SQLite COMMIT, as one entry of the replicated log. ship()
  // returns the entry's sequence number (stored as applied_seq in the same
  // transaction) or throws StoreError (not the leader, etcd has no quorum):
  // then nothing is committed. No journal: single-node, as always.
  class Journal {
   public:
    virtual ~Journal() = default;
    virtual int64_t ship(const std::string& batch) = 0;
  };
  // While one is alive on a thread, the next transaction with writes that
  // thread commits also records `key` (IdempotencyRecord) in it, with what
  // it made: so a retry finds the key exactly when the change is durable.
  class IdempotencyScope {
   public:
    IdempotencyScope(std::string key, std::string request);
    ~IdempotencyScope();
    IdempotencyScope(const IdempotencyScope&) = delete;
    IdempotencyScope& operator=(const IdempotencyScope&) = delete;
  };

  // Opens (creating, mode 0600) the database and its schema. An existing file
  // of zero bytes is refused: it is not a railyard database, and starting on
  // it would silently forget every drain.
  static Result<std::unique_ptr<Store>> open(const std::string& path);

  // Every write between its construction and commit() is one SQLite
  // transaction (durable at commit: synchronous=FULL). Not committed (an
  // exception, an early return) -> rolled back. Holds the store's lock, so
  // readers never see half of it. One per thread at a time.
  class Transaction {
   public:
    explicit Transaction(Store& store);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();  // throws StoreError (and the transaction is rolled back)

   private:
    Store& store_;
    std::unique_lock<std::recursive_mutex> lock_;
    bool done_ = false;
  };

  // Whether the last write reached the disk; the error of the last failed one.
  // probe_write() checks that the database's file system has room (64 KiB at
  // least: SQLite may still fit a small write into pages it holds while the
  // next real one fails) and makes a small durable write; true when both
  // worked. It is how the daemon notices a full disk before a request trips
  // on it, and recovers once there is room again.
  bool writable() const;
  std::string write_error() const;
  bool probe_write();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Drains.
  DrainRecord add_drain(DrainRecord drain);  // returns it with id
  // Marks removed; false when there is no active drain with this id.
  bool remove_drain(int64_t id, const std::string& by, double now);
  std::vector<DrainRecord> active_drains() const;
  std::optional<DrainRecord> drain(int64_t id) const;

  // Events. With a non-empty external_id the insert is idempotent: the
  // existing record is returned and `inserted` is false.
  struct Added {
    EventRecord event;
    bool inserted = true;
  };
  Added add_event(EventRecord event);
  std::optional<EventRecord> event_by_external_id(Reporter source, const std::string& external_id) const;
  std::vector<EventRecord> events_since(int64_t after_id, uint32_t limit) const;
  int64_t last_event_id() const;

  // Link health history; current_link_states() has the last state per link.
  void add_link_state(const LinkStateRecord& rec);
  std::vector<LinkStateRecord> current_link_states() const;

  void add_audit(const AuditRecord& rec);
  std::vector<AuditRecord> audit_since(int64_t after_id, uint32_t limit) const;

  void put_job(const JobRecord& rec);  // insert or replace
  std::optional<JobRecord> job(const std::string& id) const;
  // Jobs in creation order; active_only = status active.
  std::vector<JobRecord> jobs(bool active_only) const;

  // Retention: events and audit records older than the age (seconds, 0: any
  // age) or beyond the count (the newest kept, 0: no bound); one transaction.
  Pruned prune(double now, double events_max_age_s, uint64_t events_max_count, double audit_max_age_s,
               uint64_t audit_max_count);
  int schema_version() const;

  // Replication. Set before use (null: single-node).
  void set_journal(Journal* journal);
  // The last log entry this database holds (0: none).
  int64_t applied_seq() const;
  // A follower applies log entry `seq` (an encoded batch) in one transaction
  // that also stores applied_seq: entries up to applied_seq() are skipped, a
  // gap or an entry that does not decode or apply is a StoreError (nothing
  // of it applied).
  void apply_entry(int64_t seq, const std::string& batch);
  std::optional<IdempotencyRecord> idempotency(const std::string& key) const;

  void put_reroute(const RerouteRecord& rec);  // insert or replace
  // pending | queued -> `status` (applied: latency from requested_at to `at`).
  void finish_reroute(const std::string& id, RerouteStatus status, double at, const std::string& detail);
  // Requests not finished (pending or queued), oldest first.
  std::vector<RerouteRecord> unfinished_reroutes() const;
  std::vector<RerouteRecord> reroutes(uint32_t limit) const;
  std::optional<RerouteRecord> reroute(const std::string& id) const;

 private:
  Store(sqlite3* db, std::string path);
  // Runs one write (mu_ held); records its failure for writable(). Outside a
  // transaction a write that returned is durable, so it also records success.
  template <class F>
  auto write(F&& f) -> decltype(f());
  void note_write_failure(const std::string& message);
  // Replication (store_replication.cpp): a write's op kept for the
  // transaction's entry; the idempotency record and the shipping at commit.
  struct Pending;
  template <class Op>
  void record(Op op);
  void ship_pending();  // mu_ held, in the transaction, before COMMIT

  sqlite3* db_;
  std::string path_;
  mutable std::recursive_mutex mu_;
  int transaction_depth_ = 0;  // under mu_
  Journal* journal_ = nullptr;
  std::atomic<int64_t> applied_seq_{0};  // as committed: read by every API reply (no lock)
  bool local_ = false;         // under mu_: writes not journaled (heartbeat, applying an entry)
  std::unique_ptr<Pending> pending_;  // under mu_: this transaction's ops
  // Read by /health without mu_ (a transaction holds it across its fsync).
  std::atomic<bool> writable_{true};
  mutable std::mutex error_mu_;
  std::string write_error_;    // under error_mu_
};

}  // namespace railyard::controller
