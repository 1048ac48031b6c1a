// A 16 x 16 byte transpose: dst[r][c] = src[c][r], each of the 16 source
// and 16 destination rows given by its own pointer (any alignment), so that
// a tile can be taken out of one layout and put into another without a copy
// between. With SSE2 it is 16 loads, 32 byte interleaves and 16 stores.
//
// Two users: the unicast engine's flush (destination-major columns into the
// switch-major tables, routing/unicast_engine/destination_walk.cpp) and the
// plugin's hop rows (port-major columns into OpenSM's rows,
// sm_plugin/hop_matrices.cpp). tests/routing/byte_transpose_test.cpp holds
// it against the plain loop.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace railyard::routing {

inline void transpose16x16(const uint8_t* const src[16], uint8_t* const dst[16]) {
#if defined(__SSE2__)
  // One step interleaves register i with register i + 8, byte by byte: it
  // rotates the 8-bit index (row, byte) left by one bit, so four steps swap
  // row and byte.
  __m128i r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i]));
  for (int step = 0; step < 4; ++step) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
  for (int i = 0; i < 16; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[i]), r[i]);
#else
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 16; ++c) dst[r][c] = src[c][r];
  }
#endif
}

}  // namespace railyard::routing
