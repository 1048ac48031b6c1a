// Fabric generator: validates a GeneratorSpec, lays out the shape, plans every
// cable, drops the seeded removals and hands the rest to FabricBuilder.
//
// Guarantees: the same spec gives the same fabric on every platform (node
// order, GUIDs, descriptions and removals depend on the spec alone); every
// request the shape cannot hold is refused with the limit and a way out, never
// asserted. Limits: at most 3 switch levels, radix <= 254 (IB port numbers are
// one byte), CAs with one port.
//
// Numbering (what tests and operators can rely on):
//  - nodes: leaves, then spines, then cores, then CAs (server-major, rail-minor);
//  - leaves: rail-major (r * groups + g) for kRoft and kRailOnly, server order
//    for kFatTree; spines pod-major (kRailOnly: rail-major); cores plane-major;
//  - switch descriptions use 0-based numbers like rails do ("leaf g003 r5" holds
//    rail 5 of servers 97..128), host names are 1-based ("node001") because
//    that is how clusters name hosts;
//  - GUID = kGuidBase | kind << 24 | index; a CA's index is doubled so its port
//    GUID (node GUID + 1) never equals another node's GUID;
//  - links: CA links in CA order, then leaf uplinks leaf-major, then spine-core
//    links spine-major.
//
// Removals draw raw values from std::mt19937_64, one stream per kind (see
// "Seeded choice"); a kind added later gets a new stream, so the kinds that
// existed before it keep drawing what they drew.
#include "routing/generator.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <numeric>
#include <random>

namespace railyard::routing {

std::string_view to_string(TopologyKind k) {
  switch (k) {
    case TopologyKind::kRoft: return "roft";
    case TopologyKind::kFatTree: return "fat-tree";
    case TopologyKind::kRailOnly: return "rail-only";
  }
  return "?";
}

std::string_view to_string(LinkTier t) {
  switch (t) {
    case LinkTier::kAll: return "all";
    case LinkTier::kLeafSpine: return "leaf-spine";
    case LinkTier::kSpineCore: return "spine-core";
  }
  return "?";
}

std::string_view switch_level_name(uint32_t level) {
  switch (level) {
    case 1: return "leaf";
    case 2: return "spine";
    case 3: return "core";
    default: return "?";
  }
}

namespace {

// A fixed OUI-like prefix (Mellanox's e4:1d:2d) so generated GUIDs look real
// in ibnetdiscover output; the low 32 bits carry the node kind and index.
constexpr uint64_t kGuidBase = 0xe41d2d0300000000ULL;
constexpr uint64_t kMaxGuidIndex = 1ULL << 24;
enum class GuidKind : uint64_t { kLeaf = 1, kSpine = 2, kCore = 3, kCa = 4 };

constexpr uint32_t kMaxRadix = 254;  // ports are numbered 1..254 in one byte

Guid make_guid(GuidKind kind, uint64_t index) {
  return Guid{kGuidBase | (static_cast<uint64_t>(kind) << 24) | index};
}

// Hand-rolled instead of snprintf, which was the largest single cost of
// generating a 17k-node fabric.
void append_number(std::string& out, uint64_t v, size_t min_width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());  // 24 digits hold any uint64_t
  size_t len = static_cast<size_t>(end - buf);
  if (len < min_width) out.append(min_width - len, '0');
  out.append(buf, len);
}

// "S-e41d2d0301000005": the record name ibnetdiscover prints for a node.
void set_record_name(std::string& out, char kind, Guid guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.assign("X-0000000000000000");
  out[0] = kind;
  for (int i = 0; i < 16; ++i) out[2 + i] = kHex[(guid.value >> (60 - 4 * i)) & 0xF];
}

// The shape of a fabric: counts of each switch role and the numbering of nodes
// and ports. Built only from a validated spec.
struct Layout {
  TopologyKind kind = TopologyKind::kRoft;
  uint32_t radix = 0;
  uint32_t half = 0;  // d = K/2: down ports of a leaf, up ports of a leaf/spine
  uint32_t servers = 0;
  uint32_t rails = 0;
  uint32_t levels = 0;
  uint32_t servers_per_leaf = 0;  // d (kRoft, kRailOnly) or floor(d / rails)
  uint32_t groups = 0;            // leaves per rail (kRoft, kRailOnly); leaves (kFatTree)
  uint32_t leaves = 0;
  uint32_t spines = 0;
  uint32_t cores = 0;
  uint32_t pods = 0;              // 3 levels only
  uint32_t parallel = 0;          // m: links between a core and each pod (3 levels)
  uint32_t cores_per_plane = 0;   // d / m (3 levels)
  uint32_t uplinks_per_leaf = 0;  // d, or 0 for a single-leaf rail-only rail

  uint32_t num_cas() const { return servers * rails; }
  uint32_t num_switches() const { return leaves + spines + cores; }
  uint32_t first_spine() const { return leaves; }
  uint32_t first_core() const { return leaves + spines; }
  uint32_t first_ca() const { return leaves + spines + cores; }
  uint32_t ca_node(uint32_t server, uint32_t rail) const { return first_ca() + server * rails + rail; }

  // Switches of level 1 (leaves), 2 (spines) or 3 (cores): count and first node.
  uint32_t switches_at_level(uint32_t level) const { return level == 1 ? leaves : level == 2 ? spines : cores; }
  uint32_t first_switch_at_level(uint32_t level) const {
    return level == 1 ? 0 : level == 2 ? first_spine() : first_core();
  }
  // Link indices (plan_links order): CA links, leaf-spine links, spine-core links.
  size_t first_leaf_spine_link() const { return num_cas(); }
  size_t first_spine_core_link() const { return num_cas() + static_cast<size_t>(leaves) * uplinks_per_leaf; }
};

std::string servers_phrase(uint64_t servers, uint32_t rails) {
  return std::to_string(servers) + " servers with " + std::to_string(rails) + (rails == 1 ? " rail" : " rails");
}

Result<Layout> make_layout(const GeneratorSpec& spec) {
  if (spec.servers == 0) return Error{"servers must be at least 1"};
  if (spec.rails == 0) return Error{"rails must be at least 1"};
  if (spec.radix < 4 || spec.radix % 2 != 0 || spec.radix > kMaxRadix) {
    return Error{"radix " + std::to_string(spec.radix) +
                 " is not supported: it must be even and between 4 and 254 (half the ports go down, half up)"};
  }
  if (spec.levels != 2 && spec.levels != 3) {
    return Error{"levels " + std::to_string(spec.levels) + " is not supported: the generator builds 2 or 3 levels"};
  }
  // Descriptions are parsed back as "<host> mlx5_<n>" and quoted in topology files.
  if (spec.host_prefix.find_first_of(" \t\n\"") != std::string::npos) {
    return Error{"host_prefix \"" + spec.host_prefix + "\" must not contain blanks or quotes"};
  }
  uint64_t cas = static_cast<uint64_t>(spec.servers) * spec.rails;
  if (cas >= kMaxGuidIndex / 2) {
    return Error{std::to_string(cas) + " CAs is more than the generator numbers (" +
                 std::to_string(kMaxGuidIndex / 2 - 1) + ")"};
  }

  Layout l;
  l.kind = spec.kind;
  l.radix = spec.radix;
  l.half = spec.radix / 2;
  l.servers = spec.servers;
  l.rails = spec.rails;
  l.levels = spec.levels;
  const uint32_t K = l.radix;
  const uint32_t d = l.half;
  const uint32_t R = l.rails;

  switch (spec.kind) {
    case TopologyKind::kRoft:
      l.servers_per_leaf = d;
      l.groups = (l.servers + d - 1) / d;
      l.leaves = l.groups * R;
      break;
    case TopologyKind::kFatTree:
      if (R > d) {
        return Error{"a fat-tree leaf holds all CAs of a server on its " + std::to_string(d) +
                     " down ports, so rails (" + std::to_string(R) + ") must be at most radix/2; use kind roft"};
      }
      l.servers_per_leaf = d / R;
      l.groups = (l.servers + l.servers_per_leaf - 1) / l.servers_per_leaf;
      l.leaves = l.groups;
      break;
    case TopologyKind::kRailOnly:
      if (l.levels != 2) {
        return Error{"a rail-only fabric has at most 2 levels per rail (a leaf, or leaves under spines); use levels=2"};
      }
      l.servers_per_leaf = d;
      l.groups = (l.servers + d - 1) / d;
      l.leaves = l.groups * R;
      if (l.groups > K) {
        return Error{"a rail-only rail with radix " + std::to_string(K) + " holds at most " + std::to_string(K) +
                     " leaves (" + std::to_string(static_cast<uint64_t>(K) * d) + " servers); " +
                     std::to_string(l.servers) + " servers need " + std::to_string(l.groups) +
                     " leaves per rail; use kind roft with levels=3"};
      }
      if (l.groups > 1) {
        l.spines = R * d;
        l.uplinks_per_leaf = d;
      }
      break;
  }

  if (spec.kind != TopologyKind::kRailOnly) {
    // Servers that fit in max_leaves: a ROFT group of d servers takes R
    // leaves (one per rail), a fat-tree group of servers_per_leaf takes one.
    const uint64_t leaves_per_group = spec.kind == TopologyKind::kRoft ? R : 1;
    auto max_servers = [&](uint64_t max_leaves) { return max_leaves / leaves_per_group * l.servers_per_leaf; };
    l.uplinks_per_leaf = d;
    if (l.levels == 2) {
      if (l.leaves > K) {
        return Error{"2 levels with radix " + std::to_string(K) + " hold at most " + std::to_string(K) +
                     " leaves (" + servers_phrase(max_servers(K), R) + "); " + servers_phrase(l.servers, R) +
                     " need " + std::to_string(l.leaves) + " leaves; use levels=3"};
      }
      l.spines = d;
    } else {
      l.pods = (l.leaves + d - 1) / d;
      if (l.pods > K) {
        uint64_t max_leaves = static_cast<uint64_t>(K) * d;
        return Error{"3 levels with radix " + std::to_string(K) + " hold at most " + std::to_string(K) +
                     " pods of " + std::to_string(d) + " leaves (" + servers_phrase(max_servers(max_leaves), R) +
                     "); " + servers_phrase(l.servers, R) + " need " + std::to_string(l.pods) +
                     " pods, which would take 4 levels (not generated); use a larger radix"};
      }
      l.spines = l.pods * d;
      // Every core reaches every pod with the same number m of parallel links
      // and each spine's d up ports split evenly among the cores of its plane,
      // so m must divide d and m * pods must fit in a core's K ports.
      l.parallel = std::min(d, K / l.pods);
      while (d % l.parallel != 0) --l.parallel;
      l.cores_per_plane = d / l.parallel;
      l.cores = d * l.cores_per_plane;
    }
  }
  if (l.num_switches() >= kMaxGuidIndex) {
    return Error{std::to_string(l.num_switches()) + " switches is more than the generator numbers"};
  }
  return l;
}

// Node descriptions, written into `out` (reused to avoid an allocation per node).
void describe(const Layout& l, const std::string& host_prefix, uint32_t node, std::string& out) {
  out.clear();
  if (node < l.first_spine()) {
    out += "leaf g";
    if (l.kind == TopologyKind::kFatTree) {
      append_number(out, node, 3);
    } else {
      append_number(out, node % l.groups, 3);
      out += " r";
      append_number(out, node / l.groups, 1);
    }
  } else if (node < l.first_core()) {
    uint32_t s = node - l.first_spine();
    out += "spine ";
    if (l.kind == TopologyKind::kRailOnly) {
      out += 'r';
      append_number(out, s / l.half, 1);
      out += ' ';
    } else if (l.levels == 3) {
      out += 'p';
      append_number(out, s / l.half, 2);
      out += ' ';
    }
    out += 's';
    append_number(out, s % l.half, 2);
  } else if (node < l.first_ca()) {
    // "p" is the plane: core pJJ joins spine sJJ of every pod.
    uint32_t c = node - l.first_core();
    out += "core p";
    append_number(out, c / l.cores_per_plane, 2);
    out += " c";
    append_number(out, c % l.cores_per_plane, 2);
  } else {
    uint32_t ca = node - l.first_ca();
    out += host_prefix;
    append_number(out, ca / l.rails + 1, 3);
    out += " mlx5_";
    append_number(out, ca % l.rails, 1);
  }
}

Guid node_guid(const Layout& l, uint32_t node) {
  if (node < l.first_spine()) return make_guid(GuidKind::kLeaf, node);
  if (node < l.first_core()) return make_guid(GuidKind::kSpine, node - l.first_spine());
  if (node < l.first_ca()) return make_guid(GuidKind::kCore, node - l.first_core());
  return make_guid(GuidKind::kCa, static_cast<uint64_t>(node - l.first_ca()) << 1);
}

// One cable to lay: node a port pa <-> node b port pb (a is the lower end).
struct PlannedLink {
  uint32_t a;
  uint32_t b;
  uint8_t pa;
  uint8_t pb;
};

uint8_t port(uint32_t p) {
  assert(p >= 1 && p <= kMaxRadix);  // every port formula stays within the radix
  return static_cast<uint8_t>(p);
}

// Plans every cable of the full fabric: CA links, then leaf uplinks (exactly
// uplinks_per_leaf per leaf, leaf-major), then spine-core links.
std::vector<PlannedLink> plan_links(const Layout& l) {
  const uint32_t d = l.half;
  std::vector<PlannedLink> links;
  links.reserve(static_cast<size_t>(l.num_cas()) + static_cast<size_t>(l.leaves) * l.uplinks_per_leaf +
                static_cast<size_t>(l.cores) * l.pods * l.parallel);

  for (uint32_t s = 0; s < l.servers; ++s) {
    for (uint32_t r = 0; r < l.rails; ++r) {
      uint32_t leaf, leaf_port;
      if (l.kind == TopologyKind::kFatTree) {
        leaf = s / l.servers_per_leaf;
        leaf_port = (s % l.servers_per_leaf) * l.rails + r + 1;
      } else {
        leaf = r * l.groups + s / d;
        leaf_port = s % d + 1;
      }
      links.push_back({l.ca_node(s, r), leaf, 1, port(leaf_port)});
    }
  }

  if (l.uplinks_per_leaf == 0) return links;
  for (uint32_t leaf = 0; leaf < l.leaves; ++leaf) {
    for (uint32_t j = 0; j < d; ++j) {
      uint32_t spine, spine_port;
      if (l.kind == TopologyKind::kRailOnly) {
        spine = (leaf / l.groups) * d + j;
        spine_port = leaf % l.groups + 1;
      } else if (l.levels == 2) {
        spine = j;
        spine_port = leaf + 1;
      } else {
        spine = (leaf / d) * d + j;
        spine_port = leaf % d + 1;
      }
      links.push_back({leaf, l.first_spine() + spine, port(d + 1 + j), port(spine_port)});
    }
  }

  if (l.cores == 0) return links;
  const uint32_t m = l.parallel;
  for (uint32_t p = 0; p < l.pods; ++p) {
    for (uint32_t j = 0; j < d; ++j) {
      uint32_t spine = l.first_spine() + p * d + j;
      for (uint32_t c = 0; c < l.cores_per_plane; ++c) {
        uint32_t core = l.first_core() + j * l.cores_per_plane + c;
        for (uint32_t t = 0; t < m; ++t) {
          links.push_back({spine, core, port(d + 1 + c * m + t), port(p * m + t + 1)});
        }
      }
    }
  }
  return links;
}

// --- Seeded choice ---------------------------------------------------------
// std::mt19937_64's output sequence is fixed by the standard, but the std
// distributions and std::shuffle are not, so the same seed would pick
// different links on libstdc++ and libc++. We draw raw 64-bit values only.

// Independent stream per removal kind, so that e.g. adding CA removals does
// not change which switch links a seed removes. splitmix64 decorrelates the
// stream seeds.
std::mt19937_64 make_stream(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return std::mt19937_64(z ^ (z >> 31));
}

// Uniform in [0, n) by rejection: values below 2^64 mod n are redrawn so that
// every residue is equally likely.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  assert(n > 0);
  const uint64_t reject_below = (0 - n) % n;
  for (;;) {
    uint64_t x = rng();
    if (x >= reject_below) return x % n;
  }
}

// Moves k entries of `pool`, chosen uniformly without replacement, to its
// front (a partial Fisher-Yates shuffle).
void choose_front(std::vector<uint32_t>& pool, uint32_t k, std::mt19937_64& rng) {
  assert(k <= pool.size());
  for (uint32_t i = 0; i < k; ++i) {
    uint64_t j = i + uniform_below(rng, pool.size() - i);
    std::swap(pool[i], pool[j]);
  }
}

// Random streams, one per removal kind (make_stream's second argument). New
// kinds take new numbers: reusing one would change old seeds' fabrics.
constexpr uint64_t kStreamUplinkPerLeaf = 0;
constexpr uint64_t kStreamSwitchLinks = 1;
constexpr uint64_t kStreamCaLinks = 2;
constexpr uint64_t kStreamSwitchesAtLevel1 = 3;  // levels 1..3: streams 3..5

std::string count_of(uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string_view tier_links_phrase(LinkTier t) {
  switch (t) {
    case LinkTier::kAll: return "switch-switch";
    case LinkTier::kLeafSpine: return "leaf-spine";
    case LinkTier::kSpineCore: return "spine-core";
  }
  return "?";
}

// What choose_removals decided.
struct Removals {
  std::vector<uint8_t> link;  // per planned link: 1 = not cabled
  std::vector<uint8_t> node;  // per switch: 1 = removed whole
};

// The removals, seeded, in the order of generator.h: whole switches, per-leaf
// uplinks, switch links (in the requested tier), CA links; each later kind
// picks among what the earlier ones left, so the counts add up exactly.
// Everything the shape cannot hold is refused with the limit. When
// remove_switches is all zero and remove_links_at is kAll, every pool below
// is what it was before those options existed, so old seeds draw the same.
Status choose_removals(const Layout& l, const GeneratorSpec& spec, const std::vector<PlannedLink>& links,
                       Removals& out) {
  const uint32_t num_ca_links = l.num_cas();
  const size_t num_links = links.size();
  const uint32_t U = spec.remove_uplink_per_leaf;
  if (U > l.uplinks_per_leaf) {
    return Error{"remove_uplink_per_leaf=" + std::to_string(U) + " but each leaf has only " +
                 std::to_string(l.uplinks_per_leaf) + " uplinks" +
                 (l.uplinks_per_leaf == 0 ? " (one leaf per rail, no spines)" : "")};
  }
  uint32_t switches_removed = 0;
  const uint32_t leaves_removed = spec.remove_switches[0];
  for (uint32_t level = 1; level <= kMaxSwitchLevel; ++level) {
    const uint32_t n = spec.remove_switches[level - 1];
    const uint32_t have = l.switches_at_level(level);
    if (n > have) {
      std::string why;
      if (level == 3 && l.levels != 3) why = " (core switches exist only with 3 levels)";
      if (level == 2 && have == 0) why = " (one leaf per rail, no spines)";
      const std::string name(switch_level_name(level));
      return Error{"remove_switches at level " + std::to_string(level) + " (" + name + ")=" + std::to_string(n) +
                   " but the fabric has only " + std::to_string(have) + " " + name + " switches" + why};
    }
    switches_removed += n;
  }

  out.link.assign(num_links, 0);
  out.node.assign(l.num_switches(), 0);
  std::vector<uint8_t>& removed = out.link;

  // 1. Whole switches, each level from its own stream; then every link with a
  //    removed end (a leaf's CA links included).
  if (switches_removed > 0) {
    for (uint32_t level = 1; level <= kMaxSwitchLevel; ++level) {
      const uint32_t n = spec.remove_switches[level - 1];
      if (n == 0) continue;
      std::mt19937_64 rng = make_stream(spec.seed, kStreamSwitchesAtLevel1 + level - 1);
      std::vector<uint32_t> pool(l.switches_at_level(level));
      std::iota(pool.begin(), pool.end(), l.first_switch_at_level(level));
      choose_front(pool, n, rng);
      for (uint32_t i = 0; i < n; ++i) out.node[pool[i]] = 1;
    }
    auto gone = [&](uint32_t node) { return node < l.num_switches() && out.node[node]; };
    for (size_t i = 0; i < num_links; ++i) {
      if (gone(links[i].a) || gone(links[i].b)) removed[i] = 1;
    }
  }

  // 2. Per-leaf uplinks, among each remaining leaf's uplinks still cabled.
  if (U > 0) {
    std::mt19937_64 rng = make_stream(spec.seed, kStreamUplinkPerLeaf);
    std::vector<uint32_t> pool;
    pool.reserve(l.uplinks_per_leaf);
    for (uint32_t leaf = 0; leaf < l.leaves; ++leaf) {
      if (out.node[leaf]) continue;
      const size_t first = l.first_leaf_spine_link() + static_cast<size_t>(leaf) * l.uplinks_per_leaf;
      pool.clear();
      for (uint32_t j = 0; j < l.uplinks_per_leaf; ++j) {
        if (!removed[first + j]) pool.push_back(j);
      }
      if (pool.size() < U) {
        std::string desc;
        describe(l, spec.host_prefix, leaf, desc);
        return Error{"remove_uplink_per_leaf=" + std::to_string(U) + " but \"" + desc + "\" has only " +
                     std::to_string(pool.size()) + " uplinks left after removing " +
                     count_of(switches_removed, "switch", "switches")};
      }
      choose_front(pool, U, rng);
      for (uint32_t i = 0; i < U; ++i) removed[first + pool[i]] = 1;
    }
  }

  // 3. Switch links, among those left in the requested tier.
  if (spec.remove_switch_links > 0) {
    size_t begin = num_ca_links, end = num_links;
    if (spec.remove_links_at == LinkTier::kLeafSpine) end = l.first_spine_core_link();
    if (spec.remove_links_at == LinkTier::kSpineCore) begin = l.first_spine_core_link();
    std::vector<uint32_t> pool;
    pool.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      if (!removed[i]) pool.push_back(static_cast<uint32_t>(i));
    }
    if (spec.remove_switch_links > pool.size()) {
      std::vector<std::string> earlier;
      if (switches_removed > 0) earlier.push_back(count_of(switches_removed, "switch", "switches"));
      if (U > 0) earlier.push_back(std::to_string(U) + " uplinks per leaf");
      std::string why;
      if (spec.remove_links_at == LinkTier::kSpineCore && l.cores == 0) why = " (no cores: 2 levels)";
      if (spec.remove_links_at == LinkTier::kLeafSpine && l.uplinks_per_leaf == 0) {
        why = " (one leaf per rail, no spines)";
      }
      return Error{"remove_switch_links=" + std::to_string(spec.remove_switch_links) + " but the fabric has only " +
                   std::to_string(pool.size()) + " " + std::string(tier_links_phrase(spec.remove_links_at)) +
                   " links" + (earlier.empty() ? "" : " left after removing " + earlier[0]) +
                   (earlier.size() > 1 ? " and " + earlier[1] : "") + why};
    }
    std::mt19937_64 rng = make_stream(spec.seed, kStreamSwitchLinks);
    choose_front(pool, spec.remove_switch_links, rng);
    for (uint32_t i = 0; i < spec.remove_switch_links; ++i) removed[pool[i]] = 1;
  }

  // 4. CA links, among those left (a removed leaf took its CAs' links).
  if (spec.remove_ca_links > 0) {
    std::vector<uint32_t> pool;
    pool.reserve(num_ca_links);
    for (uint32_t i = 0; i < num_ca_links; ++i) {
      if (!removed[i]) pool.push_back(i);
    }
    if (spec.remove_ca_links > pool.size()) {
      return Error{"remove_ca_links=" + std::to_string(spec.remove_ca_links) + " but the fabric has only " +
                   std::to_string(pool.size()) + " CA links" +
                   (leaves_removed > 0 ? " left after removing " + count_of(leaves_removed, "leaf", "leaves") : "")};
    }
    std::mt19937_64 rng = make_stream(spec.seed, kStreamCaLinks);
    choose_front(pool, spec.remove_ca_links, rng);
    for (uint32_t i = 0; i < spec.remove_ca_links; ++i) removed[pool[i]] = 1;
  }
  return {};
}

}  // namespace

Result<GeneratedFabric> generate_fabric(const GeneratorSpec& spec) {
  Result<Layout> layout = make_layout(spec);
  if (!layout) return layout.error();
  const Layout& l = *layout;

  const uint32_t num_nodes = l.first_ca() + l.num_cas();
  if (spec.assign_lids && num_nodes > Lid::kMaxUnicast) {
    return Error{"assign_lids: " + std::to_string(num_nodes) + " switches and CA ports need more LIDs than the " +
                 std::to_string(Lid::kMaxUnicast) + " unicast LIDs"};
  }

  std::vector<PlannedLink> links = plan_links(l);
  Removals removals;
  if (Status s = choose_removals(l, spec, links, removals); !s) return s.error();
  const std::vector<uint8_t>& removed = removals.link;

  FabricBuilder builder;
  const size_t num_ports = static_cast<size_t>(l.num_switches()) * (l.radix + 1) + static_cast<size_t>(l.num_cas()) * 2;
  builder.reserve(num_nodes, num_ports, links.size());

  std::string desc;
  std::string name;
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const bool is_switch = n < l.first_ca();
    const Guid guid = node_guid(l, n);
    describe(l, spec.host_prefix, n, desc);
    set_record_name(name, is_switch ? 'S' : 'H', guid);
    // Every CA gets its own system-image GUID, as separate HCAs in a server do.
    NodeId id = builder.add_node(is_switch ? NodeType::kSwitch : NodeType::kCa,
                                 static_cast<uint8_t>(is_switch ? l.radix : 1), guid, guid, desc, name);
    assert(id.value() == n);  // node ids follow the layout's numbering
    // LMC 0: switches take LIDs 1..#switches, CA ports the next ones, in node order.
    Lid lid{spec.assign_lids ? static_cast<uint16_t>(n + 1) : uint16_t{0}};
    Status st = is_switch ? builder.set_port(id, PortNum{0}, Guid{}, lid)
                          : builder.set_port(id, PortNum{1}, Guid{guid.value + 1}, lid);
    assert(st.ok());  // ports and LIDs are within range by construction
    (void)st;
  }

  GeneratedFabric out;
  for (uint32_t n = 0; n < l.num_switches(); ++n) {
    if (!removals.node[n]) continue;
    describe(l, spec.host_prefix, n, desc);
    out.removed_switches.push_back(desc);
  }
  std::string other;
  for (size_t i = 0; i < links.size(); ++i) {
    const PlannedLink& pl = links[i];
    if (removed[i]) {
      describe(l, spec.host_prefix, pl.a, desc);
      describe(l, spec.host_prefix, pl.b, other);
      out.removed_links.push_back(desc + "[" + std::to_string(pl.pa) + "] <-> " + other + "[" +
                                  std::to_string(pl.pb) + "]");
      continue;
    }
    Result<LinkId> link = builder.connect(NodeId(pl.a), PortNum{pl.pa}, NodeId(pl.b), PortNum{pl.pb}, spec.width,
                                          spec.speed, PortState::kActive);
    assert(link.ok());  // the plan cables each port at most once, within the radix
    (void)link;
  }

  Result<Fabric> fabric = builder.build();
  if (!fabric) return fabric.error();
  out.fabric = std::move(fabric).value();
  return out;
}

}  // namespace railyard::routing
