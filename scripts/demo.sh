#!/usr/bin/env bash
# demo.sh — THE main command: build railyard, generate a rail-optimized fat tree,
# bring it up in the real ibsim under the real OpenSM, discover it with
# ibnetdiscover and show what railyard reads from the discovered fabric.
#   sudo bash scripts/demo.sh
# Environment: DEMO_SERVERS (32), DEMO_RAILS (8), DEMO_RADIX (32), DEMO_KEEP=1
# keeps the work directory.
#
# The demo is a list of steps (DEMO_STEPS below), each a function demo_<name>
# sharing state through the DEMO_* variables; add a step by writing the function
# and listing it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"

DEMO_SERVERS=${DEMO_SERVERS:-32}
DEMO_RAILS=${DEMO_RAILS:-8}
DEMO_RADIX=${DEMO_RADIX:-32}
RAILYARD=$root/build/release/railyard
[[ -n "${DEMO_KEEP:-}" ]] && RY_KEEP_TMP=1

DEMO_STEPS=(setup build generate start_ibsim start_opensm discover show compare)

demo_setup() { bash "$root/scripts/setup.sh"; }

demo_build() { bash "$root/scripts/build.sh" release railyard; }

# A 2-level ROFT: servers in groups of radix/2, one leaf per (group, rail),
# radix/2 spines, every leaf cabled to every spine.
demo_generate() {
  "$RAILYARD" topo gen --kind roft --servers "$DEMO_SERVERS" --rails "$DEMO_RAILS" \
    --levels 2 --radix "$DEMO_RADIX" -o "$RY_TMP/fabric.net"
  echo "wrote $RY_TMP/fabric.net ($(grep -c '^Switch' "$RY_TMP/fabric.net") switches," \
    "$(grep -Ec '^(Ca|Hca)' "$RY_TMP/fabric.net") CAs)"
}

demo_start_ibsim() {
  ry_start_ibsim "$RY_TMP/fabric.net"
  echo "ibsim running (pid $RY_IBSIM_PID, socket $RY_SOCKNAME)"
}

# Stock OpenSM with its default engine for now.
demo_start_opensm() {
  ry_start_opensm --timeout 180
  echo "OpenSM: SUBNET UP, routing engine: $(ry_opensm_engine)"
}

demo_discover() {
  ry_diag ibnetdiscover >"$RY_TMP/discovered.net" 2>"$RY_TMP/ibnetdiscover.err"
  echo "ibnetdiscover: $(grep -c '^Switch' "$RY_TMP/discovered.net") switches," \
    "$(grep -c '^Ca' "$RY_TMP/discovered.net") CAs"
}

demo_show() { "$RAILYARD" topo show "$RY_TMP/discovered.net"; }

demo_compare() {
  echo "generated vs discovered (GUIDs, ports, hosts, rails):"
  "$RAILYARD" topo diff "$RY_TMP/fabric.net" "$RY_TMP/discovered.net"
}

ry_tmpdir
echo "railyard demo — work directory $RY_TMP"
for s in "${DEMO_STEPS[@]}"; do
  echo
  echo "=== demo: $s"
  start=$SECONDS
  "demo_$s"
  echo "--- $s: $((SECONDS - start))s"
done
echo
echo "demo finished"
