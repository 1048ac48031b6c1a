#include "routing/fabric_fingerprint.h"

#include <string_view>

#include "routing/lft_digest.h"

namespace railyard::routing {

namespace {

// FNV-1a (routing/lft_digest.h); strings with their length first.
struct Fnv : Fnv1a64 {
  void bytes(std::string_view s) {
    word(s.size());
    text(s);
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

}  // namespace railyard::routing
