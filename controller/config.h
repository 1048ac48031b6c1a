// ControllerConfig: railyardd's settings, from one YAML file validated at load
// (`railyardd config check FILE` runs exactly this).
//
//   listen: {address: 127.0.0.1, port: 8640}   # loopback unless said otherwise
//   tokens:                                      # bearer tokens and their roles
//     - {name: scheduler, role: operator, token_file: operator.token}
//     - {name: dashboards, role: viewer, token: "..."}
//   database: /var/lib/railyard/railyard.db      # SQLite (WAL)
//   fabric:
//     source: live | offline
//     topology_file: fabric.topo    # offline: the fabric (ibnetdiscover format)
//     plugin_socket: /run/railyard/plugin.sock   # live: where the plugin connects
//     plugin_socket_mode: "0600"    # 0600, or 0660 with plugin_socket_group
//     plugin_socket_group: opensm   # the group that may connect (with 0660)
//     plugin_listen: 0.0.0.0:8641   # live: plugins on other hosts, TCP with TLS
//     plugin_tls_cert: plugin.crt   #   the certificate the plugins verify (PEM chain)
//     plugin_tls_key: plugin.key    #   its key (PEM)
//     plugin_token_file: plugin.token  # the token their hello must carry (mode 0600)
//   policy:
//     base_file: /etc/railyard/policy.yaml  # rails, roots, static drains (optional)
//     output_file: /run/railyard/policy.yaml # base + the controller's drains; the
//                                            # file the plugin's policy_file names
//   limits:
//     max_body_bytes: 65536
//     reroutes_per_minute: 6
//     reroute_timeout_s: 60
//     max_connections: 512          # HTTP connections at once; beyond: 503
//     request_timeout_s: 10         # to send one whole request (headers + body)
//     idle_timeout_s: 30            # keep-alive connection with no request
//     refused_audits_per_minute: 120  # refused mutations audited; beyond: counted only
//     mutation_nice: 10             # routing and carrying out changes run at this nice (0..19):
//                                   # a GET gets the CPU first
//   slurm:                          # drain sync to Slurm (docs/slurm.md); off by default
//     drain_sync: false             # hosts with a broken rail DRAIN, resumed when healthy
//     scontrol: scontrol            # the scontrol to run (PATH is searched)
//     slurm_conf: ""                # SLURM_CONF for scontrol (default: scontrol's own)
//     interval_s: 10                # how often Slurm's nodes are compared with the fabric
//   isolation:                      # automatic isolation (docs/auto_isolation.md); off by default
//     enabled: false
//     dry_run: false                # decide and audit, drain nothing
//     flaps: 3                      # a link down this many times ...
//     window_s: 60                  # ... within this many seconds is drained ("auto: flapping")
//     errors_per_minute: 0          # error counters' rate that drains ("auto: errors"); 0: off
//     clean_s: 600                  # undrained once clean (up, no flap, no errors) this long
//     max_links: 4                  # the breaker: automation holds at most
//     max_percent: 1                #   max(max_links, max_percent% of switch links)
//   retention:                      # pruned at start and every hour
//     events_max_age_days: 90       # 0: kept whatever their age
//     events_max_count: 1000000     # the newest kept; 0: no bound
//     audit_max_age_days: 365
//     audit_max_count: 1000000
//   telemetry:                      # perf-manager counters (docs/telemetry.md)
//     history: 60                   # samples kept per port (ring buffer)
//     hot_xmit_wait_per_s: 1000     # PortXmitWait ticks/s from which a port is hot
//     top_n: 10                     # hot ports listed and exported to Prometheus
//     error_burst: 10               # errors in one sample that make a burst
//     max_ports: 262144             # ports followed (memory bound)
//   log_level: info                 # trace | debug | info | warn | error
//   ha:                             # three railyardd, one leader (docs/ha.md); absent: single-node
//     etcd: [http://10.0.0.1:2379, http://10.0.0.2:2379, http://10.0.0.3:2379]
//     member: mgmt1                 # this member's name (unique; [A-Za-z0-9._-], up to 64)
//     advertise_api: http://10.0.0.1:8640   # what the others name as leader to REST clients
//     advertise_plugin: tls://10.0.0.1:8641 # what they tell plugins (optional)
//     lease_ttl_s: 3                # the leader's lease: a dead leader is replaced within it (2..60)
//     prefix: /railyard/            # etcd keys (one fabric per prefix)
//     etcd_timeout_ms: 1000         # one etcd request to one member (100..30000)
//
// Relative paths are taken from the config file's folder. Unknown and
// duplicate keys, wrong types (a quoted number among them), out-of-range
// values and tokens that are empty or repeated are errors "FILE:LINE: what"
// (read with policies/yaml_doc.h, as the policy and the plugin's config).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/isolation.h"
#include "controller/telemetry.h"
#include "routing/result.h"

namespace railyard::controller {

enum class Role : uint8_t { kNone, kViewer, kOperator };
std::string_view to_string(Role role);

struct TokenEntry {
  std::string name;   // who: written to the audit log
  Role role = Role::kViewer;
  std::string token;  // the secret itself (read from token_file when given)
};

enum class FabricSource : uint8_t { kOffline, kLive };

// High availability (controller/replication.h): set when the config has `ha:`.
struct HaConfig {
  std::vector<std::string> etcd;  // http://host:port each
  std::string member;
  std::string advertise_api;     // http://host:port
  std::string advertise_plugin;  // unix:/path or tls://host:port (plugin link); may be empty
  uint32_t lease_ttl_s = 3;
  std::string prefix = "/railyard/";
  uint32_t etcd_timeout_ms = 1000;
};

struct ControllerConfig {
  std::string source;  // the config file
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 8640;
  std::vector<TokenEntry> tokens;
  std::string database = "railyard.db";
  FabricSource fabric_source = FabricSource::kOffline;
  std::string topology_file;
  std::string plugin_socket;
  uint32_t plugin_socket_mode = 0600;  // 0600 or 0660 (with a group)
  std::string plugin_socket_group;     // empty: the daemon's own group
  std::string plugin_listen_host;      // TLS listener; port 0: none
  uint16_t plugin_listen_port = 0;
  std::string plugin_tls_cert;
  std::string plugin_tls_key;
  std::string plugin_token;            // read from plugin_token_file
  std::string policy_base_file;
  std::string policy_output_file;
  uint64_t max_body_bytes = 64 * 1024;
  uint32_t reroutes_per_minute = 6;
  uint32_t reroute_timeout_s = 60;
  uint32_t max_connections = 512;
  uint32_t request_timeout_s = 10;
  uint32_t idle_timeout_s = 30;
  uint32_t refused_audits_per_minute = 120;
  uint32_t mutation_nice = 10;  // nice (0..19) of routing and of carrying out changes: readers first
  bool slurm_drain_sync = false;
  std::string slurm_scontrol = "scontrol";
  std::string slurm_conf;  // empty: scontrol's default
  uint32_t slurm_interval_s = 10;
  IsolationConfig isolation;
  // Retention of events and audit records (0: no bound of that kind).
  uint32_t events_max_age_days = 90;
  uint64_t events_max_count = 1'000'000;
  uint32_t audit_max_age_days = 365;
  uint64_t audit_max_count = 1'000'000;
  TelemetryConfig telemetry;
  std::string log_level = "info";
  std::optional<HaConfig> ha;  // none: single-node (the default)
};

// Pure: parses `text`; `source_name` labels errors and anchors relative paths.
// Token files are read (they are part of the config being valid).
Result<ControllerConfig> parse_controller_config(std::string_view text, std::string_view source_name);
Result<ControllerConfig> load_controller_config(const std::string& path);

}  // namespace railyard::controller
