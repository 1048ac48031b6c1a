#!/usr/bin/env bash
# soak.sh — issue 13's soak at full count: 1,000 seeded Unlink/ReLink events on
# ibsim under the real OpenSM with railyard's plugin and railyardd, drains and
# undrains through the API all along; no acknowledged request lost, every
# "applied" digest-verified, zero divergences, railyardd's RSS flat
# (tests/integration/soak_test.sh, which the test command runs with 40 events).
#   bash bench/soak.sh [BUILD_DIR (build/release)] [EVENTS (1000)] [SEED (13)]
# Takes ~10-15 minutes. Prints the counts and RSS on its last lines.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath "${1:-$root/build/release}")
RY_SOAK_EVENTS=${2:-1000} RY_SOAK_SEED=${3:-13} \
  exec bash "$root/tests/integration/soak_test.sh" "$build/railyard" "$root" "$build"
