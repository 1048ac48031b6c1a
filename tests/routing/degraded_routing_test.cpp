// Routing on degraded fat trees (issue 10): property tests over seeded
// degradations of generated fabrics (2- and 3-level ROFTs and plain fat
// trees, radix 16 to 64, sizes that are not powers of two, at most 1,024 CAs):
// single links, spines, cores and leaves down, 1-10% of the switch links cut
// (uniformly or at one tier), drained, or both.
//
// The quality is judged by tests/routing/cut_oracle.h against cut bounds it
// computes itself, not by the engine's report. Two kinds of tests:
//  - Always* : what must hold on every degradation (reachability of every
//    pair up*/down* can connect, no credit loop with or without switch LIDs,
//    minimal routes, determinism). Over 300 degradations.
//  - The issue's quality targets, one TEST each, so that a failure names the
//    target; every scenario prints one line with its numbers.
// Route like the CLI: plan_routing (rails, leaf order), then route_unicast
// with the variant's drain mask.
#include <gtest/gtest.h>

#include <iomanip>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>

#include "routing/generator.h"
#include "routing/rails.h"
#include "routing/routing_plan.h"
#include "routing/unicast_engine.h"
#include "routing/verifier.h"
#include "tests/routing/cut_oracle.h"
#include "tests/routing/path_stability.h"
#include "tests/routing/switch_pieces_oracle.h"
#include "tests/routing/degradations.h"
#include "tests/routing/leaf_distances.h"
#include "tests/routing/test_fabrics.h"

namespace railyard::routing::test {
namespace {

struct Shape {
  TopologyKind kind;
  uint32_t servers, rails, levels, radix;
  // The largest fabrics get one seed of fewer kinds: routing them dominates
  // the cost, and the file must stay under a minute in an ASan Debug build.
  bool big = false;
};

// At most 1,024 CAs each; servers 24, 40, 80, 96 are not powers of two.
constexpr Shape kTwoLevel[] = {
    {TopologyKind::kRoft, 24, 4, 2, 16},         // 96 CAs, 12 leaves, 8 spines
    {TopologyKind::kRoft, 40, 8, 2, 32},         // 320 CAs, a partial group per rail
    {TopologyKind::kRoft, 80, 4, 2, 32},         // 320 CAs
    {TopologyKind::kRoft, 96, 4, 2, 32},         // 384 CAs
    {TopologyKind::kRoft, 64, 8, 2, 32},         // 512 CAs
    {TopologyKind::kFatTree, 40, 8, 2, 32},      // 320 CAs, 2 servers per leaf
    {TopologyKind::kRoft, 128, 8, 2, 64, true},  // 1,024 CAs, 32 spines
};
constexpr Shape kThreeLevel[] = {
    {TopologyKind::kRoft, 24, 8, 3, 16},         // 192 CAs, 3 pods
    {TopologyKind::kRoft, 40, 8, 3, 16},         // 320 CAs, 5 pods
    {TopologyKind::kRoft, 96, 4, 3, 32},         // 384 CAs, a partial pod
    {TopologyKind::kRoft, 64, 8, 3, 32},         // 512 CAs, 2 pods
    {TopologyKind::kFatTree, 96, 4, 3, 16},      // 384 CAs, 6 pods
    {TopologyKind::kRoft, 128, 8, 3, 16, true},  // 1,024 CAs, 16 pods
};
// The quality targets are judged on a representative subset: each size
// class, both kinds, radix 16 to 64.
constexpr Shape kQuality[] = {
    {TopologyKind::kRoft, 40, 8, 2, 32},         // 320 CAs
    {TopologyKind::kRoft, 64, 8, 2, 32},         // 512 CAs
    {TopologyKind::kFatTree, 40, 8, 2, 32},      // 320 CAs
    {TopologyKind::kRoft, 128, 8, 2, 64, true},  // 1,024 CAs
    {TopologyKind::kRoft, 24, 8, 3, 16},         // 192 CAs
    {TopologyKind::kRoft, 96, 4, 3, 32},         // 384 CAs
    {TopologyKind::kFatTree, 96, 4, 3, 16},      // 384 CAs
    {TopologyKind::kRoft, 128, 8, 3, 16, true},  // 1,024 CAs
};

enum class Kind : uint8_t {
  kLinkLeafSpine, kLinkSpineCore, kLeaf, kSpine, kCore, kCut, kCutLeafSpine, kCutSpineCore, kDrain, kCutDrain
};

struct Scenario {
  Kind kind;
  double pct = 0;
  double pct2 = 0;  // kCutDrain: the drained share
  uint64_t seed = 1;
};

Degraded make(const Degrader& d, const Scenario& s) {
  switch (s.kind) {
    case Kind::kLinkLeafSpine: return d.link_down(Tier::kLeafSpine, s.seed);
    case Kind::kLinkSpineCore: return d.link_down(Tier::kSpineCore, s.seed);
    case Kind::kLeaf: return d.switch_down(1, s.seed);
    case Kind::kSpine: return d.switch_down(2, s.seed);
    case Kind::kCore: return d.switch_down(3, s.seed);
    case Kind::kCut: return d.cut(s.pct, Tier::kAny, s.seed);
    case Kind::kCutLeafSpine: return d.cut(s.pct, Tier::kLeafSpine, s.seed);
    case Kind::kCutSpineCore: return d.cut(s.pct, Tier::kSpineCore, s.seed);
    case Kind::kDrain: return d.drain(s.pct, Tier::kAny, s.seed);
    case Kind::kCutDrain: return d.cut_and_drain(s.pct, s.pct2, Tier::kAny, s.seed);
  }
  return d.healthy();
}

// Seeds 1..count of one kind.
void add(std::vector<Scenario>& out, Kind kind, uint64_t count, double pct = 0, double pct2 = 0) {
  for (uint64_t seed = 1; seed <= count; ++seed) out.push_back({kind, pct, pct2, seed});
}

uint64_t seeds(const Shape& shape) { return shape.big ? 1 : 2; }

// The issue's "single failure": one link, one spine or core, one leaf.
std::vector<Scenario> single_failures(const Shape& shape) {
  std::vector<Scenario> out;
  add(out, Kind::kLinkLeafSpine, seeds(shape));
  if (shape.levels == 3) add(out, Kind::kLinkSpineCore, seeds(shape));
  add(out, Kind::kSpine, seeds(shape));
  if (shape.levels == 3) add(out, Kind::kCore, seeds(shape));
  if (!shape.big) add(out, Kind::kLeaf, 1);
  return out;
}

// The single failures but a core switch (whose all-to-all target is not met
// yet, below).
std::vector<Scenario> single_failures_but_core(const Shape& shape) {
  std::vector<Scenario> out = single_failures(shape);
  std::erase_if(out, [](const Scenario& s) { return s.kind == Kind::kCore; });
  return out;
}

std::vector<Scenario> core_failures(const Shape& shape) {
  std::vector<Scenario> out;
  if (shape.levels == 3) add(out, Kind::kCore, seeds(shape));
  return out;
}

// "Up to 5% cut or drained".
std::vector<Scenario> up_to_five_percent(const Shape& shape) {
  std::vector<Scenario> out;
  if (!shape.big) add(out, Kind::kCut, 2, 1);
  add(out, Kind::kCut, seeds(shape), 5);
  if (shape.levels == 3 && !shape.big) {
    add(out, Kind::kCutLeafSpine, 1, 5);
    add(out, Kind::kCutSpineCore, 1, 5);
  }
  add(out, Kind::kDrain, seeds(shape), 5);
  if (!shape.big) add(out, Kind::kCutDrain, 2, 2.5, 2.5);
  return out;
}

std::vector<Scenario> ten_percent(const Shape& shape) {
  std::vector<Scenario> out;
  add(out, Kind::kCut, seeds(shape), 10);
  if (shape.big) return out;
  if (shape.levels == 3) {
    add(out, Kind::kCutLeafSpine, 1, 10);
    add(out, Kind::kCutSpineCore, 1, 10);
  }
  add(out, Kind::kDrain, 1, 10);
  add(out, Kind::kCutDrain, 1, 5, 5);
  return out;
}

std::vector<Scenario> one_link(const Shape& shape) {
  std::vector<Scenario> out;
  add(out, Kind::kLinkLeafSpine, seeds(shape) + 1);
  if (shape.levels == 3) add(out, Kind::kLinkSpineCore, seeds(shape) + 1);
  return out;
}

// Every kind, for the always-properties: 24 scenarios on the smaller two-level
// fabrics, 28 on the smaller three-level ones, 7 and 9 on the largest.
std::vector<Scenario> every_kind(const Shape& shape) {
  const bool three = shape.levels == 3;
  std::vector<Scenario> out;
  if (shape.big) {
    add(out, Kind::kLinkLeafSpine, 1);
    if (three) add(out, Kind::kLinkSpineCore, 1);
    add(out, Kind::kSpine, 1);
    if (three) add(out, Kind::kCore, 1);
    add(out, Kind::kLeaf, 1);
    add(out, Kind::kCut, 1, 5);
    add(out, Kind::kCut, 1, 10);
    add(out, Kind::kDrain, 1, 5);
    add(out, Kind::kCutDrain, 1, 2.5, 2.5);
    return out;
  }
  add(out, Kind::kLinkLeafSpine, three ? 3 : 8);
  if (three) add(out, Kind::kLinkSpineCore, 3);
  add(out, Kind::kSpine, 2);
  if (three) add(out, Kind::kCore, 2);
  add(out, Kind::kLeaf, 1);
  add(out, Kind::kCut, 2, 1);
  add(out, Kind::kCut, 3, 5);
  add(out, Kind::kCut, 2, 10);
  if (three) {
    add(out, Kind::kCutLeafSpine, 1, 5);
    add(out, Kind::kCutSpineCore, 1, 5);
    add(out, Kind::kCutLeafSpine, 1, 10);
    add(out, Kind::kCutSpineCore, 1, 10);
  }
  add(out, Kind::kDrain, 1, 1);
  add(out, Kind::kDrain, 2, 5);
  add(out, Kind::kDrain, 1, 10);
  add(out, Kind::kCutDrain, 2, 2.5, 2.5);
  return out;
}

struct Needs {
  bool verify = false;       // verifier: reachability, stretch, CDG
  bool determinism = false;  // route twice (checks_determinism picks the scenarios)
  bool a2a = false;
  bool shifts = false;       // rail-aligned and cross-rail, every k
  bool stability = false;    // against the healthy tables
};

// Routing twice is the cost: determinism is checked on seed 1 of a link
// down, a spine down, a cut, a drain and a mix (on the largest fabrics, the
// cuts only).
bool checks_determinism(const Shape& shape, const Scenario& sc) {
  if (sc.seed != 1) return false;
  if (shape.big) return sc.kind == Kind::kCut;
  return sc.kind == Kind::kLinkLeafSpine || sc.kind == Kind::kSpine || sc.kind == Kind::kCut ||
         sc.kind == Kind::kDrain || sc.kind == Kind::kCutDrain;
}

struct Judged {
  std::string name;
  VerifyReport verify;
  uint64_t switch_pairs_apart = 0;  // (switch, switch LID) pairs in different pieces of the switch graph
  bool deterministic = true;
  AllToAllLoad a2a;
  ShiftSweep rail, cross;
  PathStability stability;
};

std::string summary(const Judged& j) {
  std::ostringstream s;
  s << j.name << " |";
  if (j.a2a.bound) {
    s << " a2a " << j.a2a.max_load << "/" << j.a2a.bound << " = " << std::fixed << std::setprecision(3)
      << j.a2a.ratio() << " |";
  }
  if (j.rail.shifts) s << " rail " << j.rail.worst_max << "/" << j.rail.worst_bound << " @" << j.rail.worst_k << " |";
  if (j.cross.shifts) {
    s << " cross " << j.cross.worst_max << "/" << j.cross.worst_bound << " @" << j.cross.worst_k << " |";
  }
  if (j.a2a.pairs) s << " unreachable " << j.a2a.pairs - j.a2a.delivered << " lost " << j.a2a.lost_connectable << " |";
  if (j.stability.entries) s << " changed " << j.stability.changed << " crossed " << j.stability.crossed;
  return s.str();
}

std::string label(const Shape& shape, const Fabric& f) {
  std::string l = fabric_label(f);
  if (shape.kind != TopologyKind::kRoft) l += " " + std::string(to_string(shape.kind));
  return l;
}

Fabric generate_shape(const Shape& shape) {
  GeneratorSpec spec = roft(shape.servers, shape.rails, shape.levels, shape.radix);
  spec.kind = shape.kind;
  return generate(spec);
}

std::optional<RoutingResult> route(const Degraded& d, const RailMap& rails) {
  auto options = plan_routing(d.fabric, {}, rails);
  EXPECT_TRUE(options.ok()) << d.name << ": " << (options.ok() ? "" : options.error().message);
  if (!options.ok()) return std::nullopt;
  options->drained = d.drained;
  auto r = route_unicast(d.fabric, *options);
  EXPECT_TRUE(r.ok()) << d.name << ": " << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return std::nullopt;
  return std::move(r).value();
}

// Routes every scenario of `scenarios(shape)` on every shape, judges what
// `needs` asks, prints one line each and hands the result to `check`.
template <class Scenarios, class Check>
uint32_t for_each_case(std::span<const Shape> shapes, Scenarios&& scenarios, Needs needs, Check&& check) {
  uint32_t cases = 0;
  for (const Shape& shape : shapes) {
    const Fabric base = generate_shape(shape);
    const Degrader degrader(base, label(shape, base));
    const RailMap rails = map_rails(base, policies::RailNaming());
    std::vector<std::vector<Flow>> rail_shifts, cross_shifts;
    if (needs.shifts) {
      rail_shifts = CutOracle::shift_patterns(base, rails, false);
      if (rails.num_rails > 1) cross_shifts = CutOracle::shift_patterns(base, rails, true);
    }
    std::optional<RoutingResult> healthy;
    if (needs.stability) {
      healthy = route(degrader.healthy(), rails);
      if (!healthy) continue;
    }
    for (const Scenario& sc : scenarios(shape)) {
      Degraded d = make(degrader, sc);
      Judged j;
      j.name = d.name;
      std::optional<RoutingResult> r = route(d, rails);
      ++cases;
      if (!r) continue;
      if (needs.determinism && checks_determinism(shape, sc)) {
        std::optional<RoutingResult> again = route(d, rails);
        j.deterministic = again && again->tables == r->tables;
      }
      if (needs.verify) {
        j.verify = verify_tables(d.fabric, r->tables);
        j.switch_pairs_apart = test::switch_pairs_apart(d.fabric);
      }
      CutOracle oracle(d.fabric, d.drained);
      if (needs.a2a) j.a2a = oracle.all_to_all(r->tables);
      if (needs.shifts) {
        j.rail = oracle.shifts(r->tables, rail_shifts);
        j.cross = oracle.shifts(r->tables, cross_shifts);
      }
      if (needs.stability) j.stability = path_stability(base, healthy->tables, d.fabric, d.drained, r->tables);
      std::cout << summary(j) << "\n";
      check(j);
    }
  }
  std::cout << std::flush;
  return cases;
}

// ---- Always ----------------------------------------------------------------

void expect_always(const Judged& j) {
  // Every pair up*/down* can connect is connected: the oracle's own walk ...
  EXPECT_EQ(j.a2a.lost_connectable, 0u) << j.name << ": " << j.a2a.looped << " looped";
  // ... agrees with the verifier's, so the verifier's unreachable pairs are
  // exactly those with a dead CA port or no legal path.
  EXPECT_EQ(j.verify.reachable, j.a2a.delivered) << j.name;
  EXPECT_EQ(j.verify.pairs - j.verify.reachable,
            (j.a2a.pairs - j.a2a.connectable) + (j.verify.pairs - j.a2a.pairs))
      << j.name;
  EXPECT_EQ(j.verify.looped, 0u) << j.name;
  EXPECT_TRUE(j.verify.cdg_ca.acyclic) << j.name << ": " << j.verify.cdg_ca.cycle;
  EXPECT_TRUE(j.verify.cdg_all.acyclic) << j.name << ": " << j.verify.cdg_all.cycle;
  // Every switch LID is reached from every switch of its piece (the turn
  // switch, then the repair: management traffic by LID works everywhere).
  EXPECT_EQ(j.verify.switch_pairs - j.verify.switch_pairs_reachable, j.switch_pairs_apart)
      << j.name << ": (switch, switch LID) pairs unreachable";
  EXPECT_EQ(j.verify.max_stretch, 0u) << j.name;
  EXPECT_TRUE(j.deterministic) << j.name << ": two routes of the same input differ";
}

constexpr Needs kAlways = {.verify = true, .determinism = true, .a2a = true};

TEST(DegradedRouting, AlwaysConnectedDeadlockFreeMinimalDeterministicTwoLevels) {
  uint32_t n = for_each_case(kTwoLevel, every_kind, kAlways, expect_always);
  EXPECT_EQ(n, 6u * 24u + 7u);
}

TEST(DegradedRouting, AlwaysConnectedDeadlockFreeMinimalDeterministicThreeLevels) {
  uint32_t n = for_each_case(kThreeLevel, every_kind, kAlways, expect_always);
  EXPECT_EQ(n, 5u * 28u + 9u);
}

// ---- Quality targets of the issue --------------------------------------------

// A target over a family: every scenario is checked, and the test ends with
// a count of the scenarios that missed it.
struct Tally {
  uint32_t cases = 0;
  uint32_t missed = 0;
  double worst = 0;
  std::string worst_name;
  void note(bool ok, double value, const std::string& name) {
    ++cases;
    missed += ok ? 0 : 1;
    if (value > worst || worst_name.empty()) {
      worst = value;
      worst_name = name;
    }
  }
  void report(const char* target) const {
    print(target);
    EXPECT_EQ(missed, 0u) << target << ": " << missed << " of " << cases << " scenarios miss it; worst " << worst
                          << " (" << worst_name << ")";
  }
  // A target not met yet: no fewer scenarios may meet it than `met`.
  void at_least(uint32_t met, const char* target) const {
    print(target);
    EXPECT_GE(cases - missed, met) << target << ": fewer scenarios meet it than before";
  }
  void print(const char* target) const {
    std::cout << target << ": " << cases - missed << " of " << cases << " scenarios meet it; worst " << worst
              << " (" << worst_name << ")\n";
  }
};

void a2a_within(double factor, const Judged& j, Tally& t) {
  bool ok = static_cast<double>(j.a2a.max_load) <= factor * static_cast<double>(j.a2a.bound);
  EXPECT_TRUE(ok) << j.name << ": all-to-all max " << j.a2a.max_load << " > " << factor << " x bound " << j.a2a.bound
                  << " (ratio " << j.a2a.ratio() << ")";
  t.note(ok, j.a2a.ratio(), j.name);
}

// `each`: a miss fails the test (else only the tally counts it).
void shifts_within(int64_t slack, bool cross, const Judged& j, Tally& t, bool each = true) {
  const ShiftSweep& s = cross ? j.cross : j.rail;
  if (!s.shifts) return;
  bool ok = s.worst_excess <= slack;
  EXPECT_TRUE(ok || !each) << j.name << ": " << (cross ? "cross-rail" : "rail-aligned") << " shift k=" << s.worst_k
                  << " loads " << s.worst_max << " > its bound " << s.worst_bound << " + " << slack;
  t.note(ok, static_cast<double>(s.worst_excess), j.name);
}

// Targets not met yet are DISABLED_ tests: they say the target and print
// where the engine stands (docs/routing.md, "Targets not met"); run them
// with --gtest_also_run_disabled_tests.

TEST(DegradedRouting, SingleLinkSpineOrLeafFailureAllToAllWithin5PercentOfBound) {
  Tally t;
  for_each_case(kQuality, single_failures_but_core, {.a2a = true},
                [&](const Judged& j) { a2a_within(1.05, j, t); });
  t.report("single link, spine or leaf failure: all-to-all <= 1.05 x bound");
}

// A core down takes a link from every spine of its plane: within 1.05x the
// flows of destinations that did not cross the core must shift too, which
// the pass over the busiest links does (unicast_engine/hot_links.cpp;
// before it: 1.06-1.09x).
TEST(DegradedRouting, CoreFailureAllToAllWithin5PercentOfBound) {
  Tally t;
  for_each_case(kQuality, core_failures, {.a2a = true}, [&](const Judged& j) { a2a_within(1.05, j, t); });
  t.report("core failure: all-to-all <= 1.05 x bound");
}

// The quality subset stops at 1,024 CAs. On 2,048 (3 levels, radix 32) a
// core down needs more of the pass over the busiest links than 2^18 table
// reads (seed 2: 1.055x with them, 1.047x with 2^19).
TEST(DegradedRouting, CoreFailureAllToAllWithin5PercentOfBoundOn2048Cas) {
  constexpr Shape kLarger[] = {{TopologyKind::kRoft, 256, 8, 3, 32, true}};
  auto cores = [](const Shape&) {
    std::vector<Scenario> out;
    add(out, Kind::kCore, 2);
    return out;
  };
  Tally t;
  const uint32_t n = for_each_case(kLarger, cores, {.a2a = true}, [&](const Judged& j) { a2a_within(1.05, j, t); });
  EXPECT_EQ(n, 2u);
  t.report("core failure, 2,048 CAs: all-to-all <= 1.05 x bound");
}

// Not met: 42 of 48 single failures meet it (36 before the pass over
// shifts, unicast_engine/shift_repair.cpp, and CutOracle's spines' bound,
// which the radix-32 ROFT's core down meets: its spines had every up link
// on that core; 40 before that pass's wide swaps, which the rails of 40
// servers that end in a partial leaf need when a spine is down). The others
// load some shift with its bound + 1 (a spine-core link or a core down on
// the radix-16 ROFT of 2 pods per rail, from shift 54 or 62: the spine of
// the weakened plane J sends two destinations of the other pod through one
// core, index J of two of its leaves, at most 56 hosts apart: their flows
// from this pod meet in every shift but 64 (bound 2) that reaches both from
// it; at the bound they must be 63 apart, indices 0 and 7, which changes the index of plane J at every leaf
// of the rail; a spine-core link on the plain fat tree), and a core down
// on the plain fat tree (one ring) with its bound + 2. Tables that meet it exist, but in most cases surveyed none that moves
// only the routes the failure crossed, and the moves they need are
// coordinated over many destinations that no single move or swap lowers
// (shift_feasibility_test.cpp, docs/routing.md "Shifts after a failure").
Tally single_failure_shifts(bool each) {
  Tally t;
  for_each_case(kQuality, single_failures, {.shifts = true},
                [&](const Judged& j) { shifts_within(0, false, j, t, each); });
  return t;
}

TEST(DegradedRouting, DISABLED_SingleFailureEveryRailAlignedShiftAtItsBound) {
  single_failure_shifts(true).report("single failure: every rail-aligned shift <= its bound (worst excess)");
}

// The target above, as far as it is met: no fewer single failures than 42
// of 48 keep every rail-aligned shift at its bound (40 before the pass over
// shifts swapped with destinations of other shifts, 36 before that pass, 34
// before a rail's flows went first in phase B).
TEST(DegradedRouting, SingleFailureRailAlignedShiftsAtTheirBoundNoFewerThanBefore) {
  single_failure_shifts(false).at_least(42, "single failure: every rail-aligned shift <= its bound (worst excess)");
}

TEST(DegradedRouting, UpToFivePercentAllToAllWithin15PercentOfBound) {
  Tally t;
  for_each_case(kQuality, up_to_five_percent, {.a2a = true},
                [&](const Judged& j) { a2a_within(1.15, j, t); });
  t.report("up to 5% cut or drained: all-to-all <= 1.15 x bound");
}

// Every scenario meets it since the pass over shifts (51 rail-aligned and
// 47 cross-rail of the 58 before it; worst bound + 3).
TEST(DegradedRouting, UpToFivePercentShiftsWithinBoundPlusOne) {
  Tally rail, cross;
  for_each_case(kQuality, up_to_five_percent, {.shifts = true}, [&](const Judged& j) {
    shifts_within(1, false, j, rail);
    shifts_within(1, true, j, cross);
  });
  rail.report("up to 5% cut or drained: rail-aligned shifts <= bound + 1 (worst excess)");
  cross.report("up to 5% cut or drained: cross-rail shifts <= bound + 1 (worst excess)");
}

TEST(DegradedRouting, TenPercentAllToAllWithin30PercentOfBound) {
  Tally t;
  for_each_case(kQuality, ten_percent, {.a2a = true},
                [&](const Judged& j) { a2a_within(1.3, j, t); });
  t.report("10% cut or drained: all-to-all <= 1.3 x bound");
}

TEST(DegradedRouting, OneLinkFailureChangesAtMostTwiceTheEntriesThatCrossedIt) {
  Tally t;
  for_each_case(kQuality, one_link, {.stability = true},
                [&](const Judged& j) {
                  bool ok = j.stability.changed <= 2 * j.stability.crossed;
                  EXPECT_TRUE(ok) << j.name << ": " << j.stability.changed << " entries changed, "
                                  << j.stability.crossed << " crossed the failed link (limit 2x)";
                  double ratio = j.stability.crossed
                                     ? static_cast<double>(j.stability.changed) / static_cast<double>(j.stability.crossed)
                                     : static_cast<double>(j.stability.changed);
                  t.note(ok, ratio, j.name);
                });
  t.report("one link failure: changed entries <= 2 x entries that crossed it (worst changed/crossed)");
}

// After a spine-core link or a core goes down, a leaf's entries toward the
// CAs of its own rail whose healthy next hop is still a shortest legal one
// (LeafDistances) must stay as they were: over every window of a
// rail-aligned shift they use each up link of the leaf once, and moving one
// loads some link of the leaf twice in every shift that carries it. The
// failure's flows are taken up by the spines above and by the flows between
// rails instead (phase B routes a ring's flows first, and the pass over the
// busiest links leaves them alone: unicast_engine/flow_choice.cpp,
// hot_links.cpp). Before that, the 1,024-CA ROFT with one spine-core link
// down moved 4 such entries and loaded shift 8 with 2 over a bound of 1 at a
// leaf.
TEST(DegradedRouting, ASpineCoreFailureMovesNoLeafEntryTowardItsOwnRail) {
  uint32_t scenarios = 0;
  for (const Shape& shape : kQuality) {
    if (shape.levels != 3 || shape.kind != TopologyKind::kRoft) continue;
    const Fabric base = generate_shape(shape);
    const Degrader degrader(base, label(shape, base));
    const RailMap rails = map_rails(base, policies::RailNaming());
    const std::optional<RoutingResult> healthy = route(degrader.healthy(), rails);
    ASSERT_TRUE(healthy);
    // (switch index, CA LID, the CA's leaf): a leaf with a rail, a CA of that rail on another leaf.
    struct Pair {
      uint32_t s;
      Lid lid;
      NodeId leaf;
    };
    std::vector<Pair> own_rail;
    const auto& sw = base.switches();
    for (uint32_t s = 0; s < sw.size(); ++s) {
      const int32_t rail = rails.rail[sw[s].value()];
      if (rail < 0) continue;
      for (NodeId ca : base.cas()) {
        const Node& node = base.node(ca);
        for (uint32_t p = 1; p <= node.num_ports; ++p) {
          const PortId port(node.first_port.value() + p);
          const NodeId leaf = base.remote_node(port);
          if (rails.rail[ca.value()] == rail && leaf.valid() && leaf != sw[s] && base.port(port).lid.valid()) {
            own_rail.push_back({s, base.port(port).lid, leaf});
          }
        }
      }
    }
    ASSERT_FALSE(own_rail.empty()) << label(shape, base);
    for (const Kind kind : {Kind::kLinkSpineCore, Kind::kCore}) {
      for (uint64_t seed = 1; seed <= seeds(shape); ++seed) {
        const Degraded d = make(degrader, {kind, 0, 0, seed});
        const std::optional<RoutingResult> r = route(d, rails);
        ASSERT_TRUE(r) << d.name;
        ++scenarios;
        LeafDistances dist(d.fabric);
        uint64_t kept_legal = 0, moved = 0;
        for (const Pair& q : own_rail) {
          const uint8_t port = healthy->tables.get(q.s, q.lid);
          const PortId out = d.fabric.port_id(sw[q.s], PortNum{port});
          const NodeId next = d.fabric.remote_node(out);
          const LinkId l = d.fabric.port(out).link;
          const uint32_t i = dist.leaf(q.leaf);
          if (!next.valid() || !l.valid() || d.fabric.link(l).state == PortState::kDown ||
              dist.at(next, i) + 1 != dist.at(sw[q.s], i)) {
            continue;  // the healthy hop is no longer a shortest legal one
          }
          ++kept_legal;
          moved += r->tables.get(q.s, q.lid) != port ? 1 : 0;
        }
        EXPECT_GT(kept_legal, own_rail.size() / 2) << d.name;
        EXPECT_EQ(moved, 0u) << d.name << ": of " << kept_legal << " leaf entries toward their own rail that could stay";
      }
    }
  }
  EXPECT_EQ(scenarios, 2u * (2 + 2 + 1));
}

}  // namespace
}  // namespace railyard::routing::test
