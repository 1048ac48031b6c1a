// libFuzzer target for railyardd's REST API: the input is the byte stream of
// one HTTP connection. Boost.Beast parses it as the server does (16 KiB of
// headers, 64 KiB of body), up to 8 pipelined requests; each one parsed goes
// through api::answer_request (the server's own path: target split and
// decoded, bearer token, Api::handle) on an offline controller over a small
// fabric, with a real SQLite store. State carries over between requests and
// inputs (drains, jobs, events), as in a daemon that keeps running.
//
// Tokens: "Bearer fuzz-operator-token" (operator) and "Bearer
// fuzz-viewer-token" (viewer); seeds in corpus/api_request use them.
// Checks (abort = crash): those of fuzz_support.h check_response, and no
// mutation succeeds (2xx on a method other than GET/HEAD) without the
// operator's token. Nothing may throw out of answer_request.
#include <utility>  // before Asio (Boost 1.74 + C++20)
#include <boost/asio/buffer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "api/api.h"
#include "api/http_server.h"
#include "controller/controller.h"
#include "fuzz_support.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using namespace railyard;

constexpr const char* kOperatorToken = "fuzz-operator-token";
constexpr const char* kViewerToken = "fuzz-viewer-token";
constexpr size_t kMaxRequests = 8;

struct Daemon {
  fuzz::ScratchDir dir{"api"};
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<api::Api> api;

  Daemon() {
    spdlog::set_level(spdlog::level::err);  // internal errors only: they name the exception
    controller::ControllerConfig cfg;
    cfg.tokens = {{"fuzz-ops", controller::Role::kOperator, kOperatorToken},
                  {"fuzz-dash", controller::Role::kViewer, kViewerToken}};
    cfg.database = (dir.path() / "state.db").string();
    cfg.fabric_source = controller::FabricSource::kOffline;
    cfg.topology_file = (dir.path() / "fabric.topo").string();
    cfg.policy_output_file = (dir.path() / "policy.yaml").string();
    cfg.max_body_bytes = 64 * 1024;
    cfg.reroutes_per_minute = 1000;
    std::ofstream(cfg.topology_file) << fuzz::small_fabric_text();
    controller = fuzz::start_controller(cfg);
    api = std::make_unique<api::Api>(*controller);
  }
};

Daemon& daemon_instance() {
  static Daemon d;  // destroyed at exit: the scratch folder goes with it
  return d;
}

std::string describe(const http::request<http::string_body>& req) {
  std::string s = std::string(req.method_string()) + " " + std::string(req.target());
  if (auto it = req.find(http::field::authorization); it != req.end()) s += " [Authorization: " + std::string(it->value()) + "]";
  if (!req.body().empty()) s += " body " + std::to_string(req.body().size()) + " bytes";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Daemon& d = daemon_instance();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (size_t n = 0; n < kMaxRequests && !rest.empty(); ++n) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(64 * 1024);
    parser.eager(true);
    beast::error_code ec;
    size_t used = 0;
    while (!parser.is_done() && used < rest.size()) {
      const size_t k = parser.put(boost::asio::buffer(rest.data() + used, rest.size() - used), ec);
      used += k;
      if (ec == http::error::need_more) {
        ec = {};
        if (k == 0) break;  // it needs bytes that are not there
        continue;
      }
      if (ec) return 0;  // the server answers 400/413/431 and closes
    }
    if (!parser.is_done()) {
      parser.put_eof(ec);  // the connection ends here
      if (ec || !parser.is_done()) return 0;
    }
    rest.remove_prefix(used);

    const http::request<http::string_body>& req = parser.get();
    const api::HttpResponse res = api::answer_request(*d.api, req, "fuzz");
    fuzz::check_response(describe(req), res);
    if (res.status < 300 && req.method() != http::verb::get && req.method() != http::verb::head) {
      auto it = req.find(http::field::authorization);
      if (it == req.end() || it->value() != std::string("Bearer ") + kOperatorToken) {
        fuzz::violation("a mutation succeeded without the operator's token", describe(req), res);
      }
    }
    if (!req.keep_alive()) break;  // the server closes after answering
  }
  return 0;
}
