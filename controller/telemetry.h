// Telemetry: OpenSM's perf-manager counters, relayed by the plugin
// (port_errors and port_counters events), turned into per-port rates with a
// bounded history, a ranking of hot ports (PortXmitWait rate) and error
// bursts. Not durable state: it is rebuilt from the next sweeps after a
// restart, and it never goes through the controller's mutation path.
//
// What OpenSM sends (osm_perfmgr_db.c, 3.3.23): per port and sweep, the
// change of each counter since its previous reading (`time_diff_s` seconds
// before, whole seconds). OpenSM already restarts its baseline when a counter
// went down (cleared out of band, or cleared by the perf manager itself near
// overflow): the delta is then the count since the clear. What is left for us:
//
//  - reset: the first reading of a port OpenSM (re)learnt — OpenSM started,
//    the node came back — is the whole counter since the hardware last
//    cleared it over a few seconds: a false spike. A sample counts as a rate
//    only when it continues the one before: the previous sample of the port
//    arrived `time_diff_s` ago (within max(1.5 s, 25%)). Otherwise (first
//    sample, a gap, OpenSM's interval not ours) it is a baseline: no rate, not
//    added to the totals.
//  - wrap: a delta of 2^63 or more is a subtraction that went below zero (a
//    counter smaller than its previous reading that OpenSM did not catch, a
//    width mismatch): a baseline, never a huge or negative rate.
//  - the totals (fabric-wide sums exported as Prometheus `_total`) add only
//    rates' deltas and saturate: they never go down.
//
// PortXmitData/PortRcvData count 4-byte words: rates here are bytes.
// Unicast/multicast packet deltas are ignored (OpenSM leaves them
// uninitialised when a port lacks IETF extended counters).
//
// Thread-safe: one writer (the plugin's reader thread), many readers (HTTP).
// Every call holds the lock for O(history + top_n) at most: readers never wait
// for more than one sample's update. Memory is bounded: at most max_ports
// ports, each with two rings of `history` samples (~56 bytes a pair).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/protocol/plugin_events.h"

namespace railyard::controller {

struct TelemetryConfig {
  uint32_t history = 60;                 // samples kept per port and kind (ring buffer)
  double hot_xmit_wait_per_s = 1000;     // a port whose PortXmitWait rate is at least this is hot
  uint32_t top_n = 10;                   // hot ports listed (/hotspots) and exported (metrics)
  uint64_t error_burst = 10;             // errors in one sample that make a burst
  uint32_t max_ports = 262144;           // ports followed; more are counted and ignored
};

// One port_errors sample: PortXmitWait and the error counters.
struct WaitSample {
  double time = 0;            // Unix seconds (the plugin's report time)
  float interval_s = 0;       // since the previous sample of the port
  float xmit_wait_per_s = 0;  // PortXmitWait ticks per second
  uint32_t errors = 0;        // all error counters added, this interval (saturated)
  uint32_t xmit_discards = 0;
};

// One port_counters sample: data and packets.
struct DataSample {
  double time = 0;
  float interval_s = 0;
  float xmit_bytes_per_s = 0;
  float rcv_bytes_per_s = 0;
  float xmit_pkts_per_s = 0;
  float rcv_pkts_per_s = 0;
};

// Why a sample was not a rate.
enum class BaselineReason : uint8_t { kFirst, kGap, kWrap };
std::string_view to_string(BaselineReason reason);

struct PortTotals {  // deltas of samples that were rates, saturated
  uint64_t xmit_wait = 0, xmit_bytes = 0, rcv_bytes = 0, errors = 0;
};

// What is known of one port.
struct PortTelemetry {
  uint64_t node_guid = 0;
  uint8_t port = 0;
  std::string node_name;
  std::vector<WaitSample> wait;   // oldest first
  std::vector<DataSample> data;   // oldest first
  PortTotals totals;
  uint64_t baselines = 0;
};

// A port in the ranking.
struct HotPort {
  uint64_t node_guid = 0;
  uint8_t port = 0;
  std::string node_name;
  WaitSample latest;
  std::optional<DataSample> latest_data;
};

struct ErrorBurst {
  uint64_t node_guid = 0;
  uint8_t port = 0;
  std::string node_name;
  double time = 0;
  uint32_t errors = 0;
  float interval_s = 0;
};

struct TelemetrySummary {
  size_t ports = 0;                    // ports followed
  uint64_t ports_ignored = 0;          // beyond max_ports
  uint64_t samples = 0;                // every sample taken
  std::map<BaselineReason, uint64_t> baselines;
  PortTotals totals;                   // over every port
  uint64_t error_bursts = 0;
  uint64_t hot_ports = 0;              // ports hot now (before top_n)
  double last_sample_time = 0;         // 0: none yet
  double sweep_interval_s = 0;         // the last rate sample's interval
};

class Telemetry {
 public:
  explicit Telemetry(TelemetryConfig config = {});

  const TelemetryConfig& config() const { return config_; }

  // A port_errors event at `time` (Unix seconds). Returns the burst when this
  // sample's errors reach config.error_burst.
  std::optional<ErrorBurst> add(const protocol::PortErrorsEvent& e, double time);
  // A port_counters event at `time`.
  void add(const protocol::PortCountersEvent& e, double time);

  // Hot ports now, hottest first, at most config.top_n: the latest sample's
  // PortXmitWait rate >= config.hot_xmit_wait_per_s and not older than
  // `stale_after_s` (3 sweeps, at least 10 s) at `now`.
  std::vector<HotPort> hot(double now) const;
  // The latest error bursts, newest first, at most config.top_n.
  std::vector<ErrorBurst> bursts() const;
  // One port; nullopt when it never reported.
  std::optional<PortTelemetry> port(uint64_t node_guid, uint8_t port) const;
  TelemetrySummary summary(double now) const;

 private:
  struct Ring {  // fixed capacity, oldest overwritten
    size_t next = 0;
    size_t size = 0;
  };
  struct Port {
    uint64_t node_guid = 0;
    uint8_t port = 0;
    std::string node_name;
    std::vector<WaitSample> wait;
    Ring wait_ring;
    std::vector<DataSample> data;
    Ring data_ring;
    PortTotals totals;
    uint64_t baselines = 0;
    double ranked_rate = -1;  // key in ranking_ (-1: not in it)
  };
  Port* find_or_add(const protocol::CounterPort& p);
  // nullopt: a rate over that many seconds; else why it is a baseline.
  std::optional<BaselineReason> continues(const std::vector<double>& last_time, size_t index, double time,
                                          int64_t time_diff_s, double* interval) const;
  double stale_after_s() const;
  template <class S>
  void push(std::vector<S>& ring, Ring& r, const S& s) const;
  template <class S>
  static std::vector<S> ordered(const std::vector<S>& ring, const Ring& r);
  template <class S>
  static const S* newest(const std::vector<S>& ring, const Ring& r);

  TelemetryConfig config_;
  mutable std::mutex mu_;
  std::vector<Port> ports_;
  std::unordered_map<uint64_t, uint32_t> index_;  // guid << 8 | port -> ports_
  std::vector<double> last_wait_time_, last_data_time_;  // per port, 0: none
  std::set<std::pair<double, uint32_t>> ranking_;  // (xmit_wait rate, port) of rates > 0
  std::vector<ErrorBurst> bursts_;                 // ring of the last top_n
  size_t bursts_next_ = 0;
  uint64_t ports_ignored_ = 0, samples_ = 0, error_bursts_ = 0;
  std::map<BaselineReason, uint64_t> baselines_;
  PortTotals totals_;
  double last_sample_time_ = 0, sweep_interval_s_ = 0;
};

}  // namespace railyard::controller
