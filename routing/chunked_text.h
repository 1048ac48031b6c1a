// Text written in bounded chunks: the table writers (lft_dump.h, lft_json.h)
// hand megabytes of text to a sink piece by piece, never holding it whole.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>

namespace railyard::routing {

// Receives text in order, one chunk per call; the chunk's bytes are valid only
// during the call.
using TextSink = std::function<void(std::string_view chunk)>;
// 1 MiB: on Linux ext4 (kernel 6.18, this machine) writing 1.65 GB in 1 MiB
// writes costs half the kernel time of 64 KiB writes. Tests pass smaller
// sizes (at least kMinChunkBytes, longer than any dump line) to cut often.
inline constexpr size_t kDumpChunkBytes = 1024 * 1024;
inline constexpr size_t kMinChunkBytes = 512;

// Collects text into one chunk of at most `capacity` bytes and hands it to the
// sink when the next piece would not fit, so pieces (dump lines) stay whole.
class ChunkedText {
 public:
  ChunkedText(const TextSink& sink, size_t capacity)
      : sink_(sink), capacity_(capacity), buf_(new char[capacity]) {
    assert(capacity >= kMinChunkBytes);  // callers pass kDumpChunkBytes, tests smaller sizes
  }
  ChunkedText(const ChunkedText&) = delete;
  ChunkedText& operator=(const ChunkedText&) = delete;

  // Where the next `n` bytes (n <= kMinChunkBytes) go; commit() says where they ended.
  char* reserve(size_t n) {
    assert(n <= kMinChunkBytes);  // callers reserve one dump line or JSON entry: under 200 bytes
    if (capacity_ - used_ < n) flush();
    return buf_.get() + used_;
  }
  void commit(const char* end) { used_ = static_cast<size_t>(end - buf_.get()); }
  // A piece that fits in one chunk is never split (so a line stays whole);
  // a longer one fills chunks to the brim.
  void append(std::string_view s) {
    if (s.size() <= capacity_ && capacity_ - used_ < s.size()) flush();
    while (!s.empty()) {
      if (used_ == capacity_) flush();
      const size_t n = std::min(s.size(), capacity_ - used_);
      std::memcpy(buf_.get() + used_, s.data(), n);
      used_ += n;
      s.remove_prefix(n);
    }
  }
  void flush() {
    if (used_ != 0) sink_(std::string_view(buf_.get(), used_));
    used_ = 0;
  }

 private:
  const TextSink& sink_;
  size_t capacity_;
  std::unique_ptr<char[]> buf_;
  size_t used_ = 0;
};

}  // namespace railyard::routing
