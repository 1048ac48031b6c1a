// OsmLogger: the plugin's lines in OpenSM's own log, behind the plugin's
// log_level.
//
// Every line goes through osm_log() prefixed "railyard: ", so operators find the
// engine's lines beside OpenSM's. The plugin's level (plugin_config.h) decides
// what is written; errors use OpenSM's ERROR level, everything else INFO so the
// lines show with OpenSM's default log_flags.
#pragma once

#include "sm_plugin/log_level.h"
#include "sm_plugin/osm_headers.h"

namespace railyard::sm_plugin {

class OsmLogger {
 public:
  explicit OsmLogger(osm_log_t* log) : log_(log) {}

  void set_level(LogLevel level) { level_ = level; }
  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return level <= level_; }

  // printf-style; never throws.
  void log(LogLevel level, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));

 private:
  osm_log_t* log_;
  LogLevel level_ = LogLevel::kInfo;
};

}  // namespace railyard::sm_plugin
