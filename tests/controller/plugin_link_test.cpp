// The plugin socket as a trust boundary, over a real Unix socket: a PluginLink
// on an io_context thread, clients with plain socket(2) calls, and (for what
// lines do) a live-mode Controller with a real SQLite file.
#include <gtest/gtest.h>

#include <grp.h>
#include <pwd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "controller/controller.h"
#include "controller/plugin_link.h"
#include "api/protocol/event_codec.h"

namespace railyard::controller {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Waits up to 10 s for `done`; false on timeout.
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A bare client: what the plugin (or anyone else) does with the socket.
class Client {
 public:
  explicit Client(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return fd_ >= 0; }
  // Writes all of `data` (errors once the other end closed are ignored).
  void send(std::string_view data) const {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  // The next line the link sent, within `timeout`; the link's `received`
  // confirmations are passed over unless `confirmations`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 5000ms, bool confirmations = false) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (size_t nl = pending_.find('\n'); nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (!confirmations && line.find("\"type\":\"received\"") != std::string::npos) continue;
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::nullopt;
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  // True once the link has closed this connection (EOF or reset) within `timeout`.
  bool closed_by_peer(std::chrono::milliseconds timeout = 10000ms) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::string pending_;
};

// A socket file at `path` whose listener is gone (a railyardd killed -9).
void make_stale_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(fd, 1), 0);
  ::close(fd);
}

// One PluginLink on its own io_context thread, recording what it reports.
class Harness {
 public:
  explicit Harness(PluginSocketOptions options, PluginLink::LineHandler on_line = {},
                   PluginLink::ConnectionHandler on_connection = {}) {
    link_ = std::make_unique<PluginLink>(
        io_, std::move(options),
        // Recorded once handled: a test that saw N lines sees their effects.
        [this, on_line](const std::string& line) {
          if (on_line) on_line(line);
          std::lock_guard lock(mu_);
          lines_.push_back(line);
        },
        [this, on_connection](bool connected) {
          if (on_connection) on_connection(connected);
          std::lock_guard lock(mu_);
          connections_.push_back(connected);
        },
        [this](PluginLink::LogLevel level, const std::string& text) {
          std::lock_guard lock(mu_);
          logs_.push_back((level == PluginLink::LogLevel::kWarn ? "warn: " : "") + text);
        });
  }
  ~Harness() {
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
  std::vector<std::string> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::vector<bool> connections() {
    std::lock_guard lock(mu_);
    return connections_;
  }
  std::string logs() {
    std::lock_guard lock(mu_);
    std::string all;
    for (const std::string& l : logs_) all += l + "\n";
    return all;
  }

 private:
  asio::io_context io_;
  std::unique_ptr<PluginLink> link_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<bool> connections_;
  std::vector<std::string> logs_;
};

class PluginLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: a socket path must fit in 108 bytes.
    static int counter = 0;
    dir_ = fs::temp_directory_path() / ("ry-pl-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "p.sock").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  PluginSocketOptions options() const { return PluginSocketOptions{path_}; }

  fs::path dir_;
  std::string path_;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST_F(PluginLinkTest, SocketIsOwnerOnlyEvenUnderUmask000) {
  const mode_t before = ::umask(0);
  Harness h(options());
  Status s = h.start();
  const mode_t after_start = ::umask(before);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(mode_of(path_), 0600u);
  EXPECT_EQ(after_start, 0u) << "start() leaves the process's umask as it was";
}

TEST_F(PluginLinkTest, GroupModeGivesTheSocketToTheGroup) {
  // The daemon's own group: a group it may always chown to.
  const group* own = ::getgrgid(::getegid());
  ASSERT_NE(own, nullptr);
  PluginSocketOptions o = options();
  o.mode = 0660;
  o.group = own->gr_name;
  const mode_t before = ::umask(0);
  Harness h(o);
  Status s = h.start();
  ::umask(before);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(mode_of(path_), 0660u);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, own->gr_gid);
}

TEST_F(PluginLinkTest, UnknownGroupIsAStartError) {
  PluginSocketOptions o = options();
  o.mode = 0660;
  o.group = "no-such-group-railyard";
  Harness h(o);
  Status s = h.start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("group 'no-such-group-railyard' does not exist"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(PluginLinkTest, SecondLinkOnTheSamePathIsRefusedAndTheFirstKeepsWorking) {
  Harness first(options());
  ASSERT_TRUE(first.start().ok());
  const ino_t inode = inode_of(path_);
  {
    Harness second(options());
    Status s = second.start();
    ASSERT_FALSE(s.ok()) << "a second link took over " << path_;
    EXPECT_NE(s.error().message.find("another railyardd is listening on " + path_), std::string::npos)
        << s.error().message;
  }  // the refused link is gone: it must not have removed the first one's socket
  ASSERT_TRUE(fs::exists(path_));
  EXPECT_EQ(inode_of(path_), inode);
  Client c(path_);
  ASSERT_TRUE(c.connected());
  c.send("{\"type\":\"hello\",\"seq\":1}\n");
  ASSERT_TRUE(eventually([&] { return first.lines().size() == 1; }));
  EXPECT_EQ(first.lines()[0], "{\"type\":\"hello\",\"seq\":1}");
}

TEST_F(PluginLinkTest, LiveSocketOfAnotherProgramIsRefused) {
  // A listener that holds no lock (another program, an older railyardd): the
  // connect probe finds it alive.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  const ino_t inode = inode_of(path_);
  {
    Harness h(options());
    Status s = h.start();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("another railyardd is listening on " + path_), std::string::npos)
        << s.error().message;
  }
  EXPECT_EQ(inode_of(path_), inode);
  ::close(fd);
}

TEST_F(PluginLinkTest, WhatIsNotASocketIsRefusedAndLeftUntouched) {
  {
    std::ofstream(path_) << "precious\n";
    Harness h(options());
    Status s = h.start();
    ASSERT_FALSE(s.ok()) << "a regular file at the path was replaced";
    EXPECT_NE(s.error().message.find(path_ + " exists and is a regular file, not a socket"), std::string::npos)
        << s.error().message;
  }
  EXPECT_EQ(read_file(path_), "precious\n");
  fs::remove(path_);

  fs::create_directory(path_);
  {
    Harness h(options());
    Status s = h.start();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("is a directory"), std::string::npos) << s.error().message;
  }
  EXPECT_TRUE(fs::is_directory(path_));
  fs::remove(path_);

  std::ofstream(dir_ / "target") << "target\n";
  fs::create_symlink(dir_ / "target", path_);
  {
    Harness h(options());
    Status s = h.start();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("is a symbolic link"), std::string::npos) << s.error().message;
  }
  EXPECT_TRUE(fs::is_symlink(path_));
  EXPECT_EQ(read_file(dir_ / "target"), "target\n");
}

TEST_F(PluginLinkTest, StaleSocketIsReplaced) {
  make_stale_socket(path_);
  Harness h(options());
  Status s = h.start();
  ASSERT_TRUE(s.ok()) << s.error().message;
  Client c(path_);
  ASSERT_TRUE(c.connected());
  c.send("{\"type\":\"hello\"}\n");
  EXPECT_TRUE(eventually([&] { return h.lines().size() == 1; }));
}

TEST_F(PluginLinkTest, StopRemovesOnlyTheSocketItCreated) {
  {
    Harness h(options());
    ASSERT_TRUE(h.start().ok());
    // Someone put something else at the path meanwhile.
    fs::remove(path_);
    std::ofstream(path_) << "not yours\n";
  }
  EXPECT_EQ(read_file(path_), "not yours\n");
  fs::remove(path_);
  {
    Harness h(options());
    ASSERT_TRUE(h.start().ok());
  }
  EXPECT_FALSE(fs::exists(path_)) << "a link removes its own socket when it stops";
}

TEST_F(PluginLinkTest, APeerThatSaysNothingEvictsNobody) {
  Harness h(options());
  ASSERT_TRUE(h.start().ok());
  Client plugin(path_);
  plugin.send("{\"type\":\"hello\"}\n");
  ASSERT_TRUE(eventually([&] { return h.lines().size() == 1; }));
  Client silent(path_);  // e.g. another daemon's liveness probe
  ASSERT_TRUE(silent.connected());
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(h.link().send("{\"type\":\"reroute\",\"id\":\"r1\"}"));
  EXPECT_EQ(plugin.read_line(), "{\"type\":\"reroute\",\"id\":\"r1\"}");
  EXPECT_EQ(h.connections(), std::vector<bool>{true});

  // A peer that does speak takes over (a restarted plugin).
  Client next(path_);
  next.send("{\"type\":\"hello\"}\n");
  ASSERT_TRUE(eventually([&] { return h.lines().size() == 2; }));
  ASSERT_TRUE(h.link().send("{\"type\":\"reroute\",\"id\":\"r2\"}"));
  EXPECT_EQ(next.read_line(), "{\"type\":\"reroute\",\"id\":\"r2\"}");
  EXPECT_TRUE(plugin.closed_by_peer());
}

// Each line handled is confirmed: `received` with the count so far (the
// plugin sends the rest again elsewhere). A member that is not the leader
// confirms nothing.
TEST_F(PluginLinkTest, LinesAreConfirmedOnceHandledAndOnlyByTheLeader) {
  Harness h(options());
  ASSERT_TRUE(h.start().ok());
  Client plugin(path_);
  plugin.send("{\"type\":\"hello\",\"seq\":1}\n{\"type\":\"subnet_up\",\"seq\":2}\n");
  plugin.send("{\"type\":\"subnet_up\",\"seq\":3}\n");
  uint64_t confirmed = 0;
  while (confirmed < 3) {
    std::optional<std::string> line = plugin.read_line(5000ms, /*confirmations=*/true);
    ASSERT_TRUE(line) << "confirmed " << confirmed << " of 3 lines";
    const nlohmann::json j = nlohmann::json::parse(*line);
    ASSERT_EQ(j["type"], "received") << *line;
    EXPECT_GT(j["lines"].get<uint64_t>(), confirmed) << "counts only grow";
    confirmed = j["lines"].get<uint64_t>();
  }
  EXPECT_EQ(confirmed, 3u);
  EXPECT_EQ(h.lines().size(), 3u) << "handled before confirmed";
  EXPECT_FALSE(plugin.read_line(200ms, true)) << "nothing more to confirm";

  // This member loses the lead (its lease): what comes now is not confirmed.
  h.link().set_leader_hook([] { return std::optional<std::string>("unix:/elsewhere.sock"); });
  plugin.send("{\"type\":\"subnet_up\",\"seq\":4}\n");
  EXPECT_FALSE(plugin.read_line(300ms, true)) << "a member that does not lead confirms nothing";
}

TEST_F(PluginLinkTest, OverLongLineClosesTheConnection) {
  PluginSocketOptions o = options();
  o.max_line_bytes = 4096;
  Harness h(o);
  ASSERT_TRUE(h.start().ok());
  {
    Client c(path_);
    c.send("{\"type\":\"hello\"}\n");
    ASSERT_TRUE(eventually([&] { return h.lines().size() == 1; }));
    c.send(std::string(4096, 'x') + "\n");  // exactly the limit: fine
    ASSERT_TRUE(eventually([&] { return h.lines().size() == 2; }));
    c.send(std::string(10000, 'y'));  // no newline within the limit
    EXPECT_TRUE(c.closed_by_peer());
  }
  EXPECT_TRUE(eventually([&] { return h.connections() == std::vector<bool>{true, false}; }));
  EXPECT_NE(h.logs().find("warn: " + path_ + ": pid " + std::to_string(::getpid())), std::string::npos) << h.logs();
  EXPECT_NE(h.logs().find("sent a line longer than 4096 bytes; closing its connection"), std::string::npos)
      << h.logs();
  // The link goes on serving.
  Client again(path_);
  again.send("{\"type\":\"hello\"}\n");
  EXPECT_TRUE(eventually([&] { return h.lines().size() == 3; }));
  EXPECT_EQ(h.lines()[1].size(), 4096u);
}

// A peer whose uid is neither 0, nor the daemon's, nor in the group: runs in
// a child process as `uid`/`gid` (needs root to switch).
bool foreign_peer_was_served(const std::string& path, uid_t uid, gid_t gid) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(3);
    Client c(path);
    if (!c.connected()) ::_exit(4);
    c.send("{\"type\":\"ucast_routing_done\",\"requests\":[\"forged\"]}\n");
    // A refused peer is closed at once; an allowed one is kept.
    ::_exit(c.closed_by_peer(2000ms) ? 1 : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 3) << "the child could not switch to uid " << uid;
  EXPECT_NE(WEXITSTATUS(status), 4) << "the child could not connect";
  return WEXITSTATUS(status) == 0;
}

TEST_F(PluginLinkTest, PeersOtherThanRootTheDaemonAndTheGroupAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  {
    Harness h(options());
    ASSERT_TRUE(h.start().ok());
    // As if the socket had been left world-writable (the umask-000 case):
    // the credentials still keep the stranger out.
    ASSERT_EQ(::chmod(path_.c_str(), 0666), 0);
    ::chmod(dir_.c_str(), 0755);
    EXPECT_FALSE(foreign_peer_was_served(path_, nobody->pw_uid, nobody->pw_gid));
    EXPECT_TRUE(h.lines().empty()) << h.lines()[0];
    EXPECT_EQ(h.link().peers_refused(), 1u);
    EXPECT_NE(h.logs().find("warn: " + path_ + ": refused a connection from pid "), std::string::npos) << h.logs();
    EXPECT_NE(h.logs().find("uid " + std::to_string(nobody->pw_uid)), std::string::npos) << h.logs();
    EXPECT_TRUE(h.connections().empty());
  }
  {
    // With the group configured, a member of it is served.
    const group* g = ::getgrgid(nobody->pw_gid);
    ASSERT_NE(g, nullptr);
    PluginSocketOptions o = options();
    o.mode = 0660;
    o.group = g->gr_name;
    Harness h(o);
    ASSERT_TRUE(h.start().ok());
    ::chmod(dir_.c_str(), 0755);
    EXPECT_TRUE(foreign_peer_was_served(path_, nobody->pw_uid, nobody->pw_gid));
    EXPECT_TRUE(eventually([&] { return h.lines().size() == 1; }));
    EXPECT_EQ(h.link().peers_refused(), 0u);
  }
}

// ---- what lines do to a live-mode Controller -----------------------------------

class PluginLinesTest : public PluginLinkTest {
 protected:
  void SetUp() override {
    PluginLinkTest::SetUp();
    ControllerConfig cfg;
    cfg.database = (dir_ / "state.db").string();
    cfg.fabric_source = FabricSource::kLive;
    cfg.plugin_socket = path_;
    cfg.policy_output_file = (dir_ / "policy.yaml").string();
    auto store = Store::open(cfg.database);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ctl_ = std::make_unique<Controller>(cfg, std::move(store).value());
    Status s = ctl_->start();
    ASSERT_TRUE(s.ok()) << s.error().message;
    harness_ = std::make_unique<Harness>(
        options(), [this](const std::string& line) { ctl_->on_plugin_line(line); },
        [this](bool connected) { ctl_->on_plugin_connection(connected); });
    ASSERT_TRUE(harness_->start().ok());
  }
  void TearDown() override {
    harness_.reset();
    ctl_.reset();
    PluginLinkTest::TearDown();
  }
  // Sends lines and waits until the Controller has taken them all.
  void feed(Client& c, const std::vector<std::string>& lines) {
    const size_t before = harness_->lines().size();
    for (const std::string& l : lines) c.send(l + "\n");
    ASSERT_TRUE(eventually([&] { return harness_->lines().size() == before + lines.size(); }));
  }
  std::vector<EventRecord> events_of_type(const std::string& type) {
    std::vector<EventRecord> out;
    for (EventRecord& e : ctl_->store().events_since(0, 1000)) {
      if (e.type == type) out.push_back(std::move(e));
    }
    return out;
  }

  std::unique_ptr<Controller> ctl_;
  std::unique_ptr<Harness> harness_;
};

// Complete lines, as the plugin writes them (api/protocol/event_codec.h).
std::string line_of(uint64_t seq, protocol::EventBody body, double time = 1.7e9) {
  return protocol::encode_event({seq, time, std::move(body)});
}
std::string hello(uint64_t seq, uint64_t dropped) {
  return line_of(seq, protocol::HelloEvent{"osmrailyard", "0.1.0", 42, "OpenSM 3.3.23", dropped});
}
std::string trap(uint64_t seq, double time = 1.7e9) { return line_of(seq, protocol::TrapEvent{64, 1, true, 2, 0}, time); }
// A decodable line with one field replaced.
std::string with_field(const std::string& line, const char* key, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(line);
  j[key] = value;
  return j.dump();
}

TEST_F(PluginLinesTest, DeeplyNestedLineIsRejectedAndTheControllerGoesOn) {
  Client c(path_);
  const std::string deep = "{\"type\":\"hello\",\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  feed(c, {deep, hello(1, 0), line_of(2, protocol::TrapEvent{128, 1, true, 2, 1})});
  const std::vector<EventRecord> rejected = events_of_type("plugin_line_rejected");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].body.find("nested deeper than 32 levels"), std::string::npos) << rejected[0].body;
  EXPECT_EQ(events_of_type("hello").size(), 1u);
  EXPECT_EQ(events_of_type("trap").size(), 1u);
  EXPECT_EQ(ctl_->counters().plugin_events, 2u);
  EXPECT_TRUE(ctl_->plugin_connected());
}

// A line of a known type that does not decode does nothing but a rejection
// naming the field: a malformed routing-done must not apply or fail requests.
TEST_F(PluginLinesTest, KnownEventsWithBadFieldsAreRejectedNamingTheField) {
  Client c(path_);
  protocol::RoutingPassEvent pass;
  pass.pass = 2;
  pass.requests = {"x"};
  const std::string bad_pass = with_field(line_of(2, pass), "status", 5);
  const std::string bad_done =
      with_field(line_of(3, protocol::UcastRoutingDoneEvent{protocol::RoutingReason::kReroute, {"y"}, true}),
                 "engine_ok", "yes");
  feed(c, {hello(1, 0), R"([1,2,3])", R"({"type":7,"seq":1,"time":1})", bad_pass, bad_done, trap(4, 1e300)});
  const std::vector<EventRecord> rejected = events_of_type("plugin_line_rejected");
  ASSERT_EQ(rejected.size(), 4u);
  EXPECT_NE(rejected[0].body.find("not a JSON object"), std::string::npos) << rejected[0].body;
  EXPECT_NE(rejected[1].body.find("type must be a string"), std::string::npos) << rejected[1].body;
  EXPECT_NE(rejected[2].body.find("routing_pass: status must be a string"), std::string::npos) << rejected[2].body;
  EXPECT_NE(rejected[3].body.find("ucast_routing_done: engine_ok must be true or false"), std::string::npos)
      << rejected[3].body;
  EXPECT_TRUE(events_of_type("routing_pass").empty());
  EXPECT_TRUE(events_of_type("ucast_routing_done").empty());
  EXPECT_EQ(ctl_->counters().plugin_events, 2u) << "the hello and the trap";
  EXPECT_EQ(ctl_->counters().plugin_events_dropped, 0u) << "the rejected lines' seq 2 and 3 were followed";
  const std::vector<EventRecord> traps = events_of_type("trap");
  ASSERT_EQ(traps.size(), 1u);
  EXPECT_LT(traps[0].time, unix_now() + 3600) << "a time from the far future is not believed";
}

TEST_F(PluginLinesTest, ForgedSeqJumpsDoNotInflateTheDropCount) {
  Client c(path_);
  feed(c, {hello(1, 0),
           trap(2),
           trap(18446744073709551000u),  // jumps absurdly
           trap(3),                      // goes backwards
           trap(5),                      // one event dropped: believed
           hello(6, 18000000000000000000u)});  // not plausible either
  EXPECT_EQ(ctl_->counters().plugin_events_dropped, 1u);
  const std::vector<EventRecord> anomalies = events_of_type("plugin_seq_anomaly");
  ASSERT_EQ(anomalies.size(), 3u);
  EXPECT_NE(anomalies[0].body.find("seq jumped from 2 to 18446744073709551000"), std::string::npos)
      << anomalies[0].body;
  EXPECT_NE(anomalies[1].body.find("back to 3"), std::string::npos) << anomalies[1].body;
  EXPECT_NE(anomalies[2].body.find("hello.dropped 18000000000000000000 is not below its seq 6"), std::string::npos)
      << anomalies[2].body;
}

TEST_F(PluginLinesTest, DropsAreCountedPerConnectionAndTheFabricLineIsNotAGap) {
  {
    Client c(path_);
    feed(c, {hello(4, 3),  // 3 dropped before this connection
             R"({"type":"fabric","seq":5,"time":1.7e9,"pass":1,"topology":"not a topology"})",
             trap(6),      // follows the fabric: no gap
             trap(9)});    // 2 dropped
    EXPECT_EQ(ctl_->counters().plugin_events_dropped, 5u);
    const std::vector<EventRecord> rejected = events_of_type("snapshot_rejected");
    ASSERT_EQ(rejected.size(), 1u);
    EXPECT_NE(rejected[0].body.find("fabric: topology does not read"), std::string::npos) << rejected[0].body;
  }
  ASSERT_TRUE(eventually([&] { return !ctl_->plugin_connected(); }));
  // A restarted plugin numbers from 1 again: not a seq going backwards.
  Client c(path_);
  feed(c, {trap(1), trap(2)});
  EXPECT_EQ(ctl_->counters().plugin_events_dropped, 5u);
  EXPECT_TRUE(events_of_type("plugin_seq_anomaly").empty());
}

}  // namespace
}  // namespace railyard::controller
