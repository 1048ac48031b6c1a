// GET /api/v1/metrics: Prometheus text exposition (format 0.0.4). Names and
// units follow Prometheus' conventions (base units: seconds, bytes; counters
// end in _total and never go down; latencies are histograms), checked by
// `promtool check metrics` in tests/api/metrics_test.cpp. Per-port series are
// the telemetry's top-N hot ports only, so their number stays bounded on any
// fabric. docs/telemetry.md lists every series.
#pragma once

#include <string>
#include <vector>

#include "controller/controller.h"

namespace railyard::api {

struct HttpStats;

std::string render_metrics(const controller::Controller& c, const HttpStats& http, const controller::FabricView* view,
                           const std::vector<controller::LinkStatus>& links, size_t drains);

}  // namespace railyard::api
