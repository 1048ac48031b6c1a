// The in-process railyardd of the API tests: controller + API + HTTP server
// on 127.0.0.1:<free port>, an offline fabric from a generated topology file,
// a real SQLite file. Each call is one real HTTP/1.1 exchange.
#pragma once

#include <gtest/gtest.h>

#include <utility>  // before Asio (Boost 1.74 + C++20)
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/api.h"
#include "api/http_server.h"
#include "controller/controller.h"
#include "routing/generator.h"
#include "routing/topology_writer.h"

namespace railyard::api::test_support {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

constexpr const char* kOperator = "operator-token-0123456789";
constexpr const char* kViewer = "viewer-token-0123456789";

// The daemon's fabric is a 2-level ROFT of 16 servers x 4 rails at radix 16:
// 8 leaves ("leaf g000 r0" .. "leaf g001 r3"), 8 spines; CA "node001 mlx5_0"
// on port 1 of "leaf g000 r0", whose ports 9..16 go up. A drain of one of them:
inline const std::string kSpineLink = R"({"target": "link", "node": "leaf g000 r0", "port": 9, "reason": "flapping"})";

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;
  json doc() const { return json::parse(body, nullptr, false); }
};

// One railyardd (controller + API + HTTP server) on 127.0.0.1:<free port>.
class Daemon {
 public:
  using Tweak = std::function<void(controller::ControllerConfig&)>;
  Daemon(const std::filesystem::path& dir, uint32_t reroutes_per_minute = 60)
      : Daemon(dir, [reroutes_per_minute](controller::ControllerConfig& c) { c.reroutes_per_minute = reroutes_per_minute; }) {}
  // `tweak` changes the configuration before the daemon starts.
  Daemon(const std::filesystem::path& dir, const Tweak& tweak) {
    controller::ControllerConfig cfg;
    cfg.tokens = {{"ops", controller::Role::kOperator, kOperator}, {"dash", controller::Role::kViewer, kViewer}};
    cfg.database = (dir / "state.db").string();
    cfg.fabric_source = controller::FabricSource::kOffline;
    cfg.topology_file = (dir / "roft.topo").string();
    cfg.policy_output_file = (dir / "policy.yaml").string();
    cfg.max_body_bytes = 2048;
    cfg.reroutes_per_minute = 60;
    tweak(cfg);
    auto store = controller::Store::open(cfg.database);
    EXPECT_TRUE(store.ok());
    ctl_ = std::make_unique<controller::Controller>(cfg, std::move(store).value());
    Status s = ctl_->start();
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    api_ = std::make_unique<Api>(*ctl_);
    server_ = std::make_unique<HttpServer>(io_, *api_, ServerLimits::from(cfg));
    auto port = server_->listen("127.0.0.1", 0);
    EXPECT_TRUE(port.ok());
    port_ = *port;
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Daemon() {
    asio::post(io_, [this] { server_->stop(); io_.stop(); });
    thread_.join();
  }

  Reply call(http::verb verb, const std::string& target, const std::string& token = kViewer,
             const std::string& body = "") {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(stream, buf, parser);
    auto res = parser.release();
    Reply r{static_cast<int>(res.result_int()), res.body(), std::string(res[http::field::content_type]),
            std::string(res["Retry-After"])};
    beast::error_code ec;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    return r;
  }
  Reply get(const std::string& target, const std::string& token = kViewer) { return call(http::verb::get, target, token); }
  Reply post(const std::string& target, const std::string& body, const std::string& token = kOperator) {
    return call(http::verb::post, target, token, body);
  }
  Reply del(const std::string& target, const std::string& token = kOperator) {
    return call(http::verb::delete_, target, token);
  }
  // Sends `bytes` as they are on a new connection and returns what comes
  // back until the server closes it or `timeout` passes.
  std::string raw(const std::string& bytes, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    asio::write(stream.socket(), asio::buffer(bytes));
    std::string out;
    char buf[4096];
    stream.expires_after(timeout);
    for (;;) {
      beast::error_code ec;
      bool done = false;
      size_t got = 0;
      stream.async_read_some(asio::buffer(buf), [&](beast::error_code e, size_t n) {
        ec = e;
        got = n;
        done = true;
      });
      io.restart();
      io.run();
      if (!done || ec) break;
      out.append(buf, got);
    }
    return out;
  }
  // A connection open and silent (or holding a half request) until closed.
  asio::ip::tcp::socket hold(asio::io_context& io, const std::string& first_bytes = "") {
    asio::ip::tcp::socket s(io);
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_));
    if (!first_bytes.empty()) asio::write(s, asio::buffer(first_bytes));
    return s;
  }
  controller::Controller& controller() { return *ctl_; }
  uint16_t port() const { return port_; }

 private:
  asio::io_context io_;
  std::unique_ptr<controller::Controller> ctl_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ry-api-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    routing::GeneratorSpec spec;
    spec.servers = 16;
    spec.rails = 4;
    spec.radix = 16;
    auto g = routing::generate_fabric(spec);
    ASSERT_TRUE(g.ok());
    std::ofstream(dir_ / "roft.topo") << routing::write_topology(g->fabric);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace railyard::api::test_support
