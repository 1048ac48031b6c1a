// railyardd's config: what a valid file gives, and that every kind of mistake
// is refused with the file, the line and what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "controller/config.h"

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
limits: {max_body_bytes: 4096, reroutes_per_minute: 3, reroute_timeout_s: 20}
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
  EXPECT_EQ(cfg->log_level, "debug");
}

TEST(ControllerConfig, DefaultsToLoopback) {
  auto cfg = parse_controller_config("fabric: {source: live, plugin_socket: /run/ry.sock}\n", "c.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->listen_address, "127.0.0.1");
  EXPECT_EQ(cfg->fabric_source, FabricSource::kLive);
  EXPECT_TRUE(cfg->tokens.empty());
}

TEST(ControllerConfig, ReadsTokenFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("ry-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ops.token") << "file-token-abcdefghijklmnop\n";
  auto cfg = parse_controller_config(
      "tokens: [{name: ops, role: operator, token_file: ops.token}]\nfabric: {source: offline, topology_file: f}\n",
      (dir / "c.yaml").string());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->tokens.at(0).token, "file-token-abcdefghijklmnop");
  std::filesystem::remove_all(dir);
}

struct BadCase {
  const char* text;
  const char* expected;  // a piece of the message, with the line
};

TEST(ControllerConfig, RefusesMistakesWithFileAndLine) {
  const BadCase cases[] = {
      {"fabric: {source: offline, topology_file: f}\nlisten: {adress: 0.0.0.0}\n", "c.yaml: line 2: unknown key 'adress'"},
      {"fabric: {source: offline, topology_file: f}\nlisten: {port: 70000}\n", "line 2: listen.port must be an integer in 0..65535"},
      {"fabric: {source: offline}\n", "line 1: fabric.source offline needs fabric.topology_file"},
      {"fabric: {source: live}\n", "fabric.source live needs fabric.plugin_socket"},
      {"fabric: {source: sideways, topology_file: f}\n", "fabric.source must be live or offline"},
      {"listen: {port: 1}\n", "fabric is required"},
      {"fabric: {source: offline, topology_file: f}\ntokens:\n  - {name: a, role: admin, token: 0123456789abcdefXYZ}\n",
       "line 3: role must be viewer or operator"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: short}]\n", "shorter than 16"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: 0123456789abcdefXYZ}, {name: a, "
       "token: 0123456789abcdefXYZW}]\n",
       "token name 'a' is repeated"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token: 0123456789abcdefXYZ}, {name: b, "
       "token: 0123456789abcdefXYZ}]\n",
       "used by another entry"},
      {"fabric: {source: offline, topology_file: f}\ntokens: [{name: a, token_file: /nonexistent/t}]\n",
       "cannot read token_file"},
      {"fabric: {source: offline, topology_file: f}\nlimits: {reroutes_per_minute: 0}\n", "reroutes_per_minute must be"},
      {"fabric: {source: offline, topology_file: f}\nlog_level: chatty\n", "log_level must be"},
      {"fabric: [1, 2]\n", "fabric must be a mapping"},
      {"fabric: {source: offline, topology_file: f}\n---\nfabric: {}\n", "expected one YAML document"},
      {"fabric: {source: offline, topology_file: f\n", "invalid YAML"},
      {"- just\n- a list\n", "the config must be a mapping"},
  };
  for (const BadCase& c : cases) {
    auto cfg = parse_controller_config(c.text, "c.yaml");
    ASSERT_FALSE(cfg.ok()) << c.text;
    EXPECT_NE(cfg.error().message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in: " << cfg.error().message;
    EXPECT_EQ(cfg.error().message.rfind("c.yaml", 0), 0u) << cfg.error().message;
  }
}

TEST(ControllerConfig, MissingFileIsAnError) {
  auto cfg = load_controller_config("/nonexistent/railyardd.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.error().message.find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace railyard::controller
