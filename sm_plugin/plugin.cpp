// libosmrailyard.so: railyard as an OpenSM 3.3.23 routing engine.
//
// OpenSM loads the library named by `event_plugin_name osmrailyard` (dlopen of
// libosmrailyard.so) and reads its one exported symbol, `osm_event_plugin`.
// create() reads the plugin configuration (event_plugin_options = path to a
// YAML file, plugin_config.h) and registers the external routing engine
// "railyard", which `routing_engine railyard` then selects. setup() fills
// ucast_build_fwd_tables (routing_pass.h) and build_lid_matrices: the min-hop
// matrices multicast and SA use, same values as OpenSM's own (hop_matrices.h)
// in a fraction of the time; `hop_matrices: opensm` leaves them to OpenSM.
//
// With `controller_socket` or `controllers` set, report() forwards OpenSM's
// events to the controller (osm_events.h -> event_channel.h, over a Unix
// socket or TLS, docs/plugin_protocol.md), with OpenSM's SM state, and the
// channel's thread hands its commands to the fast path (fast_path.h: only the
// changed LFT blocks, sent by the plugin, acknowledged before the controller
// hears "done"), which falls back to what OpenSM's console `reroute` does
// (force_reroute, then osm_opensm_sweep) when it cannot push; with
// `fast_path: opensm`, commands always go that way. Never done from report()
// and never under OpenSM's lock. The controller's `policy` lines are written
// to the policy file (controller_policy.h) by every SM, master or standby,
// with `policy_from_controller`.
//
// The C boundary: nothing may unwind into OpenSM (C code, compiled without
// unwind tables). Every entry point catches everything, logs it and returns
// OpenSM's failure value (-1 from the routing callback: OpenSM falls back to
// the next engine, then minhop; NULL from create(): the plugin is skipped).
#include <unistd.h>

#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <variant>

#include "sm_plugin/controller_policy.h"
#include "sm_plugin/event_channel.h"
#include "sm_plugin/fast_path.h"
#include "sm_plugin/heap_policy.h"
#include "sm_plugin/osm_events.h"
#include "sm_plugin/osm_headers.h"
#include "sm_plugin/osm_logger.h"
#include "sm_plugin/plugin_config.h"
#include "sm_plugin/request_book.h"
#include "sm_plugin/routing_pass.h"

#ifndef RAILYARD_VERSION
#define RAILYARD_VERSION "unknown"
#endif

namespace railyard::sm_plugin {

namespace {

constexpr const char* kEngineName = "railyard";

// The plugin's state, owned by OpenSM through the create()/delete() pair.
// Declaration order matters: pass_ holds references to logger_ and requests_;
// the fast path's thread is stopped first (it pushes events and reads pass_),
// then events_ is destroyed, so its thread (which runs commands against
// fast_, pass_ and requests_) is joined before they go.
struct Plugin {
  Plugin(osm_opensm_t* osm, LoadedConfig loaded)
      : osm_(osm), logger_(&osm->log), config_(std::move(loaded.config)), pass_(osm, config_, logger_, requests_) {
    logger_.set_level(config_.log_level);
  }
  ~Plugin() {
    if (fast_) fast_->stop();
    events_.reset();
    fast_.reset();
  }

  // A controller command, on the channel's thread.
  void run_command(const Command& c) {
    if (c.kind == CommandKind::kPolicy) {
      take_policy(c);
      return;
    }
    // OpenSM's shutdown has begun: its sweeper may be gone (no ack is sent).
    if (osm_exit_flag) throw std::runtime_error("OpenSM is exiting");
    if (fast_) {
      fast_->submit(c);
      logger_.log(LogLevel::kVerbose, "controller: %s '%s': handed to the fast path",
                  std::string(to_string(c.kind)).c_str(), c.id.c_str());
      return;
    }
    requests_.add(c.id);
    if (c.kind == CommandKind::kPolicyChanged) pass_.request_policy_reload();
    osm_->subn.force_reroute = TRUE;
    osm_opensm_sweep(osm_);
    logger_.log(LogLevel::kVerbose, "controller: %s '%s': reroute requested", std::string(to_string(c.kind)).c_str(),
                c.id.c_str());
  }

  // The controller's policy, on the channel's thread: into the policy file
  // when it differs; the next routing pass reads it again. Throws (no ack)
  // when it is not taken.
  void take_policy(const Command& c) {
    if (!config_.policy_from_controller) {
      throw std::runtime_error("not taken: policy_from_controller is off (the policy file " +
                               (config_.policy_file.empty() ? std::string("(none)") : config_.policy_file) +
                               " is this host's)");
    }
    Result<PolicyWrite> w = write_controller_policy(config_.policy_file, c.yaml);
    if (!w) throw std::runtime_error("the controller's policy refused: " + w.error().message);
    if (*w == PolicyWrite::kWritten) {
      pass_.request_policy_reload();
      logger_.log(LogLevel::kInfo, "controller: policy '%s' written to %s (%zu bytes)", c.id.c_str(),
                  config_.policy_file.c_str(), c.yaml.size());
    } else {
      logger_.log(LogLevel::kVerbose, "controller: policy '%s' is the one in %s already", c.id.c_str(),
                  config_.policy_file.c_str());
    }
  }

  // OpenSM's SM state, read without its lock (two plain fields; a torn read
  // is at worst one stale report, corrected at the next look).
  EventChannel::SmStatus sm_status() const {
    const uint8_t state = osm_->subn.sm_state;
    const char* name = state == IB_SMINFO_STATE_MASTER        ? "master"
                       : state == IB_SMINFO_STATE_STANDBY     ? "standby"
                       : state == IB_SMINFO_STATE_DISCOVERING ? "discovering"
                       : state == IB_SMINFO_STATE_NOTACTIVE   ? "not_active"
                                                              : "unknown";
    return {name, cl_ntoh64(osm_->subn.sm_port_guid)};
  }

  // The fast path: controller commands, and with a port probe link failures
  // (trap 128), applied by pushing the changed blocks. Before the channel
  // exists: its thread may run a command at once.
  void start_fast_path() {
    if (!config_.fast_path) return;
    pass_.keep_routed();
    fast_ = std::make_unique<FastPath>(osm_, logger_, requests_, pass_);
    std::string probe = config_.port_probe;
    if (probe == "off") {
      probe.clear();
    } else if (probe.empty()) {
      probe = RAILYARD_PORT_PROBE;
      if (::access(probe.c_str(), X_OK) != 0) probe.clear();
    } else if (::access(probe.c_str(), X_OK) != 0) {
      logger_.log(LogLevel::kError, "port_probe %s is not an executable: link failures are left to OpenSM",
                  probe.c_str());
      probe.clear();
    }
    fast_->set_port_probe(probe);
    fast_->set_ca_first_blocks(config_.ca_first_blocks);
    logger_.log(LogLevel::kInfo, "fast path on; link failures (trap 128): %s",
                probe.empty() ? "left to OpenSM's sweep (no port probe)" : ("probed with " + probe).c_str());
  }

  void start_events() {
    EventChannel::Options options;
    options.socket_path = config_.controller_socket;
    options.controllers = config_.controllers;
    options.tls.ca_file = config_.controller_ca;
    options.hello = HelloEvent{"osmrailyard", RAILYARD_VERSION, static_cast<int64_t>(::getpid()), OSM_VERSION, 0};
    options.hello.token = config_.controller_token;
    options.sm_state = [this] { return sm_status(); };
    events_ = std::make_unique<EventChannel>(
        std::move(options), [this](const Command& c) { run_command(c); },
        [this](LogLevel level, const std::string& text) { logger_.log(level, "%s", text.c_str()); });
    pass_.set_events(events_.get());
    if (fast_) fast_->set_events(events_.get());
  }

  osm_opensm_t* osm_;
  OsmLogger logger_;
  PluginConfig config_;
  RequestBook requests_;
  RoutingPass pass_;
  std::unique_ptr<EventChannel> events_;  // null: events off
  std::unique_ptr<FastPath> fast_;        // null: commands go to OpenSM's force_reroute
  osm_routing_engine_t* engine_ = nullptr;  // OpenSM's entry for this engine, once set up
};

void log_exception(osm_opensm_t* osm, const char* where) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    osm_log(&osm->log, OSM_LOG_ERROR, "railyard: %s: internal error: %s\n", where, e.what());
  } catch (...) {
    osm_log(&osm->log, OSM_LOG_ERROR, "railyard: %s: internal error (unknown exception)\n", where);
  }
}

// ucast_build_fwd_tables: 0 = tables written, -1 = OpenSM falls back.
int build_fwd_tables(void* context) noexcept {
  auto* plugin = static_cast<Plugin*>(context);
  int rc = -1;
  try {
    rc = plugin->pass_.run();
  } catch (...) {
    log_exception(plugin->osm_, "routing pass refused, OpenSM falls back");
    rc = -1;
  }
  if (rc != 0) {
    // Whatever OpenSM does next may read the rows railyard skipped (with
    // no_fallback_routing_engine, its own multicast builder reads them).
    try {
      plugin->pass_.write_hop_rows_after_refusal();
    } catch (...) {
      log_exception(plugin->osm_, "hop rows after a refused pass");
    }
  }
  return rc;
}

// mcast_build_stree: a group's tree from the distances of this pass.
ib_api_status_t build_mcast_stree(void* context, osm_mgrp_box_t* mbox) noexcept {
  auto* plugin = static_cast<Plugin*>(context);
  if (mbox == nullptr) return IB_INVALID_PARAMETER;
  try {
    return plugin->pass_.build_mcast_tree(*mbox);
  } catch (...) {
    log_exception(plugin->osm_, "multicast tree not built");
    return IB_ERROR;
  }
}

// build_lid_matrices: 0 = written, 1 = OpenSM builds them itself. The
// multicast trees are the plugin's exactly when its distances are this
// pass's: otherwise OpenSM's builder reads the rows OpenSM wrote.
int build_lid_matrices(void* context) noexcept {
  auto* plugin = static_cast<Plugin*>(context);
  int rc = 1;
  try {
    rc = plugin->pass_.build_hop_matrices();
  } catch (...) {
    log_exception(plugin->osm_, "hop matrices left to OpenSM");
    rc = 1;
  }
  if (plugin->engine_ != nullptr) plugin->engine_->mcast_build_stree = rc == 0 ? build_mcast_stree : nullptr;
  return rc;
}

int setup_engine(osm_routing_engine_t* engine, osm_opensm_t* osm) noexcept {
  // OpenSM copied our context into engine->context before calling setup.
  if (engine == nullptr || engine->context == nullptr) {
    osm_log(&osm->log, OSM_LOG_ERROR, "railyard: setup called without the plugin context\n");
    return -1;
  }
  // Min-hop matrices (multicast and SA use them): railyard's, or OpenSM's own
  // when configured so (NULL).
  auto* plugin = static_cast<Plugin*>(engine->context);
  engine->build_lid_matrices = plugin->config_.railyard_hop_matrices ? build_lid_matrices : nullptr;
  engine->mcast_build_stree = nullptr;  // set by build_lid_matrices once the plugin's distances are built
  plugin->engine_ = engine;
  engine->ucast_build_fwd_tables = build_fwd_tables;
  engine->ucast_dump_tables = nullptr;   // never called by 3.3.23
  engine->destroy = nullptr;             // the plugin's delete() owns the context
  plugin->logger_.log(LogLevel::kVerbose, "routing engine '%s' set up (hop matrices by %s)", kEngineName,
                      plugin->config_.railyard_hop_matrices ? "railyard" : "OpenSM");
  return 0;
}

void* create(osm_opensm_t* osm) noexcept {
  if (osm == nullptr) return nullptr;
  std::unique_ptr<Plugin> plugin;
  try {
    LoadedConfig loaded = load_plugin_config(osm->subn.opt.event_plugin_options);
    const std::string note = loaded.note;
    const bool note_is_error = loaded.error;
    plugin = std::make_unique<Plugin>(osm, std::move(loaded));
    plugin->logger_.log(note_is_error ? LogLevel::kError : LogLevel::kInfo, "%s", note.c_str());
    plugin->logger_.log(LogLevel::kInfo, "policy file: %s; log_level %s",
                        plugin->config_.policy_file.empty() ? "(none, default policy)"
                                                            : plugin->config_.policy_file.c_str(),
                        std::string(to_string(plugin->config_.log_level)).c_str());
    if (plugin->config_.keep_heap) {
      const HeapPolicyResult heap = keep_freed_memory();
      plugin->logger_.log(heap.applied ? LogLevel::kInfo : LogLevel::kError, "%s", heap.message.c_str());
    }
  } catch (...) {
    log_exception(osm, "create");
    return nullptr;
  }
  try {
    plugin->start_fast_path();
  } catch (...) {
    log_exception(osm, "fast path off");
    plugin->fast_.reset();
  }
  // Events are an addition: if they cannot start, routing still works.
  if (plugin->config_.events_on()) {
    try {
      plugin->start_events();
      std::string where = plugin->config_.controller_socket.empty() ? "" : "unix:" + plugin->config_.controller_socket;
      for (const ControllerAddress& a : plugin->config_.controllers) where += (where.empty() ? "" : ", ") + a.text();
      plugin->logger_.log(LogLevel::kInfo, "events to the controller on %s%s; its commands applied by %s",
                          where.c_str(),
                          plugin->config_.policy_from_controller ? " (its policy written to the policy file)" : "",
                          plugin->fast_ ? "the fast path (changed LFT blocks pushed by the plugin)"
                                        : "OpenSM's force_reroute");
    } catch (...) {
      log_exception(osm, "events off");
    }
  }

  // Registered last: if create() fails, OpenSM dlclose()s the library, and a
  // registered engine would then point into unmapped code.
  external_routing_engine_module_t module{kEngineName, setup_engine, plugin.get()};
  const cl_status_t st = osm_register_external_routing_engine(osm, &module, plugin.get());
  if (st != CL_SUCCESS) {
    osm_log(&osm->log, OSM_LOG_ERROR, "railyard: cannot register routing engine '%s' (status %d)\n", kEngineName,
            static_cast<int>(st));
    return nullptr;
  }
  plugin->logger_.log(LogLevel::kInfo, "routing engine '%s' registered (select it with 'routing_engine %s')",
                      kEngineName, kEngineName);
  return plugin.release();
}

// report(): called concurrently by OpenSM's threads, sometimes under its lock.
// Copies the event into plain values and queues it; never blocks, never
// takes OpenSM's lock, never throws.
void report(void* data, osm_epi_event_id_t id, void* event_data) noexcept {
  auto* plugin = static_cast<Plugin*>(data);
  if (plugin == nullptr) return;
  try {
    if (plugin->fast_) {
      // Blocks the fast path sent: its acknowledgements, counted in its own
      // `fast_path` event rather than forwarded one by one.
      if (id == OSM_EVENT_ID_LFT_CHANGE && event_data != nullptr &&
          plugin->fast_->on_lft_change(*static_cast<const osm_epi_lft_change_event_t*>(event_data))) {
        return;
      }
      if (id == OSM_EVENT_ID_SUBNET_UP) plugin->fast_->on_subnet_up();
      // Trap 128: a port of that switch changed state (which one, the fast
      // path asks the switch).
      if (id == OSM_EVENT_ID_TRAP && event_data != nullptr) {
        const auto* notice = static_cast<const ib_mad_notice_attr_t*>(event_data);
        if (ib_notice_is_generic(notice) && cl_ntoh16(notice->g_or_v.generic.trap_num) == 128) {
          plugin->fast_->on_trap(cl_ntoh16(notice->data_details.ntc_128.sw_lid));
        }
      }
    }
    if (plugin->events_ == nullptr) return;
    auto body = event_from_osm(id, event_data);
    if (!body) return;
    if (auto* done = std::get_if<UcastRoutingDoneEvent>(&*body)) {
      done->requests = plugin->requests_.finish_routing();
      done->engine_ok = plugin->pass_.last_ok();
      if (done->engine_ok) done->digests = plugin->pass_.last_digests();
    }
    plugin->events_->push(std::move(*body));
  } catch (...) {
    // Out of memory at worst: the event is lost; OpenSM goes on.
  }
}

void destroy(void* data) noexcept {
  auto* plugin = static_cast<Plugin*>(data);
  if (plugin == nullptr) return;
  try {
    plugin->logger_.log(LogLevel::kVerbose, "unloading after %llu routing passes",
                        static_cast<unsigned long long>(plugin->pass_.passes()));
    if (plugin->fast_) plugin->fast_->stop();
    if (plugin->events_) {
      plugin->events_->stop();
      plugin->logger_.log(LogLevel::kVerbose, "events: %llu sent, %llu dropped",
                          static_cast<unsigned long long>(plugin->events_->sent()),
                          static_cast<unsigned long long>(plugin->events_->dropped()));
    }
  } catch (...) {
  }
  delete plugin;
}

}  // namespace

}  // namespace railyard::sm_plugin

// The one exported symbol (libosmrailyard.map, -fvisibility=hidden).
extern "C" {
#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error "railyard's plugin is written for OpenSM's event plugin interface version 2"
#endif
__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
    OSM_VERSION,
    railyard::sm_plugin::create,
    railyard::sm_plugin::destroy,
    railyard::sm_plugin::report,
};
}
