// verify_ar_groups (ar_groups.h): judges AR tables from the groups alone.
//
// Per destination LID, each switch's distance is derived from its own group:
// delivered here (port 0 of the owner) = 0, to the owning CA port = 1, else
// 1 + the distance of the next switch, which must be the same for every
// member. A member to a dead port, the wrong CA, a switch without a route or
// back into the walk (a loop) is a problem. Then every member of every
// destination is put in one channel dependency graph (Dally & Seitz 1987);
// destinations whose switch-to-switch members coincide are added once.
// Cost: O(LIDs x members) for distances; the CDG is O(links x radix) bits.
#include <algorithm>
#include <limits>
#include <map>

#include "routing/ar_groups.h"
#include "routing/channel_graph.h"
#include "routing/switch_graph.h"

namespace railyard::routing {

namespace {

constexpr size_t kMaxProblems = 10;

// Distances toward one LID, derived from the groups.
class LidWalk {
  enum : uint8_t { kUnknown = 0, kVisiting = 1, kDone = 2 };

 public:
  LidWalk(const Fabric& f, const SwitchGraph& g, const ArTables& t, ArCheck& out)
      : f_(f), g_(g), t_(t), out_(out), state_(g.num_switches()), dist_(g.num_switches()) {}

  void run(Lid lid) {
    lid_ = lid;
    std::fill(state_.begin(), state_.end(), kUnknown);
    for (uint32_t s = 0; s < g_.num_switches(); ++s) eval(s);
  }

 private:
  void problem(uint32_t s, uint8_t port, const std::string& what) {
    out_.valid = false;
    if (out_.problems.size() >= kMaxProblems) return;
    out_.problems.push_back("switch '" + std::string(f_.desc(g_.node(s))) + "' LID " + std::to_string(lid_.value) +
                            " port " + std::to_string(port) + ": " + what);
  }

  // Distance of switch s (kInf: no route or broken). Recursion depth is
  // bounded by the number of switches: a switch on the walk is kVisiting and
  // is not entered again.
  uint32_t eval(uint32_t s) {
    if (state_[s] == kDone) return dist_[s];
    if (state_[s] == kVisiting) return kInf - 1;  // the caller reports the loop
    state_[s] = kVisiting;
    const Node& nd = f_.node(g_.node(s));
    uint32_t d = kInf;
    bool first = true;
    uint8_t first_port = 0;
    for (uint8_t p : t_.ports(s, lid_)) {
      ++out_.members;
      uint32_t c = kInf;
      if (p == 0) {
        if (f_.lid_owner(lid_) == nd.first_port) {
          c = 0;
        } else {
          problem(s, p, "port 0 of a switch that does not own the LID");
        }
      } else if (p > nd.num_ports) {
        problem(s, p, "port beyond the switch");
      } else {
        const Port& port = f_.port(PortId(nd.first_port.value() + p));
        if (!port.remote.valid() || f_.link(port.link).state == PortState::kDown) {
          problem(s, p, "dead port");
        } else if (NodeId r = f_.port(port.remote).node; !f_.is_switch(r)) {
          if (f_.lid_owner(lid_) == port.remote) {
            c = 1;
          } else {
            problem(s, p, "leads to CA '" + std::string(f_.desc(r)) + "', not the destination");
          }
        } else {
          uint32_t rs = g_.switch_index(r);
          uint32_t dr = eval(rs);
          if (dr == kInf - 1) {
            problem(s, p, "loop: leads back to '" + std::string(f_.desc(r)) + "'");
          } else if (dr == kInf) {
            problem(s, p, "leads to '" + std::string(f_.desc(r)) + "', which has no valid route");
          } else {
            c = dr + 1;
          }
        }
      }
      if (c == kInf) {
        d = kInf;
        first = false;
        break;
      }
      if (first) {
        d = c;
        first_port = p;
        first = false;
      } else if (c != d) {
        problem(s, p,
                "leads " + std::to_string(c) + " hops from the destination, port " + std::to_string(first_port) +
                    " " + std::to_string(d) + ": not one hop closer on every member");
        d = kInf;
        break;
      }
    }
    state_[s] = kDone;
    dist_[s] = d;
    return d;
  }

  const Fabric& f_;
  const SwitchGraph& g_;
  const ArTables& t_;
  ArCheck& out_;
  Lid lid_;
  std::vector<uint8_t> state_;
  std::vector<uint32_t> dist_;
};

}  // namespace

ArCheck verify_ar_groups(const Fabric& f, const ArTables& t) {
  ArCheck out;
  SwitchGraph g(f);
  const uint32_t n = g.num_switches();
  if (t.switches.size() != n || t.num_lids != f.max_lid().value + 1u ||
      t.lft.size() != static_cast<size_t>(n) * t.num_lids) {
    out.valid = false;
    out.problems.push_back("AR tables do not match the fabric's switches and LIDs");
    return out;
  }
  // Graph entry of every (switch, port), kNone for CA ports and port 0.
  const std::vector<uint32_t> entry = entries_by_port(g);

  LidWalk walk(f, g, t, out);
  ChannelDependencyGraph cdg(g);
  // Destinations whose groups agree at every switch that forwards to another
  // switch add the same dependencies: key = those group ids.
  std::map<std::vector<uint16_t>, bool> seen;
  std::vector<uint16_t> key(n);
  for (uint32_t l = 1; l < t.num_lids; ++l) {
    Lid lid{static_cast<uint16_t>(l)};
    if (!f.lid_owner(lid).valid()) continue;
    walk.run(lid);
    for (uint32_t s = 0; s < n; ++s) {
      bool inter_switch = false;
      for (uint8_t p : t.ports(s, lid)) inter_switch |= entry[s * 256 + p] != kNone;
      key[s] = inter_switch ? t.group(s, lid) : ArTables::kNoGroup;
    }
    if (!seen.emplace(key, true).second) continue;
    for (uint32_t s = 0; s < n; ++s) {
      if (key[s] == ArTables::kNoGroup) continue;
      for (uint8_t p : t.ports(s, lid)) {
        uint32_t e1 = entry[s * 256 + p];
        if (e1 == kNone) continue;
        cdg.use(e1);
        uint32_t r = g.remote(e1);
        for (uint8_t q : t.ports(r, lid)) {
          uint32_t e2 = entry[r * 256 + q];
          if (e2 != kNone) cdg.add(e1, e2);
        }
      }
    }
  }
  CreditLoopCheck loops = cdg.check(f);
  out.acyclic = loops.acyclic;
  out.channels = loops.channels;
  out.dependencies = loops.dependencies;
  out.cycle = std::move(loops.cycle);
  return out;
}

}  // namespace railyard::routing
