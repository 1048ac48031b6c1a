#include "controller/config.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "controller/token_file.h"
#include "policies/policy_loader.h"

namespace railyard::controller {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kNone: return "none";
    case Role::kViewer: return "viewer";
    case Role::kOperator: return "operator";
  }
  return "none";
}

namespace {

struct ConfigError {
  int line;
  std::string message;
};

[[noreturn]] void fail(const YAML::Node& at, std::string message) { throw ConfigError{at.Mark().line, std::move(message)}; }

void expect_map(const YAML::Node& n, std::string_view what) {
  if (!n.IsMap()) fail(n, std::string(what) + " must be a mapping");
}

void check_keys(const YAML::Node& map, std::string_view where, std::initializer_list<std::string_view> allowed) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || a == key;
    if (!ok) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(kv.first, "unknown key '" + key + "' in " + std::string(where) + " (expected one of: " + list + ")");
    }
  }
}

std::string scalar(const YAML::Node& n, std::string_view what) {
  if (!n.IsScalar()) fail(n, std::string(what) + " must be a string");
  return n.Scalar();
}

uint64_t number(const YAML::Node& n, std::string_view what, uint64_t lo, uint64_t hi) {
  const std::string s = scalar(n, what);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) {
    fail(n, std::string(what) + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                ", got '" + s + "'");
  }
  return v;
}

std::string anchored(const std::string& path, const std::filesystem::path& base) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  return p.is_absolute() ? path : (base / p).lexically_normal().string();
}

struct Loader {
  std::filesystem::path base;
  ControllerConfig cfg;

  void listen(const YAML::Node& n) {
    expect_map(n, "listen");
    check_keys(n, "listen", {"address", "port"});
    if (n["address"]) cfg.listen_address = scalar(n["address"], "listen.address");
    if (n["port"]) cfg.listen_port = static_cast<uint16_t>(number(n["port"], "listen.port", 0, 65535));
    if (cfg.listen_address.empty()) fail(n["address"], "listen.address must not be empty");
  }

  void tokens(const YAML::Node& n) {
    if (!n.IsSequence()) fail(n, "tokens must be a list of {name, role, token | token_file}");
    std::set<std::string> seen_names, seen_tokens;
    for (const YAML::Node& t : n) {
      expect_map(t, "a token entry");
      check_keys(t, "a token entry", {"name", "role", "token", "token_file"});
      TokenEntry e;
      if (!t["name"]) fail(t, "a token entry needs a name");
      e.name = scalar(t["name"], "token name");
      if (e.name.empty()) fail(t["name"], "token name must not be empty");
      if (!seen_names.insert(e.name).second) fail(t["name"], "token name '" + e.name + "' is repeated");
      const std::string role = t["role"] ? scalar(t["role"], "role") : "viewer";
      if (role == "viewer") {
        e.role = Role::kViewer;
      } else if (role == "operator") {
        e.role = Role::kOperator;
      } else {
        fail(t["role"], "role must be viewer or operator, got '" + role + "'");
      }
      if (t["token"] && t["token_file"]) fail(t, "give either token or token_file, not both");
      if (t["token"]) {
        e.token = scalar(t["token"], "token");
      } else if (t["token_file"]) {
        // The same reader as railyardctl's (controller/token_file.h): one
        // token, blanks around it ignored, owner-only permissions.
        const std::string path = anchored(scalar(t["token_file"], "token_file"), base);
        Result<std::string> token = read_token_file(path);
        if (!token) fail(t["token_file"], token.error().message);
        e.token = std::move(*token);
      } else {
        fail(t, "token entry '" + e.name + "' needs token or token_file");
      }
      if (e.token.size() < 16) fail(t, "token of '" + e.name + "' is shorter than 16 characters");
      if (!seen_tokens.insert(e.token).second) fail(t, "token of '" + e.name + "' is used by another entry");
      cfg.tokens.push_back(std::move(e));
    }
  }

  void fabric(const YAML::Node& n) {
    expect_map(n, "fabric");
    check_keys(n, "fabric", {"source", "topology_file", "plugin_socket", "plugin_socket_mode", "plugin_socket_group"});
    const std::string source = n["source"] ? scalar(n["source"], "fabric.source") : "offline";
    if (source == "offline") {
      cfg.fabric_source = FabricSource::kOffline;
    } else if (source == "live") {
      cfg.fabric_source = FabricSource::kLive;
    } else {
      fail(n["source"], "fabric.source must be live or offline, got '" + source + "'");
    }
    if (n["topology_file"]) cfg.topology_file = anchored(scalar(n["topology_file"], "topology_file"), base);
    if (n["plugin_socket"]) cfg.plugin_socket = anchored(scalar(n["plugin_socket"], "plugin_socket"), base);
    if (cfg.fabric_source == FabricSource::kOffline && cfg.topology_file.empty()) {
      fail(n, "fabric.source offline needs fabric.topology_file");
    }
    if (cfg.fabric_source == FabricSource::kLive && cfg.plugin_socket.empty()) {
      fail(n, "fabric.source live needs fabric.plugin_socket");
    }
    if (cfg.plugin_socket.size() >= 100) fail(n["plugin_socket"], "plugin_socket path is longer than 99 bytes");
    if (n["plugin_socket_group"]) {
      cfg.plugin_socket_group = scalar(n["plugin_socket_group"], "plugin_socket_group");
      if (cfg.plugin_socket_group.empty()) fail(n["plugin_socket_group"], "plugin_socket_group must not be empty");
    }
    if (n["plugin_socket_mode"]) {
      const std::string mode = scalar(n["plugin_socket_mode"], "plugin_socket_mode");
      if (mode == "0600" || mode == "600") {
        cfg.plugin_socket_mode = 0600;
      } else if (mode == "0660" || mode == "660") {
        cfg.plugin_socket_mode = 0660;
      } else {
        fail(n["plugin_socket_mode"], "plugin_socket_mode must be \"0600\" or \"0660\" (got '" + mode +
                                          "'): the plugin socket is never open to other users");
      }
    }
    if (cfg.plugin_socket_mode == 0660 && cfg.plugin_socket_group.empty()) {
      fail(n["plugin_socket_mode"], "plugin_socket_mode 0660 needs plugin_socket_group (who may connect)");
    }
    // A group with mode 0600 could not connect: say so rather than let the
    // operator believe the group is allowed in.
    if (cfg.plugin_socket_mode == 0600 && !cfg.plugin_socket_group.empty()) {
      fail(n["plugin_socket_group"], "plugin_socket_group needs plugin_socket_mode \"0660\" (with 0600 only the "
                                     "daemon's user and root may connect)");
    }
  }

  void policy(const YAML::Node& n) {
    expect_map(n, "policy");
    check_keys(n, "policy", {"base_file", "output_file"});
    if (n["base_file"]) cfg.policy_base_file = anchored(scalar(n["base_file"], "policy.base_file"), base);
    if (n["output_file"]) cfg.policy_output_file = anchored(scalar(n["output_file"], "policy.output_file"), base);
  }

  void limits(const YAML::Node& n) {
    expect_map(n, "limits");
    check_keys(n, "limits", {"max_body_bytes", "reroutes_per_minute", "reroute_timeout_s", "max_connections",
                             "request_timeout_s", "idle_timeout_s", "refused_audits_per_minute"});
    if (n["max_body_bytes"]) cfg.max_body_bytes = number(n["max_body_bytes"], "max_body_bytes", 256, 64ull << 20);
    if (n["reroutes_per_minute"]) {
      cfg.reroutes_per_minute = static_cast<uint32_t>(number(n["reroutes_per_minute"], "reroutes_per_minute", 1, 600));
    }
    if (n["reroute_timeout_s"]) {
      cfg.reroute_timeout_s = static_cast<uint32_t>(number(n["reroute_timeout_s"], "reroute_timeout_s", 1, 3600));
    }
    auto u32 = [&](const char* key, uint32_t* out, uint64_t lo, uint64_t hi) {
      if (n[key]) *out = static_cast<uint32_t>(number(n[key], key, lo, hi));
    };
    u32("max_connections", &cfg.max_connections, 4, 65536);
    u32("request_timeout_s", &cfg.request_timeout_s, 1, 600);
    u32("idle_timeout_s", &cfg.idle_timeout_s, 1, 3600);
    u32("refused_audits_per_minute", &cfg.refused_audits_per_minute, 0, 100000);
  }

  void load(const YAML::Node& root) {
    if (root.IsNull()) fail(root, "empty config: fabric is required");
    expect_map(root, "the config");
    check_keys(root, "the config", {"listen", "tokens", "database", "fabric", "policy", "limits", "log_level"});
    if (root["listen"]) listen(root["listen"]);
    if (root["tokens"]) tokens(root["tokens"]);
    if (root["database"]) cfg.database = anchored(scalar(root["database"], "database"), base);
    if (!root["fabric"]) fail(root, "fabric is required (source: live | offline)");
    fabric(root["fabric"]);
    if (root["policy"]) policy(root["policy"]);
    if (root["limits"]) limits(root["limits"]);
    if (root["log_level"]) {
      cfg.log_level = scalar(root["log_level"], "log_level");
      static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
      if (!kLevels.contains(cfg.log_level)) fail(root["log_level"], "log_level must be trace|debug|info|warn|error");
    }
    if (cfg.database.empty()) fail(root["database"], "database must not be empty");
  }
};

Error located(std::string_view source, int line, const std::string& message) {
  std::string out(source);
  if (line >= 0) out += ": line " + std::to_string(line + 1);
  return Error{out + ": " + message};
}

}  // namespace

Result<ControllerConfig> parse_controller_config(std::string_view text, std::string_view source_name) {
  if (Status s = policies::check_yaml_text(text, source_name); !s) return s.error();
  Loader loader;
  loader.base = std::filesystem::path(std::string(source_name)).parent_path();
  loader.cfg.source = std::string(source_name);
  try {
    loader.load(YAML::Load(std::string(text)));
  } catch (const ConfigError& e) {
    return located(source_name, e.line, e.message);
  } catch (const YAML::Exception& e) {
    return located(source_name, e.mark.line, "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return located(source_name, -1, std::string("cannot load config: ") + e.what());
  }
  return std::move(loader.cfg);
}

Result<ControllerConfig> load_controller_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read the config file"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_controller_config(text.str(), path);
}

}  // namespace railyard::controller
