#include "controller/store.h"

#include "controller/sqlite_stmt.h"
#include "controller/store_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <utility>
#include <memory>

namespace railyard::controller {

namespace {

using sql::Stmt;
using sql::exec;

// The schema as each version left it: kMigrations[i] takes a database from
// version i to i + 1. Version 0 is an empty file, or one made before the
// schema had a version (its tables are the same as version 1's: every
// statement of migration 1 is IF NOT EXISTS). Add a migration, never edit one.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the tables.
    R"sql(
CREATE TABLE IF NOT EXISTS drains (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL, target TEXT NOT NULL, target_name TEXT NOT NULL,
  reason TEXT NOT NULL, created_by TEXT NOT NULL, created_at REAL NOT NULL,
  expires_at REAL, removed_at REAL, removed_by TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, source TEXT NOT NULL, type TEXT NOT NULL,
  external_id TEXT, body TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS events_external ON events(source, external_id) WHERE external_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS link_health (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  link TEXT NOT NULL, state TEXT NOT NULL, time REAL NOT NULL, source TEXT NOT NULL, reason TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS link_health_link ON link_health(link, id);
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, actor TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
  request TEXT NOT NULL, status INTEGER NOT NULL, result TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, request TEXT NOT NULL, trees TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL,
  created_by TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), time REAL NOT NULL);
CREATE TABLE IF NOT EXISTS reroutes (
  id TEXT PRIMARY KEY, requested_at REAL NOT NULL, requested_by TEXT NOT NULL, reason TEXT NOT NULL,
  status TEXT NOT NULL, finished_at REAL, latency_ms REAL, detail TEXT NOT NULL);
)sql",
    // 1 -> 2: retention prunes events and audit records by time; reconcile
    // finds unfinished requests by status.
    R"sql(
CREATE INDEX IF NOT EXISTS events_time ON events(time);
CREATE INDEX IF NOT EXISTS audit_time ON audit(time);
CREATE INDEX IF NOT EXISTS reroutes_status ON reroutes(status);
)sql",
    // 2 -> 3: replication (docs/ha.md): the last log entry applied, and the
    // mutations' Idempotency-Keys.
    R"sql(
CREATE TABLE IF NOT EXISTS replication (id INTEGER PRIMARY KEY CHECK (id = 1), applied_seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY, request TEXT NOT NULL, time REAL NOT NULL, result TEXT NOT NULL);
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

// A state column's word as its enum (states.h); another word is a StoreError
// naming where it was found.
template <class E>
E state_column(const Stmt& s, int column, std::optional<E> (*parse)(std::string_view), const char* where) {
  const std::string text = s.text(column);
  if (std::optional<E> value = parse(text)) return *value;
  throw StoreError(std::string(where) + ": unknown value '" + text + "'");
}

DrainRecord read_drain(const Stmt& s) {
  DrainRecord d;
  d.id = s.integer(0);
  d.kind = state_column(s, 1, parse_drain_kind, "drains.kind");
  d.target = s.text(2);
  d.target_name = s.text(3);
  d.reason = s.text(4);
  d.created_by = s.text(5);
  d.created_at = s.real(6);
  d.expires_at = s.opt_real(7);
  d.removed_at = s.opt_real(8);
  d.removed_by = s.text(9);
  return d;
}

constexpr const char* kDrainColumns =
    "SELECT id, kind, target, target_name, reason, created_by, created_at, expires_at, removed_at, removed_by "
    "FROM drains ";

RerouteRecord read_reroute(const Stmt& s) {
  RerouteRecord r;
  r.id = s.text(0);
  r.requested_at = s.real(1);
  r.requested_by = s.text(2);
  r.reason = s.text(3);
  r.status = state_column(s, 4, parse_reroute_status, "reroutes.status");
  r.finished_at = s.opt_real(5);
  r.latency_ms = s.opt_real(6);
  r.detail = s.text(7);
  return r;
}

constexpr const char* kRerouteColumns =
    "SELECT id, requested_at, requested_by, reason, status, finished_at, latency_ms, detail FROM reroutes ";

constexpr const char* kJobColumns =
    "SELECT id, request, trees, status, detail, created_by, created_at, updated_at, version FROM jobs ";

JobRecord read_job(const Stmt& s) {
  return JobRecord{s.text(0), s.text(1), s.text(2), state_column(s, 3, parse_job_status, "jobs.status"),
                   s.text(4), s.text(5), s.real(6), s.real(7), s.integer(8)};
}

EventRecord read_event(const Stmt& s) {
  return EventRecord{s.integer(0), s.real(1), state_column(s, 2, parse_reporter, "events.source"), s.text(3),
                     s.text(4), s.text(5)};
}

// The Idempotency-Key of the mutation this thread carries out (IdempotencyScope).
thread_local std::optional<IdempotencyRecord> t_idempotency;

// What a transaction's ops made, for its idempotency record.
std::string made_by(const std::vector<StoreOp>& ops) {
  for (const StoreOp& op : ops) {
    if (const auto* x = std::get_if<OpAddDrain>(&op)) return "drain " + std::to_string(x->drain.id);
    if (const auto* x = std::get_if<OpRemoveDrain>(&op)) return "undrain " + std::to_string(x->id);
    if (const auto* x = std::get_if<OpPutJob>(&op)) return "job " + x->job.id;
    if (const auto* x = std::get_if<OpPutReroute>(&op)) return "reroute " + x->reroute.id;
    if (const auto* x = std::get_if<OpAddEvent>(&op)) return "event " + std::to_string(x->event.id);
  }
  return "done";
}

}  // namespace

struct Store::Pending {
  std::vector<StoreOp> ops;
  int64_t shipped = 0;  // the log entry this transaction is, once shipped
};

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)), pending_(std::make_unique<Pending>()) {}

Store::IdempotencyScope::IdempotencyScope(std::string key, std::string request) {
  t_idempotency = IdempotencyRecord{std::move(key), std::move(request), 0, {}};
}

Store::IdempotencyScope::~IdempotencyScope() { t_idempotency.reset(); }

template <class Op>
void Store::record(Op op) {
  if (transaction_depth_ > 0 && !local_) pending_->ops.emplace_back(std::move(op));
}

void Store::ship_pending() {
  std::vector<StoreOp>& ops = pending_->ops;
  if (ops.empty()) return;
  if (t_idempotency && t_idempotency->time == 0) {
    IdempotencyRecord r = *t_idempotency;
    r.time = ops.empty() ? 0 : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    r.result = made_by(ops);
    // A second request with the key that raced the first fails here (the
    // key is unique), its change rolled back: one change per key.
    Stmt s(db_, "INSERT INTO idempotency (key, request, time, result) VALUES (?, ?, ?, ?)");
    s.bind(1, r.key).bind(2, r.request).bind(3, r.time).bind(4, r.result);
    s.step();
    ops.push_back(OpIdempotency{r});
    t_idempotency->time = r.time;  // consumed: the thread's later transactions are its own
  }
  if (journal_ == nullptr) return;
  const int64_t seq = journal_->ship(encode_batch(ops));
  pending_->shipped = seq;
  Stmt s(db_, "INSERT OR REPLACE INTO replication (id, applied_seq) VALUES (1, ?)");
  s.bind(1, seq);
  s.step();
}

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return Error{path + ": the database is not a regular file"};
    if (st.st_size == 0) {
      return Error{path + ": the database file is empty (0 bytes), not a railyard database; "
                          "restore it from a backup, or remove it to start with no drains, jobs or history"};
    }
  } else {
    // Created here so that its mode is ours (0600), not the umask's: the
    // audit log and drains are the operators' business.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{path + ": cannot open the database: " + message};
  }
  std::unique_ptr<Store> store(new Store(db, path));
  try {
    sqlite3_busy_timeout(db, 5000);
    exec(db, "PRAGMA journal_mode=WAL;");
    exec(db, "PRAGMA synchronous=FULL;");
    exec(db, "PRAGMA foreign_keys=ON;");
    int version = store->schema_version();
    if (version > kSchemaVersion) {
      return Error{path + ": the database has schema version " + std::to_string(version) +
                   ", made by a newer railyardd (this one knows up to " + std::to_string(kSchemaVersion) +
                   "); run that version, or restore a backup"};
    }
    for (; version < kSchemaVersion; ++version) {
      Transaction txn(*store);
      exec(db, kMigrations[version]);
      exec(db, ("PRAGMA user_version = " + std::to_string(version + 1)).c_str());
      txn.commit();
    }
    Stmt s(db, "SELECT COALESCE(MAX(applied_seq), 0) FROM replication");
    s.step();
    store->applied_seq_ = s.integer(0);
  } catch (const StoreError& e) {
    return Error{path + ": cannot prepare the database: " + e.what()};
  }
  return store;
}

Store::~Store() { sqlite3_close(db_); }

template <class F>
auto Store::write(F&& f) -> decltype(f()) {
  // Replicated, a write outside a transaction is one of its own: its entry
  // is shipped before it is committed.
  if (journal_ != nullptr && transaction_depth_ == 0 && !local_) {
    Transaction txn(*this);
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      txn.commit();
    } else {
      auto result = f();
      txn.commit();
      return result;
    }
  }
  try {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      if (transaction_depth_ == 0) writable_ = true;
    } else {
      auto result = f();
      if (transaction_depth_ == 0) writable_ = true;
      return result;
    }
  } catch (const StoreError& e) {
    note_write_failure(e.what());
    throw;
  }
}

void Store::note_write_failure(const std::string& message) {
  writable_ = false;
  std::lock_guard lock(error_mu_);
  write_error_ = message;
}

Store::Transaction::Transaction(Store& store) : store_(store), lock_(store.mu_) {
  if (store_.transaction_depth_ > 0) throw StoreError("a transaction is already open");
  try {
    exec(store_.db_, "BEGIN IMMEDIATE");
  } catch (const StoreError& e) {
    store_.note_write_failure(e.what());
    throw;
  }
  ++store_.transaction_depth_;
}

Store::Transaction::~Transaction() {
  if (done_) return;
  --store_.transaction_depth_;
  store_.pending_->ops.clear();
  // SQLite may have rolled back by itself (disk full): the error of a
  // rollback with no transaction open says nothing new.
  sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Store::Transaction::commit() {
  done_ = true;
  --store_.transaction_depth_;
  try {
    // The log entry first (replicated): refused, nothing is committed. Its
    // failure says nothing of the disk (writable() stays as it was).
    store_.ship_pending();
  } catch (const StoreError&) {
    store_.pending_->ops.clear();
    store_.pending_->shipped = 0;
    sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  store_.pending_->ops.clear();
  const int64_t shipped = std::exchange(store_.pending_->shipped, 0);
  try {
    exec(store_.db_, "COMMIT");
    if (shipped != 0) store_.applied_seq_ = shipped;
    store_.writable_ = true;
  } catch (const StoreError& e) {
    store_.note_write_failure(e.what());
    sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

bool Store::writable() const { return writable_.load(); }

std::string Store::write_error() const {
  std::lock_guard lock(error_mu_);
  return write_error_;
}

int Store::schema_version() const {
  std::lock_guard lock(mu_);
  Stmt s(db_, "PRAGMA user_version");
  s.step();
  return static_cast<int>(s.integer(0));
}

Pruned Store::prune(double now, double events_max_age_s, uint64_t events_max_count, double audit_max_age_s,
                    uint64_t audit_max_count) {
  std::lock_guard lock(mu_);
  Pruned out;
  Transaction txn(*this);
  write([&] {
    auto by_age = [&](const char* table, double max_age_s) -> uint64_t {
      if (max_age_s <= 0) return 0;
      Stmt s(db_, (std::string("DELETE FROM ") + table + " WHERE time < ?").c_str());
      s.bind(1, now - max_age_s);
      s.step();
      return static_cast<uint64_t>(sqlite3_changes(db_));
    };
    auto by_count = [&](const char* table, uint64_t max_count) -> uint64_t {
      if (max_count == 0) return 0;
      // Ids grow with time: everything below the max_count-th newest id goes.
      Stmt s(db_, (std::string("DELETE FROM ") + table + " WHERE id <= (SELECT id FROM " + table +
                   " ORDER BY id DESC LIMIT 1 OFFSET ?)").c_str());
      s.bind(1, static_cast<int64_t>(max_count));
      s.step();
      return static_cast<uint64_t>(sqlite3_changes(db_));
    };
    out.events = by_age("events", events_max_age_s) + by_count("events", events_max_count);
    out.audit = by_age("audit", audit_max_age_s) + by_count("audit", audit_max_count);
    if (out.events + out.audit > 0) {
      record(OpPrune{now, events_max_age_s, events_max_count, audit_max_age_s, audit_max_count});
    }
  });
  txn.commit();
  return out;
}

void Store::finish_reroute(const std::string& id, RerouteStatus status, double at, const std::string& detail) {
  std::lock_guard lock(mu_);
  write([&] {
    Stmt s(db_,
           "UPDATE reroutes SET status = ?, finished_at = ?, detail = ?, "
           "latency_ms = CASE WHEN ? THEN (? - requested_at) * 1000.0 ELSE latency_ms END WHERE id = ?");
    s.bind(1, std::string(to_string(status))).bind(2, at).bind(3, detail);
    s.bind(4, static_cast<int64_t>(status == RerouteStatus::kApplied ? 1 : 0)).bind(5, at).bind(6, id);
    s.step();
    if (sqlite3_changes(db_) > 0) record(OpFinishReroute{id, status, at, detail});
  });
}

std::vector<RerouteRecord> Store::unfinished_reroutes() const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kRerouteColumns) + "WHERE status IN (?, ?) ORDER BY requested_at, id").c_str());
  s.bind(1, std::string(to_string(RerouteStatus::kPending))).bind(2, std::string(to_string(RerouteStatus::kQueued)));
  std::vector<RerouteRecord> out;
  while (s.step()) out.push_back(read_reroute(s));
  return out;
}

bool Store::probe_write() {
  std::lock_guard lock(mu_);
  if (transaction_depth_ > 0) return writable_;
  std::string dir = path_.substr(0, path_.find_last_of('/') == std::string::npos ? 0 : path_.find_last_of('/'));
  if (dir.empty()) dir = path_.find('/') == 0 ? "/" : ".";
  struct statvfs fs {};
  constexpr uint64_t kMinFree = 64 * 1024;
  if (::statvfs(dir.c_str(), &fs) == 0 && uint64_t(fs.f_bavail) * fs.f_frsize < kMinFree) {
    note_write_failure("database or disk is full (" + std::to_string(uint64_t(fs.f_bavail) * fs.f_frsize) +
                       " bytes free on the file system of " + path_ + ")");
    return false;
  }
  try {
    // The heartbeat is this member's own: never replicated.
    const bool was_local = local_;
    local_ = true;
    struct Restore {
      bool& flag;
      bool value;
      ~Restore() { flag = value; }
    } restore{local_, was_local};
    write([&] {
      Stmt s(db_, "INSERT OR REPLACE INTO heartbeat (id, time) VALUES (1, julianday('now'))");
      s.step();
    });
    return true;
  } catch (const StoreError&) {
    return false;
  }
}

DrainRecord Store::add_drain(DrainRecord d) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_,
           "INSERT INTO drains (kind, target, target_name, reason, created_by, created_at, expires_at) "
           "VALUES (?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, std::string(to_string(d.kind))).bind(2, d.target).bind(3, d.target_name).bind(4, d.reason);
    s.bind(5, d.created_by).bind(6, d.created_at).bind(7, d.expires_at);
    s.step();
    d.id = sqlite3_last_insert_rowid(db_);
    record(OpAddDrain{d});
    return d;
  });
}

bool Store::remove_drain(int64_t id, const std::string& by, double now) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_, "UPDATE drains SET removed_at = ?, removed_by = ? WHERE id = ? AND removed_at IS NULL");
    s.bind(1, now).bind(2, by).bind(3, id);
    s.step();
    const bool removed = sqlite3_changes(db_) > 0;
    if (removed) record(OpRemoveDrain{id, by, now});
    return removed;
  });
}

std::vector<DrainRecord> Store::active_drains() const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kDrainColumns) + "WHERE removed_at IS NULL ORDER BY id").c_str());
  std::vector<DrainRecord> out;
  while (s.step()) out.push_back(read_drain(s));
  return out;
}

std::optional<DrainRecord> Store::drain(int64_t id) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kDrainColumns) + "WHERE id = ?").c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_drain(s);
}

Store::Added Store::add_event(EventRecord e) {
  std::lock_guard lock(mu_);
  return write([&]() -> Added {
    if (!e.external_id.empty()) {
      Stmt find(db_, "SELECT id, time, body, type FROM events WHERE source = ? AND external_id = ?");
      find.bind(1, std::string(to_string(e.source))).bind(2, e.external_id);
      if (find.step()) {
        e.id = find.integer(0);
        e.time = find.real(1);
        e.body = find.text(2);
        e.type = find.text(3);
        return {std::move(e), false};
      }
    }
    Stmt s(db_, "INSERT INTO events (time, source, type, external_id, body) VALUES (?, ?, ?, ?, ?)");
    s.bind(1, e.time).bind(2, std::string(to_string(e.source))).bind(3, e.type);
    s.bind_text_or_null(4, e.external_id).bind(5, e.body);
    s.step();
    e.id = sqlite3_last_insert_rowid(db_);
    record(OpAddEvent{e});
    return {std::move(e), true};
  });
}

std::optional<EventRecord> Store::event_by_external_id(Reporter source, const std::string& external_id) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, time, source, type, external_id, body FROM events WHERE source = ? AND external_id = ?");
  s.bind(1, std::string(to_string(source))).bind(2, external_id);
  if (!s.step()) return std::nullopt;
  return read_event(s);
}

std::vector<EventRecord> Store::events_since(int64_t after_id, uint32_t limit) const {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT id, time, source, type, COALESCE(external_id, ''), body FROM events WHERE id > ? ORDER BY id LIMIT ?");
  s.bind(1, after_id).bind(2, static_cast<int64_t>(limit));
  std::vector<EventRecord> out;
  while (s.step()) out.push_back(read_event(s));
  return out;
}

int64_t Store::last_event_id() const {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT COALESCE(MAX(id), 0) FROM events");
  s.step();
  return s.integer(0);
}

void Store::add_link_state(const LinkStateRecord& r) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_, "INSERT INTO link_health (link, state, time, source, reason) VALUES (?, ?, ?, ?, ?)");
    s.bind(1, r.link).bind(2, std::string(to_string(r.state))).bind(3, r.time);
    s.bind(4, std::string(to_string(r.source))).bind(5, r.reason);
    s.step();
    record(OpAddLinkState{sqlite3_last_insert_rowid(db_), r});
  });
}

std::vector<LinkStateRecord> Store::current_link_states() const {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT h.link, h.state, h.time, h.source, h.reason FROM link_health h "
         "JOIN (SELECT link, MAX(id) AS id FROM link_health GROUP BY link) last ON h.id = last.id ORDER BY h.link");
  std::vector<LinkStateRecord> out;
  while (s.step()) {
    out.push_back(LinkStateRecord{s.text(0), state_column(s, 1, parse_link_state, "link_health.state"), s.real(2),
                                  state_column(s, 3, parse_reporter, "link_health.source"), s.text(4)});
  }
  return out;
}

void Store::add_audit(const AuditRecord& r) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_, "INSERT INTO audit (time, actor, role, action, request, status, result) VALUES (?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.time).bind(2, r.actor).bind(3, r.role).bind(4, r.action).bind(5, r.request);
    s.bind(6, static_cast<int64_t>(r.status)).bind(7, r.result);
    s.step();
    AuditRecord with_id = r;
    with_id.id = sqlite3_last_insert_rowid(db_);
    record(OpAddAudit{std::move(with_id)});
  });
}

std::vector<AuditRecord> Store::audit_since(int64_t after_id, uint32_t limit) const {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT id, time, actor, role, action, request, status, result FROM audit WHERE id > ? ORDER BY id LIMIT ?");
  s.bind(1, after_id).bind(2, static_cast<int64_t>(limit));
  std::vector<AuditRecord> out;
  while (s.step()) {
    out.push_back(AuditRecord{s.integer(0), s.real(1), s.text(2), s.text(3), s.text(4), s.text(5),
                              static_cast<int>(s.integer(6)), s.text(7)});
  }
  return out;
}

void Store::put_job(const JobRecord& r) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_,
           "INSERT OR REPLACE INTO jobs (id, request, trees, status, detail, created_by, created_at, updated_at, version) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.id).bind(2, r.request).bind(3, r.trees).bind(4, std::string(to_string(r.status)));
    s.bind(5, r.detail).bind(6, r.created_by);
    s.bind(7, r.created_at).bind(8, r.updated_at).bind(9, r.version);
    s.step();
    record(OpPutJob{r});
  });
}

std::optional<JobRecord> Store::job(const std::string& id) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kJobColumns) + "WHERE id = ?").c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_job(s);
}

std::vector<JobRecord> Store::jobs(bool active_only) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kJobColumns) + (active_only ? "WHERE status = ? " : "") +
               "ORDER BY created_at, rowid").c_str());
  if (active_only) s.bind(1, std::string(to_string(JobStatus::kActive)));
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(read_job(s));
  return out;
}

void Store::put_reroute(const RerouteRecord& r) {
  std::lock_guard lock(mu_);
  return write([&] {
    Stmt s(db_,
           "INSERT OR REPLACE INTO reroutes (id, requested_at, requested_by, reason, status, finished_at, latency_ms, "
           "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, r.id).bind(2, r.requested_at).bind(3, r.requested_by).bind(4, r.reason);
    s.bind(5, std::string(to_string(r.status)));
    s.bind(6, r.finished_at).bind(7, r.latency_ms).bind(8, r.detail);
    s.step();
    record(OpPutReroute{r});
  });
}

std::vector<RerouteRecord> Store::reroutes(uint32_t limit) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kRerouteColumns) + "ORDER BY requested_at DESC, id DESC LIMIT ?").c_str());
  s.bind(1, static_cast<int64_t>(limit));
  std::vector<RerouteRecord> out;
  while (s.step()) out.push_back(read_reroute(s));
  return out;
}

std::optional<RerouteRecord> Store::reroute(const std::string& id) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string(kRerouteColumns) + "WHERE id = ?").c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_reroute(s);
}

}  // namespace railyard::controller
