#include "api/console/grid.h"

#include <algorithm>

namespace railyard::console {

using nlohmann::json;
using routing::Fabric;

json grid_json(const GridInput& in) {
  const Fabric& f = *in.fabric;
  const routing::RailMap& rm = *in.rails;
  auto state_of = [&](LinkId l) {
    if (l.value() < in.state.size()) return in.state[l.value()];
    return f.link(l).state == routing::PortState::kDown ? GridLinkState::kDown : GridLinkState::kUp;
  };
  std::vector<uint32_t> index(f.num_nodes(), UINT32_MAX);
  const auto sws = f.switches();
  for (uint32_t i = 0; i < sws.size(); ++i) index[sws[i].value()] = i;
  std::vector<uint32_t> cas(sws.size(), 0), cas_down(sws.size(), 0), cas_drained(sws.size(), 0);
  json links = json::array();
  json keys = json::array();
  json loads = json::array();
  uint64_t load_max = 0;
  for (uint32_t i = 0; i < f.num_links(); ++i) {
    const LinkId id(i);
    const routing::Link& l = f.link(id);
    const routing::Port& a = f.port(l.a);
    const routing::Port& b = f.port(l.b);
    const bool sa = f.is_switch(a.node), sb = f.is_switch(b.node);
    const GridLinkState st = state_of(id);
    if (sa != sb) {  // a CA link: counted on its switch
      const uint32_t s = index[(sa ? a.node : b.node).value()];
      ++cas[s];
      if (st == GridLinkState::kDown) ++cas_down[s];
      if (st == GridLinkState::kDrained) ++cas_drained[s];
      continue;
    }
    if (!sa) continue;
    links.push_back({index[a.node.value()], a.num.value, index[b.node.value()], b.num.value, static_cast<int>(st)});
    if (!in.keys.empty()) keys.push_back(in.keys[i]);
    if (in.loads) {
      const routing::LinkLoad& ld = (*in.loads)[i];
      loads.push_back({ld.a_to_b, ld.b_to_a});
      load_max = std::max(load_max, ld.max());
    }
  }
  json switches = json::array();
  for (uint32_t i = 0; i < sws.size(); ++i) {
    const NodeId s = sws[i];
    const int32_t level = s.value() < rm.level.size() ? rm.level[s.value()] : routing::kNoLevel;
    const int32_t rail = s.value() < rm.rail.size() ? rm.rail[s.value()] : routing::kNoRail;
    switches.push_back({{"name", f.desc(s)},
                        {"guid", routing::to_string(f.node(s).guid)},
                        {"lid", f.port(f.node(s).first_port).lid.value},
                        {"level", level},
                        {"rail", rail},
                        {"cas", cas[i]},
                        {"cas_down", cas_down[i]},
                        {"cas_drained", cas_drained[i]}});
  }
  json out = {{"rails", rm.num_rails},
              {"levels", rm.max_level + 1},
              {"hosts", rm.hosts.size()},
              {"cas", f.cas().size()},
              {"switches", switches},
              {"links", links}};
  if (!in.keys.empty()) out["keys"] = keys;
  if (in.loads) {
    out["loads"] = loads;
    out["load_max"] = load_max;
    out["load_pattern"] = "all-to-all";
  }
  return out;
}

}  // namespace railyard::console
