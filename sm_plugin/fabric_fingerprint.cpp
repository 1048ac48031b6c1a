#include "sm_plugin/fabric_fingerprint.h"

#include <string_view>

namespace railyard::sm_plugin {

namespace {

// FNV-1a over 64-bit words and bytes: fast, stable across runs (no seed).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void word(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void bytes(std::string_view s) {
    word(s.size());
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

uint64_t fabric_fingerprint(const routing::Fabric& fabric) {
  Fnv f;
  f.word(fabric.num_nodes());
  for (uint32_t i = 0; i < fabric.num_nodes(); ++i) {
    const NodeId id(i);
    const auto& n = fabric.node(id);
    f.word(static_cast<uint64_t>(n.type) << 8 | n.num_ports);
    f.word(n.guid.value);
    f.word(n.system_guid.value);
    f.bytes(fabric.desc(id));
    f.bytes(fabric.name(id));
  }
  for (const auto& p : fabric.ports()) {
    f.word(uint64_t{p.lid.value} << 24 | uint64_t{p.lmc} << 16 | uint64_t{p.num.value} << 8 |
           static_cast<uint64_t>(p.state));
    f.word(p.guid.value);
    f.word(p.remote.value());
  }
  for (const auto& l : fabric.links()) {
    f.word(uint64_t{l.a.value()} << 32 | l.b.value());
    f.word(static_cast<uint64_t>(l.width) << 16 | static_cast<uint64_t>(l.speed) << 8 |
           static_cast<uint64_t>(l.state));
  }
  return f.h;
}

}  // namespace railyard::sm_plugin
