// Generated fabrics for the routing tests: a spec of a ROFT by its shape, and
// the fabric it gives (a failed generation fails the test that asked).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "routing/generator.h"

namespace railyard::routing::test {

// With LIDs assigned unless `lids` is false.
inline Fabric generate(GeneratorSpec spec, bool lids = true) {
  spec.assign_lids = lids;
  auto g = generate_fabric(spec);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(g).value().fabric;
}

inline GeneratorSpec roft(uint32_t servers, uint32_t rails, uint32_t levels, uint32_t radix) {
  GeneratorSpec spec;
  spec.servers = servers;
  spec.rails = rails;
  spec.levels = levels;
  spec.radix = radix;
  return spec;
}

// The first switch-to-switch link of f in link order (invalid: none).
inline LinkId first_switch_link(const Fabric& f) {
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    const Link& l = f.link(LinkId(i));
    if (f.is_switch(f.port(l.a).node) && f.is_switch(f.port(l.b).node)) return LinkId(i);
  }
  return LinkId();
}

// f with its first switch-to-switch link down (a failure fails the test
// that asked, and gives f unchanged).
inline Fabric with_first_switch_link_down(const Fabric& f) {
  const LinkId l = first_switch_link(f);
  EXPECT_TRUE(l.valid()) << "no switch-to-switch link";
  if (!l.valid()) return f;
  FabricBuilder b(f);
  EXPECT_TRUE(b.set_link_state(l, PortState::kDown).ok());
  Result<Fabric> built = b.build();
  EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().message);
  return built.ok() ? std::move(*built) : f;
}

}  // namespace railyard::routing::test
