#include "sm_plugin/heap_policy.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace railyard::sm_plugin {

namespace {
constexpr int kMmapThreshold = 256 << 20;  // bytes; larger blocks are still mapped on their own
constexpr int kTrimThreshold = 1 << 30;    // mallopt takes an int: 1 GiB of free top before a trim
}  // namespace

HeapPolicyResult keep_freed_memory() {
#if defined(__GLIBC__)
  // Both or neither: setting either one turns glibc's sliding mmap threshold
  // off, which alone makes every large block a fresh mapping.
  if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1) {
    return {false, "heap: keep not applied: the allocator refused M_MMAP_THRESHOLD " +
                       std::to_string(kMmapThreshold) + " (a sanitizer's allocator, or not glibc's)"};
  }
  if (mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
    return {false, "heap: keep not applied: the allocator refused M_TRIM_THRESHOLD " +
                       std::to_string(kTrimThreshold)};
  }
  return {true, "heap: keep (freed memory stays mapped for the next pass: blocks up to 256 MiB from the heap, "
                "trim above 1 GiB free)"};
#else
  return {false, "heap: keep needs glibc's mallopt; the C library's defaults stay in force"};
#endif
}

}  // namespace railyard::sm_plugin
