// railyardd: railyard's controller service. See controller/config.h for the
// configuration file, docs/controller.md for the API and operations.
//
//   railyardd --config FILE [--port N] [--port-file F] [--threads N]
//   railyardd config check FILE
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange unincluded
#include <boost/asio.hpp>
#include <iostream>
#include <mutex>
#include <thread>

#include "api/api.h"
#include "api/http_server.h"
#include "cli/railyardd/slurm_sync.h"
#include "controller/config.h"
#include "controller/controller.h"
#include "controller/plugin_link.h"
#include "controller/replication.h"
#include "controller/store.h"
#include "controller/files/atomic_file.h"

namespace {

using namespace railyard;

int check_config(const std::string& path) {
  Result<controller::ControllerConfig> cfg = controller::load_controller_config(path);
  if (!cfg) {
    std::cerr << "railyardd: " << cfg.error().message << "\n";
    return 2;
  }
  // The group is looked up by start() too; saying it here spares a failed start.
  if (cfg->fabric_source == controller::FabricSource::kLive && !cfg->plugin_socket_group.empty()) {
    if (Result<gid_t> gid = controller::resolve_group(cfg->plugin_socket_group); !gid) {
      std::cerr << "railyardd: " << path << ": plugin_socket_group: " << gid.error().message << "\n";
      return 2;
    }
  }
  // The TLS certificate and key are loaded by start() too; saying it here
  // spares a failed start.
  if (cfg->plugin_listen_port != 0) {
    if (auto ctx = controller::make_plugin_tls_context(cfg->plugin_tls_cert, cfg->plugin_tls_key); !ctx) {
      std::cerr << "railyardd: " << path << ": " << ctx.error().message << "\n";
      return 2;
    }
  }
  std::cout << path << ": ok (listen " << cfg->listen_address << ":" << cfg->listen_port << ", "
            << cfg->tokens.size() << " tokens, database " << cfg->database << ", fabric "
            << (cfg->fabric_source == controller::FabricSource::kLive
                    ? "live via " + cfg->plugin_socket +
                          (cfg->plugin_listen_port != 0
                               ? (cfg->plugin_socket.empty() ? "" : " and ") + std::string("TLS on ") +
                                     cfg->plugin_listen_host + ":" + std::to_string(cfg->plugin_listen_port)
                               : "")
                    : "offline from " + cfg->topology_file)
            << (cfg->ha ? ", ha member " + cfg->ha->member + " of " + std::to_string(cfg->ha->etcd.size()) +
                              " etcd endpoints"
                        : std::string())
            << ")\n";
  return 0;
}

int serve(const std::string& path, int port_override, const std::string& port_file, unsigned threads) {
  Result<controller::ControllerConfig> cfg = controller::load_controller_config(path);
  if (!cfg) {
    spdlog::error("{}", cfg.error().message);
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(cfg->log_level));
  if (port_override >= 0) cfg->listen_port = static_cast<uint16_t>(port_override);
  if (cfg->tokens.empty()) spdlog::warn("no tokens configured: only health, metrics and openapi.json answer");

  Result<std::unique_ptr<controller::Store>> store = controller::Store::open(cfg->database);
  if (!store) {
    spdlog::error("{}", store.error().message);
    return 1;
  }
  // A new database is created 0600; an older one is left as it is, with a
  // word: it holds the audit log (who did what) and the drains.
  if (struct stat st {}; ::stat(cfg->database.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("{}: the database is readable by group or others (mode {:04o}); chmod 600 it", cfg->database,
                 st.st_mode & 07777);
  }
  const bool live = cfg->fabric_source == controller::FabricSource::kLive;
  controller::PluginSocketOptions socket_options{cfg->plugin_socket, cfg->plugin_socket_mode,
                                                cfg->plugin_socket_group};
  socket_options.tls_host = cfg->plugin_listen_host;
  socket_options.tls_port = cfg->plugin_listen_port;
  socket_options.tls_cert_file = cfg->plugin_tls_cert;
  socket_options.tls_key_file = cfg->plugin_tls_key;
  socket_options.token = cfg->plugin_token;
  const std::string address = cfg->listen_address;
  const uint16_t port = cfg->listen_port;
  const api::ServerLimits limits = api::ServerLimits::from(*cfg);
  const controller::ControllerConfig config_copy = *cfg;
  // High availability (ha: in the config, docs/ha.md): the store's writes
  // go through the replicated log; the controller writes only as leader.
  controller::Controller* ctl_ptr = nullptr;
  // The plugin link, for the replicator's thread: set once the link exists,
  // cleared before it goes.
  struct PluginsHandle {
    std::mutex mu;
    controller::PluginLink* link = nullptr;
    void drop_all(const std::string& leader) {
      std::lock_guard lock(mu);
      if (link) link->drop_all_not_leader(leader);
    }
    void set(controller::PluginLink* l) {
      std::lock_guard lock(mu);
      link = l;
    }
  } plugins;
  std::unique_ptr<controller::Replicator> replicator;
  if (config_copy.ha) {
    controller::Replicator::Hooks hooks;
    hooks.applied = [&ctl_ptr] {
      if (!ctl_ptr) return;
      if (Status s = ctl_ptr->follow_store(false); !s) spdlog::error("replication: {}", s.error().message);
    };
    hooks.becoming_leader = [&ctl_ptr] {
      if (!ctl_ptr) return;
      if (Status s = ctl_ptr->follow_store(true); !s) throw controller::StoreError(s.error().message);
    };
    hooks.leadership = [&plugins, &replicator](bool leader) {
      spdlog::info("replication: this member is {}", leader ? "the leader" : "no longer the leader");
      // A member that is no longer the leader tells its plugins where the
      // leader is and closes them (they must not feed a follower).
      if (!leader) plugins.drop_all(replicator ? replicator->plugin_redirect().value_or("") : std::string());
    };
    hooks.log = [](bool warn, const std::string& text) {
      spdlog::log(warn ? spdlog::level::warn : spdlog::level::info, "{}", text);
    };
    replicator = std::make_unique<controller::Replicator>(*config_copy.ha, **store, std::move(hooks));
    (*store)->set_journal(replicator.get());
  }
  controller::Controller ctl(std::move(*cfg), std::move(*store));
  ctl_ptr = &ctl;
  if (replicator) {
    ctl.set_write_gate([r = replicator.get()] { return r->refusal(); });
  }
  if (Status s = ctl.start(); !s) {
    spdlog::error("{}", s.error().message);
    return 1;
  }
  if (auto v = ctl.view()) {
    spdlog::info("fabric: {} switches, {} CAs, routed in {:.0f} ms ({})", v->fabric.switches().size(),
                 v->fabric.cas().size(), v->route_ms, v->origin);
  }
  if (replicator) {
    std::string endpoints;
    for (const std::string& e : config_copy.ha->etcd) endpoints += (endpoints.empty() ? "" : ",") + e;
    spdlog::info("ha: member {} (api {}), etcd {}, lease {} s, log at {}", config_copy.ha->member,
                 config_copy.ha->advertise_api, endpoints, config_copy.ha->lease_ttl_s, ctl.store().applied_seq());
    replicator->start();
  }
  // Stopped before the controller it calls goes (first in, last out).
  struct StopReplicator {
    controller::Replicator* r;
    ~StopReplicator() {
      if (r) r->stop();
    }
  } stop_replicator{replicator.get()};

  boost::asio::io_context io;
  std::unique_ptr<controller::PluginLink> link;
  // Destroyed before `link`: the replicator's thread no longer reaches it.
  struct ClearPlugins {
    PluginsHandle& h;
    ~ClearPlugins() { h.set(nullptr); }
  } clear_plugins{plugins};
  if (live) {
    // Bound before the HTTP port: a second railyardd with the same config
    // stops here, on the socket's lock, and removes nothing of the first's.
    link = std::make_unique<controller::PluginLink>(
        io, socket_options, [&ctl](const std::string& line) { ctl.on_plugin_line(line); },
        [&ctl](bool connected) {
          spdlog::info("plugin {}", connected ? "connected" : "disconnected");
          ctl.on_plugin_connection(connected);
        },
        [](controller::PluginLink::LogLevel level, const std::string& text) {
          using L = controller::PluginLink::LogLevel;
          spdlog::log(level == L::kDebug  ? spdlog::level::debug
                      : level == L::kInfo ? spdlog::level::info
                      : level == L::kWarn ? spdlog::level::warn
                                          : spdlog::level::err,
                      "plugin socket {}", text);
        });
    if (replicator) {
      // A follower answers a plugin with not_leader (the leader's plugin address).
      link->set_leader_hook([r = replicator.get()] { return r->plugin_redirect(); });
    }
    if (Status s = link->start(); !s) {
      spdlog::error("{}", s.error().message);
      return 1;
    }
    plugins.set(link.get());
    ctl.set_plugin_sender([&link](const std::string& line) { return link->send(line); });
    ctl.set_policy_broadcaster([&link](const std::string& yaml) { link->broadcast_policy(yaml); });
    ctl.set_plugin_link_stats([&link] {
      return controller::PluginLinkStats{link->peers_refused(), link->lines_ignored(), link->connections()};
    });
    if (!socket_options.path.empty()) {
      spdlog::info("waiting for the OpenSM plugin on {} (mode {:04o}{})", socket_options.path, socket_options.mode,
                   socket_options.group.empty() ? "" : ", group " + socket_options.group);
    }
    if (link->tls_port() != 0) {
      spdlog::info("waiting for OpenSM plugins on {}:{} (TLS, token)", socket_options.tls_host, link->tls_port());
    }
  }

  // Automatic isolation (isolation: in the config, off by default): its
  // state and operator endpoints answer either way; its thread runs when on.
  controller::AutoIsolation isolation(ctl, config_copy.isolation);
  isolation.set_log([](bool warn, const std::string& text) {
    spdlog::log(warn ? spdlog::level::warn : spdlog::level::info, "{}", text);
  });
  if (config_copy.isolation.enabled) {
    isolation.start_thread();
    spdlog::info("automatic isolation on{}: {} downs in {} s isolate a link, clean {} s restores it, cap {} links or {}%",
                 config_copy.isolation.dry_run ? " (dry run)" : "", config_copy.isolation.flaps,
                 config_copy.isolation.window_s, config_copy.isolation.clean_s, config_copy.isolation.max_links,
                 config_copy.isolation.max_percent);
  } else {
    isolation.start_at(controller::unix_now());
  }
  api::Api api(ctl);
  api.set_isolation(&isolation);
  api.set_replicator(replicator.get());
  api::HttpServer server(io, api, limits);
  Result<uint16_t> bound = server.listen(address, port);
  if (!bound) {
    spdlog::error("{}", bound.error().message);
    return 1;
  }
  spdlog::info("listening on http://{}:{}/api/v1", address, *bound);
  if (!port_file.empty()) {
    // A script waits for this file: without it, say why and stop rather
    // than leave the script waiting.
    if (Status s = files::write_file_atomically(port_file, std::to_string(*bound) + "\n", 0644); !s) {
      spdlog::error("{}", s.error().message);
      return 1;
    }
  }

  boost::asio::steady_timer timer(io);
  std::function<void()> tick = [&] {
    timer.expires_after(std::chrono::seconds(1));
    timer.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      try {
        ctl.tick(controller::unix_now());
      } catch (const std::exception& e) {
        spdlog::error("tick: {}", e.what());
      }
      tick();
    });
  };
  tick();

  std::unique_ptr<railyardd::SlurmSync> slurm_sync;
  if (config_copy.slurm_drain_sync) {
    slurm_sync = std::make_unique<railyardd::SlurmSync>(ctl, config_copy);
    slurm_sync->start();
  }

  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", sig);
    server.stop();
    if (link) link->stop();
    timer.cancel();
    io.stop();
  });

  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (std::thread& t : pool) t.join();
  slurm_sync.reset();
  isolation.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyardd: railyard's controller. Serves /api/v1 (REST, JSON) for schedulers and operators,\n"
               "keeps drains, events and the audit log in SQLite, and pushes reroutes to OpenSM through\n"
               "the railyard plugin's socket (live) or re-routes a topology file (offline)."};
  app.set_version_flag("--version", "railyardd 0.1.0");
  app.footer(
      "The configuration (listen address, tokens, database, fabric source, policy files,\n"
      "limits) is documented in config/railyardd.yaml; the API in docs/controller.md and at\n"
      "GET /api/v1 (help) and /api/v1/openapi.json. SIGTERM stops it cleanly.\n\n"
      "Examples:\n"
      "  railyardd config check /etc/railyard/railyardd.yaml\n"
      "  railyardd --config /etc/railyard/railyardd.yaml\n"
      "  railyardd --config test.yaml --port 0 --port-file port   # any free port, written to ./port\n\n"
      "Exit codes: 0 stopped by SIGTERM/SIGINT; 1 cannot start (database, fabric, socket, port);\n"
      "2 invalid configuration or usage.");
  std::string config_path, port_file;
  int port = -1;
  unsigned threads = 2;
  app.add_option("-c,--config", config_path, "YAML configuration (see config/railyardd.yaml)")->check(CLI::ExistingFile);
  app.add_option("--port", port, "listen on this port instead of the configured one (0 = any free port)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--port-file", port_file, "write the bound port here once listening (for scripts)");
  app.add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 64));
  auto* config_cmd = app.add_subcommand("config", "configuration tools");
  auto* check = config_cmd->add_subcommand("check", "validate a configuration file and exit (0 = valid, 2 = not)");
  std::string check_path;
  check->add_option("file", check_path, "the file")->required();
  config_cmd->require_subcommand(1);
  CLI11_PARSE(app, argc, argv);

  spdlog::set_default_logger(spdlog::stderr_color_mt("railyardd"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  if (check->parsed()) return check_config(check_path);
  if (config_path.empty()) {
    std::cerr << "railyardd: --config FILE is required (or: railyardd config check FILE)\n" << app.help();
    return 2;
  }
  try {
    return serve(config_path, port, port_file, threads);
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
