#!/usr/bin/env bash
# test.sh — THE test command: install what is missing, build the asan and release
# flavours, run the unit tests under ASan/UBSan and the integration tests (real
# OpenSM + ibsim + infiniband-diags) in the release build. Exits non-zero if any
# step fails; prints a summary either way.
#   sudo bash scripts/test.sh
# Environment: RAILYARD_TEST_FILTER=REGEX passes -R REGEX to both ctest runs.
# A unit test gets 300 s (under ASan), an integration test 900 s: a guard
# against hangs, far above what any test needs.
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

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Each build compiles only what its tests run: the unit test binaries under
# ASan, the tools and the plugin (no benchmarks, no unit tests) in release.
if step "setup" bash scripts/setup.sh &&
   step "build asan" bash scripts/build.sh asan unit_tests &&
   step "build release" env RAILYARD_BENCH=OFF bash scripts/build.sh release integration_deps; then
  step "unit tests (asan)" ctest --test-dir build/asan -L unit --output-on-failure -j2 \
    --timeout 300 "${filter[@]}"
  step "integration tests (release)" ctest --test-dir build/release -L integration \
    --output-on-failure --timeout 900 "${filter[@]}"
fi

summary
exit $failed
