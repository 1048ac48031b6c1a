#include "api/rail_events.h"

#include <functional>

#include "api/render.h"
#include "controller/failure.h"

namespace railyard::api {

namespace {

class RailEvents : public EventSource {
 public:
  RailEvents(Api& api, std::set<std::string> hosts) : api_(api), hosts_(std::move(hosts)), stats_(api.http_stats()) {}
  ~RailEvents() override { --stats_->event_streams; }

  std::string next() override {
    const uint64_t generation = api_.controller().generation();
    if (generation == generation_ || !api_.controller().view()) return "";
    auto snap = api_.rail_health();
    const controller::FabricView& view = *snap->view;
    generation_ = generation;
    std::string out;
    for (const controller::HostRails& h : snap->health.hosts) {
      if (!hosts_.empty() && !hosts_.contains(h.host)) continue;
      nlohmann::json body = render_host_rails(view, h);
      const size_t hash = std::hash<std::string>{}(body.dump());
      auto [it, fresh] = sent_.try_emplace(h.host, hash);
      if (!fresh && it->second == hash) continue;
      it->second = hash;
      body["fabric_version"] = view.version;
      out += "event: rails\nid: " + std::to_string(generation) + "\ndata: " + body.dump() + "\n\n";
    }
    return out;
  }

 private:
  Api& api_;
  std::set<std::string> hosts_;
  std::shared_ptr<HttpStats> stats_;
  uint64_t generation_ = 0;
  std::unordered_map<std::string, size_t> sent_;  // host -> hash of what was last sent
};

}  // namespace

std::shared_ptr<EventSource> open_rail_events(Api& api, const std::set<std::string>& hosts) {
  auto snap = api.rail_health();
  for (const std::string& h : hosts) {
    if (!snap->health.find(h)) throw controller::Failure::not_found("no host '" + h + "'");
  }
  const std::shared_ptr<HttpStats>& stats = api.http_stats();
  if (++stats->event_streams > kMaxEventStreams) {
    --stats->event_streams;
    throw controller::Failure::unavailable("too many event streams (at most " + std::to_string(kMaxEventStreams) +
                                           "); retry later");
  }
  return std::make_shared<RailEvents>(api, hosts);
}

}  // namespace railyard::api
