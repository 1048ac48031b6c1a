// How OpenSM's process gives freed memory back, set once when OpenSM loads
// the plugin (plugin config `heap: keep | release`).
//
// Why: a routing pass and an incremental reroute allocate the same tens of MB
// every time (the forwarding tables, the reroute memo, the engines' arrays;
// ~50 MB at 16,384 CAs). glibc's defaults map each large block fresh (mmap
// above a threshold that starts at 128 KiB) and give a heap's free top back
// to the kernel (trim), so every reroute faults its pages in again. On a
// virtual machine a page fault costs ~10 us: at 16,384 CAs the fast path's
// one-link reroute inside OpenSM took 235-365 ms with glibc's defaults and
// 126-154 ms with `keep` (docs/fast_path.md, "Page faults, not the route",
// has the other changes that took it to ~50 ms).
//
// keep: large blocks come from the heap (M_MMAP_THRESHOLD 256 MiB: only
// blocks larger than that are mapped on their own) and free memory stays in
// the heap (M_TRIM_THRESHOLD 1 GiB), so the next pass reuses pages that are
// already mapped. The price: OpenSM's resident memory stays at its peak
// instead of shrinking between passes (the next pass needs it again anyway).
// release: glibc's defaults, untouched.
#pragma once

#include <string>

namespace railyard::sm_plugin {

struct HeapPolicyResult {
  bool applied = false;
  std::string message;  // what was set, or why not
};

// Sets glibc's thresholds for `keep`; false (and why) if the C library is
// not glibc or refused a value. Process-wide: call once, at load.
HeapPolicyResult keep_freed_memory();

}  // namespace railyard::sm_plugin
