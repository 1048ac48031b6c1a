// EventChannel against a real Unix socket listener in a temp dir.
#include "sm_plugin/event_channel.h"
#include "sm_plugin/controller_address.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "routing/fabric_fingerprint.h"
#include "routing/generator.h"
#include "routing/lft_digest.h"
#include "routing/topology_reader.h"
#include "routing/topology_writer.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::sm_plugin {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A controller stand-in: listens, accepts, reads JSON lines, writes lines.
class Listener {
 public:
  explicit Listener(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::unlink(path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
    EXPECT_EQ(::listen(fd_, 4), 0);
  }
  ~Listener() {
    drop();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool accept(std::chrono::milliseconds timeout = 5000ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    conn_ = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    buf_.clear();
    return conn_ >= 0;
  }
  void drop() {
    if (conn_ >= 0) ::close(conn_);
    conn_ = -1;
  }
  // Shuts the connection for sending, reads until the peer closes it, closes.
  void shut_and_wait_close(std::chrono::milliseconds timeout = 5000ms) {
    ::shutdown(conn_, SHUT_WR);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char b[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{conn_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      if (::read(conn_, b, sizeof b) <= 0) break;
    }
    drop();
  }
  // The next line as JSON; a discarded value on timeout or EOF.
  json next(std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        last_bytes_ = line.size() + 1;
        return json::parse(line);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return json(json::value_t::discarded);
      pollfd p{conn_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return json(json::value_t::discarded);
      char b[65536];
      const ssize_t n = ::read(conn_, b, sizeof b);
      if (n <= 0) return json(json::value_t::discarded);
      buf_.append(b, static_cast<size_t>(n));
    }
  }
  // Bytes of the line next() returned last, its '\n' included.
  size_t last_bytes() const { return last_bytes_; }
  void send(const std::string& line) { ASSERT_EQ(::write(conn_, line.data(), line.size()), ssize_t(line.size())); }

 private:
  std::string path_;
  int fd_ = -1;
  int conn_ = -1;
  std::string buf_;
  size_t last_bytes_ = 0;
};

class EventChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry_evt_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "c.sock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  EventChannel::Options options(size_t capacity = 4096) {
    EventChannel::Options o;
    o.socket_path = path_;
    o.capacity = capacity;
    o.retry = 20ms;
    o.hello = HelloEvent{"osmrailyard", "test", 1, "OpenSM test", 0};
    return o;
  }
  // Options with only these Unix sockets as `controllers`, in order.
  EventChannel::Options options_for(const std::vector<std::string>& sockets) {
    EventChannel::Options o = options();
    o.socket_path.clear();
    for (const std::string& p : sockets) {
      auto a = parse_controller_address("unix:" + p);
      EXPECT_TRUE(a) << a.error().message;
      if (a) o.controllers.push_back(*a);
    }
    return o;
  }
  EventChannel::LogSink log_sink() {
    return [this](LogLevel, const std::string& text) {
      std::lock_guard lock(log_mu_);
      log_.push_back(text);
    };
  }
  bool logged(const std::string& needle) {
    std::lock_guard lock(log_mu_);
    for (const auto& l : log_) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  template <class F>
  static bool eventually(F f, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!f()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

// With no controller the events wait in the bounded queue; the first
// connection sends them after its hello, numbered after it. Beyond the
// queue's capacity the oldest are dropped, counted, and the hello says how
// many.
TEST_F(EventChannelTest, WithoutAControllerEventsWaitInTheQueueAndFollowTheHello) {
  EventChannel channel(options(/*capacity=*/3), nullptr, log_sink());
  for (uint16_t lid = 1; lid <= 5; ++lid) EXPECT_TRUE(channel.push(TrapEvent{128, lid, true, 2, lid})) << lid;
  EXPECT_EQ(channel.dropped(), 2u);
  EXPECT_TRUE(eventually([&] { return logged("cannot connect"); }));

  Listener controller(path_);  // the controller comes up: the retry finds it
  ASSERT_TRUE(controller.accept());
  const json hello = controller.next();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["dropped"], 2);
  EXPECT_EQ(hello["plugin"], "osmrailyard");
  const uint64_t base = hello["seq"].get<uint64_t>();
  for (uint64_t k = 1; k <= 3; ++k) {
    const json trap = controller.next();
    EXPECT_EQ(trap["type"], "trap");
    EXPECT_EQ(trap["lid"], k + 2) << "the newest three, in their order";
    EXPECT_EQ(trap["seq"], base + k) << "renumbered after the hello";
  }
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));
  EXPECT_TRUE(channel.push(TrapEvent{128, 9, true, 2, 9}));
  const json trap = controller.next();
  EXPECT_EQ(trap["lid"], 9);
  EXPECT_EQ(trap["seq"], base + 4);
  EXPECT_TRUE(logged("3 kept from before sent now"));
}

// What the controller did not confirm (`received`) goes again, after the next
// hello, to whichever controller comes next: here a member answers not_leader
// after reading everything, and the leader it names gets the events.
TEST_F(EventChannelTest, EventsNotConfirmedAreSentAgainToTheNextController) {
  const std::string leader_path = (dir_ / "leader.sock").string();
  Listener first(path_);
  Listener leader(leader_path);
  EventChannel channel(options_for({path_, leader_path}), nullptr, log_sink());
  ASSERT_TRUE(first.accept());
  EXPECT_EQ(first.next()["type"], "hello");  // line 1
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));
  for (uint16_t lid = 1; lid <= 4; ++lid) ASSERT_TRUE(channel.push(TrapEvent{128, lid, true, 2, lid}));
  for (uint16_t lid = 1; lid <= 4; ++lid) EXPECT_EQ(first.next()["lid"], lid);  // lines 2..5
  // Lines 1-3 handled (the hello, traps 1 and 2); then this member is not
  // the leader after all.
  first.send(R"({"lines":3,"type":"received"})" "\n");
  first.send("{\"type\":\"not_leader\",\"leader\":\"unix:" + leader_path + "\"}\n");
  first.shut_and_wait_close();

  ASSERT_TRUE(leader.accept(1500ms));
  const json hello = leader.next();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["dropped"], 0) << "nothing was lost";
  const uint64_t base = hello["seq"].get<uint64_t>();
  json t3 = leader.next(), t4 = leader.next();
  EXPECT_EQ(t3["lid"], 3);
  EXPECT_EQ(t3["seq"], base + 1);
  EXPECT_EQ(t4["lid"], 4);
  EXPECT_EQ(t4["seq"], base + 2);
  EXPECT_TRUE(leader.next(200ms).is_discarded()) << "traps 1 and 2 were confirmed: not sent again";

  // On this connection: trap 5 is line 4, confirmed; trap 6 is not when the
  // leader goes away. Back, only trap 6 comes again.
  ASSERT_TRUE(channel.push(TrapEvent{128, 5, true, 2, 5}));
  EXPECT_EQ(leader.next()["lid"], 5);
  leader.send(R"({"lines":4,"type":"received"})" "\n");
  ASSERT_TRUE(channel.push(TrapEvent{128, 6, true, 2, 6}));
  EXPECT_EQ(leader.next()["lid"], 6);
  leader.drop();  // the plugin reads the received before the end
  ASSERT_TRUE(eventually([&] { return !channel.connected(); }));
  // Raised while no controller is connected: kept too.
  EXPECT_TRUE(channel.push(TrapEvent{128, 7, true, 2, 7}));
  ASSERT_TRUE(leader.accept()) << "the plugin starts again from the leader named last";
  EXPECT_EQ(leader.next()["type"], "hello");
  EXPECT_EQ(leader.next()["lid"], 6);
  EXPECT_EQ(leader.next()["lid"], 7);
  EXPECT_TRUE(leader.next(200ms).is_discarded());
  EXPECT_EQ(channel.dropped(), 0u);
}

// OpenSM's SM state: in the hello, and as an sm_state event numbered before
// the event that found it changed (a new master's first fabric follows its
// sm_state); a standby's change is seen by the channel's own look too.
TEST_F(EventChannelTest, TheSmStateGoesInTheHelloAndAheadOfTheEventThatSawItChange) {
  std::mutex mu;
  std::string state = "standby";
  EventChannel::Options o = options();
  o.sm_state_interval = 10s;  // the first part: only events look
  o.sm_state = [&] {
    std::lock_guard lock(mu);
    return EventChannel::SmStatus{state, 0xabc};
  };
  Listener controller(path_);
  EventChannel channel(o, nullptr, log_sink());
  ASSERT_TRUE(controller.accept());
  const json hello = controller.next();
  EXPECT_EQ(hello["sm_state"], "standby");
  EXPECT_EQ(hello["sm_port_guid"], "0x0000000000000abc");
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));
  {
    std::lock_guard lock(mu);
    state = "master";
  }
  EXPECT_TRUE(channel.push(SimpleEvent{SimpleKind::kSubnetUp}));
  const json sm = controller.next();
  EXPECT_EQ(sm["type"], "sm_state");
  EXPECT_EQ(sm["state"], "master");
  EXPECT_EQ(sm["seq"], hello["seq"].get<int>() + 1);
  const json up = controller.next();
  EXPECT_EQ(up["type"], "subnet_up");
  EXPECT_EQ(up["seq"], hello["seq"].get<int>() + 2);
  EXPECT_TRUE(controller.next(100ms).is_discarded()) << "said once";
}

TEST_F(EventChannelTest, AStandbysStateChangeIsSeenWithoutAnyEvent) {
  std::atomic<bool> master{false};
  EventChannel::Options o = options();
  o.sm_state_interval = 20ms;
  o.sm_state = [&] { return EventChannel::SmStatus{master ? "master" : "standby", 1}; };
  Listener controller(path_);
  EventChannel channel(o, nullptr, log_sink());
  ASSERT_TRUE(controller.accept());
  EXPECT_EQ(controller.next()["sm_state"], "standby");
  master = true;
  const json sm = controller.next();
  EXPECT_EQ(sm["type"], "sm_state");
  EXPECT_EQ(sm["state"], "master");
}

TEST_F(EventChannelTest, ReconnectsAfterTheControllerGoesAwayAndResendsTheFabric) {
  Listener controller(path_);
  EventChannel channel(options(), nullptr, log_sink());
  ASSERT_TRUE(controller.accept());
  EXPECT_EQ(controller.next()["type"], "hello");

  auto fabric = routing::read_topology(
      "Switch 2 \"S-01\" # \"leaf\" base port 0 lid 1 lmc 0\n[1] \"H-10\"[1] # \"n1\" lid 2\n\n"
      "Ca 1 \"H-10\" # \"n1\"\n[1] \"S-01\"[1] # lid 2 lmc 0 \"leaf\" lid 1\n",
      "t.net");
  ASSERT_TRUE(fabric.ok()) << fabric.error().message;
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));
  EXPECT_TRUE(channel.push_fabric(1, std::make_shared<const routing::Fabric>(std::move(fabric).value())));
  const json f1 = controller.next();
  EXPECT_EQ(f1["type"], "fabric_changes");
  EXPECT_EQ(f1["full"], true);
  ASSERT_EQ(f1["nodes"].size(), 2u);
  EXPECT_TRUE(f1["nodes"][0]["desc"] == "leaf" || f1["nodes"][1]["desc"] == "leaf") << f1["nodes"];

  controller.drop();  // the controller goes away
  ASSERT_TRUE(eventually([&] { return !channel.connected(); }));
  EXPECT_TRUE(channel.push(SimpleEvent{SimpleKind::kHeavySweepStart}));
  EXPECT_TRUE(channel.push(SimpleEvent{SimpleKind::kHeavySweepDone}));
  EXPECT_EQ(channel.dropped(), 0u) << "kept for the next controller";

  ASSERT_TRUE(controller.accept());  // back: hello, the last fabric, the events kept
  const json hello = controller.next();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["dropped"], 0);
  const json f2 = controller.next();
  EXPECT_EQ(f2["type"], "fabric_changes");
  EXPECT_EQ(f2["full"], true) << "a new connection starts with the whole fabric";
  EXPECT_EQ(f2["pass"], 1);
  EXPECT_EQ(f2["nodes"], f1["nodes"]);
  EXPECT_EQ(f2["links"], f1["links"]);
  EXPECT_EQ(f2["fingerprint"], f1["fingerprint"]);
  EXPECT_GT(f2["seq"].get<uint64_t>(), hello["seq"].get<uint64_t>());
  EXPECT_EQ(controller.next()["type"], "heavy_sweep_start");
  EXPECT_EQ(controller.next()["type"], "heavy_sweep_done");
  EXPECT_TRUE(controller.next(200ms).is_discarded()) << "the first connection's fabric is not sent twice";
  EXPECT_TRUE(logged("controller disconnected"));
}

// After the whole fabric, a pass whose fabric lost one link sends that link
// only: counted in bytes, against the whole fabric's. `send_fabric` makes the
// next one whole again, without an ack.
TEST_F(EventChannelTest, AfterTheWholeFabricOnlyChangesAreSent) {
  routing::GeneratorSpec spec;
  spec.servers = 32;
  spec.rails = 4;
  spec.radix = 16;
  spec.assign_lids = true;
  auto g = routing::generate_fabric(spec);
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto whole = std::make_shared<const routing::Fabric>(std::move(g->fabric));
  auto changed = std::make_shared<const routing::Fabric>(routing::test::with_first_switch_link_down(*whole));
  ASSERT_FALSE(::testing::Test::HasFailure());

  Listener controller(path_);
  EventChannel channel(options(), nullptr, log_sink());
  ASSERT_TRUE(controller.accept());
  EXPECT_EQ(controller.next()["type"], "hello");
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));

  ASSERT_TRUE(channel.push_fabric(1, whole));
  const json first = controller.next();
  const size_t whole_bytes = controller.last_bytes();
  EXPECT_EQ(first["full"], true);
  EXPECT_EQ(first["nodes"].size(), whole->num_nodes());
  EXPECT_EQ(first["fingerprint"], routing::digest_text(routing::fabric_fingerprint(*whole)));

  ASSERT_TRUE(channel.push_fabric(2, changed));
  const json second = controller.next();
  const size_t change_bytes = controller.last_bytes();
  EXPECT_EQ(second["full"], false);
  EXPECT_EQ(second["base"], first["fingerprint"]);
  EXPECT_EQ(second["fingerprint"], routing::digest_text(routing::fabric_fingerprint(*changed)));
  EXPECT_TRUE(second["nodes"].empty());
  ASSERT_EQ(second["links"].size(), 1u);
  EXPECT_EQ(second["links"][0]["state"], "down");
  // 32 servers x 4 rails: the whole fabric is tens of kB, one link a few hundred bytes.
  EXPECT_LT(change_bytes, 600u) << second.dump();
  EXPECT_GT(whole_bytes, 50 * change_bytes);
  EXPECT_EQ(channel.fabric_bytes(), whole_bytes + change_bytes);
  std::printf("fabric_changes bytes: whole %zu, one link down %zu (the topology text sent before: %zu)\n",
              whole_bytes, change_bytes, routing::write_topology(*changed).size());

  // The controller's copy does not match: the whole fabric again.
  controller.send(R"({"type":"send_fabric"})" "\n");
  const json again = controller.next();
  EXPECT_EQ(again["type"], "fabric_changes");
  EXPECT_EQ(again["full"], true);
  EXPECT_EQ(again["pass"], 2);
  EXPECT_EQ(again["fingerprint"], second["fingerprint"]);
  EXPECT_TRUE(logged("controller asked for the whole fabric again"));
  // Then changes again, from it.
  ASSERT_TRUE(channel.push_fabric(3, whole));
  const json back = controller.next();
  EXPECT_EQ(back["type"], "fabric_changes") << back.dump();
  EXPECT_EQ(back["full"], false);
  EXPECT_EQ(back["base"], again["fingerprint"]);
}

TEST_F(EventChannelTest, CommandsRunOnTheChannelThreadAndAreAcked) {
  Listener controller(path_);
  std::mutex mu;
  std::vector<std::string> seen;
  EventChannel channel(
      options(),
      [&](const Command& c) {
        if (c.id == "boom") throw std::runtime_error("no sweeper");
        std::lock_guard lock(mu);
        seen.push_back(std::string(to_string(c.kind)) + ":" + c.id);
      },
      log_sink());
  ASSERT_TRUE(controller.accept());
  EXPECT_EQ(controller.next()["type"], "hello");

  controller.send("not json\n");
  controller.send(R"({"type":"future_command","id":"f"})" "\n");
  controller.send(R"({"type":"reroute","id":"boom"})" "\n");
  // Split across writes: the channel reassembles lines.
  controller.send(R"({"type":"reroute",)");
  controller.send(R"("id":"R-1"})" "\n" R"({"type":"policy_changed","id":"P-1"})" "\n");

  const json a1 = controller.next();
  EXPECT_EQ(a1["type"], "ack");
  EXPECT_EQ(a1["id"], "R-1");
  EXPECT_EQ(a1["command"], "reroute");
  const json a2 = controller.next();
  EXPECT_EQ(a2["id"], "P-1");
  EXPECT_EQ(a2["command"], "policy_changed");
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"reroute:R-1", "policy_changed:P-1"}));
  }
  EXPECT_TRUE(logged("controller line skipped: not JSON"));
  EXPECT_TRUE(logged("command reroute 'boom' failed: no sweeper"));
}

TEST_F(EventChannelTest, AControllerThatDoesNotReadFillsTheBoundedQueueAndEveryLossIsCounted) {
  Listener controller(path_);
  EventChannel channel(options(/*capacity=*/8), nullptr, log_sink());
  ASSERT_TRUE(controller.accept());  // accepted, but not read yet
  ASSERT_TRUE(eventually([&] { return channel.connected(); }));

  const std::string big(2000, 'x');
  uint64_t pushed = 0, refused = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5000; ++i) {
    ++pushed;
    if (!channel.push(AckEvent{big, "reroute"})) ++refused;
  }
  const double push_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(refused, 0u) << "10 MB into a socket nobody reads: the queue must fill";
  EXPECT_LT(push_ms, 2000.0) << "push never waits for the socket";

  // Now read everything: received + dropped == pushed, seqs increase, the
  // last seq is the last one taken.
  EXPECT_EQ(controller.next()["type"], "hello");
  uint64_t received = 0, last_seq = 1;
  for (json j; !(j = controller.next(500ms)).is_discarded();) {
    EXPECT_GT(j["seq"].get<uint64_t>(), last_seq);
    last_seq = j["seq"].get<uint64_t>();
    ++received;
  }
  EXPECT_EQ(received + channel.dropped(), pushed);
  EXPECT_EQ(channel.dropped(), refused);
  EXPECT_EQ(last_seq <= pushed + 1, true);
}

TEST_F(EventChannelTest, StopIsPromptWhileRetryingAndWhileConnected) {
  {
    auto o = options();
    o.retry = 60s;
    EventChannel channel(o, nullptr, log_sink());
    std::this_thread::sleep_for(50ms);  // inside the 60 s wait
    const auto t0 = std::chrono::steady_clock::now();
    channel.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
    channel.stop();  // idempotent
    EXPECT_FALSE(channel.push(SimpleEvent{}));
  }
  Listener controller(path_);
  auto channel = std::make_unique<EventChannel>(options(), nullptr, log_sink());
  ASSERT_TRUE(controller.accept());
  EXPECT_EQ(controller.next()["type"], "hello");
  const auto t0 = std::chrono::steady_clock::now();
  channel.reset();  // the destructor stops and joins
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(controller.next(1000ms).is_discarded()) << "the connection is closed";
}

// A member that is not the leader writes not_leader and closes at once (the
// line and the end arrive together): the plugin still reads the line and
// goes to the leader it names, not round again to the same member.
TEST_F(EventChannelTest, ANotLeaderFollowedAtOnceByTheCloseIsStillFollowed) {
  const std::string leader_path = (dir_ / "leader.sock").string();
  Listener follower(path_);
  Listener leader(leader_path);
  EventChannel::Options o = options_for({path_, leader_path});
  o.retry = 2000ms;  // a retry after a lost not_leader would miss the deadline below
  EventChannel channel(o, nullptr, log_sink());
  ASSERT_TRUE(follower.accept());
  // Written and shut before the plugin reads anything: one read sees the
  // line, the next the end.
  follower.send("{\"type\":\"not_leader\",\"leader\":\"unix:" + leader_path + "\"}\n");
  follower.shut_and_wait_close();
  ASSERT_TRUE(leader.accept(1500ms)) << "the plugin did not go to the leader the follower named";
  EXPECT_EQ(leader.next()["type"], "hello");
  EXPECT_TRUE(logged("is not the leader"));
}

}  // namespace
}  // namespace railyard::sm_plugin
