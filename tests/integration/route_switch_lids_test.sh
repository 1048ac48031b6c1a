#!/usr/bin/env bash
# `railyard route` and `railyard verify` on fabrics where the turn switch
# alone leaves switch LIDs unreachable (every leaf missing an uplink; a tenth
# of the switch links cut): the route says what it filled through the turn
# switch, what the repair filled under the dependency check and what is still
# empty (text and --json); the verifier, walking the written tables, finds
# every switch LID reachable from every switch and the channel dependency
# graph with switch LIDs acyclic.
#
# Usage (ctest does this): route_switch_lids_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_tmpdir

check() {  # name, topo gen arguments...
  local name=$1
  shift
  "$RAILYARD" topo gen --kind roft --rails 8 --levels 3 --radix 16 "$@" -o "$name.net" 2>/dev/null
  "$RAILYARD" route --topo "$name.net" -o "$name.lfts" 2>"$name.txt"
  ry_assert_file_contains "$name.txt" "switch-LID entries: [0-9]* through the turn switch, [1-9][0-9]* repaired, 0 still empty" \
    "$name: route's summary"
  "$RAILYARD" route --topo "$name.net" -o /dev/null --json 2>"$name.json"
  ry_assert_eq 0 "$(jq '.switch_lids.empty' "$name.json")" "$name: nothing left empty (--json)"
  ry_assert_eq true "$(jq '.switch_lids.repaired > 0 and (.switch_lids.turn_switches | length) == 1' "$name.json")" \
    "$name: the repair filled entries, one turn switch"
  "$RAILYARD" verify --topo "$name.net" --lfts "$name.lfts" --json --no-congestion >"$name.verify.json"
  ry_assert_eq true "$(jq '.switch_pairs > 0 and .switch_pairs == .switch_pairs_reachable' "$name.verify.json")" \
    "$name: every switch LID reachable from every switch"
  ry_assert_eq true "$(jq '.credit_loops.with_switch_lids.acyclic' "$name.verify.json")" "$name: no credit loop"
  ry_assert_eq true "$(jq '.pairs == .reachable' "$name.verify.json")" "$name: every CA pair reachable"
  ry_pass "$name"
}

check uplinks --servers 64 --remove-uplink-per-leaf 1
check cut10 --servers 128 --remove-switch-links 187 --seed 2
