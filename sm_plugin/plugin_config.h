// PluginConfig: the plugin's own settings, from the YAML file named by
// OpenSM's `event_plugin_options`.
//
//   policy_file: <path>   # railyard policy (policies/policy_loader.h); relative
//                         # paths are taken from the config file's folder.
//                         # Absent: the default policy.
//   log_level: info       # error | info | verbose | debug
//   hop_matrices: railyard  # railyard | opensm: who builds OpenSM's min-hop
//                           # matrices (hop_matrices.h) and multicast trees
//                           # (mcast_tree.h); same values and trees, railyard's
//                           # is faster
//   heap: keep             # keep | release: whether memory freed by a pass
//                          # stays mapped for the next (heap_policy.h)
//   controller_socket: <path>   # Unix socket of railyard's controller: events
//                               # out, commands in (docs/plugin_protocol.md).
//                               # Absent: events off. At most 107 bytes.
//                               # The same as controllers: [unix:<path>].
//   controllers: [unix:/run/railyard/plugin.sock, tls://mgmt2:8641, ...]
//                          # several controllers (controller_address.h), tried
//                          # in order; the leader is followed (not_leader)
//   controller_ca: <pem>   # tls:// addresses: the CA the controller's
//                          # certificate must chain to (required with tls://)
//   controller_token_file: <path>  # tls:// addresses: the token sent in hello
//                          # (one line, mode 0600: controller/token_file.h)
//   policy_from_controller: true   # write the policy the controller pushes
//                          # into policy_file (default: true when
//                          # `controllers` is set and there is a policy_file)
//   fast_path: push        # push | opensm: how the controller's commands (and,
//                          # with a port probe, link failures) are applied: the
//                          # changed LFT blocks sent by the plugin
//                          # (fast_path.h), or OpenSM's force_reroute and sweeps
//   port_probe: <path>     # railyard-port-probe, which asks a trapping switch
//                          # which port changed; `off`: traps are left to
//                          # OpenSM's sweep. Absent: the installed one.
//   ca_first_blocks: 16384 # a push whose blocks changing only switch LIDs
//                          # are more than this and than those changing a
//                          # CA LID sends the CA columns first, in an order
//                          # of their own (a block with both kinds of change
//                          # is then sent twice: fast_path.cpp); 0: whenever
//                          # they are more than those changing a CA LID
//
// Every key is optional. Read once, when OpenSM loads the plugin. A missing
// option or file gives the defaults (and a log line saying so); a file that
// does not parse also gives the defaults, with "<file>:<line>: <reason>"
// (policies/yaml_doc.h: duplicate keys are refused too).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "routing/result.h"
#include "sm_plugin/controller_address.h"
#include "sm_plugin/log_level.h"

namespace railyard::sm_plugin {

// sockaddr_un::sun_path: 108 bytes with the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

struct PluginConfig {
  bool events_on() const { return !controller_socket.empty() || !controllers.empty(); }
  std::string source;       // the file it came from; empty for defaults
  std::string policy_file;  // absolute or relative to the process; empty = default policy
  LogLevel log_level = LogLevel::kInfo;
  bool railyard_hop_matrices = true;  // false: OpenSM builds them (build_lid_matrices NULL)
  bool keep_heap = true;              // heap: keep (heap_policy.h); false: glibc's defaults
  std::string controller_socket;      // a Unix socket; with `controllers` empty: events off
  std::vector<ControllerAddress> controllers;  // after controller_socket, if both
  std::string controller_ca;          // PEM file, for tls:// addresses
  std::string controller_token;       // read from controller_token_file; empty: none
  bool policy_from_controller = false;  // the controller's `policy` lines are written to policy_file
  bool fast_path = true;              // false: commands go to OpenSM's force_reroute
  // railyard-port-probe for trap 128s (fast_path.h on_trap); "off": traps
  // are left to OpenSM; empty: the installed one, if it is there.
  std::string port_probe;
  // Blocks changing only switch LIDs above which (and above the blocks
  // changing a CA LID) the fast path pushes the CA columns first.
  uint64_t ca_first_blocks = 16384;
};

// Pure: parses `text`; `source_name` labels errors and anchors a relative
// policy_file (its folder).
Result<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source_name);

// What create() uses: reads `path` (OpenSM's event_plugin_options, may be null
// or empty). Never fails: problems become defaults plus a `note` to log.
struct LoadedConfig {
  PluginConfig config;
  std::string note;   // why the defaults are in force, or what was read
  bool error = false; // the note is an error (file unreadable or invalid)
};
LoadedConfig load_plugin_config(const char* path);

}  // namespace railyard::sm_plugin
