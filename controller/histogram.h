// Histogram: counts of observations under fixed upper bounds, their sum and
// number, the shape of a Prometheus histogram (cumulative `le` buckets are
// made when rendered). A value type: its owner's lock guards it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace railyard::controller {

class Histogram {
 public:
  explicit Histogram(std::span<const double> upper_bounds)
      : bounds_(upper_bounds.begin(), upper_bounds.end()), counts_(bounds_.size() + 1, 0) {}

  void observe(double value) {
    size_t i = 0;
    while (i < bounds_.size() && value > bounds_[i]) ++i;
    ++counts_[i];  // the last slot: above every bound (+Inf)
    sum_ += value;
    ++count_;
  }

  const std::vector<double>& bounds() const { return bounds_; }
  // Observations in each bucket (not cumulative); one more than bounds(): +Inf.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Seconds from a millisecond to a few minutes: reroutes (request to LFTs in
// place) and HTTP requests.
inline constexpr double kLatencyBucketsSeconds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                    0.25,  0.5,    1,     2.5,  5,     10,   30, 60, 120};

}  // namespace railyard::controller
