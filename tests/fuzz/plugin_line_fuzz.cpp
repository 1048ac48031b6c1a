// libFuzzer target for what the OpenSM plugin sends railyardd (JSON lines,
// docs/plugin_protocol.md): the input is split at '\n' as PluginLink does and
// every line goes to Controller::on_plugin_line on a live controller that
// already has a fabric (a snapshot of a small ROFT, fed at start). Lines may
// be anything: hello, trap, routing_pass, ucast_routing_done, lft_change,
// fabric snapshots with hostile topology text, deep nesting, bad UTF-8.
//
// Exceptions out of on_plugin_line are ignored, as PluginLink's reader does;
// a crash or a sanitizer report is a failure. After each input the controller
// must still have a fabric, and what the API renders from the state the lines
// left (events; fabric, switches, hosts, links, metrics when it changed)
// must pass fuzz_support.h check_response: a plugin line must not be able to
// break the REST API either.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/api.h"
#include "controller/controller.h"
#include "fuzz_support.h"

namespace {

using namespace railyard;

constexpr const char* kViewerToken = "fuzz-viewer-token";

struct Daemon {
  fuzz::ScratchDir dir{"plugin"};
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<api::Api> api;
  uint64_t rendered_generation = 0;

  Daemon() {
    spdlog::set_level(spdlog::level::err);
    controller::ControllerConfig cfg;
    cfg.tokens = {{"fuzz-dash", controller::Role::kViewer, kViewerToken}};
    cfg.database = (dir.path() / "state.db").string();
    cfg.fabric_source = controller::FabricSource::kLive;
    cfg.plugin_socket = (dir.path() / "plugin.sock").string();  // never opened: no PluginLink here
    cfg.policy_output_file = (dir.path() / "policy.yaml").string();
    controller = fuzz::start_controller(cfg);
    api = std::make_unique<api::Api>(*controller);
    controller->on_plugin_connection(true);
    const nlohmann::json snapshot = {{"type", "fabric"}, {"seq", 1}, {"time", 1.7e9}, {"pass", 1},
                                     {"topology", fuzz::small_fabric_text()}};
    controller->on_plugin_line(snapshot.dump());
    if (!controller->view()) {
      std::fprintf(stderr, "fuzz setup: the first snapshot gave no fabric\n");
      std::abort();
    }
  }

  void get(const std::string& target) {
    api::HttpRequest r;
    r.method = "GET";
    if (!api::split_target(target, &r.path, &r.query)) std::abort();
    r.authorization = std::string("Bearer ") + kViewerToken;
    r.peer = "fuzz";
    api::HttpResponse res;
    try {
      res = api->handle(r);
    } catch (const std::exception& e) {
      res = {500, "application/json", nlohmann::json{{"error", {{"message", std::string("internal error (thrown: ") + e.what() + ")"}}}}.dump(), {}};
      // e.what() of a UTF-8 error is ASCII: the body stays valid JSON.
    }
    fuzz::check_response("GET " + target + " after the plugin lines", res);
  }
};

Daemon& daemon_instance() {
  static Daemon d;  // destroyed at exit: the scratch folder goes with it
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Daemon& d = daemon_instance();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    // PluginLink hands over complete lines only; a last line without '\n'
    // would wait for more bytes. Fed anyway: the fuzzer need not add one.
    const std::string line(rest.substr(0, nl));
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    try {
      d.controller->on_plugin_line(line);
    } catch (const std::exception&) {
      // PluginLink's reader drops the line and reads on.
    }
  }
  if (!d.controller->view()) {
    std::fprintf(stderr, "*** railyard fuzz check failed: the controller lost its fabric\n");
    std::abort();
  }
  const int64_t last = d.controller->store().last_event_id();
  d.get("/api/v1/events?since=" + std::to_string(last > 5 ? last - 5 : 0));
  if (d.controller->generation() != d.rendered_generation) {
    d.rendered_generation = d.controller->generation();
    for (const char* target : {"/api/v1/fabric", "/api/v1/switches", "/api/v1/hosts", "/api/v1/links",
                               "/api/v1/health", "/api/v1/metrics", "/api/v1/topology/slurm"}) {
      d.get(target);
    }
  }
  return 0;
}
