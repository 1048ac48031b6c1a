#!/usr/bin/env bash
# test.sh — THE test command: install what is missing, build the asan and release
# flavours, run the unit tests under ASan/UBSan (the fuzz corpora among them)
# and the integration tests (real OpenSM + ibsim + infiniband-diags) in the
# release build (with the Debian package built from it and checked by lintian
# first: the package tests install it into a throwaway root); then fuzz every
# libFuzzer target for a bounded time (built in the asan flavour, clang, from
# the unit tests' objects) and run the controller and API tests under
# ThreadSanitizer (tsan flavour). Exits non-zero if any step fails; prints a
# summary either way.
#   sudo bash scripts/test.sh
# Environment: RAILYARD_TEST_FILTER=REGEX passes -R REGEX to the ctest runs.
#   RAILYARD_FUZZ_SECONDS=N fuzzes each target N seconds (default 10; 0 skips
#   the fuzzers' links and the fuzz step). RAILYARD_JOBS: build jobs and fuzzers at once
#   (default: the number of CPUs).
# A unit test gets 300 s (under ASan or TSan), an integration test 900 s: a
# guard against hangs, far above what any test needs.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

declare -a names=() results=() times=()
failed=0

# step NAME CMD...: runs CMD, records pass/fail and duration.
step() {
  local name=$1 start rc
  shift
  echo
  echo "=== $name"
  start=$SECONDS
  "$@"
  rc=$?
  names+=("$name")
  times+=($((SECONDS - start)))
  if ((rc == 0)); then results+=(ok); else results+=("FAILED (exit $rc)"); failed=1; fi
  return $rc
}

summary() {
  local i
  echo
  echo "=== summary"
  for i in "${!names[@]}"; do
    printf '  %-28s %-18s %4ss\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
  done
  if ((failed)); then echo "RESULT: FAILED"; else echo "RESULT: all passed"; fi
}

filter=()
[[ -n "${RAILYARD_TEST_FILTER:-}" ]] && filter=(-R "$RAILYARD_TEST_FILTER")
fuzz_seconds=${RAILYARD_FUZZ_SECONDS:-10}
njobs=${RAILYARD_JOBS:-$(nproc)}

# running PID...: how many of these are still running.
running() {
  local n=0 pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && n=$((n + 1)); done
  echo "$n"
}

# fuzz SECONDS: every libFuzzer target of build/asan (its fuzzers.txt) for
# SECONDS, $njobs at a time, each over a scratch copy of its corpus (new inputs
# never land in the source tree). A fuzzer's output goes to a log, printed only
# when it fails; a crash's reproducer is kept in build/asan/fuzz-artifacts/.
fuzz() {
  local seconds=$1 list=build/asan/tests/fuzz/fuzzers.txt work name corpus rc failed=0 f
  local -a all=() opts pids=()
  [[ -s $list ]] || { echo "fuzz: $list is missing (build.sh asan fuzzers)"; return 1; }
  # On tmpfs when there is one: the harnesses' SQLite stores sync every write.
  work=$(mktemp -d /dev/shm/railyard-fuzz.XXXXXX 2>/dev/null || mktemp -d)
  mkdir -p build/asan/fuzz-artifacts
  while read -r name corpus; do
    [[ -n $name ]] || continue
    all+=("$name")
    mkdir -p "$work/$name/scratch"
    cp -R "$corpus" "$work/$name/corpus"
    # A fixed seed (RAILYARD_FUZZ_SEED, default 1): the test command explores
    # the same inputs each run, so a red CI means a change, not the dice. Fuzz
    # longer and with other seeds by hand (docs/controller.md).
    opts=(-seed="${RAILYARD_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$work/$name/")
    # Its own jobs only: the tsan tree may be building in the background.
    while (($(running "${pids[@]}") >= njobs)); do sleep 0.2; done
    (
      cd "$work/$name" || exit 1
      RAILYARD_FUZZ_SCRATCH=$work/$name/scratch timeout $((seconds + 300)) \
        "$root/build/asan/tests/fuzz/$name" "${opts[@]}" corpus >log 2>&1
      echo $? >rc
    ) &
    pids+=($!)
  done <"$list"
  ((${#pids[@]})) && wait "${pids[@]}"
  for name in "${all[@]}"; do
    rc=$(cat "$work/$name/rc" 2>/dev/null || echo "?")
    if [[ $rc == 0 ]]; then
      printf '  %-22s ok: %s; %s\n' "$name" "$(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$work/$name/log")" \
        "$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[^ ]*' "$work/$name/log" | tail -1)"
      continue
    fi
    failed=1
    echo "  $name FAILED (exit $rc); its log without the progress lines:"
    grep -avE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)' "$work/$name/log" | cut -c1-300 >"$work/$name/short"
    if (($(wc -l <"$work/$name/short") > 150)); then
      head -n 110 "$work/$name/short"; echo "  [...]"; tail -n 30 "$work/$name/short"
    else
      cat "$work/$name/short"
    fi
    for f in "$work/$name"/crash-* "$work/$name"/leak-* "$work/$name"/timeout-* "$work/$name"/oom-*; do
      [[ -f $f ]] || continue
      cp "$f" "build/asan/fuzz-artifacts/$name-${f##*/}"
      echo "  reproducer: build/asan/fuzz-artifacts/$name-${f##*/} ($(wc -c <"$f") bytes; base64 of its first 2 KiB below)"
      head -c 2048 "$f" | base64 -w 100 | sed 's/^/    /'
      echo "  replay it: build/asan/tests/fuzz/${name}_replay build/asan/fuzz-artifacts/$name-${f##*/}"
      echo "  keep it as a regression: cp it into $(awk -v n="$name" '$1 == n {print $2}' "$list")/"
    done
  done
  rm -rf "$work"
  return $failed
}

# tsan_tests: the controller and API unit tests (their threads: io_context,
# plugin socket, HTTP server) under ThreadSanitizer; a report fails the test.
tsan_tests() {
  local out
  local -a no_aslr=()
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  [[ -f tests/tsan.supp ]] && TSAN_OPTIONS+=":suppressions=$root/tests/tsan.supp"
  # GCC 12's TSan maps its shadow memory at fixed addresses and dies with
  # "FATAL: ThreadSanitizer: unexpected memory mapping" when the kernel
  # randomizes mmap with more than 28 bits (vm.mmap_rnd_bits, 32 on some newer
  # kernels). Then run without address randomization: setarch -R, inherited by
  # ctest's children (the test listing runs at ctest time for this reason).
  if ! out=$(build/tsan/tests/controller_tests --gtest_list_tests 2>&1); then
    if grep -q "unexpected memory mapping" <<<"$out" && setarch "$(uname -m)" -R true 2>/dev/null; then
      echo "tsan: unexpected memory mapping (vm.mmap_rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null)); running under setarch -R"
      no_aslr=(setarch "$(uname -m)" -R)
    else
      echo "$out" | tail -n 20
      return 1
    fi
  fi
  # Only controller_tests and api_tests are built in build/tsan: the other unit
  # suites are NOT_BUILT placeholders without the label, the corpus replays are
  # left out by name.
  "${no_aslr[@]}" ctest --test-dir build/tsan -L unit -E '^fuzz_corpus[.]' --output-on-failure -j2 \
    --timeout 300 "${filter[@]}"
}

# The tsan tree builds in the background (nice 19) while the unit and
# integration tests run: they leave part of CI's two cores idle (OpenSM
# sweeps, ibsim, waits for logs), and at nice 19 the compiler yields the CPU
# whenever a test wants it. Its output goes to build/tsan.build.log; the "build tsan" step waits for
# it and reports how long it waited.
tsan_targets=(controller_tests api_tests)
tsan_bg_pid=""
start_tsan_build() {
  mkdir -p build
  rm -f build/tsan.build.rc
  (
    nice -n 19 bash scripts/build.sh tsan "${tsan_targets[@]}" >build/tsan.build.log 2>&1
    echo $? >build/tsan.build.rc
  ) &
  tsan_bg_pid=$!
}
wait_tsan_build() {
  local rc
  if [[ -z $tsan_bg_pid ]]; then
    bash scripts/build.sh tsan "${tsan_targets[@]}"
    return
  fi
  wait "$tsan_bg_pid" 2>/dev/null
  rc=$(cat build/tsan.build.rc 2>/dev/null || echo 1)
  if ((rc != 0)); then tail -n 60 build/tsan.build.log; else tail -n 1 build/tsan.build.log; fi
  return $rc
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Each build compiles only what its tests run: the unit test binaries and the
# libFuzzer targets under ASan (one clang tree: the fuzzers link the unit tests'
# library objects), the tools and the plugin (no benchmarks, no unit tests) in
# release.
asan_targets=(unit_tests)
((fuzz_seconds > 0)) && asan_targets+=(fuzzers)
if step "setup" bash scripts/setup.sh &&
   step "build asan" bash scripts/build.sh asan "${asan_targets[@]}" &&
   step "build release" env RAILYARD_BENCH=OFF bash scripts/build.sh release integration_deps; then
  start_tsan_build
  step "unit tests (asan)" ctest --test-dir build/asan -L unit --output-on-failure -j2 \
    --timeout 300 "${filter[@]}"
  # The Debian package from the release tree (no compile of its own), checked
  # with lintian; the integration tests package_*_test.sh install it.
  step "package (deb, lintian)" bash scripts/package.sh build/release
  # Two at a time (tests/CMakeLists.txt: the ones that time an election run
  # alone).
  step "integration tests (release)" ctest --test-dir build/release -L integration \
    --output-on-failure --timeout 900 -j2 "${filter[@]}"
  if ((fuzz_seconds > 0)); then
    step "fuzz (${fuzz_seconds} s per target)" fuzz "$fuzz_seconds"
  fi
fi
# tsan needs only its own tree (and setup): the two test binaries.
if [[ ${results[0]:-} == ok ]]; then
  if step "build tsan (waited for)" wait_tsan_build; then
    step "controller+api tests (tsan)" tsan_tests
  fi
fi

summary
exit $failed
