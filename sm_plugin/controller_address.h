// ControllerAddress: where the plugin's channel reaches a controller
// (docs/plugin_protocol.md, "Transports"):
//
//   unix:/run/railyard/plugin.sock   a local Unix stream socket (peer checked
//                                    by the controller with SO_PEERCRED)
//   tls://host:port                  TCP with TLS: the plugin verifies the
//   tls://[v6 address]:port          controller's certificate against
//                                    controller_ca and sends its token in hello
//
// The plugin config's `controllers:` list holds these, tried in order;
// `controller_socket: PATH` is the same as `controllers: [unix:PATH]`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "routing/result.h"

namespace railyard::sm_plugin {

struct ControllerAddress {
  enum class Kind : uint8_t { kUnix, kTls };
  Kind kind = Kind::kUnix;
  std::string path;  // kUnix
  std::string host;  // kTls: a name, an IPv4 address or an IPv6 address (no brackets)
  uint16_t port = 0; // kTls
  // The canonical text ("unix:/path", "tls://host:port"): what the controller
  // names in not_leader is compared with this.
  std::string text() const;
  bool operator==(const ControllerAddress&) const = default;
};

// Parses one address; errors say what is wrong with it.
Result<ControllerAddress> parse_controller_address(std::string_view text);

}  // namespace railyard::sm_plugin
