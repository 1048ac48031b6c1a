// SwitchGraph derived from the graph before a change of link states
// (SwitchGraph(like, fabric, changed)) against the graph built from the
// fabric afresh, on seeded walks of links going down and coming back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "routing/switch_graph.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing {
namespace {

// Every array of the two graphs, through the public interface.
void expect_same_graph(const SwitchGraph& a, const SwitchGraph& b, const std::string& what) {
  ASSERT_EQ(a.num_switches(), b.num_switches()) << what;
  ASSERT_EQ(a.num_entries(), b.num_entries()) << what;
  for (uint32_t s = 0; s < a.num_switches(); ++s) {
    ASSERT_EQ(a.node(s), b.node(s)) << what;
    ASSERT_EQ(a.switch_index(a.node(s)), b.switch_index(b.node(s))) << what;
    ASSERT_EQ(a.begin(s), b.begin(s)) << what << ", switch " << s;
    ASSERT_EQ(a.end(s), b.end(s)) << what << ", switch " << s;
    ASSERT_EQ(a.num_cas(s), b.num_cas(s)) << what;
  }
  for (uint32_t e = 0; e < a.num_entries(); ++e) {
    ASSERT_EQ(a.remote(e), b.remote(e)) << what << ", entry " << e;
    ASSERT_EQ(a.port(e), b.port(e)) << what << ", entry " << e;
    ASSERT_EQ(a.rev(e), b.rev(e)) << what << ", entry " << e;
    ASSERT_EQ(a.link(e), b.link(e)) << what << ", entry " << e;
  }
}

TEST(SwitchGraph, DerivedFromTheGraphBeforeEqualsOneBuiltAfresh) {
  for (const GeneratorSpec& spec : {test::roft(64, 8, 3, 16), test::roft(40, 8, 2, 32), test::roft(256, 8, 3, 64)}) {
    Fabric fabric = test::generate(spec);
    std::vector<LinkId> switch_links;
    for (uint32_t l = 0; l < fabric.num_links(); ++l) {
      const Link& link = fabric.link(LinkId(l));
      if (fabric.is_switch(fabric.port(link.a).node) && fabric.is_switch(fabric.port(link.b).node)) {
        switch_links.push_back(LinkId(l));
      }
    }
    ASSERT_FALSE(switch_links.empty());
    std::mt19937_64 rng(7);
    SwitchGraph before(fabric);
    SwitchGraph spare(fabric);  // derived into in place every other step
    int steps = 0, changed_entries = 0;
    for (int step = 0; step < 12; ++step) {
      // One to five links flip, some of them on one switch.
      std::vector<LinkId> changed;
      FabricBuilder builder(fabric);
      const int flips = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < flips; ++i) {
        const LinkId l = switch_links[rng() % switch_links.size()];
        if (std::find(changed.begin(), changed.end(), l) != changed.end()) continue;
        const bool down = fabric.link(l).state != PortState::kDown;
        ASSERT_TRUE(builder.set_link_state(l, down ? PortState::kDown : PortState::kActive).ok());
        changed.push_back(l);
      }
      auto built = builder.build();
      ASSERT_TRUE(built.ok());
      Fabric after = std::move(built).value();
      const SwitchGraph fresh(after);
      SwitchGraph derived = step % 2 == 0 ? SwitchGraph(before, after, changed) : std::move(spare);
      if (step % 2 == 1) derived.derive(before, after, changed);
      expect_same_graph(derived, fresh,
                        std::to_string(spec.levels) + "L " + std::to_string(spec.servers) + " servers radix " +
                            std::to_string(spec.radix) + " step " + std::to_string(step));
      changed_entries += std::abs(static_cast<int>(fresh.num_entries()) - static_cast<int>(before.num_entries()));
      ++steps;
      fabric = std::move(after);
      spare = std::move(before);
      before = std::move(derived);  // the next step derives from a derived graph
    }
    EXPECT_EQ(steps, 12);
    EXPECT_GT(changed_entries, 0);
  }
}

}  // namespace
}  // namespace railyard::routing
