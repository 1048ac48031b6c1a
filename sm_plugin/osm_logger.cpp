#include "sm_plugin/osm_logger.h"

#include <cstdarg>
#include <cstdio>

namespace railyard::sm_plugin {

void OsmLogger::log(LogLevel level, const char* fmt, ...) const {
  if (!enabled(level) || log_ == nullptr) return;
  // One formatted line; osm_log() adds the timestamp and thread id. Long lines
  // are cut rather than allocated: this runs under OpenSM's lock.
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  osm_log_level_t osm_level = level == LogLevel::kError ? OSM_LOG_ERROR : OSM_LOG_INFO;
  osm_log(log_, osm_level, "railyard: %s\n", buf);
}

}  // namespace railyard::sm_plugin
