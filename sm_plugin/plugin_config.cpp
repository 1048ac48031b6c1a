#include "sm_plugin/plugin_config.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/token_file.h"
#include "policies/yaml_doc.h"

namespace railyard::sm_plugin {

Result<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source_name) {
  PluginConfig config;
  config.source = std::string(source_name);
  // Relative paths are taken next to the config, not from OpenSM's cwd (a
  // daemon's cwd is usually /).
  auto anchored = [&source_name](const std::string& path) {
    std::filesystem::path p(path);
    if (path.empty() || source_name.empty() || p.is_absolute()) return path;
    return (std::filesystem::path(source_name).parent_path() / p).string();
  };
  Status s = yaml::read_yaml_document(text, source_name, "the plugin configuration", [&](const yaml::Value& root) {
    const yaml::Map m = root.map({"policy_file", "log_level", "hop_matrices", "heap", "controller_socket",
                                  "fast_path", "port_probe", "controllers", "controller_ca", "controller_token_file",
                                  "policy_from_controller", "ca_first_blocks"},
                                 yaml::IfNull::kEmpty);  // an empty file: the defaults
    std::optional<bool> policy_from_controller;
    for (const auto& [key, value] : m.entries()) {
      if (key == "policy_file") {
        if (!value.is_null()) config.policy_file = anchored(value.string());
      } else if (key == "log_level") {
        const bool known = parse_log_level(value.one_of({"error", "info", "verbose", "debug"}), config.log_level);
        assert(known);  // one_of allowed only parse_log_level's names
        (void)known;
      } else if (key == "hop_matrices") {
        config.railyard_hop_matrices = value.one_of({"railyard", "opensm"}) == "railyard";
      } else if (key == "heap") {
        config.keep_heap = value.one_of({"keep", "release"}) == "keep";
      } else if (key == "fast_path") {
        config.fast_path = value.one_of({"push", "opensm"}) == "push";
      } else if (key == "port_probe") {
        config.port_probe = value.string();
        if (config.port_probe.empty()) value.fail("'port_probe': expected a path or off");
        if (config.port_probe != "off") config.port_probe = anchored(config.port_probe);
      } else if (key == "controllers") {
        if (value.is_null()) continue;
        for (const std::string& text : value.strings()) {
          Result<ControllerAddress> a = parse_controller_address(text);
          if (!a) value.fail("'controllers': " + a.error().message);
          if (a->kind == ControllerAddress::Kind::kUnix) {
            a->path = anchored(a->path);
            if (a->path.size() > kMaxSocketPath) {
              value.fail("'controllers': '" + text + "': socket path longer than " + std::to_string(kMaxSocketPath) +
                         " bytes once taken from the config's folder");
            }
          }
          config.controllers.push_back(*a);
        }
        if (config.controllers.empty()) value.fail("'controllers': expected at least one address");
      } else if (key == "controller_ca") {
        config.controller_ca = anchored(value.string());
        if (config.controller_ca.empty()) value.fail("'controller_ca': expected a file");
      } else if (key == "controller_token_file") {
        const std::string path = anchored(value.string());
        if (path.empty()) value.fail("'controller_token_file': expected a file");
        Result<std::string> token = controller::read_token_file(path);
        if (!token) value.fail("'controller_token_file': " + token.error().message);
        config.controller_token = *token;
      } else if (key == "policy_from_controller") {
        policy_from_controller = value.boolean();
      } else if (key == "ca_first_blocks") {
        config.ca_first_blocks = value.unsigned_in(0, UINT32_MAX, "'ca_first_blocks'");
      } else {  // controller_socket
        if (value.is_null()) continue;
        const std::string path = value.string();
        if (path.empty()) value.fail("'controller_socket': expected a socket path");
        // sockaddr_un::sun_path holds 108 bytes with the NUL.
        if (path.size() > kMaxSocketPath) {
          value.fail("'controller_socket': path longer than " + std::to_string(kMaxSocketPath) + " bytes");
        }
        config.controller_socket = anchored(path);
        if (config.controller_socket.size() > kMaxSocketPath) {
          value.fail("'controller_socket': path longer than " + std::to_string(kMaxSocketPath) +
                     " bytes once taken from the config's folder");
        }
      }
    }
    const bool tls = std::any_of(config.controllers.begin(), config.controllers.end(),
                                 [](const ControllerAddress& a) { return a.kind == ControllerAddress::Kind::kTls; });
    if (tls && config.controller_ca.empty()) {
      m.find("controllers")->fail(
          "'controllers': a tls:// address needs controller_ca (the CA of the controller's certificate)");
    }
    if (tls && config.controller_token.empty()) {
      m.find("controllers")->fail("'controllers': a tls:// address needs controller_token_file");
    }
    if (policy_from_controller.value_or(false) && config.policy_file.empty()) {
      m.find("policy_from_controller")->fail("'policy_from_controller': needs a policy_file to write the policy to");
    }
    config.policy_from_controller =
        policy_from_controller.value_or(!config.controllers.empty() && !config.policy_file.empty());
  });
  if (!s) return s.error();
  return config;
}

LoadedConfig load_plugin_config(const char* path) {
  LoadedConfig out;
  if (path == nullptr || *path == '\0') {
    out.note = "no event_plugin_options: default configuration (default policy, log_level info)";
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out.note = std::string(path) + ": cannot read the plugin configuration: default configuration in force";
    out.error = true;
    return out;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = parse_plugin_config(text.str(), path);
  if (!parsed) {
    out.note = parsed.error().message + "; default configuration in force";
    out.error = true;
    return out;
  }
  out.config = std::move(parsed).value();
  out.note = std::string("configuration from ") + path;
  return out;
}

}  // namespace railyard::sm_plugin
