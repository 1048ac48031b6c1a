// railyardd's config: what a valid file gives, and that every kind of mistake
// is refused with the file, the line and what is wrong.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "controller/config.h"
#include "controller/token_file.h"

namespace railyard::controller {
namespace {

constexpr const char* kValid = R"(listen: {address: 127.0.0.1, port: 9000}
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
  - {name: dash, token: "viewer-token-0123456789"}
database: state/railyard.db
fabric:
  source: offline
  topology_file: fabric.topo
policy: {base_file: /etc/railyard/policy.yaml, output_file: out/policy.yaml}
limits: {max_body_bytes: 4096, reroutes_per_minute: 3, reroute_timeout_s: 20, mutation_nice: 4}
log_level: debug
)";

TEST(ControllerConfig, ReadsEveryKeyAndAnchorsRelativePaths) {
  auto cfg = parse_controller_config(kValid, "/etc/railyard/railyardd.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->listen_address, "127.0.0.1");
  EXPECT_EQ(cfg->listen_port, 9000);
  ASSERT_EQ(cfg->tokens.size(), 2u);
  EXPECT_EQ(cfg->tokens[0].role, Role::kOperator);
  EXPECT_EQ(cfg->tokens[1].role, Role::kViewer);  // the default role
  EXPECT_EQ(cfg->database, "/etc/railyard/state/railyard.db");
  EXPECT_EQ(cfg->fabric_source, FabricSource::kOffline);
  EXPECT_EQ(cfg->topology_file, "/etc/railyard/fabric.topo");
  EXPECT_EQ(cfg->policy_base_file, "/etc/railyard/policy.yaml");
  EXPECT_EQ(cfg->policy_output_file, "/etc/railyard/out/policy.yaml");
  EXPECT_EQ(cfg->max_body_bytes, 4096u);
  EXPECT_EQ(cfg->reroutes_per_minute, 3u);
  EXPECT_EQ(cfg->reroute_timeout_s, 20u);
  EXPECT_EQ(cfg->mutation_nice, 4u);
  EXPECT_EQ(cfg->log_level, "debug");
}

TEST(ControllerConfig, DefaultsToLoopback) {
  auto cfg = parse_controller_config("fabric: {source: live, plugin_socket: /run/ry.sock}\n", "c.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->listen_address, "127.0.0.1");
  EXPECT_EQ(cfg->fabric_source, FabricSource::kLive);
  EXPECT_TRUE(cfg->tokens.empty());
  EXPECT_EQ(cfg->mutation_nice, 10u);
}

TEST(ControllerConfig, ReadsTokenFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("ry-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ops.token") << "file-token-abcdefghijklmnop\n";
  std::filesystem::permissions(dir / "ops.token", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto cfg = parse_controller_config(
      "tokens: [{name: ops, role: operator, token_file: ops.token}]\nfabric: {source: offline, topology_file: f}\n",
      (dir / "c.yaml").string());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->tokens.at(0).token, "file-token-abcdefghijklmnop");
  std::filesystem::remove_all(dir);
}

TEST(ControllerConfig, ReadsThePluginTlsListener) {
  const auto dir = std::filesystem::temp_directory_path() / ("ry-config-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "plugin.token") << "plugin-token-abcdefghijklmnop\n";
  std::filesystem::permissions(dir / "plugin.token",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string source = (dir / "c.yaml").string();
  auto cfg = parse_controller_config(
      "fabric: {source: live, plugin_listen: 0.0.0.0:8641, plugin_tls_cert: tls.crt, plugin_tls_key: tls.key, "
      "plugin_token_file: plugin.token}\n",
      source);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->plugin_socket, "") << "TLS alone is enough for live";
  EXPECT_EQ(cfg->plugin_listen_host, "0.0.0.0");
  EXPECT_EQ(cfg->plugin_listen_port, 8641);
  EXPECT_EQ(cfg->plugin_tls_cert, (dir / "tls.crt").string());
  EXPECT_EQ(cfg->plugin_tls_key, (dir / "tls.key").string());
  EXPECT_EQ(cfg->plugin_token, "plugin-token-abcdefghijklmnop");
  auto v6 = parse_controller_config(
      "fabric: {source: live, plugin_socket: /run/p.sock, plugin_listen: '[::1]:9', plugin_tls_cert: c, "
      "plugin_tls_key: k, plugin_token_file: plugin.token}\n",
      source);
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  EXPECT_EQ(v6->plugin_listen_host, "::1");
  EXPECT_EQ(v6->plugin_listen_port, 9);

  const std::pair<std::string, std::string> bad[] = {
      {"fabric: {source: live, plugin_listen: 8641, plugin_tls_cert: c, plugin_tls_key: k, plugin_token_file: plugin.token}\n",
       "c.yaml:1: plugin_listen must be host:port or [IPv6]:port (got '8641')"},
      {"fabric: {source: live, plugin_listen: 'h:0', plugin_tls_cert: c, plugin_tls_key: k, plugin_token_file: plugin.token}\n",
       "plugin_listen must be host:port with a port 1..65535 (got 'h:0')"},
      {"fabric: {source: live, plugin_listen: 'h:1'}\n",
       "plugin_listen (TLS) needs plugin_tls_cert, plugin_tls_key and plugin_token_file"},
      {"fabric: {source: live, plugin_socket: /run/p.sock, plugin_tls_cert: c}\n",
       "plugin_tls_cert, plugin_tls_key and plugin_token_file go with plugin_listen"},
      {"fabric: {source: live, plugin_listen: 'h:1', plugin_tls_cert: c, plugin_tls_key: k, plugin_token_file: nope}\n",
       "plugin_token_file: cannot read the token file"},
  };
  for (const auto& [text, expected] : bad) {
    auto r = parse_controller_config(text, source);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << text << " -> " << r.error().message;
  }
  std::filesystem::remove_all(dir);
}

struct BadCase {
  const char* text;
  const char* expected;  // a piece of the message, with the line
};

TEST(ControllerConfig, RefusesMistakesWithFileAndLine) {
  const BadCase cases[] = {
      {"fabric: {source: offline, topology_file: f}\nlisten: {adress: 0.0.0.0}\n", "c.yaml:2: unknown key 'adress'"},
      {"fabric: {source: offline, topology_file: f}\nlisten: {port: 70000}\n",
       "c.yaml:2: 'listen.port': port 70000 is outside 0..65535"},
      {"fabric: {source: offline}\n", "c.yaml:1: fabric.source offline needs fabric.topology_file"},
      {"fabric: {source: live}\n", "fabric.source live needs fabric.plugin_socket"},
      {"fabric: {source: sideways, topology_file: f}\n",
       "c.yaml:1: 'fabric.source' must be live or offline, got a scalar 'sideways'"},
      {"listen: {port: 1}\n", "fabric is required"},
      {"fabric: {source: offline, topology_file: f}\ntokens:\n  - {name: a, role: admin, token: 0123456789abcdefXYZ}\n",
       "c.yaml:3: 'tokens[0].role' must be viewer or operator, got a scalar 'admin'"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: short}]\n", "shorter than 16"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: 0123456789abcdefXYZ}, {name: a, "
       "token: 0123456789abcdefXYZW}]\n",
       "token name 'a' is repeated"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: 0123456789abcdefXYZ}, {name: b, "
       "token: 0123456789abcdefXYZ}]\n",
       "used by another entry"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token_file: /nonexistent/t}]\n",
       "c.yaml:2: cannot read the token file '/nonexistent/t': No such file or directory"},
      {"fabric: {source: live, plugin_socket: /run/p.sock, plugin_socket_mode: \"0666\"}\n",
       "plugin_socket_mode must be \"0600\" or \"0660\""},
      {"fabric: {source: live, plugin_socket: /run/p.sock, plugin_socket_mode: \"0660\"}\n",
       "plugin_socket_mode 0660 needs plugin_socket_group"},
      {"fabric: {source: live, plugin_socket: /run/p.sock, plugin_socket_group: opensm}\n",
       "plugin_socket_group needs plugin_socket_mode \"0660\""},
      {"fabric: {source: live, plugin_socket: /run/p.sock, plugin_socket_mode: \"0660\", plugin_socket_group: \"\"}\n",
       "plugin_socket_group must not be empty"},
      {"fabric: {source: offline, topology_file: f}\nlimits: {reroutes_per_minute: 0}\n",
       "c.yaml:2: 'limits.reroutes_per_minute': limit 0 is outside 1..600"},
      {"fabric: {source: offline, topology_file: f}\nlimits: {mutation_nice: 20}\n",
       "c.yaml:2: 'limits.mutation_nice': limit 20 is outside 0..19"},
      {"fabric: {source: offline, topology_file: f}\nlog_level: chatty\n",
       "c.yaml:2: 'log_level' must be trace, debug, info, warn or error, got a scalar 'chatty'"},
      {"fabric: [1, 2]\n", "c.yaml:1: 'fabric' must be a mapping, got a list"},
      {"fabric: {source: offline, topology_file: f}\n---\nfabric: {}\n", "expected one YAML document"},
      {"fabric: {source: offline, topology_file: f\n", "invalid YAML"},
      {"- just\n- a list\n", "c.yaml:1: the config must be a mapping, got a list"},
  };
  for (const BadCase& c : cases) {
    auto cfg = parse_controller_config(c.text, "c.yaml");
    ASSERT_FALSE(cfg.ok()) << c.text;
    EXPECT_NE(cfg.error().message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in: " << cfg.error().message;
    EXPECT_EQ(cfg.error().message.rfind("c.yaml", 0), 0u) << cfg.error().message;
  }
}

// A repeated key used to be read as its first occurrence, the second one
// silently doing nothing: now refused at any depth.
TEST(ControllerConfig, RefusesDuplicateKeysWithFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"fabric: {source: offline, topology_file: f}\nlog_level: info\nlog_level: debug\n",
       "c.yaml:3: duplicate key 'log_level' at top level"},
      {"fabric:\n  source: offline\n  topology_file: f\n  source: live\n",
       "c.yaml:4: duplicate key 'source' under 'fabric'"},
      {"fabric: {source: offline, topology_file: f}\ntokens:\n  - {name: a, token: 0123456789abcdefXYZ, name: b}\n",
       "c.yaml:3: duplicate key 'name' under 'tokens[0]'"},
  };
  for (const auto& [text, expected] : cases) {
    auto cfg = parse_controller_config(text, "c.yaml");
    ASSERT_FALSE(cfg.ok()) << text;
    EXPECT_EQ(cfg.error().message, expected);
  }
}

// Numbers are plain integers, as in the policy: a quoted one is a string.
TEST(ControllerConfig, RefusesQuotedNumbers) {
  auto cfg =
      parse_controller_config("fabric: {source: offline, topology_file: f}\nlisten: {port: \"8640\"}\n", "c.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message, "c.yaml:2: 'listen.port' must be an integer, got a scalar '8640'");
}

TEST(ControllerConfig, ReadsThePluginSocketModeAndGroup) {
  auto cfg = parse_controller_config(
      "fabric: {source: live, plugin_socket: p.sock, plugin_socket_mode: \"0660\", plugin_socket_group: opensm}\n",
      "/etc/railyard/c.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->plugin_socket, "/etc/railyard/p.sock");
  EXPECT_EQ(cfg->plugin_socket_mode, 0660u);
  EXPECT_EQ(cfg->plugin_socket_group, "opensm");
  auto plain = parse_controller_config("fabric: {source: live, plugin_socket: p.sock}\n", "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->plugin_socket_mode, 0600u);
  EXPECT_TRUE(plain->plugin_socket_group.empty());
}

// Token files: railyardd (the config load) and railyardctl (read_token_file,
// the function its --token-file uses) read every file the same way.
class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-token-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content, mode_t mode = 0600) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  // What railyardd's config makes of the file (the token, or the error).
  Result<ControllerConfig> daemon_reads(const std::string& path) {
    return parse_controller_config("tokens: [{name: ops, role: operator, token_file: " + path +
                                       "}]\nfabric: {source: offline, topology_file: f}\n",
                                   (dir_ / "c.yaml").string());
  }
  std::filesystem::path dir_;
};

constexpr const char* kToken = "token-0123456789abcdefXYZ";

TEST_F(TokenFileTest, BlanksAroundTheTokenAreIgnoredByBoth) {
  const std::string token = kToken;
  const std::pair<const char*, std::string> cases[] = {
      {"plain", token},
      {"newline", token + "\n"},
      {"leading-blanks", "   " + token + "\n"},
      {"leading-tab", "\t" + token},
      {"trailing-tab", token + "\t\n"},
      {"trailing-blanks", token + "  \n"},
      {"crlf", token + "\r\n"},
      {"blank-lines-around", "\n\n  " + token + "\r\n\n \n"},
  };
  for (const auto& [name, content] : cases) {
    const std::string path = write(name, content);
    Result<std::string> cli = read_token_file(path);
    ASSERT_TRUE(cli.ok()) << name << ": " << cli.error().message;
    EXPECT_EQ(*cli, token) << name;
    Result<ControllerConfig> daemon = daemon_reads(path);
    ASSERT_TRUE(daemon.ok()) << name << ": " << daemon.error().message;
    EXPECT_EQ(daemon->tokens.at(0).token, token) << name;
  }
}

TEST_F(TokenFileTest, BadFilesAreRefusedByBothWithTheSameMessage) {
  const std::string token = kToken;
  struct Case {
    const char* name;
    std::string content;
    mode_t mode;
    std::string expected;  // a piece of the message; PATH stands for the file
  };
  const Case cases[] = {
      {"inner-space", "token-0123 456789abcdefXYZ\n", 0600, "token file 'PATH': the token contains whitespace"},
      {"inner-tab", "token-0123\t456789abcdefXYZ\n", 0600, "the token contains whitespace"},
      {"two-lines", token + "\n" + token + "x\n", 0600, "token file 'PATH' holds more than one line"},
      {"two-lines-crlf", token + "\r\nsecond-line-0123456789\r\n", 0600, "holds more than one line"},
      {"empty", "", 0600, "token file 'PATH' is empty"},
      {"only-blanks", " \t\r\n\n", 0600, "token file 'PATH' is empty"},
      {"control", "token-0123\x01" "456789abcdefXYZ\n", 0600, "the token contains a control character"},
      {"mode-0644", token + "\n", 0644, "token file 'PATH' can be read or written by group or others (mode 0644): "
                                        "run chmod 600 PATH"},
      {"mode-0640", token + "\n", 0640, "(mode 0640): run chmod 600 PATH"},
      {"mode-0602", token + "\n", 0602, "(mode 0602): run chmod 600 PATH"},
  };
  for (const Case& c : cases) {
    const std::string path = write(c.name, c.content, c.mode);
    std::string expected = c.expected;
    for (size_t at; (at = expected.find("PATH")) != std::string::npos;) expected.replace(at, 4, path);
    Result<std::string> cli = read_token_file(path);
    ASSERT_FALSE(cli.ok()) << c.name << " was accepted: '" << *cli << "'";
    EXPECT_NE(cli.error().message.find(expected), std::string::npos)
        << c.name << ": expected '" << expected << "' in: " << cli.error().message;
    Result<ControllerConfig> daemon = daemon_reads(path);
    ASSERT_FALSE(daemon.ok()) << c.name << " was accepted by the config: '" << daemon->tokens.at(0).token << "'";
    // The config names its file and line, then says what the reader said.
    EXPECT_NE(daemon.error().message.find("c.yaml:1: " + cli.error().message), std::string::npos)
        << c.name << ": " << daemon.error().message;
  }
}

TEST_F(TokenFileTest, WhatIsNotARegularFileIsRefused) {
  Result<std::string> dir = read_token_file(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is not a regular file"), std::string::npos) << dir.error().message;
  Result<std::string> missing = read_token_file((dir_ / "missing").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read the token file"), std::string::npos);
  const std::string big = write("big", std::string(kMaxTokenFileBytes + 1, 'a'));
  Result<std::string> large = read_token_file(big);
  ASSERT_FALSE(large.ok());
  EXPECT_NE(large.error().message.find("is larger than"), std::string::npos) << large.error().message;
}

TEST(ControllerConfig, MissingFileIsAnError) {
  auto cfg = load_controller_config("/nonexistent/railyardd.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.error().message.find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace railyard::controller

namespace railyard::controller {
namespace {

TEST(ControllerConfig, ReadsRetention) {
  auto defaults = parse_controller_config("fabric: {source: offline, topology_file: f}\n", "c.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(defaults->events_max_age_days, 90u);
  EXPECT_EQ(defaults->audit_max_count, 1'000'000u);
  auto cfg = parse_controller_config(
      "fabric: {source: offline, topology_file: f}\n"
      "retention: {events_max_age_days: 7, events_max_count: 500, audit_max_age_days: 0, audit_max_count: 20}\n",
      "c.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->events_max_age_days, 7u);
  EXPECT_EQ(cfg->events_max_count, 500u);
  EXPECT_EQ(cfg->audit_max_age_days, 0u);
  EXPECT_EQ(cfg->audit_max_count, 20u);
  auto typo = parse_controller_config(
      "fabric: {source: offline, topology_file: f}\nretention: {events_max_age: 7}\n", "c.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("c.yaml:2: unknown key 'events_max_age'"), std::string::npos)
      << typo.error().message;
  auto negative = parse_controller_config(
      "fabric: {source: offline, topology_file: f}\nretention: {audit_max_count: -1}\n", "c.yaml");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("c.yaml:2:"), std::string::npos) << negative.error().message;
}

}  // namespace
}  // namespace railyard::controller
