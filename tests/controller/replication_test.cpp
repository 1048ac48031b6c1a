// Replication's pure parts (docs/ha.md): the Store's ops encode and decode,
// a follower replaying the leader's entries ends with the same rows, a
// refused append commits nothing, bad log entries and bad etcd replies are
// errors (never a crash), and the ha: config section is checked.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "controller/config.h"
#include "controller/etcd_client.h"
#include "controller/replication.h"
#include "controller/store.h"
#include "controller/store_ops.h"
#include "tests/controller/recording_journal.h"

namespace railyard::controller {
namespace {

class ReplicationStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-repl-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Store> open(const std::string& name) {
    auto s = Store::open((dir_ / name).string());
    EXPECT_TRUE(s.ok()) << s.error().message;
    return std::move(*s);
  }
  std::filesystem::path dir_;
};

// Everything a member's store holds that the API reads.
std::string dump(const Store& s) {
  nlohmann::json j;
  for (int64_t id = 1; id < 50; ++id) {
    if (auto d = s.drain(id)) j["drains"].push_back(encode_op(OpAddDrain{*d}));
  }
  for (const EventRecord& e : s.events_since(0, 1000)) j["events"].push_back(encode_op(OpAddEvent{e}));
  for (const AuditRecord& a : s.audit_since(0, 1000)) j["audit"].push_back(encode_op(OpAddAudit{a}));
  for (const LinkStateRecord& l : s.current_link_states()) j["links"].push_back(encode_op(OpAddLinkState{0, l}));
  for (const JobRecord& r : s.jobs(false)) j["jobs"].push_back(encode_op(OpPutJob{r}));
  for (const RerouteRecord& r : s.reroutes(100)) j["reroutes"].push_back(encode_op(OpPutReroute{r}));
  if (auto k = s.idempotency("key-1")) j["idem"] = encode_op(OpIdempotency{*k});
  return j.dump();
}

// What a leader does in a day, in a few calls: single writes and transactions.
void leader_writes(Store& s) {
  DrainRecord d;
  d.kind = DrainKind::kLink;
  d.target = "0x1[17]";
  d.target_name = "leaf 1[17]";
  d.reason = "maintenance";
  d.created_by = "ops";
  d.created_at = 1700000000.123456789;
  d.expires_at = 1700003600.5;
  {
    Store::IdempotencyScope key("key-1", "POST /api/v1/drains by ops");
    Store::Transaction txn(s);
    d = s.add_drain(d);
    s.put_reroute(RerouteRecord{"r1", 1700000000.2, "ops", "drain", RerouteStatus::kPending, {}, {}, ""});
    s.add_audit(AuditRecord{0, 1700000000.3, "ops", "operator", "POST /api/v1/drains", "{}", 201, "drained"});
    txn.commit();
  }
  s.add_link_state(LinkStateRecord{"0x2[3]", LinkState::kDown, 1700000001.0, Reporter::kRest, "cable"});
  (void)s.add_event(EventRecord{0, 1700000002.0, Reporter::kRest, "link_down", "mon-1", R"({"link":"0x2[3]"})"});
  (void)s.add_event(EventRecord{0, 1700000002.5, Reporter::kRest, "link_down", "mon-1", "{}"});  // duplicate: no op
  s.finish_reroute("r1", RerouteStatus::kApplied, 1700000003.25, "done");
  s.put_job(JobRecord{"job1", R"({"hosts":["a"]})", "[]", JobStatus::kActive, "", "sched", 1700000004.0,
                      1700000004.0, 1});
  (void)s.remove_drain(d.id, "ops", 1700000005.0);
  (void)s.add_event(EventRecord{0, 100.0, Reporter::kController, "old", "", "{}"});
  (void)s.prune(1700000006.0, 86400, 0, 0, 0);  // the old event goes
}

TEST(StoreOps, EveryOpRoundTrips) {
  const std::vector<StoreOp> ops = {
      OpAddDrain{DrainRecord{3, DrainKind::kSwitch, "0xa", "spine", "r", "ops", 1.5, std::nullopt, 2.5, "x"}},
      OpRemoveDrain{3, "ops", 4.25},
      OpAddEvent{EventRecord{7, 5.0, Reporter::kPlugin, "t", "ext", R"({"a":1})"}},
      OpAddLinkState{9, LinkStateRecord{"0x1[2]", LinkState::kDown, 6.0, Reporter::kRest, "why"}},
      OpAddAudit{AuditRecord{11, 7.0, "ops", "operator", "POST /x", "{}", 201, "ok"}},
      OpPutJob{JobRecord{"j", "{}", "[]", JobStatus::kDeleted, "d", "s", 8.0, 9.0, 3}},
      OpPutReroute{RerouteRecord{"r", 10.0, "ops", "why", RerouteStatus::kQueued, 11.0, 12.5, "d"}},
      OpFinishReroute{"r", RerouteStatus::kFailed, 13.0, "late"},
      OpPrune{14.0, 86400.0, 5, 0.0, 7},
      OpIdempotency{IdempotencyRecord{"k", "POST /api/v1/drains by ops", 15.0, "drain 3"}},
  };
  const std::string text = encode_batch(ops);
  Result<std::vector<StoreOp>> back = decode_batch(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), ops.size());
  EXPECT_EQ(encode_batch(*back), text);
}

TEST(StoreOps, RefusesWhatItCannotRead) {
  for (const char* bad : {"", "[]", "{", R"({"v":2,"ops":[]})", R"({"v":1})", R"({"v":1,"ops":{}})",
                          R"({"v":1,"ops":[3]})", R"({"v":1,"ops":[{"op":"drop_table"}]})",
                          R"({"v":1,"ops":[{"op":"remove_drain","id":"1","by":"x","at":1}]})",
                          R"({"v":1,"ops":[{"op":"remove_drain","id":1,"by":"x"}]})",
                          R"({"v":1,"ops":[{"op":"add_link_state","id":1,"link":"l","state":"sideways",)"
                          R"("time":1,"source":"rest","reason":""}]})",
                          R"({"v":1,"ops":[{"op":"prune","now":1,"events_max_age_s":1,"events_max_count":-1,)"
                          R"("audit_max_age_s":0,"audit_max_count":0}]})"}) {
    Result<std::vector<StoreOp>> r = decode_batch(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST_F(ReplicationStore, FollowerReplayGivesTheLeadersRows) {
  RecordingJournal journal;
  auto leader = open("leader.db");
  leader->set_journal(&journal);
  leader_writes(*leader);
  EXPECT_EQ(leader->applied_seq(), static_cast<int64_t>(journal.entries.size()));
  ASSERT_GE(journal.entries.size(), 8u);  // one entry per transaction or single write (the duplicate event: none)

  auto follower = open("follower.db");
  for (size_t i = 0; i < journal.entries.size(); ++i) follower->apply_entry(int64_t(i + 1), journal.entries[i]);
  EXPECT_EQ(dump(*follower), dump(*leader));
  EXPECT_EQ(follower->applied_seq(), leader->applied_seq());
  // Applying an entry again changes nothing; a gap is refused.
  follower->apply_entry(1, journal.entries[0]);
  EXPECT_EQ(dump(*follower), dump(*leader));
  EXPECT_THROW(follower->apply_entry(follower->applied_seq() + 2, journal.entries[0]), StoreError);
  // applied_seq survives a restart (it is in the same transactions).
  follower.reset();
  EXPECT_EQ(open("follower.db")->applied_seq(), static_cast<int64_t>(journal.entries.size()));
  // The same entries on a third member: the same rows again (deterministic).
  auto third = open("third.db");
  for (size_t i = 0; i < journal.entries.size(); ++i) third->apply_entry(int64_t(i + 1), journal.entries[i]);
  EXPECT_EQ(dump(*third), dump(*leader));
  EXPECT_EQ(third->idempotency("key-1")->result, "drain 1");
}

TEST_F(ReplicationStore, RefusedAppendCommitsNothing) {
  RecordingJournal journal;
  journal.refuse = true;
  auto s = open("s.db");
  s->set_journal(&journal);
  DrainRecord d;
  d.target = "0x1[1]";
  EXPECT_THROW(s->add_drain(d), StoreError);
  {
    Store::Transaction txn(*s);
    s->add_audit(AuditRecord{0, 1, "a", "b", "c", "d", 200, "e"});
    EXPECT_THROW(txn.commit(), StoreError);
  }
  EXPECT_TRUE(s->active_drains().empty());
  EXPECT_TRUE(s->audit_since(0, 10).empty());
  EXPECT_TRUE(s->writable());  // not the disk's fault
  EXPECT_EQ(s->applied_seq(), 0);
  // Not journaled: the heartbeat.
  EXPECT_TRUE(s->probe_write());
  EXPECT_TRUE(journal.entries.empty());
}

TEST_F(ReplicationStore, BadEntryAppliesNothing) {
  auto s = open("s.db");
  EXPECT_THROW(s->apply_entry(1, "not json"), StoreError);
  const std::string half =
      R"({"v":1,"ops":[{"op":"remove_drain","id":1,"by":"x","at":1},{"op":"nonsense"}]})";
  EXPECT_THROW(s->apply_entry(1, half), StoreError);
  EXPECT_EQ(s->applied_seq(), 0);
}

TEST(Replication, LeaderValueAndLogKeys) {
  const LeaderInfo info{"m1", "http://h:1", "tls://h:2"};
  std::optional<LeaderInfo> back = decode_leader(encode_leader(info));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->member, "m1");
  EXPECT_EQ(back->plugin, "tls://h:2");
  EXPECT_FALSE(decode_leader("nope"));
  EXPECT_FALSE(decode_leader(R"({"member":3})"));
  EXPECT_FALSE(decode_leader(R"({"api":"x"})"));
  EXPECT_EQ(log_key("/r/", 42), "/r/log/00000000000000000042");
  EXPECT_EQ(log_seq("/r/", log_key("/r/", 42)), 42);
  EXPECT_FALSE(log_seq("/r/", "/r/log/12"));
  EXPECT_FALSE(log_seq("/r/", "/r/log/0000000000000000004x"));
  EXPECT_FALSE(log_seq("/r/", "/q/log/00000000000000000042"));
  EXPECT_FALSE(log_seq("/r/", "/r/log/99999999999999999999"));
}

TEST(EtcdReplies, Base64) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    Result<std::string> back = etcd::base64_decode(etcd::base64_encode(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  for (const char* bad : {"a", "abc", "ab=c", "a===", "ab!d", "=abc"}) EXPECT_FALSE(etcd::base64_decode(bad).ok()) << bad;
  EXPECT_EQ(etcd::prefix_end("/r/log/"), "/r/log0");
}

TEST(EtcdReplies, RangeTxnLease) {
  // As etcd 3.4's gateway answers (numbers as strings, zero values left out).
  auto r = etcd::parse_range_reply(
      R"({"header":{"revision":"7"},"kvs":[{"key":"L3IvbGVhZGVy","create_revision":"2","mod_revision":"3",)"
      R"("version":"1","value":"aGk="}],"count":"1"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->revision, 7);
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0].key, "/r/leader");
  EXPECT_EQ(r->kvs[0].value, "hi");
  EXPECT_EQ(r->kvs[0].create_revision, 2);
  EXPECT_TRUE(etcd::parse_range_reply(R"({"header":{"revision":"1"}})")->kvs.empty());

  auto t = etcd::parse_txn_reply(R"({"header":{"revision":"2"},"succeeded":true,"responses":[{"response_put":{}}]})");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->succeeded);
  EXPECT_EQ(t->revision, 2);
  EXPECT_FALSE(etcd::parse_txn_reply(R"({"header":{"revision":"2"}})")->succeeded);  // false is left out

  auto lease = etcd::parse_lease_grant_reply(R"({"header":{},"ID":"4111120388785649413","TTL":"3"})");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->id, 4111120388785649413);
  EXPECT_EQ(*etcd::parse_keepalive_reply(R"({"result":{"header":{},"ID":"1","TTL":"3"}})"), 3);
  EXPECT_EQ(*etcd::parse_keepalive_reply(R"({"result":{"header":{},"ID":"1"}})"), 0);  // gone

  for (const char* bad : {"", "null", "[]", "{", R"({"kvs":{}})", R"({"kvs":[{"key":"!!!!"}]})",
                          R"({"kvs":[{"key":"YQ==","create_revision":"x"}]})",
                          R"({"kvs":[{"key":"YQ==","create_revision":"99999999999999999999"}]})",
                          R"({"kvs":[{"key":5}]})", R"({"header":"x"})", R"({"more":"yes"})"}) {
    EXPECT_FALSE(etcd::parse_range_reply(bad).ok()) << bad;
  }
  for (const char* bad : {"", R"({"succeeded":"yes"})", R"({"responses":{}})",
                          R"({"responses":[{"response_range":{"kvs":[{"key":"%"}]}}]})"}) {
    EXPECT_FALSE(etcd::parse_txn_reply(bad).ok()) << bad;
  }
  for (const char* bad : {"", R"({"ID":"1"})", R"({"ID":"x","TTL":"3"})", R"({"error":"too many"})"}) {
    EXPECT_FALSE(etcd::parse_lease_grant_reply(bad).ok()) << bad;
  }
  for (const char* bad : {"", "{}", R"({"result":3})", R"({"error":{"message":"lease not found"}})"}) {
    EXPECT_FALSE(etcd::parse_keepalive_reply(bad).ok()) << bad;
  }
}

// Replies and log entries damaged at random (bytes changed, cut short): an
// error or a value, never a crash (ASan/UBSan run this too).
TEST(EtcdReplies, DamagedBytesNeverCrash) {
  const std::vector<std::string> good = {
      R"({"header":{"revision":"7"},"kvs":[{"key":"L3IvbGVhZGVy","create_revision":"2","mod_revision":"3",)"
      R"("version":"1","value":"aGk="}],"count":"1","more":false})",
      R"({"header":{"revision":"2"},"succeeded":true,"responses":[{"response_range":{"kvs":[{"key":"YQ=="}]}}]})",
      R"({"result":{"header":{},"ID":"1","TTL":"3"}})",
      encode_batch({OpAddDrain{DrainRecord{3, DrainKind::kSwitch, "0xa", "s", "r", "o", 1.5, 2.0, std::nullopt, ""}},
                    OpRemoveDrain{3, "ops", 4.25}}),
  };
  uint64_t x = 88172645463325252ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 4000; ++i) {
    std::string s = good[next() % good.size()];
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = next() % s.size();
      switch (next() % 3) {
        case 0: s[at] = static_cast<char>(next() & 0xff); break;
        case 1: s.erase(at, 1 + next() % 8); break;
        default: s.resize(at); break;
      }
    }
    (void)etcd::parse_range_reply(s);
    (void)etcd::parse_txn_reply(s);
    (void)etcd::parse_lease_grant_reply(s);
    (void)etcd::parse_keepalive_reply(s);
    (void)decode_batch(s);
    (void)decode_leader(s);
  }
}

TEST(EtcdClient, UnreachableEndpointsAreAnErrorWithinTheTimeout) {
  // Port 1 on loopback: refused at once; an address that is not http: refused.
  etcd::Client c({"http://127.0.0.1:1", "ftp://x"}, std::chrono::milliseconds(300));
  Result<etcd::RangeReply> r = c.range("/k");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no member answered"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("127.0.0.1:1"), std::string::npos) << r.error().message;
}

constexpr const char* kBase = "fabric: {source: offline, topology_file: f}\n";

TEST(HaConfig, ReadsTheSection) {
  auto cfg = parse_controller_config(std::string(kBase) + R"(ha:
  etcd: [http://10.0.0.1:2379, http://10.0.0.2:2379]
  member: mgmt-1
  advertise_api: http://10.0.0.1:8640
  advertise_plugin: tls://10.0.0.1:8641
  lease_ttl_s: 5
  prefix: /fabric-a/
)",
                                     "c.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  ASSERT_TRUE(cfg->ha);
  EXPECT_EQ(cfg->ha->etcd.size(), 2u);
  EXPECT_EQ(cfg->ha->member, "mgmt-1");
  EXPECT_EQ(cfg->ha->lease_ttl_s, 5u);
  EXPECT_EQ(cfg->ha->prefix, "/fabric-a/");
  EXPECT_EQ(cfg->ha->etcd_timeout_ms, 1000u);
  EXPECT_FALSE(parse_controller_config(kBase, "c.yaml")->ha);  // single-node by default
}

TEST(HaConfig, MistakesNameFileLineAndWhat) {
  const std::string ok_rest = "  member: m1\n  advertise_api: http://h:1\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ha:\n  member: m1\n  advertise_api: http://h:1\n", "c.yaml:3: ha needs etcd"},
      {"ha:\n  etcd: http://h:2379\n" + ok_rest, "c.yaml:3: ha.etcd must be a list"},
      {"ha:\n  etcd: [https://h:2379]\n" + ok_rest, "c.yaml:3: ha.etcd: 'https://h:2379' is not http://host:port"},
      {"ha:\n  etcd: [http://h:2379, http://h:2379]\n" + ok_rest, "c.yaml:3: ha.etcd: 'http://h:2379' is repeated"},
      {"ha:\n  etcd: [http://h:1]\n  advertise_api: http://h:1\n", "c.yaml:3: ha needs member"},
      {"ha:\n  etcd: [http://h:1]\n  member: 'a b'\n  advertise_api: http://h:1\n", "c.yaml:4: ha.member must be"},
      {"ha:\n  etcd: [http://h:1]\n  member: m\n  advertise_api: h:1\n", "c.yaml:5: ha.advertise_api must be"},
      {"ha:\n  etcd: [http://h:1]\n" + ok_rest + "  lease_ttl_s: 1\n", "c.yaml:6:"},
      {"ha:\n  etcd: [http://h:1]\n" + ok_rest + "  prefix: railyard\n", "c.yaml:6: ha.prefix must start and end"},
      {"ha:\n  etcd: [http://h:1]\n" + ok_rest + "  advertise_plugin: h:2\n", "c.yaml:6: ha.advertise_plugin"},
      {"ha:\n  etcd: [http://h:1]\n" + ok_rest + "  leader: me\n", "c.yaml:6: unknown key 'leader'"},
  };
  for (const auto& [text, want] : cases) {
    auto cfg = parse_controller_config(std::string(kBase) + text, "c.yaml");
    ASSERT_FALSE(cfg.ok()) << text;
    EXPECT_NE(cfg.error().message.find(want), std::string::npos) << "got: " << cfg.error().message << "\nwant: " << want;
  }
}

}  // namespace
}  // namespace railyard::controller
