// LogLevel: how much the plugin writes into OpenSM's log (plugin_config.h's
// log_level). Kept apart from osm_logger.h so the configuration code has no
// OpenSM dependency and is unit-tested without OpenSM.
#pragma once

#include <cstdint>
#include <string_view>

namespace railyard::sm_plugin {

enum class LogLevel : uint8_t { kError = 0, kInfo = 1, kVerbose = 2, kDebug = 3 };

// "error" | "info" | "verbose" | "debug"; false when `text` is none of them.
bool parse_log_level(std::string_view text, LogLevel& out);
std::string_view to_string(LogLevel level);

}  // namespace railyard::sm_plugin
