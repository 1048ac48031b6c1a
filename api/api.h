// Api: /api/v1 over a Controller. Matches the request against the endpoint
// table (endpoints.h), authenticates the bearer token (401 without a valid
// one where a role is needed, 403 when the role is too low), parses and
// validates bodies (400 naming the field; unknown fields refused), calls the
// controller, renders JSON, and audits every mutation with its outcome.
// Never throws: an internal error is a 500 with a message, logged.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "api/endpoints.h"
#include "api/http_types.h"
#include "controller/auto_isolation.h"
#include "controller/background_worker.h"
#include "controller/controller.h"
#include "controller/rail_health.h"
#include "controller/replication.h"


namespace railyard::api {

// The HTTP layer's counters (http_server.cpp updates them), for /metrics.
struct HttpStats {
  std::atomic<uint64_t> open{0};     // connections now
  std::atomic<uint64_t> refused{0};  // 503 at accept: the cap was reached
  std::atomic<uint64_t> event_streams{0};  // open server-sent-event streams

  // Api::handle's time per request (routing, auth, the handler, rendering).
  void observe_request(double seconds) {
    std::lock_guard lock(mu);
    request_seconds.observe(seconds);
  }
  controller::Histogram request_durations() const {
    std::lock_guard lock(mu);
    return request_seconds;
  }

 private:
  mutable std::mutex mu;
  controller::Histogram request_seconds{controller::kLatencyBucketsSeconds};
};

// At most this many event streams at once (GET /rails/events); one more is a 503.
inline constexpr uint64_t kMaxEventStreams = 64;

// One call of an endpoint, as its handler gets it.
struct Call {
  const Endpoint& endpoint;
  const std::map<std::string, std::string>& params;  // the pattern's {name}s, decoded
  const HttpRequest& request;
  const controller::Actor& actor;  // the caller; for a mutation, with its action and request
  // Set by a handler when the controller wrote the audit record with the
  // change; otherwise Api::handle audits a mutation's answer itself.
  bool audited = false;
};

class Api {
 public:
  explicit Api(controller::Controller& controller);
  HttpResponse handle(const HttpRequest& request);
  // A request refused by the HTTP layer before it reached an endpoint (413,
  // 431, malformed): audited when it was, or may have been, a mutation.
  // Shared: a connection still queued in an io_context may outlive the Api.
  const std::shared_ptr<HttpStats>& http_stats() { return http_stats_; }
  void refused_before_routing(const std::string& method, const std::string& target, int status,
                              const std::string& message);
  // Every host's rails' health on the current view, computed once per
  // controller generation, with the view it was computed on (its NodeIds
  // index that view's fabric: render with it, not with a newer view).
  // Throws Failure unavailable without a view.
  struct RailHealthSnapshot {
    std::shared_ptr<const controller::FabricView> view;
    controller::RailHealthMap health;
  };
  std::shared_ptr<const RailHealthSnapshot> rail_health();
  controller::Controller& controller() { return c_; }
  // Automatic isolation (railyardd runs one); null: its endpoints answer 503.
  void set_isolation(controller::AutoIsolation* isolation) { isolation_ = isolation; }
  // High availability (docs/ha.md); null: single-node. With it, every reply
  // carries X-Railyard-View-Version (the log entry the answer reflects), a
  // mutation reaching a member that is not the leader is answered 503
  // naming the leader (X-Railyard-Leader: its URL), and /health says the role.
  void set_replicator(controller::Replicator* replicator) { replicator_ = replicator; }

 private:
  controller::Actor authenticate(const std::string& authorization) const;
  // The handlers the endpoint table (endpoints.cpp) names, one per endpoint.
  friend std::span<const Endpoint> endpoints();
  // The fabric read (handlers_fabric.cpp).
  HttpResponse index(Call& call);
  HttpResponse openapi(Call& call);
  HttpResponse health(Call& call);
  HttpResponse whoami(Call& call);
  HttpResponse document(Call& call);  // fabric, switches, hosts
  HttpResponse host_rails(Call& call);
  HttpResponse links(Call& call);
  HttpResponse route(Call& call);
  HttpResponse ar_summary(Call& call);
  HttpResponse ar_switch(Call& call);
  HttpResponse events(Call& call);
  HttpResponse event_stream(Call& call);
  HttpResponse rail_events(Call& call);
  // Changes: drains, reroutes, link events, SHARP jobs (handlers_changes.cpp).
  HttpResponse drains_list(Call& call);
  HttpResponse drain_create(Call& call);
  HttpResponse drain_delete(Call& call);
  HttpResponse reroute(Call& call);
  HttpResponse reroutes_list(Call& call);
  HttpResponse reroute_get(Call& call);
  HttpResponse link_event(Call& call);
  HttpResponse jobs_list(Call& call);
  HttpResponse job_create(Call& call);
  HttpResponse job_get(Call& call);
  HttpResponse job_delete(Call& call);
  // Operations: isolation, telemetry, schedulers, the console, metrics
  // (handlers_ops.cpp).
  HttpResponse isolation(Call& call);
  HttpResponse isolation_reset(Call& call);
  HttpResponse isolation_exclude(Call& call);
  HttpResponse isolation_unexclude(Call& call);
  HttpResponse hotspots(Call& call);
  HttpResponse link_counters(Call& call);
  HttpResponse grid(Call& call);
  HttpResponse scheduler_topology(Call& call);  // Slurm, Kubernetes
  HttpResponse metrics(Call& call);

  // Whole-fabric documents (hosts, switches, fabric) rendered once per
  // controller generation: at 16k CAs `hosts` is megabytes of JSON. One
  // reader renders a new generation; the others meanwhile get the last
  // document (a whole snapshot, never older than a change already answered:
  // refresh_documents() renders them before a change is acknowledged).
  // `key`: the endpoint id, or a variant of it (the Slurm formats).
  HttpResponse cached(int key, const std::function<HttpResponse()>& render);
  HttpResponse render_document(EndpointId id);  // fabric, switches, hosts (documents.cpp)
  // After a change, before its answer: fabric, switches and hosts, those read
  // so far, rendered for the generation that holds the change.
  void refresh_documents();
  // fabric, switches or hosts: the cached document; when a change not made
  // through the API (the plugin's fabric, the timer) made it stale, the last
  // one while renderer_ renders the new one. Rendered here only the first time.
  HttpResponse current_document(EndpointId id);
  void render_into_cache(EndpointId id);  // renders, stores if newer, clears `rendering`

  controller::Controller& c_;
  controller::AutoIsolation* isolation_ = nullptr;
  controller::Replicator* replicator_ = nullptr;
  // api/ha.cpp: the refusal of a mutation on a member that is not the
  // leader; a retried request's answer (Idempotency-Key); the HA headers.
  std::optional<HttpResponse> not_leader_refusal(const HttpRequest& request) const;
  std::optional<HttpResponse> idempotent_replay(const Call& call);
  void add_ha_headers(HttpResponse& response) const;
  nlohmann::json ha_health() const;
  std::shared_ptr<HttpStats> http_stats_ = std::make_shared<HttpStats>();
  std::mutex cache_mu_;
  struct Cached {
    uint64_t generation = 0;  // of `response`; 0: none yet
    bool rendering = false;   // a reader renders a newer one
    HttpResponse response;
  };
  std::map<int, Cached> cache_;
  // A render for `generation` is done (cache_mu_ held): kept if it is a
  // document newer than the entry's; the entry is no longer rendering.
  static void keep_if_newer(Cached& entry, uint64_t generation, HttpResponse r);
  uint64_t health_generation_ = 0;  // under cache_mu_
  std::shared_ptr<const RailHealthSnapshot> health_;
  // Last: stopped (its queued renders done) before the members they use go.
  std::unique_ptr<controller::BackgroundWorker> renderer_;
};

// JSON error body: {"error": {"status": 404, "message": "..."}}.
HttpResponse error_response(int status, const std::string& message);

}  // namespace railyard::api
