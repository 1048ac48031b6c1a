// routing/byte_transpose.h against the plain loop: tiles read out of and
// written into larger buffers at odd offsets and strides, the bytes around
// each tile untouched.
#include "routing/byte_transpose.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace railyard::routing {
namespace {

TEST(ByteTranspose, MatchesThePlainLoopAtAnyOffsetAndStride) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t src_stride = 16 + rng() % 300, dst_stride = 16 + rng() % 300;
    const size_t src_off = rng() % (src_stride - 15), dst_off = rng() % (dst_stride - 15);
    std::vector<uint8_t> src(16 * src_stride), dst(16 * dst_stride);
    for (uint8_t& b : src) b = static_cast<uint8_t>(rng());
    for (uint8_t& b : dst) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> want = dst;
    for (size_t r = 0; r < 16; ++r) {
      for (size_t c = 0; c < 16; ++c) want[r * dst_stride + dst_off + c] = src[c * src_stride + src_off + r];
    }
    const uint8_t* s[16];
    uint8_t* d[16];
    for (size_t i = 0; i < 16; ++i) {
      s[i] = src.data() + i * src_stride + src_off;
      d[i] = dst.data() + i * dst_stride + dst_off;
    }
    transpose16x16(s, d);
    ASSERT_EQ(want, dst) << "trial " << trial;
  }
}

TEST(ByteTranspose, RowsInAnyOrder) {
  // Destination rows given in reverse: row r of the result lands where the
  // caller points, whatever the pointers' order in memory.
  uint8_t src[16][16], dst[16][16] = {};
  for (int c = 0; c < 16; ++c) {
    for (int r = 0; r < 16; ++r) src[c][r] = static_cast<uint8_t>(c * 16 + r);
  }
  const uint8_t* s[16];
  uint8_t* d[16];
  for (int i = 0; i < 16; ++i) {
    s[i] = src[i];
    d[i] = dst[15 - i];
  }
  transpose16x16(s, d);
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) EXPECT_EQ(dst[15 - r][c], c * 16 + r) << r << "," << c;
  }
}

}  // namespace
}  // namespace railyard::routing
