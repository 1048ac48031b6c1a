#include "sm_plugin/plugin_config.h"

#include <cassert>
#include <filesystem>
#include <fstream>
#include <sstream>

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
    const yaml::Map m = root.map(
        {"policy_file", "log_level", "hop_matrices", "controller_socket", "fast_path", "port_probe"},
        yaml::IfNull::kEmpty);  // an empty file: the defaults
    for (const auto& [key, value] : m.entries()) {
      if (key == "policy_file") {
        if (!value.is_null()) config.policy_file = anchored(value.string());
      } else if (key == "log_level") {
        const bool known = parse_log_level(value.one_of({"error", "info", "verbose", "debug"}), config.log_level);
        assert(known);  // one_of allowed only parse_log_level's names
        (void)known;
      } else if (key == "hop_matrices") {
        config.railyard_hop_matrices = value.one_of({"railyard", "opensm"}) == "railyard";
      } else if (key == "fast_path") {
        config.fast_path = value.one_of({"push", "opensm"}) == "push";
      } else if (key == "port_probe") {
        config.port_probe = value.string();
        if (config.port_probe.empty()) value.fail("'port_probe': expected a path or off");
        if (config.port_probe != "off") config.port_probe = anchored(config.port_probe);
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
