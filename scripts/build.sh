#!/usr/bin/env bash
# build.sh FLAVOUR [TARGET...] — configure and build railyard into build/FLAVOUR.
#   release  RelWithDebInfo (-O2 -g1), with benchmarks    (build/release)
#            installing into /usr (scripts/package.sh packages this tree)
#            (RAILYARD_BENCH=OFF in the environment leaves them out)
#   asan     clang -O0 -g1 + AddressSanitizer/UBSan, no benchmarks, with the
#            libFuzzer targets (target `fuzzers`)          (build/asan)
#   fuzz     clang -O1 + libFuzzer targets (tests/fuzz), for fuzzing longer
#            by hand (target `fuzzers` builds them all)    (build/fuzz)
#   tsan     gcc -O1 -g1 + ThreadSanitizer, no benchmarks  (build/tsan)
# Every flavour is a unity build (RAILYARD_UNITY: each target's sources
# compiled in batches of 32): a clean tree takes half the CPU time, which is
# what CI's 2 cores pay on every run. RAILYARD_UNITY=OFF in the environment
# compiles file by file (quicker to rebuild after editing one file).
# The build is incremental (Ninja); configure output goes to build/FLAVOUR.configure.log.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
flavour=${1:-release}
shift || true

case $flavour in
  # -g1 (line tables: perf and gdb backtraces with lines) instead of -g: the
  # debug info was a good part of the compile time on 2 cores.
  # Prefix /usr: the release tree is the one scripts/package.sh packages, and
  # the plugin's default port probe path is compiled in from the prefix.
  release) opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILYARD_SANITIZE=OFF -DRAILYARD_BENCH=${RAILYARD_BENCH:-ON}
                 -DCMAKE_INSTALL_PREFIX=/usr
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG") ;;
  # -g1: ASan's reports keep their lines. -O0: quickest to build; but the
  # routing library and its tests at -O1 (RAILYARD_ROUTING_OPT): its property
  # tests are most of the unit tests' time, 159 s -> 51 s on 2 cores for
  # about 60 s more of build.
  # clang with RAILYARD_FUZZ: the libraries' objects, coverage-instrumented,
  # serve both the unit tests and the libFuzzer targets, so the test command
  # builds no separate fuzz tree (that took ~180 s on CI's 2 cores).
  asan) opts=(-DCMAKE_BUILD_TYPE=Debug -DRAILYARD_SANITIZE=ON -DRAILYARD_FUZZ=ON -DRAILYARD_BENCH=OFF -DRAILYARD_ROUTING_OPT=-O1
              -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
              "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1") ;;
  # OSS-Fuzz's optimization (-O1, line tables only: quick to compile, stacks
  # with lines) and assertions on.
  fuzz) opts=(-DCMAKE_BUILD_TYPE=Debug -DRAILYARD_FUZZ=ON -DRAILYARD_BENCH=OFF
              -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang
              "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only") ;;
  # -O1: TSan code at -O0 runs several times slower; -g1: line tables for the
  # reports' stacks, quicker to compile than -g.
  tsan) opts=(-DCMAKE_BUILD_TYPE=Debug -DRAILYARD_SANITIZE=thread -DRAILYARD_BENCH=OFF
              "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1") ;;
  *) echo "usage: $0 release|asan|fuzz|tsan [target...]" >&2; exit 2 ;;
esac

opts+=(-DRAILYARD_UNITY=${RAILYARD_UNITY:-ON})

dir=$root/build/$flavour
mkdir -p "$root/build"
# A tree configured with gcc that is now clang's (build/asan was gcc's until
# the fuzz targets moved in) starts afresh: CMake cannot switch compilers.
if [[ " ${opts[*]} " == *" -DCMAKE_CXX_COMPILER=clang++ "* && -f $dir/CMakeCache.txt ]] &&
   ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
  echo "build.sh: $dir was configured with another compiler; rebuilding it with clang" >&2
  rm -rf "$dir"
fi
# Configuring every time keeps the cache in step with this script (a second or two).
cmake -S "$root" -B "$dir" -G Ninja "${opts[@]}" >"$dir.configure.log" 2>&1 || {
  cat "$dir.configure.log" >&2
  exit 1
}
jobs=${RAILYARD_JOBS:-$(nproc)}
if (($#)); then
  cmake --build "$dir" -j "$jobs" --target "$@"
else
  cmake --build "$dir" -j "$jobs"
fi
