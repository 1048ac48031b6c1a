// The plugin's channel (sm_plugin/event_channel.h) against the controller's
// PluginLink, both real, over real sockets: TLS with a token (a CA and a
// server certificate made by tests/tools/make_test_certs.sh at test time),
// several addresses, not_leader, several plugins (master and standby), and
// the policy pushed to every plugin.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/protocol/event_codec.h"
#include "controller/plugin_link.h"
#include "sm_plugin/event_channel.h"

namespace railyard::controller::ha_test {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using sm_plugin::ControllerAddress;
using sm_plugin::EventChannel;

template <class F>
bool eventually(F done, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// A PluginLink on its own io_context thread, recording what it hands on.
class Link {
 public:
  explicit Link(PluginSocketOptions options) {
    link_ = std::make_unique<PluginLink>(
        io_, std::move(options),
        [this](const std::string& line) {
          std::lock_guard lock(mu_);
          lines_.push_back(line);
        },
        [this](bool connected) {
          std::lock_guard lock(mu_);
          connections_.push_back(connected);
        },
        [this](PluginLink::LogLevel level, const std::string& text) {
          std::lock_guard lock(mu_);
          logs_ += (level == PluginLink::LogLevel::kWarn ? "warn: " : "") + text + "\n";
        });
  }
  ~Link() {
    if (thread_.joinable()) {
      asio::post(io_, [this] {
        link_->stop();
        io_.stop();
      });
      thread_.join();
    }
  }
  Status start() {
    Status s = link_->start();
    if (s) thread_ = std::thread([this] { io_.run(); });
    return s;
  }
  PluginLink& link() { return *link_; }
  // Its thread stops (reads nothing, confirms nothing) until `thaw` is set,
  // as a frozen process whose kernel still takes the plugin's bytes.
  void freeze_until(std::shared_future<void> thaw) {
    asio::post(io_, [thaw] { thaw.wait(); });
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  // The types of the lines handed on, in order.
  std::vector<std::string> types() {
    std::vector<std::string> out;
    for (const std::string& l : lines()) out.push_back(nlohmann::json::parse(l).value("type", ""));
    return out;
  }
  std::vector<bool> connections() {
    std::lock_guard lock(mu_);
    return connections_;
  }
  std::string logs() {
    std::lock_guard lock(mu_);
    return logs_;
  }

 private:
  asio::io_context io_;
  std::unique_ptr<PluginLink> link_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<bool> connections_;
  std::string logs_;
};

// A plugin: an EventChannel whose SM state the test sets, recording commands.
class Plugin {
 public:
  Plugin(std::vector<ControllerAddress> controllers, std::string ca, std::string token, std::string state,
         uint64_t guid, std::chrono::milliseconds confirm_timeout = 15s) {
    state_ = std::move(state);
    EventChannel::Options o;
    o.confirm_timeout = confirm_timeout;
    o.controllers = std::move(controllers);
    o.tls.ca_file = std::move(ca);
    o.tls.timeout = 3s;
    o.retry = 100ms;
    o.sm_state_interval = 20ms;
    o.hello = protocol::HelloEvent{"osmrailyard", "test", static_cast<int64_t>(guid), "OpenSM 3.3.23", 0};
    o.hello.token = std::move(token);
    o.sm_state = [this, guid] {
      std::lock_guard lock(mu_);
      return EventChannel::SmStatus{state_, guid};
    };
    channel_ = std::make_unique<EventChannel>(
        std::move(o),
        [this](const protocol::Command& c) {
          std::lock_guard lock(mu_);
          commands_.push_back(c);
        },
        [this](sm_plugin::LogLevel, const std::string& text) {
          std::lock_guard lock(mu_);
          logs_ += text + "\n";
        });
  }
  void set_state(const std::string& state) {
    std::lock_guard lock(mu_);
    state_ = state;
  }
  EventChannel& channel() { return *channel_; }
  std::vector<protocol::Command> commands() {
    std::lock_guard lock(mu_);
    return commands_;
  }
  std::vector<protocol::Command> commands_of(protocol::CommandKind kind) {
    std::vector<protocol::Command> out;
    for (const protocol::Command& c : commands()) {
      if (c.kind == kind) out.push_back(c);
    }
    return out;
  }
  std::string logs() {
    std::lock_guard lock(mu_);
    return logs_;
  }

 private:
  std::mutex mu_;
  std::string state_;
  std::vector<protocol::Command> commands_;
  std::string logs_;
  std::unique_ptr<EventChannel> channel_;
};

ControllerAddress unix_address(const std::string& path) {
  return ControllerAddress{ControllerAddress::Kind::kUnix, path};
}
ControllerAddress tls_address(uint16_t port) {
  return ControllerAddress{ControllerAddress::Kind::kTls, "", "127.0.0.1", port};
}

class PluginLinkHaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new fs::path(fs::temp_directory_path() / ("ry-ha-certs-" + std::to_string(::getpid())));
    const std::string cmd =
        "bash " RAILYARD_SOURCE_DIR "/tests/tools/make_test_certs.sh " + certs_->string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*certs_);
    delete certs_;
  }
  void SetUp() override {
    ASSERT_TRUE(fs::exists(*certs_ / "server.crt"));
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("ry-ha-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string ca() const { return (*certs_ / "ca.crt").string(); }
  // A TLS listener on a free port, and a Unix socket `name` in the test's folder (empty: none).
  PluginSocketOptions tls_options(const std::string& name = "") const {
    PluginSocketOptions o;
    if (!name.empty()) o.path = (dir_ / name).string();
    o.tls_host = "127.0.0.1";
    o.tls_cert_file = (*certs_ / "server.crt").string();
    o.tls_key_file = (*certs_ / "server.key").string();
    o.token = kToken;
    o.hello_timeout = 2s;
    return o;
  }
  PluginSocketOptions unix_options(const std::string& name) const {
    PluginSocketOptions o;
    o.path = (dir_ / name).string();
    return o;
  }

  static constexpr const char* kToken = "t0ken-for-the-plugins";
  static fs::path* certs_;
  fs::path dir_;
};
fs::path* PluginLinkHaTest::certs_ = nullptr;

TEST_F(PluginLinkHaTest, TheRightTokenOverTlsIsAcceptedAndKeptOutOfTheHello) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  ASSERT_NE(c.link().tls_port(), 0);
  Plugin p({tls_address(c.link().tls_port())}, ca(), kToken, "master", 0x11);
  ASSERT_TRUE(eventually([&] { return !c.lines().empty(); })) << p.logs() << c.logs();
  const nlohmann::json hello = nlohmann::json::parse(c.lines()[0]);
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_FALSE(hello.contains("token")) << "hellos are stored: never with the secret";
  EXPECT_EQ(hello["sm_state"], "master");
  EXPECT_EQ(hello["sm_port_guid"], "0x0000000000000011");
  EXPECT_EQ(c.connections(), std::vector<bool>{true});
  // Commands reach the plugin over TLS, and its ack comes back.
  ASSERT_TRUE(c.link().send(protocol::encode_command({protocol::CommandKind::kReroute, "r1"})));
  ASSERT_TRUE(eventually([&] { return p.commands().size() == 1; }));
  EXPECT_EQ(p.commands()[0], (protocol::Command{protocol::CommandKind::kReroute, "r1"}));
  ASSERT_TRUE(eventually([&] { return c.types().size() == 2; }));
  EXPECT_EQ(c.types()[1], "ack");
  EXPECT_EQ(c.link().peers_refused(), 0u);
  EXPECT_EQ(p.channel().controller(), "tls://127.0.0.1:" + std::to_string(c.link().tls_port()));
}

TEST_F(PluginLinkHaTest, BadTlsFilesAreStartErrorsNamingTheFile) {
  PluginSocketOptions o = tls_options();
  o.tls_key_file = (*certs_ / "other.key").string();
  Link mismatched(o);
  Status s = mismatched.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "plugin_tls_key " + o.tls_key_file + " does not match plugin_tls_cert " + o.tls_cert_file);
  o = tls_options();
  o.tls_cert_file = (dir_ / "missing.crt").string();
  Link missing(o);
  s = missing.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("plugin_tls_cert " + o.tls_cert_file + ": cannot load: ", 0), 0u)
      << s.error().message;
  o = tls_options();
  o.token.clear();
  Link no_token(o);
  s = no_token.start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("TLS needs a token"), std::string::npos) << s.error().message;
}

TEST_F(PluginLinkHaTest, AWrongOrMissingTokenIsRefusedLoggedAndCounted) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  {
    Plugin wrong({tls_address(c.link().tls_port())}, ca(), "not-the-token", "master", 0x11);
    ASSERT_TRUE(eventually([&] { return c.link().peers_refused() >= 2; })) << c.logs();
  }
  {
    Plugin none({tls_address(c.link().tls_port())}, ca(), "", "master", 0x12);
    const uint64_t before = c.link().peers_refused();
    ASSERT_TRUE(eventually([&] { return c.link().peers_refused() >= before + 2; })) << c.logs();
  }
  EXPECT_TRUE(c.lines().empty()) << c.lines()[0];
  EXPECT_TRUE(c.connections().empty());
  EXPECT_NE(c.logs().find("warn: plugin_listen: refused TLS peer 127.0.0.1:"), std::string::npos) << c.logs();
  EXPECT_NE(c.logs().find("its first line is not a hello with the right token"), std::string::npos) << c.logs();
}

TEST_F(PluginLinkHaTest, APeerThatNeverFinishesTheHandshakeIsClosedInTime) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  // A plain TCP connection that says nothing.
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), c.link().tls_port()});
  ASSERT_TRUE(eventually([&] { return c.link().peers_refused() == 1; }, 6s)) << c.logs();
  // The count is taken before the line is logged (another thread): wait for the line too.
  EXPECT_TRUE(eventually([&] {
    return c.logs().find("no TLS handshake and hello with the token within 2000 ms") != std::string::npos;
  })) << c.logs();
  char b;
  boost::system::error_code ec;
  s.read_some(asio::buffer(&b, 1), ec);
  EXPECT_TRUE(ec) << "closed by the link";
}

TEST_F(PluginLinkHaTest, AStrangerCannotMakeTheLinkHoldMoreThanAHello) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_verify_mode(asio::ssl::verify_none);
  asio::ssl::stream<asio::ip::tcp::socket> s(io, ctx);
  s.lowest_layer().connect({asio::ip::make_address("127.0.0.1"), c.link().tls_port()});
  s.handshake(asio::ssl::stream_base::client);
  // 100 KiB and no line end: not a hello, and more than one could be.
  boost::system::error_code ec;
  asio::write(s, asio::buffer(std::string(100 * 1024, 'x')), ec);
  ASSERT_TRUE(eventually([&] { return c.logs().find("sent a line longer than 65536 bytes") != std::string::npos; }))
      << c.logs();
  char b;
  s.read_some(asio::buffer(&b, 1), ec);
  EXPECT_TRUE(ec) << "closed by the link";
  EXPECT_TRUE(c.lines().empty());
}

TEST_F(PluginLinkHaTest, ThePluginRefusesAControllerItsCaDidNotSign) {
  PluginSocketOptions o = tls_options();
  o.tls_cert_file = (*certs_ / "other.crt").string();
  o.tls_key_file = (*certs_ / "other.key").string();
  Link c(o);
  ASSERT_TRUE(c.start().ok()) << c.logs();
  Plugin p({tls_address(c.link().tls_port())}, ca(), kToken, "master", 0x11);
  ASSERT_TRUE(eventually([&] { return p.logs().find("not trusted") != std::string::npos; })) << p.logs();
  EXPECT_TRUE(c.lines().empty()) << "the token never went to it";
  EXPECT_FALSE(p.channel().connected());
}

TEST_F(PluginLinkHaTest, TheFirstAddressDeadTheNextOneServes) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  // Nothing listens on the first two.
  Plugin p({unix_address((dir_ / "nobody.sock").string()), tls_address(1), tls_address(c.link().tls_port())}, ca(),
           kToken, "master", 0x11);
  ASSERT_TRUE(eventually([&] { return !c.lines().empty(); })) << p.logs();
  EXPECT_EQ(c.types()[0], "hello");
  EXPECT_NE(p.logs().find("controller socket " + (dir_ / "nobody.sock").string() + ": cannot connect"),
            std::string::npos)
      << p.logs();
}

TEST_F(PluginLinkHaTest, NotLeaderSendsThePluginToTheLeaderItNames) {
  Link leader(unix_options("leader.sock"));
  ASSERT_TRUE(leader.start().ok());
  PluginSocketOptions fo = tls_options("follower.sock");
  Link follower(fo);
  const std::string leader_text = "unix:" + (dir_ / "leader.sock").string();
  follower.link().set_leader_hook([&] { return std::optional<std::string>(leader_text); });
  ASSERT_TRUE(follower.start().ok()) << follower.logs();
  // The follower comes first in the list; the leader is named by it. A third
  // address (after the leader) is never tried.
  Plugin p({tls_address(follower.link().tls_port()), unix_address((dir_ / "third.sock").string()),
            unix_address((dir_ / "leader.sock").string())},
           ca(), kToken, "master", 0x11);
  ASSERT_TRUE(eventually([&] { return !leader.lines().empty(); })) << p.logs();
  EXPECT_EQ(leader.types()[0], "hello");
  EXPECT_TRUE(follower.lines().empty()) << "a follower hands nothing on";
  EXPECT_NE(p.logs().find("is not the leader (leader: " + leader_text + ")"), std::string::npos) << p.logs();
  EXPECT_EQ(p.logs().find("third.sock"), std::string::npos) << p.logs();
  EXPECT_EQ(p.channel().controller(), leader_text);
}

TEST_F(PluginLinkHaTest, NotLeaderNamingAnUnknownAddressMovesToTheNextOne) {
  Link follower(unix_options("a.sock"));
  follower.link().set_leader_hook([] { return std::optional<std::string>(""); });
  ASSERT_TRUE(follower.start().ok());
  Link next(unix_options("b.sock"));
  ASSERT_TRUE(next.start().ok());
  Plugin p({unix_address((dir_ / "a.sock").string()), unix_address((dir_ / "b.sock").string())}, "", "", "master",
           0x11);
  ASSERT_TRUE(eventually([&] { return !next.lines().empty(); })) << p.logs();
  EXPECT_TRUE(follower.lines().empty());
}

TEST_F(PluginLinkHaTest, StepDownTellsEveryPluginAndTheyGoToTheLeader) {
  Link a(unix_options("a.sock"));
  ASSERT_TRUE(a.start().ok());
  Link b(unix_options("b.sock"));
  ASSERT_TRUE(b.start().ok());
  const std::vector<ControllerAddress> both = {unix_address((dir_ / "a.sock").string()),
                                               unix_address((dir_ / "b.sock").string())};
  Plugin p1(both, "", "", "master", 0x11);
  Plugin p2(both, "", "", "standby", 0x12);
  ASSERT_TRUE(eventually([&] { return a.link().connections() == 2; }));
  // The master's plugin is a's plugin (its hello read) before a steps down.
  ASSERT_TRUE(eventually([&] {
    const std::vector<bool> c = a.connections();
    return !c.empty() && c.back();
  }));
  // a steps down; b is the leader now (and a refuses newcomers).
  a.link().set_leader_hook([&] { return std::optional<std::string>("unix:" + (dir_ / "b.sock").string()); });
  a.link().drop_all_not_leader("unix:" + (dir_ / "b.sock").string());
  ASSERT_TRUE(eventually([&] { return b.link().connections() == 2; })) << p1.logs();
  EXPECT_TRUE(eventually([&] { return a.link().connections() == 0; }));
  ASSERT_FALSE(a.connections().empty());
  EXPECT_EQ(a.connections().back(), false);
  // Whoever reached b first, the master's plugin is b's plugin.
  ASSERT_TRUE(eventually([&] {
    for (const std::string& l : b.lines()) {
      const nlohmann::json j = nlohmann::json::parse(l);
      if (j["type"] == "hello" && j["sm_state"] == "master") return true;
    }
    return false;
  }));
  ASSERT_TRUE(b.link().send(protocol::encode_command({protocol::CommandKind::kReroute, "after"})));
  ASSERT_TRUE(eventually([&] { return !p1.commands_of(protocol::CommandKind::kReroute).empty(); }));
  EXPECT_TRUE(p2.commands_of(protocol::CommandKind::kReroute).empty());
}

// The lids of the traps among `lines`, in order.
std::vector<int> trap_lids(const std::vector<std::string>& lines) {
  std::vector<int> lids;
  for (const std::string& l : lines) {
    const nlohmann::json j = nlohmann::json::parse(l);
    if (j["type"] == "trap") lids.push_back(j["lid"].get<int>());
  }
  return lids;
}

// Events raised while the leader changes, by a step-down then by a death
// (its link gone at once, as with kill -9), are not lost: what one leader
// did not confirm reaches the next, in order.
TEST_F(PluginLinkHaTest, EventsRaisedAcrossLeaderSwitchesReachTheNextLeader) {
  auto a = std::make_unique<Link>(unix_options("a.sock"));
  ASSERT_TRUE(a->start().ok());
  Link b(unix_options("b.sock"));
  ASSERT_TRUE(b.start().ok());
  const std::string b_address = "unix:" + (dir_ / "b.sock").string();
  Plugin p({unix_address((dir_ / "a.sock").string()), unix_address((dir_ / "b.sock").string())}, "", "", "master",
           0x11);
  ASSERT_TRUE(eventually([&] { return !a->lines().empty(); }));

  constexpr int kTraps = 600;
  std::atomic<int> pushed{0};
  std::thread raiser([&] {
    for (int lid = 1; lid <= kTraps; ++lid) {
      p.channel().push(protocol::TrapEvent{128, static_cast<uint16_t>(lid), true, 2, static_cast<uint16_t>(lid)});
      pushed = lid;
      if (lid % 8 == 0) std::this_thread::sleep_for(1ms);
    }
  });
  // a steps down to b in the middle of the stream...
  ASSERT_TRUE(eventually([&] { return pushed >= 150; }));
  b.link().set_leader_hook({});
  a->link().set_leader_hook([&] { return std::optional<std::string>(b_address); });
  a->link().drop_all_not_leader(b_address);
  // ... and b dies later in it; a leads again.
  ASSERT_TRUE(eventually([&] { return pushed >= 400 && !trap_lids(b.lines()).empty(); }));
  a->link().set_leader_hook({});
  b.link().stop();
  raiser.join();
  ASSERT_TRUE(eventually([&] {
    const std::vector<int> lids = trap_lids(a->lines());
    return !lids.empty() && lids.back() == kTraps;
  })) << p.logs();

  // Every trap reached a leader, each leader's in order (a's twice over:
  // before its step-down and after b's death).
  std::vector<bool> seen(kTraps + 1, false);
  for (const std::vector<int>& lids : {trap_lids(a->lines()), trap_lids(b.lines())}) {
    for (size_t i = 0; i < lids.size(); ++i) seen[lids[i]] = true;
  }
  for (int lid = 1; lid <= kTraps; ++lid) EXPECT_TRUE(seen[lid]) << "trap " << lid << " was lost\n" << p.logs();
  EXPECT_EQ(p.channel().dropped(), 0u);
  const std::vector<int> on_b = trap_lids(b.lines());
  EXPECT_TRUE(std::is_sorted(on_b.begin(), on_b.end()));
  EXPECT_GT(on_b.size(), 0u);
}

// Events raised while the plugin connects (kept for the connection) do not
// cancel its TLS handshake: the controller refuses no one, and gets them all.
TEST_F(PluginLinkHaTest, EventsRaisedWhileThePluginConnectsDoNotCancelTheHandshake) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok()) << c.logs();
  Plugin p({tls_address(c.link().tls_port())}, ca(), kToken, "master", 0x11);
  constexpr int kTraps = 200;
  for (int lid = 1; lid <= kTraps; ++lid) {
    p.channel().push(protocol::TrapEvent{128, static_cast<uint16_t>(lid), true, 2, static_cast<uint16_t>(lid)});
    std::this_thread::sleep_for(500us);
  }
  ASSERT_TRUE(eventually([&] { return trap_lids(c.lines()).size() == kTraps; })) << p.logs() << c.logs();
  EXPECT_EQ(c.link().peers_refused(), 0u) << c.logs();
  EXPECT_EQ(p.logs().find("stopping"), std::string::npos) << p.logs();
  EXPECT_EQ(p.channel().dropped(), 0u);
}

// A controller that stops confirming (its process frozen, its kernel still
// taking bytes) is left for the next address; what it did not confirm goes
// there.
TEST_F(PluginLinkHaTest, AControllerThatStopsConfirmingIsLeftForTheNext) {
  Link a(unix_options("a.sock"));
  ASSERT_TRUE(a.start().ok());
  Link b(unix_options("b.sock"));
  ASSERT_TRUE(b.start().ok());
  Plugin p({unix_address((dir_ / "a.sock").string()), unix_address((dir_ / "b.sock").string())}, "", "", "master",
           0x11, /*confirm_timeout=*/300ms);
  p.channel().push(protocol::TrapEvent{128, 1, true, 2, 1});
  ASSERT_TRUE(eventually([&] { return trap_lids(a.lines()) == std::vector<int>{1}; }));
  std::promise<void> thaw;
  a.freeze_until(thaw.get_future().share());
  for (uint16_t lid = 2; lid <= 5; ++lid) p.channel().push(protocol::TrapEvent{128, lid, true, 2, lid});
  const bool moved = eventually([&] { return trap_lids(b.lines()) == std::vector<int>{2, 3, 4, 5}; }, 5s);
  thaw.set_value();
  ASSERT_TRUE(moved) << p.logs();
  EXPECT_NE(p.logs().find("has confirmed nothing for 300 ms; trying unix:" + (dir_ / "b.sock").string()),
            std::string::npos)
      << p.logs();
  EXPECT_EQ(p.channel().controller(), "unix:" + (dir_ / "b.sock").string());
  EXPECT_EQ(p.channel().dropped(), 0u);
}

TEST_F(PluginLinkHaTest, OfTwoPluginsTheMastersIsThePlugin) {
  Link c(tls_options());
  ASSERT_TRUE(c.start().ok());
  const std::vector<ControllerAddress> to = {tls_address(c.link().tls_port())};
  Plugin master(to, ca(), kToken, "master", 0x11);
  ASSERT_TRUE(eventually([&] { return c.lines().size() == 1; }));
  Plugin standby(to, ca(), kToken, "standby", 0x12);
  ASSERT_TRUE(eventually([&] { return c.link().connections() == 2; }));
  std::this_thread::sleep_for(100ms);
  // The standby's events are not the controller's.
  standby.channel().push(protocol::TrapEvent{128, 1, true, 2, 1});
  ASSERT_TRUE(eventually([&] { return c.link().lines_ignored() == 1; }));
  master.channel().push(protocol::TrapEvent{64, 1, true, 2, 0});
  ASSERT_TRUE(eventually([&] { return c.lines().size() == 2; }));
  EXPECT_EQ(c.types(), (std::vector<std::string>{"hello", "trap"}));
  EXPECT_EQ(nlohmann::json::parse(c.lines()[0])["sm_port_guid"], "0x0000000000000011");
  ASSERT_TRUE(c.link().send(protocol::encode_command({protocol::CommandKind::kReroute, "r1"})));
  ASSERT_TRUE(eventually([&] { return master.commands().size() == 1; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(standby.commands().empty());
  EXPECT_EQ(c.connections(), std::vector<bool>{true});

  // The master's OpenSM dies; the standby takes over (SM state master): it
  // becomes the plugin, its hello comes first, and it is asked for its fabric.
  master.channel().stop();
  standby.set_state("master");
  // hello, trap, ack (of r1), then the standby's hello and its sm_state.
  ASSERT_TRUE(eventually([&] { return c.types().size() >= 5; })) << c.logs();
  EXPECT_EQ(c.types(), (std::vector<std::string>{"hello", "trap", "ack", "hello", "sm_state"}));
  EXPECT_EQ(nlohmann::json::parse(c.lines()[3])["sm_port_guid"], "0x0000000000000012");
  EXPECT_EQ(nlohmann::json::parse(c.lines()[4])["state"], "master");
  EXPECT_NE(standby.logs().find("controller asked for the whole fabric again"), std::string::npos)
      << standby.logs();
  EXPECT_FALSE(c.connections().empty());
  EXPECT_TRUE(c.connections().back()) << "a plugin is connected all along";
  ASSERT_TRUE(c.link().send(protocol::encode_command({protocol::CommandKind::kReroute, "r2"})));
  ASSERT_TRUE(eventually([&] { return !standby.commands_of(protocol::CommandKind::kReroute).empty(); }));
  EXPECT_EQ(standby.commands_of(protocol::CommandKind::kReroute)[0].id, "r2");
}

TEST_F(PluginLinkHaTest, AStandbyThatSaysMasterTakesOverFromTheOldMaster) {
  Link c(unix_options("c.sock"));
  ASSERT_TRUE(c.start().ok());
  const std::vector<ControllerAddress> to = {unix_address((dir_ / "c.sock").string())};
  Plugin a(to, "", "", "master", 0xa);
  ASSERT_TRUE(eventually([&] { return c.lines().size() == 1; }));
  Plugin b(to, "", "", "discovering", 0xb);
  ASSERT_TRUE(eventually([&] { return c.link().connections() == 2; }));
  // Both say master (a partitioned old master): the last to say it wins.
  b.set_state("master");
  ASSERT_TRUE(eventually([&] {
    for (const std::string& l : c.lines()) {
      if (l.find("\"sm_port_guid\":\"0x000000000000000b\"") != std::string::npos) return true;
    }
    return false;
  })) << c.logs();
  ASSERT_TRUE(c.link().send(protocol::encode_command({protocol::CommandKind::kReroute, "r"})));
  ASSERT_TRUE(eventually([&] { return !b.commands_of(protocol::CommandKind::kReroute).empty(); }));
  EXPECT_TRUE(a.commands_of(protocol::CommandKind::kReroute).empty());
  EXPECT_EQ(c.link().connections(), 2u) << "the old master stays connected, as a standby";
}

TEST_F(PluginLinkHaTest, ThePolicyGoesToEveryPluginOnceAndToNewcomers) {
  Link c(unix_options("c.sock"));
  ASSERT_TRUE(c.start().ok());
  const std::vector<ControllerAddress> to = {unix_address((dir_ / "c.sock").string())};
  const std::string yaml = "drains:\n  links: [\"sw1[1]\"]\n";
  c.link().broadcast_policy(yaml);
  Plugin master(to, "", "", "master", 0x11);
  Plugin standby(to, "", "", "standby", 0x12);
  auto policies = [](Plugin& p) { return p.commands_of(protocol::CommandKind::kPolicy); };
  ASSERT_TRUE(eventually([&] { return policies(master).size() == 1 && policies(standby).size() == 1; }));
  EXPECT_EQ(policies(master)[0].yaml, yaml);
  EXPECT_EQ(policies(standby)[0].yaml, yaml);
  EXPECT_EQ(policies(master)[0].id, policies(standby)[0].id);
  // The same YAML again: nothing sent. A new one: to both, before what follows.
  c.link().broadcast_policy(yaml);
  const std::string next = "drains:\n  links: [\"sw1[2]\"]\n";
  c.link().broadcast_policy(next);
  ASSERT_TRUE(c.link().send(protocol::encode_command({protocol::CommandKind::kPolicyChanged, "p2"})));
  ASSERT_TRUE(eventually([&] { return policies(master).size() == 2 && policies(standby).size() == 2; }));
  EXPECT_EQ(policies(standby)[1].yaml, next);
  ASSERT_TRUE(eventually([&] { return master.commands().size() == 3; }));
  EXPECT_EQ(master.commands()[1].kind, protocol::CommandKind::kPolicy) << "the policy before policy_changed";
  EXPECT_EQ(master.commands()[2].kind, protocol::CommandKind::kPolicyChanged);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(policies(master).size(), 2u);
  // Both acknowledged the policy; only the master's ack is the controller's.
  ASSERT_TRUE(eventually([&] { return c.types().size() >= 3; }));
  size_t acks = 0;
  for (const std::string& t : c.types()) acks += t == "ack";
  EXPECT_GE(acks, 2u);
  EXPECT_EQ(c.link().lines_ignored(), 0u) << "a standby's acks are not counted as ignored lines";
}

}  // namespace
}  // namespace railyard::controller::ha_test
