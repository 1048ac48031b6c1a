#include "controller/telemetry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::controller {

namespace {

constexpr uint64_t kWrapped = uint64_t{1} << 63;

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

uint32_t saturate32(uint64_t v) {
  return v > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max() : static_cast<uint32_t>(v);
}

uint64_t key_of(uint64_t guid, uint8_t port) { return (guid << 8) | port; }

// OpenSM's node names are at most 64 bytes (OSM_EPI_NODE_NAME_LEN): a longer
// one from the socket is cut, so a port costs what the header says.
std::string bounded_name(const std::string& name) { return name.substr(0, 64); }

// Every error counter of a port_errors event (PortXmitWait is congestion, not an error).
uint64_t error_sum(const protocol::PortErrorsEvent& e) {
  uint64_t sum = 0;
  for (uint64_t v : {e.symbol_err, e.link_err_recover, e.link_downed, e.rcv_err, e.rcv_rem_phys_err,
                     e.rcv_switch_relay_err, e.xmit_discards, e.xmit_constraint_err, e.rcv_constraint_err,
                     e.link_integrity, e.buffer_overrun, e.vl15_dropped}) {
    sum = saturating_add(sum, v);
  }
  return sum;
}

}  // namespace

std::string_view to_string(BaselineReason reason) {
  switch (reason) {
    case BaselineReason::kFirst: return "first";
    case BaselineReason::kGap: return "gap";
    case BaselineReason::kWrap: return "wrap";
  }
  return "first";
}

Telemetry::Telemetry(TelemetryConfig config) : config_(config) {
  config_.history = std::max<uint32_t>(config_.history, 1);
  config_.top_n = std::max<uint32_t>(config_.top_n, 1);
}

Telemetry::Port* Telemetry::find_or_add(const protocol::CounterPort& p) {
  const uint64_t key = key_of(p.node_guid, p.port);
  if (auto it = index_.find(key); it != index_.end()) {
    Port& port = ports_[it->second];
    if (!p.node_name.empty() && port.node_name != p.node_name) port.node_name = bounded_name(p.node_name);
    return &port;
  }
  if (ports_.size() >= config_.max_ports) {
    ++ports_ignored_;
    return nullptr;
  }
  index_.emplace(key, static_cast<uint32_t>(ports_.size()));
  Port port;
  port.node_guid = p.node_guid;
  port.port = p.port;
  port.node_name = bounded_name(p.node_name);
  ports_.push_back(std::move(port));
  last_wait_time_.push_back(0);
  last_data_time_.push_back(0);
  return &ports_.back();
}

std::optional<BaselineReason> Telemetry::continues(const std::vector<double>& last_time, size_t index, double time,
                                                   int64_t time_diff_s, double* interval) const {
  const double previous = last_time[index];
  if (previous <= 0) return BaselineReason::kFirst;
  const double gap = time - previous;
  // OpenSM's interval is whole seconds (time_t readings): ours, measured
  // between the two reports, is finer. They must tell the same story.
  const double tolerance = std::max(1.5, 0.25 * static_cast<double>(time_diff_s));
  if (time_diff_s <= 0 || gap <= 0 || std::fabs(gap - static_cast<double>(time_diff_s)) > tolerance) {
    return BaselineReason::kGap;
  }
  *interval = gap;
  return std::nullopt;
}

template <class S>
void Telemetry::push(std::vector<S>& ring, Ring& r, const S& s) const {
  if (ring.size() < config_.history) {
    ring.push_back(s);
  } else {
    ring[r.next] = s;
  }
  r.next = (r.next + 1) % config_.history;
  r.size = ring.size();
}

template <class S>
std::vector<S> Telemetry::ordered(const std::vector<S>& ring, const Ring& r) {
  std::vector<S> out;
  out.reserve(ring.size());
  if (ring.empty()) return out;
  const size_t start = r.next % ring.size();  // not full yet: next == size, the oldest is at 0
  for (size_t i = 0; i < ring.size(); ++i) out.push_back(ring[(start + i) % ring.size()]);
  return out;
}

template <class S>
const S* Telemetry::newest(const std::vector<S>& ring, const Ring& r) {
  if (ring.empty()) return nullptr;
  return &ring[(r.next + ring.size() - 1) % ring.size()];
}

std::optional<ErrorBurst> Telemetry::add(const protocol::PortErrorsEvent& e, double time) {
  std::lock_guard lock(mu_);
  ++samples_;
  Port* p = find_or_add(e.port);
  if (p == nullptr) return std::nullopt;
  const auto index = static_cast<size_t>(p - ports_.data());
  double interval = 0;
  std::optional<BaselineReason> baseline = continues(last_wait_time_, index, time, e.time_diff_s, &interval);
  last_wait_time_[index] = time;
  const uint64_t errors = error_sum(e);
  if (!baseline && (e.xmit_wait >= kWrapped || errors >= kWrapped)) baseline = BaselineReason::kWrap;
  if (!baseline) {
    for (uint64_t v : {e.symbol_err, e.link_err_recover, e.link_downed, e.rcv_err, e.rcv_rem_phys_err,
                       e.rcv_switch_relay_err, e.xmit_discards, e.xmit_constraint_err, e.rcv_constraint_err,
                       e.link_integrity, e.buffer_overrun, e.vl15_dropped}) {
      if (v >= kWrapped) baseline = BaselineReason::kWrap;
    }
  }
  last_sample_time_ = std::max(last_sample_time_, time);
  if (baseline) {
    ++baselines_[*baseline];
    ++p->baselines;
    return std::nullopt;
  }
  WaitSample s;
  s.time = time;
  s.interval_s = static_cast<float>(interval);
  s.xmit_wait_per_s = static_cast<float>(static_cast<double>(e.xmit_wait) / interval);
  s.errors = saturate32(errors);
  s.xmit_discards = saturate32(e.xmit_discards);
  push(p->wait, p->wait_ring, s);
  sweep_interval_s_ = interval;
  p->totals.xmit_wait = saturating_add(p->totals.xmit_wait, e.xmit_wait);
  p->totals.errors = saturating_add(p->totals.errors, errors);
  totals_.xmit_wait = saturating_add(totals_.xmit_wait, e.xmit_wait);
  totals_.errors = saturating_add(totals_.errors, errors);

  if (p->ranked_rate >= 0) ranking_.erase({p->ranked_rate, static_cast<uint32_t>(index)});
  p->ranked_rate = -1;
  if (s.xmit_wait_per_s > 0) {
    p->ranked_rate = s.xmit_wait_per_s;
    ranking_.insert({p->ranked_rate, static_cast<uint32_t>(index)});
  }
  if (errors < config_.error_burst || errors == 0) return std::nullopt;
  ErrorBurst b{p->node_guid, p->port, p->node_name, time, s.errors, s.interval_s};
  ++error_bursts_;
  if (bursts_.size() < config_.top_n) {
    bursts_.push_back(b);
  } else {
    bursts_[bursts_next_] = b;
  }
  bursts_next_ = (bursts_next_ + 1) % config_.top_n;
  return b;
}

void Telemetry::add(const protocol::PortCountersEvent& e, double time) {
  std::lock_guard lock(mu_);
  ++samples_;
  Port* p = find_or_add(e.port);
  if (p == nullptr) return;
  const auto index = static_cast<size_t>(p - ports_.data());
  double interval = 0;
  std::optional<BaselineReason> baseline = continues(last_data_time_, index, time, e.time_diff_s, &interval);
  last_data_time_[index] = time;
  if (!baseline) {
    for (uint64_t v : {e.xmit_data, e.rcv_data, e.xmit_pkts, e.rcv_pkts}) {
      if (v >= kWrapped) baseline = BaselineReason::kWrap;
    }
  }
  last_sample_time_ = std::max(last_sample_time_, time);
  if (baseline) {
    ++baselines_[*baseline];
    ++p->baselines;
    return;
  }
  // PortXmitData and PortRcvData count 4-byte words.
  const uint64_t xmit_bytes = e.xmit_data > std::numeric_limits<uint64_t>::max() / 4
                                  ? std::numeric_limits<uint64_t>::max()
                                  : e.xmit_data * 4;
  const uint64_t rcv_bytes =
      e.rcv_data > std::numeric_limits<uint64_t>::max() / 4 ? std::numeric_limits<uint64_t>::max() : e.rcv_data * 4;
  DataSample s;
  s.time = time;
  s.interval_s = static_cast<float>(interval);
  s.xmit_bytes_per_s = static_cast<float>(static_cast<double>(xmit_bytes) / interval);
  s.rcv_bytes_per_s = static_cast<float>(static_cast<double>(rcv_bytes) / interval);
  s.xmit_pkts_per_s = static_cast<float>(static_cast<double>(e.xmit_pkts) / interval);
  s.rcv_pkts_per_s = static_cast<float>(static_cast<double>(e.rcv_pkts) / interval);
  push(p->data, p->data_ring, s);
  p->totals.xmit_bytes = saturating_add(p->totals.xmit_bytes, xmit_bytes);
  p->totals.rcv_bytes = saturating_add(p->totals.rcv_bytes, rcv_bytes);
  totals_.xmit_bytes = saturating_add(totals_.xmit_bytes, xmit_bytes);
  totals_.rcv_bytes = saturating_add(totals_.rcv_bytes, rcv_bytes);
}

double Telemetry::stale_after_s() const { return std::max(10.0, 3 * sweep_interval_s_); }

std::vector<HotPort> Telemetry::hot(double now) const {
  std::lock_guard lock(mu_);
  std::vector<HotPort> out;
  const double stale = stale_after_s();
  for (auto it = ranking_.rbegin(); it != ranking_.rend() && out.size() < config_.top_n; ++it) {
    if (it->first < config_.hot_xmit_wait_per_s) break;
    const Port& p = ports_[it->second];
    const WaitSample* w = newest(p.wait, p.wait_ring);
    if (w == nullptr || now - w->time > stale) continue;
    HotPort h{p.node_guid, p.port, p.node_name, *w, std::nullopt};
    if (const DataSample* d = newest(p.data, p.data_ring)) h.latest_data = *d;
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<ErrorBurst> Telemetry::bursts() const {
  std::lock_guard lock(mu_);
  std::vector<ErrorBurst> out = bursts_;
  std::sort(out.begin(), out.end(), [](const ErrorBurst& a, const ErrorBurst& b) { return a.time > b.time; });
  return out;
}

std::optional<PortTelemetry> Telemetry::port(uint64_t node_guid, uint8_t port) const {
  std::lock_guard lock(mu_);
  auto it = index_.find(key_of(node_guid, port));
  if (it == index_.end()) return std::nullopt;
  const Port& p = ports_[it->second];
  return PortTelemetry{p.node_guid, p.port,   p.node_name, ordered(p.wait, p.wait_ring), ordered(p.data, p.data_ring),
                       p.totals,    p.baselines};
}

TelemetrySummary Telemetry::summary(double now) const {
  std::lock_guard lock(mu_);
  TelemetrySummary s;
  s.ports = ports_.size();
  s.ports_ignored = ports_ignored_;
  s.samples = samples_;
  s.baselines = baselines_;
  s.totals = totals_;
  s.error_bursts = error_bursts_;
  s.last_sample_time = last_sample_time_;
  s.sweep_interval_s = sweep_interval_s_;
  const double stale = stale_after_s();
  for (auto it = ranking_.rbegin(); it != ranking_.rend(); ++it) {
    if (it->first < config_.hot_xmit_wait_per_s) break;
    const Port& p = ports_[it->second];
    const WaitSample* w = newest(p.wait, p.wait_ring);
    if (w != nullptr && now - w->time <= stale) ++s.hot_ports;
  }
  return s;
}

}  // namespace railyard::controller
