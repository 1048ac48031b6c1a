#include "sm_plugin/controller_address.h"

#include <charconv>

namespace railyard::sm_plugin {

namespace {

// sockaddr_un::sun_path: 108 bytes with the terminating NUL.
constexpr size_t kMaxUnixPath = 107;

}  // namespace

std::string ControllerAddress::text() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tls://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ControllerAddress> parse_controller_address(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  ControllerAddress a;
  if (text.starts_with("unix:")) {
    a.kind = ControllerAddress::Kind::kUnix;
    a.path = std::string(text.substr(5));
    if (a.path.empty()) return Error{quoted + ": no socket path after unix:"};
    if (a.path.size() > kMaxUnixPath) {
      return Error{quoted + ": socket path longer than " + std::to_string(kMaxUnixPath) + " bytes"};
    }
    return a;
  }
  if (!text.starts_with("tls://")) return Error{quoted + ": expected unix:/path or tls://host:port"};
  std::string_view rest = text.substr(6);
  a.kind = ControllerAddress::Kind::kTls;
  std::string_view port_text;
  if (rest.starts_with("[")) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return Error{quoted + ": expected tls://[IPv6 address]:port"};
    }
    a.host = std::string(rest.substr(1, close - 1));
    port_text = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return Error{quoted + ": no port (tls://host:port)"};
    a.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) return Error{quoted + ": an IPv6 address goes in brackets"};
  }
  if (a.host.empty()) return Error{quoted + ": no host"};
  if (a.host.find_first_of("/ \t") != std::string::npos) return Error{quoted + ": not a host name"};
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return Error{quoted + ": the port must be 1..65535"};
  }
  a.port = static_cast<uint16_t>(port);
  return a;
}

}  // namespace railyard::sm_plugin
