#include "controller/fabric_view.h"

#include <chrono>
#include <cstdio>
#include <unordered_set>

#include "routing/node_lookup.h"
#include "routing/routing_plan.h"

namespace railyard::controller {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

Result<std::shared_ptr<const FabricView>> build_view(routing::Fabric fabric, const policies::Policy& policy,
                                                     std::string origin, uint64_t version) {
  auto view = std::make_shared<FabricView>();
  view->version = version;
  view->built_at = now_s();
  view->origin = std::move(origin);
  view->fabric = std::move(fabric);
  view->policy = policy;
  const auto t0 = std::chrono::steady_clock::now();
  view->rails = routing::map_rails(view->fabric, policy.rails);
  Result<routing::RoutingOptions> options = routing::plan_routing(view->fabric, policy, view->rails);
  if (!options) return options.error();
  view->options = std::move(*options);
  Result<routing::RoutingResult> routed = routing::route_unicast(view->fabric, view->options);
  if (!routed) return routed.error();
  view->routing = std::move(*routed);
  view->route_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return std::shared_ptr<const FabricView>(std::move(view));
}

std::string port_key(const routing::Fabric& f, PortId port) {
  const routing::Port& p = f.port(port);
  return routing::to_string(f.node(p.node).guid) + "[" + std::to_string(p.num.value) + "]";
}

std::string link_key(const routing::Fabric& f, LinkId link) {
  const routing::Link& l = f.link(link);
  const routing::Port& a = f.port(l.a);
  const routing::Port& b = f.port(l.b);
  const auto ka = std::make_pair(f.node(a.node).guid.value, a.num.value);
  const auto kb = std::make_pair(f.node(b.node).guid.value, b.num.value);
  return port_key(f, ka <= kb ? l.a : l.b);
}

std::string port_label(const routing::Fabric& f, PortId port) {
  const routing::Port& p = f.port(port);
  return std::string(f.desc(p.node)) + "[" + std::to_string(p.num.value) + "]";
}

routing::Fabric with_links_down(const routing::Fabric& fabric, const std::vector<std::string>& down) {
  if (down.empty()) return fabric;
  std::unordered_set<std::string> names(down.begin(), down.end());
  routing::FabricBuilder b(fabric);
  bool any = false;
  for (uint32_t i = 0; i < fabric.num_links(); ++i) {
    const LinkId id(i);
    const routing::Link& l = fabric.link(id);
    if (names.contains(port_key(fabric, l.a)) || names.contains(port_key(fabric, l.b))) {
      (void)b.set_link_state(id, routing::PortState::kDown);
      any = true;
    }
  }
  if (!any) return fabric;
  Result<routing::Fabric> built = b.build();
  return built ? std::move(*built) : fabric;
}

}  // namespace railyard::controller
