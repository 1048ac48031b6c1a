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

}  // namespace railyard::routing::test
