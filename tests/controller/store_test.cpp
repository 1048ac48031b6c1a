// The SQLite store on a real file: what is written survives closing and
// reopening, events are idempotent by their reporter's id, the current link
// state is the last one recorded.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "controller/store.h"

namespace railyard::controller {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-store-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "state.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Store> open() {
    auto s = Store::open(path_);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return std::move(s).value();
  }
  // One column of the first row of `sql`, read with SQLite itself.
  std::string raw(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }
  void exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreTest, DrainsSurviveReopening) {
  int64_t first = 0;
  {
    auto s = open();
    DrainRecord d;
    d.kind = DrainKind::kLink;
    d.target = "0x0000000000000001[3]";
    d.target_name = "leaf[3] <-> spine[1]";
    d.reason = "flapping";
    d.created_by = "ops";
    d.created_at = 100;
    d.expires_at = 200;
    first = s->add_drain(d).id;
    d.kind = DrainKind::kSwitch;
    d.target = "0x0000000000000002";
    d.expires_at.reset();
    const int64_t second = s->add_drain(d).id;
    EXPECT_NE(first, second);
    EXPECT_TRUE(s->remove_drain(second, "ops", 150));
    EXPECT_FALSE(s->remove_drain(second, "ops", 151)) << "a removed drain cannot be removed twice";
  }
  auto s = open();
  auto active = s->active_drains();
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].id, first);
  EXPECT_EQ(active[0].kind, DrainKind::kLink);
  EXPECT_EQ(active[0].target, "0x0000000000000001[3]");
  EXPECT_EQ(active[0].reason, "flapping");
  ASSERT_TRUE(active[0].expires_at.has_value());
  EXPECT_DOUBLE_EQ(*active[0].expires_at, 200);
  auto removed = s->drain(first + 1);
  ASSERT_TRUE(removed.has_value());
  EXPECT_TRUE(removed->removed_at.has_value());
  EXPECT_EQ(removed->removed_by, "ops");
  EXPECT_FALSE(s->drain(999).has_value());
}

TEST_F(StoreTest, EventsAreIdempotentByExternalId) {
  auto s = open();
  EventRecord e{0, 10, Reporter::kRest, "link_down", "monitor-1", R"({"link":"x"})"};
  auto a = s->add_event(e);
  EXPECT_TRUE(a.inserted);
  e.body = R"({"link":"changed"})";
  auto b = s->add_event(e);
  EXPECT_FALSE(b.inserted);
  EXPECT_EQ(b.event.id, a.event.id);
  EXPECT_EQ(b.event.body, R"({"link":"x"})") << "the first report stands";
  // Without an id every event is new; the same id from another source too.
  EXPECT_TRUE(s->add_event({0, 11, Reporter::kPlugin, "trap", "", "{}"}).inserted);
  EXPECT_TRUE(s->add_event({0, 11, Reporter::kPlugin, "trap", "", "{}"}).inserted);
  EXPECT_TRUE(s->add_event({0, 12, Reporter::kPlugin, "link_down", "monitor-1", "{}"}).inserted);
  auto all = s->events_since(0, 100);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(s->last_event_id(), all.back().id);
  auto later = s->events_since(all[1].id, 100);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].id, all[2].id);
  EXPECT_EQ(s->events_since(0, 1).size(), 1u);
}

TEST_F(StoreTest, CurrentLinkStateIsTheLastRecorded) {
  auto s = open();
  s->add_link_state({"0x1[1]", LinkState::kDown, 1, Reporter::kRest, "crc errors"});
  s->add_link_state({"0x2[5]", LinkState::kDown, 2, Reporter::kPlugin, "gone"});
  s->add_link_state({"0x1[1]", LinkState::kUp, 3, Reporter::kRest, "fixed"});
  auto now = s->current_link_states();
  ASSERT_EQ(now.size(), 2u);
  EXPECT_EQ(now[0].link, "0x1[1]");
  EXPECT_EQ(now[0].state, LinkState::kUp);
  EXPECT_EQ(now[1].state, LinkState::kDown);
  EXPECT_EQ(now[1].source, Reporter::kPlugin);
}

TEST_F(StoreTest, AuditAndReroutes) {
  auto s = open();
  s->add_audit({0, 5, "ops", "operator", "POST /api/v1/drains", "{}", 201, "drained x"});
  auto audit = s->audit_since(0, 10);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].status, 201);
  EXPECT_EQ(audit[0].actor, "ops");

  RerouteRecord r{"r1", 10, "ops", "drain 1", RerouteStatus::kPending, std::nullopt, std::nullopt, ""};
  s->put_reroute(r);
  r.status = RerouteStatus::kApplied;
  r.finished_at = 11;
  r.latency_ms = 850;
  s->put_reroute(r);
  auto got = s->reroute("r1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, RerouteStatus::kApplied);
  EXPECT_DOUBLE_EQ(*got->latency_ms, 850);
  EXPECT_EQ(s->reroutes(10).size(), 1u);
}

TEST_F(StoreTest, UnopenableDatabaseIsAnError) {
  auto s = Store::open((dir_ / "no" / "such" / "dir" / "x.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot open"), std::string::npos) << s.error().message;
}

// A zero-length file at the database path started a daemon with no drains,
// silently: it is refused, and left as it is.
TEST_F(StoreTest, EmptyDatabaseFileIsRefused) {
  std::ofstream(path_).close();
  auto s = Store::open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is empty (0 bytes)"), std::string::npos) << s.error().message;
  EXPECT_EQ(std::filesystem::file_size(path_), 0u);
}

// The audit log and the drains are not for every local user.
TEST_F(StoreTest, NewDatabaseIsPrivate) {
  const mode_t old = ::umask(0);
  auto s = Store::open(path_);
  ::umask(old);
  ASSERT_TRUE(s.ok());
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A transaction not committed leaves nothing; a committed one everything.
TEST_F(StoreTest, TransactionsAreAllOrNothing) {
  auto s = open();
  DrainRecord d;
  d.target = "0x0000000000000001[3]";
  d.target_name = "x";
  d.reason = "r";
  try {
    Store::Transaction txn(*s);
    s->add_drain(d);
    s->add_audit(AuditRecord{0, 1, "ops", "operator", "POST", "{}", 201, "drained"});
    throw StoreError("the policy file failed");
  } catch (const StoreError&) {
  }
  EXPECT_TRUE(s->active_drains().empty());
  EXPECT_TRUE(s->audit_since(0, 10).empty());
  {
    Store::Transaction txn(*s);
    s->add_drain(d);
    s->add_audit(AuditRecord{0, 1, "ops", "operator", "POST", "{}", 201, "drained"});
    txn.commit();
  }
  EXPECT_EQ(s->active_drains().size(), 1u);
  EXPECT_EQ(s->audit_since(0, 10).size(), 1u);
  EXPECT_TRUE(s->writable());
  EXPECT_TRUE(s->probe_write());
}

// The states are enums in memory and the same words as always in the
// database (no schema change); a word the enum does not know is an error
// naming where it was found, not a silent default.
TEST_F(StoreTest, StatesAreKeptAsTheirWords) {
  auto s = open();
  s->put_reroute(RerouteRecord{"r1", 10, "ops", "drain 1", RerouteStatus::kQueued, std::nullopt, std::nullopt, ""});
  s->put_job(JobRecord{"job-1", "{}", "[]", JobStatus::kRefused, "no capacity", "ops", 1, 2, 1});
  s->add_link_state({"0x1[1]", LinkState::kDown, 1, Reporter::kPlugin, "gone"});
  s->add_event({0, 11, Reporter::kController, "link_down", "", "{}"});
  DrainRecord d;
  d.kind = DrainKind::kPort;
  d.target = "0x1[3]";
  s->add_drain(d);
  EXPECT_EQ(raw("SELECT status FROM reroutes"), "queued");
  EXPECT_EQ(raw("SELECT status FROM jobs"), "refused");
  EXPECT_EQ(raw("SELECT state FROM link_health"), "down");
  EXPECT_EQ(raw("SELECT source FROM link_health"), "plugin");
  EXPECT_EQ(raw("SELECT source FROM events"), "controller");
  EXPECT_EQ(raw("SELECT kind FROM drains"), "port");
  EXPECT_EQ(s->jobs(true).size(), 0u) << "a refused job is not active";
  s->put_job(JobRecord{"job-2", "{}", "[]", JobStatus::kActive, "", "ops", 3, 3, 1});
  ASSERT_EQ(s->jobs(true).size(), 1u);
  EXPECT_EQ(s->jobs(true)[0].id, "job-2");

  exec("UPDATE reroutes SET status = 'exploded'");
  try {
    (void)s->reroute("r1");
    FAIL() << "an unknown status was read";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "reroutes.status: unknown value 'exploded'");
  }
  exec("UPDATE link_health SET state = 'sideways'");
  EXPECT_THROW((void)s->current_link_states(), StoreError);
}

}  // namespace
}  // namespace railyard::controller

namespace railyard::controller {
namespace {

// The schema railyardd wrote before the schema had a version (user_version 0),
// as that build created it.
constexpr const char* kUnversionedSchema = R"sql(
CREATE TABLE drains (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL, target TEXT NOT NULL, target_name TEXT NOT NULL,
  reason TEXT NOT NULL, created_by TEXT NOT NULL, created_at REAL NOT NULL,
  expires_at REAL, removed_at REAL, removed_by TEXT NOT NULL DEFAULT '');
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, source TEXT NOT NULL, type TEXT NOT NULL,
  external_id TEXT, body TEXT NOT NULL);
CREATE UNIQUE INDEX events_external ON events(source, external_id) WHERE external_id IS NOT NULL;
CREATE TABLE link_health (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  link TEXT NOT NULL, state TEXT NOT NULL, time REAL NOT NULL, source TEXT NOT NULL, reason TEXT NOT NULL);
CREATE INDEX link_health_link ON link_health(link, id);
CREATE TABLE audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  time REAL NOT NULL, actor TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
  request TEXT NOT NULL, status INTEGER NOT NULL, result TEXT NOT NULL);
CREATE TABLE jobs (
  id TEXT PRIMARY KEY, request TEXT NOT NULL, trees TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL,
  created_by TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, version INTEGER NOT NULL);
CREATE TABLE heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), time REAL NOT NULL);
CREATE TABLE reroutes (
  id TEXT PRIMARY KEY, requested_at REAL NOT NULL, requested_by TEXT NOT NULL, reason TEXT NOT NULL,
  status TEXT NOT NULL, finished_at REAL, latency_ms REAL, detail TEXT NOT NULL);
INSERT INTO drains (kind, target, target_name, reason, created_by, created_at)
  VALUES ('link', '0x0002c90300000001[9]', 'leaf[9]', 'old', 'ops', 1000);
INSERT INTO reroutes VALUES ('r1', 1000, 'ops', 'drain', 'pending', NULL, NULL, '');
)sql";

TEST_F(StoreTest, ADatabaseOfThePreviousSchemaIsMigratedForward) {
  exec(kUnversionedSchema);
  ASSERT_EQ(raw("PRAGMA user_version"), "0");
  auto store = open();
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  EXPECT_EQ(raw("PRAGMA user_version"), std::to_string(kSchemaVersion));
  // Version 2's indexes exist, and what was there is still there.
  EXPECT_EQ(raw("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                "('events_time', 'audit_time', 'reroutes_status')"),
            "3");
  ASSERT_EQ(store->active_drains().size(), 1u);
  EXPECT_EQ(store->active_drains()[0].reason, "old");
  ASSERT_EQ(store->unfinished_reroutes().size(), 1u);
  EXPECT_EQ(store->unfinished_reroutes()[0].id, "r1");
  // Opening again changes nothing.
  store.reset();
  EXPECT_EQ(open()->schema_version(), kSchemaVersion);
}

TEST_F(StoreTest, ADatabaseOfANewerSchemaIsRefused) {
  exec("PRAGMA user_version = 99");
  auto s = Store::open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("schema version 99, made by a newer railyardd"), std::string::npos)
      << s.error().message;
}

TEST_F(StoreTest, RetentionPrunesEventsAndAuditByAgeAndCount) {
  auto store = open();
  const double now = 1'000'000;
  for (int i = 0; i < 10; ++i) {
    EventRecord e;
    e.time = now - (10 - i) * 86400.0;  // 10 days ago .. 1 day ago
    e.type = "e" + std::to_string(i);
    e.body = "{}";
    store->add_event(e);
    AuditRecord a;
    a.time = e.time;
    a.actor = "ops";
    a.result = "a" + std::to_string(i);
    store->add_audit(a);
  }
  // Events: older than 5.5 days go (the 10..6 days old: 5), then the newest
  // 3 remain (2 more go). Audit: no age bound, the newest 4 remain.
  Pruned p = store->prune(now, 5.5 * 86400, 3, 0, 4);
  EXPECT_EQ(p.events, 7u);
  EXPECT_EQ(p.audit, 6u);
  const auto events = store->events_since(0, 100);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, "e7");
  EXPECT_EQ(events[2].type, "e9");
  const auto audit = store->audit_since(0, 100);
  ASSERT_EQ(audit.size(), 4u);
  EXPECT_EQ(audit[0].result, "a6");
  // No bound: nothing more goes.
  EXPECT_EQ(store->prune(now, 0, 0, 0, 0).events, 0u);
  EXPECT_EQ(store->events_since(0, 100).size(), 3u);
}

}  // namespace
}  // namespace railyard::controller
