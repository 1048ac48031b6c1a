#include "sm_plugin/plugin_config.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace railyard::sm_plugin {

namespace {

std::string at(std::string_view source, const YAML::Mark& mark, const std::string& reason) {
  std::string out(source);
  if (mark.line >= 0) out += ": line " + std::to_string(mark.line + 1);
  return out + ": " + reason;
}

}  // namespace

Result<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source_name) {
  PluginConfig config;
  config.source = std::string(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error{at(source_name, e.mark, e.msg)};
  }
  if (!root || root.IsNull()) return config;  // empty file: defaults
  if (!root.IsMap()) return Error{at(source_name, root.Mark(), "expected a mapping with policy_file, log_level, hop_matrices, controller_socket, fast_path, port_probe")};
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const YAML::Node& value = kv.second;
      if (key == "policy_file") {
        if (value.IsNull()) continue;
        if (!value.IsScalar()) return Error{at(source_name, value.Mark(), "policy_file: expected a path")};
        config.policy_file = value.as<std::string>();
      } else if (key == "log_level") {
        if (!value.IsScalar() || !parse_log_level(value.as<std::string>(), config.log_level)) {
          return Error{at(source_name, value.Mark(), "log_level: expected one of error, info, verbose, debug")};
        }
      } else if (key == "hop_matrices") {
        const std::string v = value.IsScalar() ? value.as<std::string>() : "";
        if (v != "railyard" && v != "opensm") {
          return Error{at(source_name, value.Mark(), "hop_matrices: expected railyard or opensm")};
        }
        config.railyard_hop_matrices = v == "railyard";
      } else if (key == "fast_path") {
        const std::string v = value.IsScalar() ? value.as<std::string>() : "";
        if (v != "push" && v != "opensm") {
          return Error{at(source_name, value.Mark(), "fast_path: expected push or opensm")};
        }
        config.fast_path = v == "push";
      } else if (key == "port_probe") {
        if (!value.IsScalar() || value.as<std::string>().empty()) {
          return Error{at(source_name, value.Mark(), "port_probe: expected a path or off")};
        }
        config.port_probe = value.as<std::string>();
      } else if (key == "controller_socket") {
        if (value.IsNull()) continue;
        if (!value.IsScalar() || value.as<std::string>().empty()) {
          return Error{at(source_name, value.Mark(), "controller_socket: expected a socket path")};
        }
        config.controller_socket = value.as<std::string>();
        // sockaddr_un::sun_path holds 108 bytes with the NUL.
        if (config.controller_socket.size() > kMaxSocketPath) {
          return Error{at(source_name, value.Mark(),
                          "controller_socket: path longer than " + std::to_string(kMaxSocketPath) + " bytes")};
        }
      } else {
        return Error{at(source_name, kv.first.Mark(),
                        "unknown key '" + key + "' (expected policy_file, log_level, hop_matrices, controller_socket, fast_path, port_probe)")};
      }
    }
  } catch (const YAML::Exception& e) {
    return Error{at(source_name, e.mark, e.msg)};
  }
  // Relative paths are taken next to the config, not from OpenSM's cwd (a
  // daemon's cwd is usually /).
  for (std::string* path : {&config.policy_file, &config.controller_socket, &config.port_probe}) {
    if (path->empty() || source_name.empty() || (path == &config.port_probe && *path == "off")) continue;
    std::filesystem::path p(*path);
    if (p.is_relative()) *path = (std::filesystem::path(source_name).parent_path() / p).string();
  }
  if (config.controller_socket.size() > kMaxSocketPath) {
    return Error{std::string(source_name) + ": controller_socket: path longer than " +
                 std::to_string(kMaxSocketPath) + " bytes once taken from the config's folder"};
  }
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
