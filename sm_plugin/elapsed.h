// Milliseconds since a steady-clock instant: the plugin's timings (routing
// pass, fast path, hop matrices) as they are logged and reported.
#pragma once

#include <chrono>

namespace railyard::sm_plugin {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace railyard::sm_plugin
