// The Store's side of replication (docs/ha.md): a follower applies the
// leader's log entries (store_ops.h) with the ids, times and records they
// carry, so that every member's rows are the leader's; applied_seq is stored
// in the same transaction, so a member that restarts goes on from where its
// database is.
#include <variant>

#include "controller/sqlite_stmt.h"
#include "controller/store.h"
#include "controller/store_ops.h"

namespace railyard::controller {

namespace {

using sql::Stmt;

template <class... F>
struct ApplyOverloaded : F... {
  using F::operator()...;
};
template <class... F>
ApplyOverloaded(F...) -> ApplyOverloaded<F...>;

void apply_op_sql(sqlite3* db, const StoreOp& op) {
  std::visit(
      ApplyOverloaded{
          [&](const OpAddDrain& x) {
            const DrainRecord& d = x.drain;
            Stmt s(db,
                   "INSERT INTO drains (id, kind, target, target_name, reason, created_by, created_at, expires_at, "
                   "removed_at, removed_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            s.bind(1, d.id).bind(2, std::string(to_string(d.kind))).bind(3, d.target).bind(4, d.target_name);
            s.bind(5, d.reason).bind(6, d.created_by).bind(7, d.created_at).bind(8, d.expires_at);
            s.bind(9, d.removed_at).bind(10, d.removed_by);
            s.step();
          },
          [&](const OpRemoveDrain& x) {
            Stmt s(db, "UPDATE drains SET removed_at = ?, removed_by = ? WHERE id = ? AND removed_at IS NULL");
            s.bind(1, x.at).bind(2, x.by).bind(3, x.id);
            s.step();
          },
          [&](const OpAddEvent& x) {
            const EventRecord& e = x.event;
            Stmt s(db, "INSERT INTO events (id, time, source, type, external_id, body) VALUES (?, ?, ?, ?, ?, ?)");
            s.bind(1, e.id).bind(2, e.time).bind(3, std::string(to_string(e.source))).bind(4, e.type);
            s.bind_text_or_null(5, e.external_id).bind(6, e.body);
            s.step();
          },
          [&](const OpAddLinkState& x) {
            const LinkStateRecord& r = x.state;
            Stmt s(db, "INSERT INTO link_health (id, link, state, time, source, reason) VALUES (?, ?, ?, ?, ?, ?)");
            s.bind(1, x.id).bind(2, r.link).bind(3, std::string(to_string(r.state))).bind(4, r.time);
            s.bind(5, std::string(to_string(r.source))).bind(6, r.reason);
            s.step();
          },
          [&](const OpAddAudit& x) {
            const AuditRecord& r = x.audit;
            Stmt s(db,
                   "INSERT INTO audit (id, time, actor, role, action, request, status, result) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            s.bind(1, r.id).bind(2, r.time).bind(3, r.actor).bind(4, r.role).bind(5, r.action).bind(6, r.request);
            s.bind(7, static_cast<int64_t>(r.status)).bind(8, r.result);
            s.step();
          },
          [&](const OpPutJob& x) {
            const JobRecord& r = x.job;
            Stmt s(db,
                   "INSERT OR REPLACE INTO jobs (id, request, trees, status, detail, created_by, created_at, "
                   "updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
            s.bind(1, r.id).bind(2, r.request).bind(3, r.trees).bind(4, std::string(to_string(r.status)));
            s.bind(5, r.detail).bind(6, r.created_by).bind(7, r.created_at).bind(8, r.updated_at).bind(9, r.version);
            s.step();
          },
          [&](const OpPutReroute& x) {
            const RerouteRecord& r = x.reroute;
            Stmt s(db,
                   "INSERT OR REPLACE INTO reroutes (id, requested_at, requested_by, reason, status, finished_at, "
                   "latency_ms, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            s.bind(1, r.id).bind(2, r.requested_at).bind(3, r.requested_by).bind(4, r.reason);
            s.bind(5, std::string(to_string(r.status))).bind(6, r.finished_at).bind(7, r.latency_ms).bind(8, r.detail);
            s.step();
          },
          [&](const OpFinishReroute& x) {
            Stmt s(db,
                   "UPDATE reroutes SET status = ?, finished_at = ?, detail = ?, "
                   "latency_ms = CASE WHEN ? THEN (? - requested_at) * 1000.0 ELSE latency_ms END WHERE id = ?");
            s.bind(1, std::string(to_string(x.status))).bind(2, x.at).bind(3, x.detail);
            s.bind(4, static_cast<int64_t>(x.status == RerouteStatus::kApplied ? 1 : 0)).bind(5, x.at).bind(6, x.id);
            s.step();
          },
          [&](const OpPrune& x) {
            // The same statements as Store::prune, on the same rows: the same rows go.
            auto by_age = [&](const char* table, double max_age_s) {
              if (max_age_s <= 0) return;
              Stmt s(db, (std::string("DELETE FROM ") + table + " WHERE time < ?").c_str());
              s.bind(1, x.now - max_age_s);
              s.step();
            };
            auto by_count = [&](const char* table, uint64_t max_count) {
              if (max_count == 0) return;
              Stmt s(db, (std::string("DELETE FROM ") + table + " WHERE id <= (SELECT id FROM " + table +
                          " ORDER BY id DESC LIMIT 1 OFFSET ?)").c_str());
              s.bind(1, static_cast<int64_t>(max_count));
              s.step();
            };
            by_age("events", x.events_max_age_s);
            by_count("events", x.events_max_count);
            by_age("audit", x.audit_max_age_s);
            by_count("audit", x.audit_max_count);
          },
          [&](const OpIdempotency& x) {
            const IdempotencyRecord& r = x.record;
            Stmt s(db, "INSERT OR REPLACE INTO idempotency (key, request, time, result) VALUES (?, ?, ?, ?)");
            s.bind(1, r.key).bind(2, r.request).bind(3, r.time).bind(4, r.result);
            s.step();
          },
      },
      op);
}

}  // namespace

void Store::set_journal(Journal* journal) {
  std::lock_guard lock(mu_);
  journal_ = journal;
}

int64_t Store::applied_seq() const { return applied_seq_.load(); }

void Store::apply_entry(int64_t seq, const std::string& batch) {
  Result<std::vector<StoreOp>> ops = decode_batch(batch);
  if (!ops) throw StoreError("log entry " + std::to_string(seq) + ": " + ops.error().message);
  std::lock_guard lock(mu_);
  const int64_t applied = applied_seq();
  if (seq <= applied) return;
  if (seq != applied + 1) {
    throw StoreError("log entry " + std::to_string(seq) + " follows " + std::to_string(applied) + ": a gap");
  }
  local_ = true;
  struct Restore {
    bool& flag;
    ~Restore() { flag = false; }
  } restore{local_};
  Transaction txn(*this);
  try {
    for (const StoreOp& op : *ops) apply_op_sql(db_, op);
    Stmt s(db_, "INSERT OR REPLACE INTO replication (id, applied_seq) VALUES (1, ?)");
    s.bind(1, seq);
    s.step();
  } catch (const StoreError& e) {
    throw StoreError("log entry " + std::to_string(seq) + ": " + e.what());
  }
  txn.commit();
  applied_seq_ = seq;
}

std::optional<IdempotencyRecord> Store::idempotency(const std::string& key) const {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT key, request, time, result FROM idempotency WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return IdempotencyRecord{s.text(0), s.text(1), s.real(2), s.text(3)};
}

}  // namespace railyard::controller
