#include "sm_plugin/plugin_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace railyard::sm_plugin {
namespace {

TEST(PluginConfig, EmptyTextGivesDefaults) {
  auto c = parse_plugin_config("", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->policy_file, "");
  EXPECT_EQ(c->log_level, LogLevel::kInfo);
}

TEST(PluginConfig, ReadsKeysAndAnchorsRelativePolicyAtTheConfigFolder) {
  auto c = parse_plugin_config("policy_file: policy.yaml\nlog_level: verbose\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->policy_file, "/etc/railyard/policy.yaml");
  EXPECT_EQ(c->log_level, LogLevel::kVerbose);

  auto abs = parse_plugin_config("policy_file: /srv/p.yaml\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(abs->policy_file, "/srv/p.yaml");
}

TEST(PluginConfig, UnknownKeyIsNamedWithItsLine) {
  auto c = parse_plugin_config("log_level: info\npolicy: x.yaml\n", "plugin.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "plugin.yaml:2: unknown key 'policy' at top level (expected policy_file, log_level, hop_matrices, heap, "
            "controller_socket, fast_path, port_probe, controllers, controller_ca, controller_token_file, "
            "policy_from_controller, ca_first_blocks)");
}

// A repeated key used to let the last one win silently: now refused.
TEST(PluginConfig, DuplicateKeyIsRefusedWithFileAndLine) {
  auto c = parse_plugin_config("log_level: info\nfast_path: push\nlog_level: debug\n", "plugin.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "plugin.yaml:3: duplicate key 'log_level' at top level");
}

TEST(PluginConfig, FastPathChoice) {
  auto def = parse_plugin_config("", "plugin.yaml");
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def->fast_path) << "commands are pushed by default";
  auto osm = parse_plugin_config("fast_path: opensm\n", "plugin.yaml");
  ASSERT_TRUE(osm.ok());
  EXPECT_FALSE(osm->fast_path);
  auto bad = parse_plugin_config("log_level: info\nfast_path: yes\n", "plugin.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plugin.yaml:2: 'fast_path' must be push or opensm, got a scalar 'yes'");
}

TEST(PluginConfig, CaFirstBlocks) {
  auto def = parse_plugin_config("", "plugin.yaml");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->ca_first_blocks, 16384u);
  auto zero = parse_plugin_config("ca_first_blocks: 0\n", "plugin.yaml");
  ASSERT_TRUE(zero.ok()) << zero.error().message;
  EXPECT_EQ(zero->ca_first_blocks, 0u);
  auto bad = parse_plugin_config("log_level: info\nca_first_blocks: -3\n", "plugin.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("plugin.yaml:2:"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("ca_first_blocks"), std::string::npos) << bad.error().message;
}

TEST(PluginConfig, HeapChoice) {
  auto def = parse_plugin_config("", "plugin.yaml");
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def->keep_heap) << "freed memory is kept by default";
  auto release = parse_plugin_config("heap: release\n", "plugin.yaml");
  ASSERT_TRUE(release.ok());
  EXPECT_FALSE(release->keep_heap);
  auto keep = parse_plugin_config("heap: keep\n", "plugin.yaml");
  ASSERT_TRUE(keep.ok());
  EXPECT_TRUE(keep->keep_heap);
  auto bad = parse_plugin_config("log_level: info\nheap: trim\n", "plugin.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plugin.yaml:2: 'heap' must be keep or release, got a scalar 'trim'");
}

TEST(PluginConfig, PortProbe) {
  auto def = parse_plugin_config("", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->port_probe, "") << "absent: the installed probe";
  auto rel = parse_plugin_config("port_probe: bin/probe\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->port_probe, "/etc/railyard/bin/probe") << "relative to the config's folder";
  auto off = parse_plugin_config("port_probe: off\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->port_probe, "off");
  auto bad = parse_plugin_config("port_probe: [a]\n", "plugin.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plugin.yaml:1: 'port_probe' must be a string, got a list");
}

TEST(PluginConfig, HopMatricesChoice) {
  auto def = parse_plugin_config("", "plugin.yaml");
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def->railyard_hop_matrices);
  auto osm = parse_plugin_config("hop_matrices: opensm\n", "plugin.yaml");
  ASSERT_TRUE(osm.ok());
  EXPECT_FALSE(osm->railyard_hop_matrices);
  auto bad = parse_plugin_config("hop_matrices: fast\n", "plugin.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "plugin.yaml:1: 'hop_matrices' must be railyard or opensm, got a scalar 'fast'");
}

TEST(PluginConfig, SeveralControllers) {
  const std::string dir = ::testing::TempDir() + "ry_plugin_config_controllers_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string token = dir + "/plugin.token";
  {
    std::ofstream(token) << "s3cret\n";
  }
  std::filesystem::permissions(token, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::string source = dir + "/plugin.yaml";
  auto c = parse_plugin_config("policy_file: p.yaml\ncontrollers: [unix:ry.sock, tls://mgmt2:8641, 'tls://[::1]:9']\n"
                               "controller_ca: ca.crt\ncontroller_token_file: plugin.token\n",
                               source);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->controllers.size(), 3u);
  EXPECT_EQ(c->controllers[0].text(), "unix:" + dir + "/ry.sock") << "anchored at the config's folder";
  EXPECT_EQ(c->controllers[1].text(), "tls://mgmt2:8641");
  EXPECT_EQ(c->controllers[2].host, "::1");
  EXPECT_EQ(c->controllers[2].text(), "tls://[::1]:9");
  EXPECT_EQ(c->controller_ca, dir + "/ca.crt");
  EXPECT_EQ(c->controller_token, "s3cret");
  EXPECT_TRUE(c->policy_from_controller) << "the default with controllers and a policy file";
  EXPECT_TRUE(c->events_on());

  auto off = parse_plugin_config("policy_file: p.yaml\ncontrollers: [unix:/s]\npolicy_from_controller: false\n", source);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_FALSE(off->policy_from_controller);
  auto socket_only = parse_plugin_config("policy_file: p.yaml\ncontroller_socket: /s\n", source);
  ASSERT_TRUE(socket_only.ok());
  EXPECT_FALSE(socket_only->policy_from_controller) << "controller_socket alone: as before";

  const struct {
    std::string text;
    std::string message;
  } bad[] = {
      {"controllers: [http://x:1]\n", "'controllers': 'http://x:1': expected unix:/path or tls://host:port"},
      {"controllers: [tls://x]\n", "'controllers': 'tls://x': no port (tls://host:port)"},
      {"controllers: [tls://x:0]\n", "'controllers': 'tls://x:0': the port must be 1..65535"},
      {"controllers: ['tls://::1:5']\n", "'controllers': 'tls://::1:5': an IPv6 address goes in brackets"},
      {"controllers: []\n", "'controllers': expected at least one address"},
      {"controllers: [tls://x:1]\ncontroller_token_file: plugin.token\n",
       "'controllers': a tls:// address needs controller_ca"},
      {"controllers: [tls://x:1]\ncontroller_ca: ca.crt\n", "'controllers': a tls:// address needs controller_token_file"},
      {"controller_token_file: missing.token\n", "'controller_token_file': cannot read the token file"},
      {"policy_from_controller: true\n", "'policy_from_controller': needs a policy_file"},
  };
  for (const auto& b : bad) {
    auto r = parse_plugin_config(b.text, source);
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_NE(r.error().message.find(b.message), std::string::npos) << b.text << " -> " << r.error().message;
  }
  std::filesystem::remove_all(dir);
}

TEST(PluginConfig, ControllerSocket) {
  auto off = parse_plugin_config("log_level: info\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->controller_socket, "") << "no path: events off";

  auto abs = parse_plugin_config("controller_socket: /run/railyard/plugin.sock\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(abs.ok()) << abs.error().message;
  EXPECT_EQ(abs->controller_socket, "/run/railyard/plugin.sock");

  auto rel = parse_plugin_config("controller_socket: plugin.sock\n", "/etc/railyard/plugin.yaml");
  ASSERT_TRUE(rel.ok()) << rel.error().message;
  EXPECT_EQ(rel->controller_socket, "/etc/railyard/plugin.sock");

  auto empty = parse_plugin_config("log_level: info\ncontroller_socket: ''\n", "plugin.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "plugin.yaml:2: 'controller_socket': expected a socket path");

  auto list = parse_plugin_config("controller_socket: [a, b]\n", "plugin.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message, "plugin.yaml:1: 'controller_socket' must be a string, got a list");

  auto too_long = parse_plugin_config("controller_socket: /" + std::string(107, 'x') + "\n", "plugin.yaml");
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().message, "plugin.yaml:1: 'controller_socket': path longer than 107 bytes");

  // Short in the file, too long once anchored at the config's folder.
  auto anchored = parse_plugin_config("controller_socket: " + std::string(100, 's') + "\n",
                                      "/etc/railyard/plugin.yaml");
  ASSERT_FALSE(anchored.ok());
  EXPECT_EQ(anchored.error().message,
            "/etc/railyard/plugin.yaml:1: 'controller_socket': path longer than 107 bytes once taken from the config's "
            "folder");
}

TEST(PluginConfig, BadLogLevelIsNamed) {
  auto c = parse_plugin_config("log_level: loud\n", "plugin.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "plugin.yaml:1: 'log_level' must be error, info, verbose or debug, got a scalar 'loud'");
}

TEST(PluginConfig, YamlSyntaxErrorHasFileAndLine) {
  auto c = parse_plugin_config("policy_file: [a\n", "plugin.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "plugin.yaml:2: invalid YAML: end of sequence flow not found");
}

TEST(PluginConfig, LoadWithoutOptionsOrFileGivesDefaultsAndSaysWhy) {
  auto none = load_plugin_config(nullptr);
  EXPECT_FALSE(none.error);
  EXPECT_EQ(none.note, "no event_plugin_options: default configuration (default policy, log_level info)");

  auto missing = load_plugin_config("/nonexistent/railyard-plugin.yaml");
  EXPECT_TRUE(missing.error);
  EXPECT_EQ(missing.note,
            "/nonexistent/railyard-plugin.yaml: cannot read the plugin configuration: default configuration in force");
  EXPECT_EQ(missing.config.policy_file, "");
}

TEST(PluginConfig, LoadInvalidFileKeepsDefaults) {
  auto dir = std::filesystem::temp_directory_path() / ("ry_plugin_config_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "plugin.yaml").string();
  std::ofstream(path) << "policy_file: p.yaml\nlog_level: 3\n";
  auto loaded = load_plugin_config(path.c_str());
  EXPECT_TRUE(loaded.error);
  EXPECT_EQ(loaded.note, path + ":2: 'log_level' must be error, info, verbose or debug, got a scalar '3'; default "
                         "configuration in force");
  EXPECT_EQ(loaded.config.policy_file, "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace railyard::sm_plugin
