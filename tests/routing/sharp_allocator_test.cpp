// SharpAllocator: capacity never exceeded over many concurrent jobs with
// releases (usage recounted here from the live trees), all-or-nothing
// refusals with their messages, and recomputation after a link fails (drained,
// removed or down): the affected jobs' trees change and avoid the link, the
// others stay as they were, a cut-off or starved job is dropped.
#include <gtest/gtest.h>

#include <random>

#include "routing/rails.h"
#include "routing/sharp_allocator.h"
#include "tests/routing/sharp_check.h"

namespace railyard::routing {
namespace {

using namespace sharp_check;

std::vector<std::string> hosts(uint32_t first, uint32_t last) {  // 1-based, inclusive
  std::vector<std::string> out;
  for (uint32_t i = first; i <= last; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "node%03u", i);
    out.emplace_back(buf);
  }
  return out;
}

SharpAllocator make(const Fabric& f, uint32_t capacity, std::vector<uint8_t> drained = {}) {
  auto a = SharpAllocator::create(f, map_rails(f, {}), std::move(drained), capacity);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return std::move(a).value();
}

// Recounts every switch's trees from the live jobs, checks each job's trees
// and that no switch is over capacity and the allocator agrees.
void expect_capacity(const SharpAllocator& a, const std::map<std::string, std::vector<NodeId>>& want) {
  const Fabric& f = a.fabric();
  std::vector<uint32_t> usage(f.num_nodes(), 0);
  EXPECT_EQ(a.jobs().size(), want.size());
  for (const auto& job : a.jobs()) {
    SCOPED_TRACE("job " + job.job_id);
    ASSERT_TRUE(want.count(job.job_id));
    expect_trees(f, a.drained(), want.at(job.job_id), job.trees, &usage);
  }
  for (NodeId s : f.switches()) {
    EXPECT_LE(usage[s.value()], a.capacity()) << f.desc(s);
    EXPECT_EQ(usage[s.value()], a.trees_on(s)) << f.desc(s);
  }
}

TEST(SharpAllocator, CapacityNeverExceededUnderManyConcurrentJobs) {
  Fabric f = generate(roft(128, 4, 3, 16));
  SharpAllocator a = make(f, 3);
  std::map<std::string, std::vector<NodeId>> live;
  std::mt19937_64 rng(42);
  uint32_t granted = 0, refused = 0, released = 0;
  for (int op = 0; op < 200; ++op) {
    if (!live.empty() && rng() % 10 < 3) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      ASSERT_TRUE(a.release(it->first).ok());
      live.erase(it);
      ++released;
    } else {
      std::vector<std::string> all = hosts(1, 128);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(1 + rng() % 40);
      std::vector<int32_t> rails;
      if (rng() % 2) rails = {static_cast<int32_t>(rng() % 4)};
      SharpJob job{"job" + std::to_string(op), {}, all, rails};
      auto got = a.allocate(job);
      if (got.ok()) {
        live[job.id] = cas_of(f, all, rails);
        ++granted;
      } else {
        EXPECT_NE(got.error().message.find("SHARP tree capacity exhausted"), std::string::npos)
            << got.error().message;
        ++refused;
      }
    }
    expect_capacity(a, live);
    if (HasFailure()) FAIL() << "after operation " << op;
  }
  EXPECT_GT(granted, 50u);
  EXPECT_GT(refused, 10u);
  EXPECT_GT(released, 20u);
  for (const auto& [id, cas] : live) ASSERT_TRUE(a.release(id).ok());
  for (NodeId s : f.switches()) EXPECT_EQ(a.trees_on(s), 0u);
}

TEST(SharpAllocator, RefusalChangesNothingAndNamesTheFullSwitch) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpAllocator a = make(f, 1);
  ASSERT_TRUE(a.allocate({"a", {}, {"node001", "node009"}, {7}}).ok());
  std::vector<uint32_t> before;
  for (NodeId s : f.switches()) before.push_back(a.trees_on(s));
  // Rails 0..6 fit; rail 7's leaves are taken by job a.
  auto b = a.allocate({"b", {}, {"node001", "node009"}, {}});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            "job 'b' rail 7: SHARP tree capacity exhausted on leaf switch 'leaf g000 r7' (1 of 1 trees in use)");
  std::vector<uint32_t> after;
  for (NodeId s : f.switches()) after.push_back(a.trees_on(s));
  EXPECT_EQ(before, after);
  EXPECT_EQ(a.jobs().size(), 1u);
}

TEST(SharpAllocator, FullSpineGivesDegradedTreeThenRefusal) {
  Fabric f = detour_fabric();
  SharpAllocator a = make(f, 1);
  auto ca = [&](const char* d) { return f.find_name(d); };
  auto p = a.allocate({"p", {ca("h3 mlx5_0"), ca("h4 mlx5_0")}, {}, {}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(f.desc(p->trees.at(0).root), "S");
  // S is full: q goes the long way round, documented as degraded.
  auto q = a.allocate({"q", {}, {"h1", "h2"}, {}});
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(f.desc(q->trees.at(0).root), "C");
  EXPECT_TRUE(q->trees[0].degraded);
  EXPECT_EQ(q->trees[0].height, 2u);
  EXPECT_EQ(q->trees[0].min_height, 1u);
  auto r = a.allocate({"r", {}, {"h1"}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "job 'r' rail 0: SHARP tree capacity exhausted on leaf switch 'L1' (1 of 1 trees in use)");
  expect_capacity(a, {{"p", {ca("h3 mlx5_0"), ca("h4 mlx5_0")}}, {"q", {ca("h1 mlx5_0"), ca("h2 mlx5_0")}}});
  // Releasing p frees S, but q's tree is healthy and stays where it is.
  ASSERT_TRUE(a.release("p").ok());
  EXPECT_EQ(a.trees_on(ca("S")), 0u);
  auto same = a.set_drained({});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->unchanged, std::vector<std::string>{"q"});
  EXPECT_EQ(f.desc(a.find("q")->trees[0].root), "C");
}

TEST(SharpAllocator, ReleaseFreesCapacity) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpAllocator a = make(f, 1);
  ASSERT_TRUE(a.allocate({"a", {}, {"node001", "node009"}, {0}}).ok());
  auto b = a.allocate({"b", {}, {"node002", "node010"}, {0}});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            "job 'b' rail 0: SHARP tree capacity exhausted on leaf switch 'leaf g000 r0' (1 of 1 trees in use)");
  ASSERT_TRUE(a.release("a").ok());
  for (NodeId s : f.switches()) EXPECT_EQ(a.trees_on(s), 0u);
  auto again = a.allocate({"b", {}, {"node002", "node010"}, {0}});
  ASSERT_TRUE(again.ok()) << again.error().message;
  expect_capacity(a, {{"b", cas_of(f, {"node002", "node010"}, {0})}});
}

TEST(SharpAllocator, BadCalls) {
  Fabric f = generate(roft(16, 8, 2, 16));
  auto zero = SharpAllocator::create(f, map_rails(f, {}), {}, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "SHARP trees per switch must be at least 1");
  SharpAllocator a = make(f, 4);
  ASSERT_TRUE(a.allocate({"a", {}, {"node001"}, {}}).ok());
  auto twice = a.allocate({"a", {}, {"node002"}, {}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message, "job 'a' already holds SHARP trees; release it first");
  auto unknown = a.allocate({"b", {}, {"nosuch"}, {}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "job 'b': unknown host 'nosuch'");
  Status st = a.release("zz");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "no SHARP job 'zz'");
  auto mask = a.set_drained(std::vector<uint8_t>(2, 0));
  ASSERT_FALSE(mask.ok());
  EXPECT_EQ(a.jobs().size(), 1u);  // unchanged
}

// `f` again, node for node, with link `target` left out (or cabled down).
Fabric rebuilt(const Fabric& f, LinkId target, bool remove) {
  FabricBuilder b;
  for (uint32_t n = 0; n < f.num_nodes(); ++n) {
    const Node& nd = f.node(NodeId(n));
    NodeId id = b.add_node(nd.type, nd.num_ports, nd.guid, nd.system_guid, f.desc(NodeId(n)), f.name(NodeId(n)));
    for (uint32_t p = 0; p <= nd.num_ports; ++p) {
      const Port& port = f.port(PortId(nd.first_port.value() + p));
      if (!port.guid.valid() && !port.lid.valid()) continue;
      EXPECT_TRUE(b.set_port(id, PortNum{static_cast<uint8_t>(p)}, port.guid, port.lid, port.lmc, port.state).ok());
    }
  }
  for (uint32_t l = 0; l < f.num_links(); ++l) {
    const Link& link = f.link(LinkId(l));
    if (LinkId(l) == target && remove) continue;
    const Port& pa = f.port(link.a);
    const Port& pb = f.port(link.b);
    EXPECT_TRUE(b.connect(pa.node, pa.num, pb.node, pb.num, link.width, link.speed,
                          LinkId(l) == target ? PortState::kDown : link.state)
                    .ok());
  }
  auto out = b.build();
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return std::move(out).value();
}

bool uses(const SharpAllocation& job, LinkId link) {
  for (const auto& t : job.trees) {
    for (const auto& s : t.switches) {
      if (s.uplink == link) return true;
    }
  }
  return false;
}

// Same switches, parents, depths and CAs (node ids survive a rebuild here).
void expect_same_trees(const SharpAllocation& a, const SharpAllocation& b) {
  ASSERT_EQ(a.trees.size(), b.trees.size());
  for (size_t t = 0; t < a.trees.size(); ++t) {
    ASSERT_EQ(a.trees[t].switches.size(), b.trees[t].switches.size());
    for (size_t s = 0; s < a.trees[t].switches.size(); ++s) {
      const auto &x = a.trees[t].switches[s], &y = b.trees[t].switches[s];
      EXPECT_EQ(x.node, y.node);
      EXPECT_EQ(x.parent, y.parent);
      EXPECT_EQ(x.depth, y.depth);
      EXPECT_EQ(x.cas, y.cas);
    }
  }
}

TEST(SharpAllocator, FailedLinkRebuildsOnlyTheTreesUsingIt) {
  Fabric f = generate(roft(128, 4, 3, 16));
  std::map<std::string, std::vector<NodeId>> want = {
      {"a", cas_of(f, hosts(1, 64))}, {"b", cas_of(f, hosts(65, 128))}, {"c", cas_of(f, hosts(1, 128))},
      {"d", cas_of(f, hosts(9, 24), {2})}};
  std::map<std::string, std::vector<std::string>> job_hosts = {
      {"a", hosts(1, 64)}, {"b", hosts(65, 128)}, {"c", hosts(1, 128)}, {"d", hosts(9, 24)}};
  for (int how = 0; how < 3; ++how) {  // drained, removed, down
    SCOPED_TRACE(how == 0 ? "drained" : how == 1 ? "removed" : "down");
    SharpAllocator a = make(f, 4);
    for (const char* id : {"a", "b", "c", "d"}) {
      SharpJob job{id, {}, job_hosts[id], id == std::string("d") ? std::vector<int32_t>{2} : std::vector<int32_t>{}};
      ASSERT_TRUE(a.allocate(job).ok()) << id;
    }
    std::vector<SharpAllocation> before(a.jobs().begin(), a.jobs().end());
    // A cable of job a's rail-0 tree: the uplink of its deepest switch.
    const SharpTreeSwitch& victim = before[0].trees[0].switches.back();
    LinkId link = victim.uplink;
    ASSERT_TRUE(link.valid());
    const Port& child_port = f.port(f.port(f.link(link).a).node == victim.node ? f.link(link).a : f.link(link).b);
    std::set<std::string> affected;
    for (const auto& j : before) {
      if (uses(j, link)) affected.insert(j.job_id);
    }
    ASSERT_TRUE(affected.count("a"));
    ASSERT_LT(affected.size(), 4u);

    Result<SharpRecompute> r = Error{""};
    if (how == 0) {
      std::vector<uint8_t> drained(f.num_links(), 0);
      drained[link.value()] = 1;
      r = a.set_drained(drained);
    } else {
      r = a.update(rebuilt(f, link, how == 1), map_rails(f, {}), {});
    }
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->refused.empty());
    EXPECT_EQ(std::set<std::string>(r->changed.begin(), r->changed.end()), affected);
    EXPECT_EQ(r->changed.size() + r->unchanged.size(), 4u);
    expect_capacity(a, want);  // trees valid on the new fabric: every uplink usable there
    const Fabric& now = a.fabric();
    for (const auto& j : before) {
      const SharpAllocation* after = a.find(j.job_id);
      ASSERT_NE(after, nullptr);
      if (!affected.count(j.job_id)) {
        EXPECT_EQ(after->version, j.version);
        expect_same_trees(j, *after);
        continue;
      }
      EXPECT_EQ(after->version, j.version + 1);
      // The failed cable is not climbed any more (port of the child switch).
      for (const auto& t : after->trees) {
        for (const auto& s : t.switches) {
          if (s.node != victim.node || !s.uplink.valid()) continue;
          EXPECT_NE(now.port(now.port_id(s.node, child_port.num)).link, s.uplink) << j.job_id;
        }
      }
    }
    if (how == 0) {
      // The link returns: trees in place stay where they are.
      auto back = a.set_drained({});
      ASSERT_TRUE(back.ok());
      EXPECT_TRUE(back->changed.empty());
      EXPECT_EQ(back->unchanged.size(), 4u);
    }
  }
}

TEST(SharpAllocator, CutOffCaDropsItsJobAndFreesCapacity) {
  Fabric f = generate(roft(16, 8, 2, 16));
  SharpAllocator a = make(f, 4);
  ASSERT_TRUE(a.allocate({"a", {}, hosts(1, 16), {}}).ok());
  ASSERT_TRUE(a.allocate({"b", {}, hosts(2, 16), {0}}).ok());
  LinkId cable = f.port(f.primary_port(f.find_name("node001 mlx5_0"))).link;
  auto r = a.update(rebuilt(f, cable, true), map_rails(f, {}), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->refused.size(), 1u);
  EXPECT_EQ(r->refused[0].job_id, "a");
  EXPECT_EQ(r->refused[0].reason.message,
            "job 'a' rail 0: CA 'node001 mlx5_0' has no healthy, non-drained link to a switch");
  EXPECT_EQ(r->unchanged, std::vector<std::string>{"b"});
  EXPECT_EQ(a.find("a"), nullptr);
  expect_capacity(a, {{"b", cas_of(f, hosts(2, 16), {0})}});
}

TEST(SharpAllocator, RebuildWithoutCapacityDropsTheJob) {
  Fabric f = detour_fabric();
  SharpAllocator a = make(f, 1);
  auto ca = [&](const char* d) { return f.find_name(d); };
  ASSERT_TRUE(a.allocate({"p", {}, {"h3", "h4"}, {}}).ok());
  auto q = a.allocate({"q", {}, {"h1", "h2"}, {}});
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(f.desc(q->trees[0].root), "C");
  // Cut A - C: the only other way is through S, which p holds.
  std::vector<uint8_t> drained(f.num_links(), 0);
  for (const auto& s : q->trees[0].switches) {
    if (f.desc(s.node) == "A") drained[s.uplink.value()] = 1;
  }
  auto r = a.set_drained(drained);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->refused.size(), 1u);
  EXPECT_EQ(r->refused[0].job_id, "q");
  EXPECT_EQ(r->refused[0].reason.message,
            "job 'q' rail 0: SHARP tree capacity exhausted: no switch with a free slot reaches all 2 leaf switches "
            "over switches with free slots; 1 of the 1 shallowest roots (height 1) are full ('S'); 3 switches hold "
            "1 of 1 trees");
  EXPECT_EQ(r->unchanged, std::vector<std::string>{"p"});
  expect_capacity(a, {{"p", {ca("h3 mlx5_0"), ca("h4 mlx5_0")}}});
}

}  // namespace
}  // namespace railyard::routing
