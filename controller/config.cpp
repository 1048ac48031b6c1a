#include "controller/config.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "controller/token_file.h"
#include "policies/yaml_doc.h"

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

std::string anchored(const std::string& path, const std::filesystem::path& base) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  return p.is_absolute() ? path : (base / p).lexically_normal().string();
}

struct Loader {
  std::filesystem::path base;
  ControllerConfig cfg;

  std::string file_path(const yaml::Value& v) const { return anchored(v.string(), base); }

  void listen(const yaml::Value& v) {
    const yaml::Map m = v.map({"address", "port"});
    if (const yaml::Value* address = m.find("address")) {
      cfg.listen_address = address->string();
      if (cfg.listen_address.empty()) address->fail("listen.address must not be empty");
    }
    if (const yaml::Value* port = m.find("port")) {
      cfg.listen_port = static_cast<uint16_t>(port->unsigned_in(0, 65535, "port"));
    }
  }

  void tokens(const yaml::Value& v) {
    if (!v.is_list()) v.fail("'tokens' must be a list of {name, role, token | token_file}, got " + v.type_name());
    std::set<std::string> seen_names, seen_tokens;
    for (const yaml::Value& t : v.items()) {
      const yaml::Map m = t.map({"name", "role", "token", "token_file"});
      TokenEntry e;
      const yaml::Value* name = m.find("name");
      if (name == nullptr) t.fail("a token entry needs a name");
      e.name = name->string();
      if (e.name.empty()) name->fail("token name must not be empty");
      if (!seen_names.insert(e.name).second) name->fail("token name '" + e.name + "' is repeated");
      const yaml::Value* role = m.find("role");
      e.role = role == nullptr || role->one_of({"viewer", "operator"}) == "viewer" ? Role::kViewer : Role::kOperator;
      const yaml::Value* token = m.find("token");
      const yaml::Value* token_file = m.find("token_file");
      if (token != nullptr && token_file != nullptr) t.fail("give either token or token_file, not both");
      if (token != nullptr) {
        e.token = token->string();
      } else if (token_file != nullptr) {
        // The same reader as railyardctl's (controller/token_file.h): one
        // token, blanks around it ignored, owner-only permissions.
        Result<std::string> read = read_token_file(file_path(*token_file));
        if (!read) token_file->fail(read.error().message);
        e.token = std::move(*read);
      } else {
        t.fail("token entry '" + e.name + "' needs token or token_file");
      }
      if (e.token.size() < 16) t.fail("token of '" + e.name + "' is shorter than 16 characters");
      if (!seen_tokens.insert(e.token).second) t.fail("token of '" + e.name + "' is used by another entry");
      cfg.tokens.push_back(std::move(e));
    }
  }

  void fabric(const yaml::Value& v) {
    const yaml::Map m =
        v.map({"source", "topology_file", "plugin_socket", "plugin_socket_mode", "plugin_socket_group",
               "plugin_listen", "plugin_tls_cert", "plugin_tls_key", "plugin_token_file"});
    const yaml::Value* source = m.find("source");
    cfg.fabric_source = source != nullptr && source->one_of({"live", "offline"}) == "live" ? FabricSource::kLive
                                                                                          : FabricSource::kOffline;
    if (const yaml::Value* topology = m.find("topology_file")) cfg.topology_file = file_path(*topology);
    const yaml::Value* socket = m.find("plugin_socket");
    if (socket != nullptr) cfg.plugin_socket = file_path(*socket);
    if (cfg.fabric_source == FabricSource::kOffline && cfg.topology_file.empty()) {
      v.fail("fabric.source offline needs fabric.topology_file");
    }
    plugin_tls(m);
    if (cfg.fabric_source == FabricSource::kLive && cfg.plugin_socket.empty() && cfg.plugin_listen_port == 0) {
      v.fail("fabric.source live needs fabric.plugin_socket or fabric.plugin_listen");
    }
    if (cfg.plugin_socket.size() >= 100) socket->fail("plugin_socket path is longer than 99 bytes");
    const yaml::Value* group = m.find("plugin_socket_group");
    if (group != nullptr) {
      cfg.plugin_socket_group = group->string();
      if (cfg.plugin_socket_group.empty()) group->fail("plugin_socket_group must not be empty");
    }
    const yaml::Value* mode = m.find("plugin_socket_mode");
    if (mode != nullptr) {
      const std::string text = mode->string();
      if (text == "0600" || text == "600") {
        cfg.plugin_socket_mode = 0600;
      } else if (text == "0660" || text == "660") {
        cfg.plugin_socket_mode = 0660;
      } else {
        mode->fail("plugin_socket_mode must be \"0600\" or \"0660\" (got '" + text +
                   "'): the plugin socket is never open to other users");
      }
    }
    if (cfg.plugin_socket_mode == 0660 && cfg.plugin_socket_group.empty()) {
      mode->fail("plugin_socket_mode 0660 needs plugin_socket_group (who may connect)");
    }
    // A group with mode 0600 could not connect: say so rather than let the
    // operator believe the group is allowed in.
    if (cfg.plugin_socket_mode == 0600 && group != nullptr) {
      group->fail("plugin_socket_group needs plugin_socket_mode \"0660\" (with 0600 only the "
                  "daemon's user and root may connect)");
    }
  }

  // plugin_listen: host:port (TCP with TLS) and what it needs: a
  // certificate, its key and the token every plugin's hello must carry.
  void plugin_tls(const yaml::Map& m) {
    const yaml::Value* listen = m.find("plugin_listen");
    const yaml::Value* cert = m.find("plugin_tls_cert");
    const yaml::Value* key = m.find("plugin_tls_key");
    const yaml::Value* token = m.find("plugin_token_file");
    if (listen == nullptr) {
      for (const yaml::Value* other : {cert, key, token}) {
        if (other != nullptr) {
          other->fail("plugin_tls_cert, plugin_tls_key and plugin_token_file go with plugin_listen");
        }
      }
      return;
    }
    const std::string text = listen->string();
    std::string host;
    std::string port_text;
    if (text.starts_with("[")) {
      const size_t close = text.find(']');
      if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
        listen->fail("plugin_listen must be host:port or [IPv6]:port (got '" + text + "')");
      }
      host = text.substr(1, close - 1);
      port_text = text.substr(close + 2);
    } else {
      const size_t colon = text.rfind(':');
      if (colon == std::string::npos || text.find(':') != colon) {
        listen->fail("plugin_listen must be host:port or [IPv6]:port (got '" + text + "')");
      }
      host = text.substr(0, colon);
      port_text = text.substr(colon + 1);
    }
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (host.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      listen->fail("plugin_listen must be host:port with a port 1..65535 (got '" + text + "')");
    }
    if (cert == nullptr || key == nullptr || token == nullptr) {
      listen->fail("plugin_listen (TLS) needs plugin_tls_cert, plugin_tls_key and plugin_token_file");
    }
    cfg.plugin_listen_host = host;
    cfg.plugin_listen_port = static_cast<uint16_t>(port);
    cfg.plugin_tls_cert = file_path(*cert);
    cfg.plugin_tls_key = file_path(*key);
    const std::string token_path = file_path(*token);
    Result<std::string> read = read_token_file(token_path);
    if (!read) token->fail("plugin_token_file: " + read.error().message);
    cfg.plugin_token = *read;
  }

  void policy(const yaml::Value& v) {
    const yaml::Map m = v.map({"base_file", "output_file"});
    if (const yaml::Value* base_file = m.find("base_file")) cfg.policy_base_file = file_path(*base_file);
    if (const yaml::Value* output_file = m.find("output_file")) cfg.policy_output_file = file_path(*output_file);
  }

  void limits(const yaml::Value& v) {
    const yaml::Map m = v.map({"max_body_bytes", "reroutes_per_minute", "reroute_timeout_s", "max_connections",
                               "request_timeout_s", "idle_timeout_s", "refused_audits_per_minute", "mutation_nice"});
    if (const yaml::Value* bytes = m.find("max_body_bytes")) {
      cfg.max_body_bytes = bytes->unsigned_in(256, 64ull << 20, "limit");
    }
    auto u32 = [&](std::string_view key, uint32_t* out, uint64_t lo, uint64_t hi) {
      if (const yaml::Value* value = m.find(key)) *out = static_cast<uint32_t>(value->unsigned_in(lo, hi, "limit"));
    };
    u32("reroutes_per_minute", &cfg.reroutes_per_minute, 1, 600);
    u32("reroute_timeout_s", &cfg.reroute_timeout_s, 1, 3600);
    u32("max_connections", &cfg.max_connections, 4, 65536);
    u32("request_timeout_s", &cfg.request_timeout_s, 1, 600);
    u32("idle_timeout_s", &cfg.idle_timeout_s, 1, 3600);
    u32("refused_audits_per_minute", &cfg.refused_audits_per_minute, 0, 100000);
    u32("mutation_nice", &cfg.mutation_nice, 0, 19);
  }

  void slurm(const yaml::Value& v) {
    const yaml::Map m = v.map({"drain_sync", "scontrol", "slurm_conf", "interval_s"});
    if (const yaml::Value* sync = m.find("drain_sync")) cfg.slurm_drain_sync = sync->boolean();
    if (const yaml::Value* scontrol = m.find("scontrol")) {
      cfg.slurm_scontrol = scontrol->string();
      if (cfg.slurm_scontrol.empty()) scontrol->fail("scontrol must not be empty");
      // A bare name is looked up in PATH; a path is taken from the config's folder.
      if (cfg.slurm_scontrol.find('/') != std::string::npos) cfg.slurm_scontrol = file_path(*scontrol);
    }
    if (const yaml::Value* conf = m.find("slurm_conf")) cfg.slurm_conf = file_path(*conf);
    if (const yaml::Value* interval = m.find("interval_s")) {
      cfg.slurm_interval_s = static_cast<uint32_t>(interval->unsigned_in(1, 3600, "interval"));
    }
  }

  void isolation(const yaml::Value& v) {
    const yaml::Map m = v.map({"enabled", "dry_run", "flaps", "window_s", "errors_per_minute", "clean_s",
                               "max_links", "max_percent"});
    IsolationConfig& c = cfg.isolation;
    if (const yaml::Value* x = m.find("enabled")) c.enabled = x->boolean();
    if (const yaml::Value* x = m.find("dry_run")) c.dry_run = x->boolean();
    auto u32 = [&m](const char* key, uint32_t* out, uint64_t lo, uint64_t hi) {
      if (const yaml::Value* x = m.find(key)) *out = static_cast<uint32_t>(x->unsigned_in(lo, hi, key));
    };
    u32("flaps", &c.flaps, 1, 1000);
    u32("window_s", &c.window_s, 1, 86400);
    u32("errors_per_minute", &c.errors_per_minute, 0, 1000000000);
    u32("clean_s", &c.clean_s, 1, 30 * 86400);
    u32("max_links", &c.max_links, 0, 100000);
    u32("max_percent", &c.max_percent, 0, 100);
  }

  void retention(const yaml::Value& v) {
    const yaml::Map m = v.map({"events_max_age_days", "events_max_count", "audit_max_age_days", "audit_max_count"});
    auto days = [&](std::string_view key, uint32_t* out) {
      if (const yaml::Value* value = m.find(key)) *out = static_cast<uint32_t>(value->unsigned_in(0, 36500, "number of days"));
    };
    auto count = [&](std::string_view key, uint64_t* out) {
      if (const yaml::Value* value = m.find(key)) *out = value->unsigned_in(0, 1'000'000'000'000ull, "count");
    };
    days("events_max_age_days", &cfg.events_max_age_days);
    count("events_max_count", &cfg.events_max_count);
    days("audit_max_age_days", &cfg.audit_max_age_days);
    count("audit_max_count", &cfg.audit_max_count);
  }

  void telemetry(const yaml::Value& v) {
    const yaml::Map m = v.map({"history", "hot_xmit_wait_per_s", "top_n", "error_burst", "max_ports"});
    TelemetryConfig& t = cfg.telemetry;
    if (const yaml::Value* x = m.find("history")) t.history = static_cast<uint32_t>(x->unsigned_in(1, 100000, "history"));
    if (const yaml::Value* x = m.find("hot_xmit_wait_per_s")) {
      t.hot_xmit_wait_per_s = static_cast<double>(x->unsigned_in(1, uint64_t{1} << 53, "threshold"));
    }
    if (const yaml::Value* x = m.find("top_n")) t.top_n = static_cast<uint32_t>(x->unsigned_in(1, 1000, "top_n"));
    if (const yaml::Value* x = m.find("error_burst")) t.error_burst = x->unsigned_in(1, uint64_t{1} << 53, "threshold");
    if (const yaml::Value* x = m.find("max_ports")) {
      t.max_ports = static_cast<uint32_t>(x->unsigned_in(1, 16u << 20, "max_ports"));
    }
  }

  // "http://host:port" with a host and a port 1..65535, nothing after.
  static bool http_host_port(const std::string& url) {
    constexpr std::string_view kScheme = "http://";
    if (url.rfind(kScheme, 0) != 0) return false;
    std::string rest = url.substr(kScheme.size());
    if (!rest.empty() && rest.back() == '/') rest.pop_back();
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || rest.find('/') != std::string::npos) return false;
    const std::string port = rest.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long n = std::stoul(port);
    return n >= 1 && n <= 65535;
  }

  void ha(const yaml::Value& v) {
    const yaml::Map m =
        v.map({"etcd", "member", "advertise_api", "advertise_plugin", "lease_ttl_s", "prefix", "etcd_timeout_ms"});
    HaConfig h;
    const yaml::Value* etcd = m.find("etcd");
    if (etcd == nullptr) v.fail("ha needs etcd: the etcd members' client URLs (a list of http://host:port)");
    if (!etcd->is_list()) etcd->fail("ha.etcd must be a list of http://host:port, got " + etcd->type_name());
    std::set<std::string> seen;
    for (const yaml::Value& url : etcd->items()) {
      std::string u = url.string();
      if (!http_host_port(u)) {
        url.fail("ha.etcd: '" + u + "' is not http://host:port (https is not supported: keep etcd's client "
                 "port on a management network)");
      }
      if (!seen.insert(u).second) url.fail("ha.etcd: '" + u + "' is repeated");
      h.etcd.push_back(std::move(u));
    }
    if (h.etcd.empty()) etcd->fail("ha.etcd must name at least one etcd member");
    const yaml::Value* member = m.find("member");
    if (member == nullptr) v.fail("ha needs member: this railyardd's name among the three");
    h.member = member->string();
    if (h.member.empty() || h.member.size() > 64 ||
        h.member.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
            std::string::npos) {
      member->fail("ha.member must be 1 to 64 of A-Z a-z 0-9 . _ - (got '" + h.member + "')");
    }
    const yaml::Value* api = m.find("advertise_api");
    if (api == nullptr) v.fail("ha needs advertise_api: the http://host:port the others name as leader to clients");
    h.advertise_api = api->string();
    if (!http_host_port(h.advertise_api)) {
      api->fail("ha.advertise_api must be http://host:port (got '" + h.advertise_api + "')");
    }
    if (const yaml::Value* plugin = m.find("advertise_plugin")) {
      h.advertise_plugin = plugin->string();
      if (h.advertise_plugin.rfind("unix:", 0) != 0 && h.advertise_plugin.rfind("tls://", 0) != 0) {
        plugin->fail("ha.advertise_plugin must be unix:/path or tls://host:port (got '" + h.advertise_plugin + "')");
      }
    }
    if (const yaml::Value* ttl = m.find("lease_ttl_s")) {
      h.lease_ttl_s = static_cast<uint32_t>(ttl->unsigned_in(2, 60, "lease_ttl_s"));
    }
    if (const yaml::Value* t = m.find("etcd_timeout_ms")) {
      h.etcd_timeout_ms = static_cast<uint32_t>(t->unsigned_in(100, 30000, "etcd_timeout_ms"));
    }
    if (const yaml::Value* prefix = m.find("prefix")) {
      h.prefix = prefix->string();
      if (h.prefix.size() < 2 || h.prefix.front() != '/' || h.prefix.back() != '/') {
        prefix->fail("ha.prefix must start and end with '/' (got '" + h.prefix + "')");
      }
    }
    cfg.ha = std::move(h);
  }

  void load(const yaml::Value& root) {
    if (root.is_null()) root.fail("empty config: fabric is required");
    const yaml::Map m = root.map({"listen", "tokens", "database", "fabric", "policy", "limits", "slurm", "isolation",
                                  "retention", "telemetry", "log_level", "ha"});
    if (const yaml::Value* v = m.find("listen")) listen(*v);
    if (const yaml::Value* v = m.find("tokens")) tokens(*v);
    const yaml::Value* database = m.find("database");
    if (database != nullptr) {
      cfg.database = file_path(*database);
      if (cfg.database.empty()) database->fail("database must not be empty");
    }
    const yaml::Value* fabric_value = m.find("fabric");
    if (fabric_value == nullptr) root.fail("fabric is required (source: live | offline)");
    fabric(*fabric_value);
    if (const yaml::Value* v = m.find("policy")) policy(*v);
    if (const yaml::Value* v = m.find("limits")) limits(*v);
    if (const yaml::Value* v = m.find("slurm")) slurm(*v);
    if (const yaml::Value* v = m.find("isolation")) isolation(*v);
    if (const yaml::Value* v = m.find("retention")) retention(*v);
    if (const yaml::Value* v = m.find("telemetry")) telemetry(*v);
    if (const yaml::Value* v = m.find("ha")) ha(*v);
    if (const yaml::Value* v = m.find("log_level")) {
      cfg.log_level = v->one_of({"trace", "debug", "info", "warn", "error"});
    }
  }
};

}  // namespace

Result<ControllerConfig> parse_controller_config(std::string_view text, std::string_view source_name) {
  Loader loader;
  loader.base = std::filesystem::path(std::string(source_name)).parent_path();
  loader.cfg.source = std::string(source_name);
  Status s = yaml::read_yaml_document(text, source_name, "the config",
                                      [&loader](const yaml::Value& root) { loader.load(root); });
  if (!s) return s.error();
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
