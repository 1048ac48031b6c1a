#include "routing/lft_digest.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "policies/policy_loader.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "test_fabrics.h"

namespace railyard::routing {
namespace {

// FNV-1a 64 reference vectors (Fowler/Noll/Vo's published test suite).
TEST(LftDigest, FnvMatchesTheReferenceVectors) {
  Fnv1a64 empty;
  EXPECT_EQ(empty.h, 0xcbf29ce484222325ull);
  Fnv1a64 a;
  a.text("a");
  EXPECT_EQ(a.h, 0xaf63dc4c8601ec8cull);
  Fnv1a64 foobar;
  foobar.text("foobar");
  EXPECT_EQ(foobar.h, 0x85944171f73967e8ull);
}

// The definition in the header, written out by hand.
uint64_t by_hand(uint64_t guid, const std::vector<uint8_t>& kept) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto put = [&](uint8_t b) {
    h ^= b;
    h *= 0x100000001b3ull;
  };
  for (int i = 0; i < 8; ++i) put(static_cast<uint8_t>(guid >> (8 * i)));
  for (int i = 0; i < 8; ++i) put(static_cast<uint8_t>(uint64_t{kept.size()} >> (8 * i)));
  for (uint8_t b : kept) put(b);
  return h;
}

TEST(LftDigest, SwitchDigestIsTheDocumentedHashWithoutTrailingNoPath) {
  const std::vector<uint8_t> row{0, 3, 0xFF, 7, 0xFF, 0xFF};
  const std::vector<uint8_t> kept{0, 3, 0xFF, 7};
  EXPECT_EQ(switch_lft_digest(Guid{0x1234}, row), by_hand(0x1234, kept));
  // Padded to a longer LFT (OpenSM's new_lft up to max_lid_ho): the same.
  std::vector<uint8_t> padded = row;
  padded.resize(200, 0xFF);
  EXPECT_EQ(switch_lft_digest(Guid{0x1234}, padded), switch_lft_digest(Guid{0x1234}, row));
  // One entry, or the switch, differs: another digest.
  std::vector<uint8_t> other = row;
  other[1] = 4;
  EXPECT_NE(switch_lft_digest(Guid{0x1234}, other), switch_lft_digest(Guid{0x1234}, row));
  EXPECT_NE(switch_lft_digest(Guid{0x1235}, row), switch_lft_digest(Guid{0x1234}, row));
  // A table of no path at all is the empty table.
  EXPECT_EQ(switch_lft_digest(Guid{9}, std::vector<uint8_t>(64, 0xFF)), by_hand(9, {}));
}

// lft_digests hashes several rows at once: on rows of every length of
// trailing "no path" (the longest and the shortest in one group, a group
// that is not full), each digest is the hash written out by hand.
TEST(LftDigest, EverySwitchOfATableIsItsRowsDigest) {
  const Fabric f = test::generate(test::roft(32, 3, 2, 16));
  const uint32_t n = static_cast<uint32_t>(f.switches().size());
  ASSERT_GT(n, 16u);
  ASSERT_NE(n % 8, 0u) << "a group of rows that is not full";
  ForwardingTables tables(n, 300);
  std::mt19937 rng(7);
  for (uint32_t s = 0; s < n; ++s) {
    // Entries before the trailing no path: none, all, or any number; the
    // second group of eight all long, so that they share a long prefix.
    const uint32_t used = s == 0 ? 0 : s == 1 ? 300 : s >= 8 && s < 16 ? 200 + rng() % 101 : rng() % 301;
    for (uint32_t l = 0; l < used; ++l) {
      tables.set(s, Lid{static_cast<uint16_t>(l)}, static_cast<uint8_t>(rng() % 3 == 0 ? 0xFF : rng() % 37));
    }
    if (used > 0) tables.set(s, Lid{static_cast<uint16_t>(used - 1)}, 5);
  }
  const LftDigests d = lft_digests(f, tables);
  ASSERT_EQ(d.switches.size(), n);
  for (uint32_t s = 0; s < n; ++s) {
    const Guid g = f.node(f.switches()[s]).guid;
    std::vector<uint8_t> kept(tables.row(s).begin(), tables.row(s).end());
    while (!kept.empty() && kept.back() == 0xFF) kept.pop_back();
    bool found = false;
    for (const SwitchDigest& x : d.switches) {
      if (x.guid != g) continue;
      found = true;
      EXPECT_EQ(x.lft, by_hand(g.value, kept)) << "switch " << s;
    }
    EXPECT_TRUE(found);
  }
}

TEST(LftDigest, TotalIsInGuidOrderWhateverTheRowOrder) {
  std::vector<SwitchDigest> a{{Guid{5}, 50}, {Guid{1}, 10}, {Guid{3}, 30}};
  std::vector<SwitchDigest> b{{Guid{1}, 10}, {Guid{3}, 30}, {Guid{5}, 50}};
  EXPECT_EQ(total_lft_digest(a), total_lft_digest(b));
  EXPECT_EQ(a, b);  // sorted
  std::vector<SwitchDigest> c{{Guid{1}, 10}, {Guid{3}, 31}, {Guid{5}, 50}};
  EXPECT_NE(total_lft_digest(c), total_lft_digest(b));
  // Swapping two switches' tables is a change.
  std::vector<SwitchDigest> d{{Guid{1}, 30}, {Guid{3}, 10}, {Guid{5}, 50}};
  EXPECT_NE(total_lft_digest(d), total_lft_digest(b));
}

ForwardingTables route(const Fabric& f, const policies::Policy& policy) {
  auto options = plan_routing(f, policy, map_rails(f, policy.rails));
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().message);
  auto routed = route_unicast(f, *options);
  EXPECT_TRUE(routed.ok());
  return std::move(routed->tables);
}

TEST(LftDigest, SameFabricSamePolicySameDigestsAndADrainChangesThem) {
  const Fabric f = test::generate(test::roft(16, 2, 2, 8));
  const LftDigests one = lft_digests(f, route(f, {}));
  const LftDigests two = lft_digests(f, route(f, {}));
  EXPECT_EQ(one, two);
  ASSERT_EQ(one.switches.size(), f.switches().size());
  // Each switch's digest is its row's.
  const ForwardingTables tables = route(f, {});
  for (size_t i = 0; i < f.switches().size(); ++i) {
    const Guid g = f.node(f.switches()[i]).guid;
    bool found = false;
    for (const SwitchDigest& s : one.switches) {
      if (s.guid != g) continue;
      found = true;
      EXPECT_EQ(s.lft, switch_lft_digest(g, tables.row(static_cast<uint32_t>(i))));
    }
    EXPECT_TRUE(found);
  }

  // Drain one uplink of the first leaf: some tables change, so the total does.
  policies::Policy drained;
  const NodeId leaf = f.switches()[0];
  for (uint8_t p = 1; p <= f.node(leaf).num_ports; ++p) {
    const PortId port = f.port_id(leaf, PortNum{p});
    const NodeId remote = f.remote_node(port);
    if (remote.valid() && f.is_switch(remote)) {
      drained.drains.ports.push_back({to_string(f.node(leaf).guid), p});
      break;
    }
  }
  ASSERT_FALSE(drained.drains.empty());
  const LftDigests after = lft_digests(f, route(f, drained));
  EXPECT_NE(after.total, one.total);
  size_t differing = 0;
  for (size_t i = 0; i < after.switches.size(); ++i) differing += after.switches[i].lft != one.switches[i].lft;
  EXPECT_GT(differing, 0u);
  EXPECT_LT(differing, after.switches.size() + 1);
}

TEST(LftDigest, PolicyDigestFollowsThePolicyValueNotItsFile) {
  policies::Policy a;
  a.drains.switches.push_back("S-0000000000000010");
  // The same policy written differently (comments, key order, flow style).
  auto b = policies::parse_policy_yaml(
      "# operator's file\ndrains: {switches: [S-0000000000000010]}\n", "test.yaml");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(policy_digest(a), policy_digest(*b));
  // Round trip through the canonical text.
  auto c = policies::parse_policy_yaml(policies::render_policy_yaml(a), "rendered.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(policy_digest(*c), policy_digest(a));
  // One more drain, or none: other digests.
  policies::Policy d = a;
  d.drains.links.push_back({"S-0000000000000011", 3});
  EXPECT_NE(policy_digest(d), policy_digest(a));
  EXPECT_NE(policy_digest(policies::Policy{}), policy_digest(a));
}

TEST(LftDigest, DigestTextIsSixteenHexDigits) {
  EXPECT_EQ(digest_text(0x1a), "0x000000000000001a");
  EXPECT_EQ(digest_text(~0ull), "0xffffffffffffffff");
}

}  // namespace
}  // namespace railyard::routing
