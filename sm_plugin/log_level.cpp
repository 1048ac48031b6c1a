#include "sm_plugin/log_level.h"

namespace railyard::sm_plugin {

bool parse_log_level(std::string_view text, LogLevel& out) {
  static constexpr struct {
    std::string_view name;
    LogLevel level;
  } kLevels[] = {{"error", LogLevel::kError}, {"info", LogLevel::kInfo},
                 {"verbose", LogLevel::kVerbose}, {"debug", LogLevel::kDebug}};
  for (const auto& l : kLevels) {
    if (text == l.name) {
      out = l.level;
      return true;
    }
  }
  return false;
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kInfo: return "info";
    case LogLevel::kVerbose: return "verbose";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}

}  // namespace railyard::sm_plugin
