// Telemetry: rates from OpenSM's perf-manager deltas, baselines on reset and
// wrap, the ring buffers' bound, the hot-port ranking and error bursts.
#include "controller/telemetry.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

namespace railyard::controller {
namespace {

constexpr double kT0 = 1'700'000'000;

protocol::PortErrorsEvent errors(uint64_t guid, uint8_t port, uint64_t xmit_wait, int64_t time_diff_s,
                                 uint64_t symbol_err = 0) {
  protocol::PortErrorsEvent e;
  e.port = protocol::CounterPort{guid, port, "switch " + std::to_string(guid)};
  e.xmit_wait = xmit_wait;
  e.symbol_err = symbol_err;
  e.time_diff_s = time_diff_s;
  return e;
}

protocol::PortCountersEvent data(uint64_t guid, uint8_t port, uint64_t xmit_words, int64_t time_diff_s) {
  protocol::PortCountersEvent e;
  e.port = protocol::CounterPort{guid, port, "switch " + std::to_string(guid)};
  e.xmit_data = xmit_words;
  e.rcv_data = xmit_words / 2;
  e.xmit_pkts = 10;
  e.time_diff_s = time_diff_s;
  // Garbage where OpenSM leaves the IETF fields uninitialised: never read.
  e.unicast_xmit_pkts = std::numeric_limits<uint64_t>::max();
  return e;
}

TEST(Telemetry, FirstSampleIsABaselineThenDeltasBecomeRates) {
  Telemetry t;
  t.add(errors(0x10, 3, 5'000'000, 2), kT0);  // OpenSM's first reading: the whole counter
  std::optional<PortTelemetry> p = t.port(0x10, 3);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->wait.empty());
  EXPECT_EQ(p->totals.xmit_wait, 0u);
  t.add(errors(0x10, 3, 4000, 2), kT0 + 2);
  p = t.port(0x10, 3);
  ASSERT_EQ(p->wait.size(), 1u);
  EXPECT_DOUBLE_EQ(p->wait[0].xmit_wait_per_s, 2000);
  EXPECT_DOUBLE_EQ(p->wait[0].interval_s, 2);
  EXPECT_EQ(p->totals.xmit_wait, 4000u);
  const TelemetrySummary s = t.summary(kT0 + 2);
  EXPECT_EQ(s.baselines.at(BaselineReason::kFirst), 1u);
  EXPECT_EQ(s.totals.xmit_wait, 4000u);
}

TEST(Telemetry, DataCountersAreFourByteWords) {
  Telemetry t;
  t.add(data(0x10, 1, 7, 1), kT0);
  t.add(data(0x10, 1, 1000, 1), kT0 + 1);
  const PortTelemetry p = *t.port(0x10, 1);
  ASSERT_EQ(p.data.size(), 1u);
  EXPECT_DOUBLE_EQ(p.data[0].xmit_bytes_per_s, 4000);
  EXPECT_DOUBLE_EQ(p.data[0].rcv_bytes_per_s, 2000);
  EXPECT_DOUBLE_EQ(p.data[0].xmit_pkts_per_s, 10);
  EXPECT_EQ(p.totals.xmit_bytes, 4000u);
}

// OpenSM restarted (or the node came back): its first reading of the port is
// the counter since the hardware last cleared it, over a couple of seconds.
// It arrives long after our previous sample: a baseline, not a spike.
TEST(Telemetry, ResetAfterAGapIsABaselineNotASpike) {
  Telemetry t;
  t.add(errors(0x10, 3, 0, 2), kT0);
  t.add(errors(0x10, 3, 100, 2), kT0 + 2);
  t.add(errors(0x10, 3, 4'000'000'000, 2), kT0 + 62);  // a minute later, "2 s" of counts
  PortTelemetry p = *t.port(0x10, 3);
  ASSERT_EQ(p.wait.size(), 1u);
  EXPECT_DOUBLE_EQ(p.wait.back().xmit_wait_per_s, 50);
  EXPECT_EQ(p.totals.xmit_wait, 100u);
  EXPECT_TRUE(t.hot(kT0 + 62).empty());
  // The next reading continues the new baseline: rates again.
  t.add(errors(0x10, 3, 600, 2), kT0 + 64);
  p = *t.port(0x10, 3);
  ASSERT_EQ(p.wait.size(), 2u);
  EXPECT_DOUBLE_EQ(p.wait.back().xmit_wait_per_s, 300);
  EXPECT_EQ(p.totals.xmit_wait, 700u);
  EXPECT_EQ(t.summary(kT0 + 64).baselines.at(BaselineReason::kGap), 1u);
}

// A counter cleared out of band and caught by OpenSM: it restarts its
// baseline at zero and reports the count since the clear, over the usual
// interval. That continues our samples: a (smaller) rate, totals still grow.
TEST(Telemetry, ClearCaughtByOpenSmIsAnOrdinaryRate) {
  Telemetry t;
  t.add(errors(0x10, 3, 0, 1), kT0);
  t.add(errors(0x10, 3, 900, 1), kT0 + 1);
  t.add(errors(0x10, 3, 30, 1), kT0 + 2);
  const PortTelemetry p = *t.port(0x10, 3);
  ASSERT_EQ(p.wait.size(), 2u);
  EXPECT_DOUBLE_EQ(p.wait[1].xmit_wait_per_s, 30);
  EXPECT_EQ(p.totals.xmit_wait, 930u);
}

// A reading below the previous one that OpenSM did not catch: its unsigned
// subtraction wrapped to nearly 2^64. Never a huge or negative rate; the
// totals do not move (and never go down).
TEST(Telemetry, WrappedDeltaIsABaseline) {
  Telemetry t;
  t.add(errors(0x10, 3, 0, 1), kT0);
  t.add(errors(0x10, 3, 500, 1), kT0 + 1);
  const uint64_t wrapped = uint64_t{0} - 200;  // 300 after 500
  t.add(errors(0x10, 3, wrapped, 1), kT0 + 2);
  t.add(data(0x10, 3, 0, 1), kT0);
  t.add(data(0x10, 3, uint64_t{0} - 4, 1), kT0 + 1);
  const PortTelemetry p = *t.port(0x10, 3);
  ASSERT_EQ(p.wait.size(), 1u);
  EXPECT_DOUBLE_EQ(p.wait.back().xmit_wait_per_s, 500);
  EXPECT_TRUE(p.data.empty());
  EXPECT_EQ(p.totals.xmit_wait, 500u);
  EXPECT_EQ(p.totals.xmit_bytes, 0u);
  const TelemetrySummary s = t.summary(kT0 + 2);
  EXPECT_EQ(s.baselines.at(BaselineReason::kWrap), 2u);
  EXPECT_EQ(s.totals.xmit_wait, 500u);
  // After the wrap the port goes on from the wrapped reading.
  t.add(errors(0x10, 3, 40, 1), kT0 + 3);
  EXPECT_DOUBLE_EQ(t.port(0x10, 3)->wait.back().xmit_wait_per_s, 40);
}

TEST(Telemetry, TotalsSaturateInsteadOfWrapping) {
  Telemetry t;
  t.add(data(0x10, 3, 0, 1), kT0);
  const uint64_t big = (uint64_t{1} << 62) - 1;  // words: twice their bytes overflow 64 bits
  t.add(data(0x10, 3, big, 1), kT0 + 1);
  t.add(data(0x10, 3, big, 1), kT0 + 2);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(t.summary(kT0 + 2).totals.xmit_bytes, max);
  t.add(data(0x10, 3, 5, 1), kT0 + 3);
  EXPECT_EQ(t.summary(kT0 + 3).totals.xmit_bytes, max);
}

TEST(Telemetry, OpenSmIntervalMustMatchOurs) {
  Telemetry t;
  t.add(errors(0x10, 3, 0, 10), kT0);
  // 10 s later by our clock: OpenSM's whole seconds may be one off.
  t.add(errors(0x10, 3, 1000, 11), kT0 + 10.2);
  EXPECT_EQ(t.port(0x10, 3)->wait.size(), 1u);
  // OpenSM says 2 s where we saw 10: its baseline restarted meanwhile.
  t.add(errors(0x10, 3, 1000, 2), kT0 + 20.2);
  EXPECT_EQ(t.port(0x10, 3)->wait.size(), 1u);
  // No interval at all.
  t.add(errors(0x10, 3, 1000, 0), kT0 + 30.2);
  EXPECT_EQ(t.port(0x10, 3)->wait.size(), 1u);
}

TEST(Telemetry, HistoryIsARingOfConfiguredSize) {
  TelemetryConfig c;
  c.history = 4;
  Telemetry t(c);
  for (int i = 0; i <= 10; ++i) t.add(errors(0x10, 3, static_cast<uint64_t>(i) * 100, 1), kT0 + i);
  const PortTelemetry p = *t.port(0x10, 3);
  ASSERT_EQ(p.wait.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(p.wait[i].time, kT0 + 7 + static_cast<double>(i)) << i;  // oldest first
    EXPECT_DOUBLE_EQ(p.wait[i].xmit_wait_per_s, 100.0 * (7 + static_cast<double>(i))) << i;
  }
}

TEST(Telemetry, HotPortsAreOverTheThresholdHottestFirstAtMostTopN) {
  TelemetryConfig c;
  c.top_n = 3;
  c.hot_xmit_wait_per_s = 100;
  Telemetry t(c);
  const uint64_t rates[] = {50, 400, 100, 900, 0, 300, 200};
  for (uint8_t i = 0; i < 7; ++i) t.add(errors(0x20, i + 1, 0, 1), kT0);
  for (uint8_t i = 0; i < 7; ++i) t.add(errors(0x20, i + 1, rates[i], 1), kT0 + 1);
  std::vector<HotPort> hot = t.hot(kT0 + 1);
  ASSERT_EQ(hot.size(), 3u);
  EXPECT_EQ(hot[0].port, 4);
  EXPECT_EQ(hot[1].port, 2);
  EXPECT_EQ(hot[2].port, 6);
  EXPECT_EQ(t.summary(kT0 + 1).hot_ports, 5u);  // 400, 100, 900, 300, 200
  // The hottest cools down: it leaves the top.
  t.add(errors(0x20, 4, 10, 1), kT0 + 2);
  hot = t.hot(kT0 + 2);
  ASSERT_EQ(hot.size(), 3u);
  EXPECT_EQ(hot[0].port, 2);
  EXPECT_EQ(hot[1].port, 6);
  EXPECT_EQ(hot[2].port, 7);
  // Ports that stopped reporting are not hot forever.
  EXPECT_TRUE(t.hot(kT0 + 60).empty());
}

TEST(Telemetry, ErrorBurstsAreFlaggedNewestFirst) {
  TelemetryConfig c;
  c.error_burst = 10;
  c.top_n = 2;
  Telemetry t(c);
  for (uint8_t port = 1; port <= 3; ++port) t.add(errors(0x30, port, 0, 1), kT0);
  EXPECT_FALSE(t.add(errors(0x30, 1, 0, 1, 9), kT0 + 1));  // under the bar
  std::optional<ErrorBurst> b = t.add(errors(0x30, 2, 0, 1, 25), kT0 + 1.1);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->errors, 25u);
  EXPECT_EQ(b->port, 2);
  EXPECT_TRUE(t.add(errors(0x30, 3, 0, 1, 10), kT0 + 1.2));
  EXPECT_TRUE(t.add(errors(0x30, 2, 0, 1, 11), kT0 + 2.1));
  const std::vector<ErrorBurst> bursts = t.bursts();
  ASSERT_EQ(bursts.size(), 2u);  // top_n kept
  EXPECT_EQ(bursts[0].port, 2);
  EXPECT_EQ(bursts[0].errors, 11u);
  EXPECT_EQ(bursts[1].port, 3);
  EXPECT_EQ(t.summary(kT0 + 3).error_bursts, 3u);
  EXPECT_EQ(t.summary(kT0 + 3).totals.errors, 9u + 25 + 10 + 11);
}

TEST(Telemetry, PortsBeyondTheBoundAreCountedAndIgnored) {
  TelemetryConfig c;
  c.max_ports = 2;
  Telemetry t(c);
  for (uint8_t port = 1; port <= 5; ++port) t.add(errors(0x40, port, 0, 1), kT0);
  const TelemetrySummary s = t.summary(kT0);
  EXPECT_EQ(s.ports, 2u);
  EXPECT_EQ(s.ports_ignored, 3u);
  EXPECT_FALSE(t.port(0x40, 5));
}

TEST(Telemetry, NodeNamesAreBounded) {
  Telemetry t;
  protocol::PortErrorsEvent e = errors(0x60, 1, 0, 1);
  e.port.node_name = std::string(100000, 'x');
  t.add(e, kT0);
  EXPECT_EQ(t.port(0x60, 1)->node_name.size(), 64u);
}

// One writer, readers at the same time (run under TSan by scripts/test.sh).
TEST(Telemetry, ReadersAndTheWriterRunTogether) {
  Telemetry t;
  std::thread writer([&] {
    for (int i = 0; i < 2000; ++i) {
      t.add(errors(0x50, static_cast<uint8_t>(i % 30 + 1), static_cast<uint64_t>(i) * 1000, 1), kT0 + i / 30);
      t.add(data(0x50, static_cast<uint8_t>(i % 30 + 1), 100, 1), kT0 + i / 30);
    }
  });
  size_t seen = 0;
  for (int i = 0; i < 300; ++i) {
    seen += t.hot(kT0 + 60).size();
    (void)t.port(0x50, 1);
    (void)t.summary(kT0 + 60);
    (void)t.bursts();
  }
  writer.join();
  EXPECT_EQ(t.summary(kT0).ports, 30u);
  EXPECT_EQ(t.summary(kT0).samples, 4000u);
  (void)seen;
}

}  // namespace
}  // namespace railyard::controller
