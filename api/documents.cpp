// The whole-fabric documents' cache (Api::cached) and the rail health
// computed once per controller generation.
#include "api/api.h"
#include "api/render.h"
#include "api/request.h"

#include <spdlog/spdlog.h>

namespace railyard::api {

namespace ctl = railyard::controller;
using ctl::Failure;

HttpResponse Api::render_document(EndpointId id) {
  auto v = need_view(c_);
  switch (id) {
    case EndpointId::kFabric:
      return json_response(200, render_fabric_summary(*v, *c_.links(), c_.drains().size()));
    case EndpointId::kSwitches: return json_response(200, render_switches(*v, c_.drains()));
    case EndpointId::kHosts: {
      auto snap = rail_health();
      return json_response(200, render_hosts(*snap->view, snap->health));
    }
    default: break;
  }
  throw Failure::internal("not a cached document");
}

void Api::keep_if_newer(Cached& entry, uint64_t generation, HttpResponse r) {
  entry.rendering = false;
  if (r.status == 200 && generation > entry.generation) {
    entry.generation = generation;
    entry.response = std::move(r);
  }
}

HttpResponse Api::cached(int key, const std::function<HttpResponse()>& render) {
  // The generation is read before rendering: a change during the render
  // makes the entry stale at once rather than hiding the change.
  const uint64_t generation = c_.generation();
  {
    std::lock_guard lock(cache_mu_);
    Cached& entry = cache_[key];
    if (entry.generation >= generation && entry.generation != 0) return entry.response;
    // Another reader is rendering a newer one: the last document meanwhile.
    if (entry.rendering && entry.generation != 0) return entry.response;
    entry.rendering = true;
  }
  HttpResponse r;
  try {
    r = render();
  } catch (...) {
    std::lock_guard lock(cache_mu_);
    cache_[key].rendering = false;
    throw;
  }
  std::lock_guard lock(cache_mu_);
  keep_if_newer(cache_[key], generation, r);
  return r;
}

std::shared_ptr<const Api::RailHealthSnapshot> Api::rail_health() {
  const uint64_t generation = c_.generation();
  {
    std::lock_guard lock(cache_mu_);
    if (health_ && health_generation_ == generation) return health_;
  }
  auto v = need_view(c_);
  auto health = std::make_shared<const RailHealthSnapshot>(RailHealthSnapshot{v, ctl::rail_health(*v, *c_.links())});
  std::lock_guard lock(cache_mu_);
  health_ = health;
  health_generation_ = generation;
  return health;
}

void Api::refresh_documents() {
  // Marked as rendering meanwhile: a reader gets the last document instead
  // of rendering the same one again on an I/O thread (at 16k CAs `hosts`
  // takes a core for a good part of a second) while other connections wait.
  std::vector<EndpointId> read;
  {
    std::lock_guard lock(cache_mu_);
    for (EndpointId id : {EndpointId::kFabric, EndpointId::kSwitches, EndpointId::kHosts}) {
      auto it = cache_.find(static_cast<int>(id));
      if (it != cache_.end() && it->second.generation != 0) {
        it->second.rendering = true;
        read.push_back(id);
      }
    }
  }
  for (EndpointId id : read) render_into_cache(id);
}

HttpResponse Api::current_document(EndpointId id) {
  const int key = static_cast<int>(id);
  const uint64_t generation = c_.generation();
  {
    std::lock_guard lock(cache_mu_);
    Cached& entry = cache_[key];
    if (entry.generation != 0) {
      if (entry.generation < generation && !entry.rendering) {
        entry.rendering = true;
        renderer_->post([this, id] { render_into_cache(id); });
      }
      return entry.response;
    }
  }
  return cached(key, [&] { return render_document(id); });
}

void Api::render_into_cache(EndpointId id) {
  const int key = static_cast<int>(id);
  // The generation is read before rendering: a change during the render
  // leaves the entry stale rather than hiding the change.
  const uint64_t generation = c_.generation();
  const char* name = id == EndpointId::kFabric ? "fabric" : id == EndpointId::kSwitches ? "switches" : "hosts";
  HttpResponse r;
  try {
    r = render_document(id);
  } catch (const Failure& f) {  // no view (yet)
    spdlog::debug("document {} not rendered: {}", name, f.message);
  } catch (const std::exception& e) {
    spdlog::warn("document {} not rendered: {}", name, e.what());
  }
  std::lock_guard lock(cache_mu_);
  keep_if_newer(cache_[key], generation, std::move(r));
}

Api::Api(controller::Controller& controller)
    : c_(controller),
      renderer_(std::make_unique<controller::BackgroundWorker>(static_cast<int>(controller.config().mutation_nice))) {}

}  // namespace railyard::api
