// The nice value of the calling thread alone (Linux keeps one per thread;
// threads it starts inherit it). railyardd's background work — routing, and
// carrying out changes — runs nicer than the threads that answer reads.
#pragma once

namespace railyard::controller {

// Raises the calling thread's nice to `nice` (0..19) if it is lower; never
// lowers it (that needs privileges). Returns the thread's nice afterwards.
int raise_thread_nice(int nice);

}  // namespace railyard::controller
