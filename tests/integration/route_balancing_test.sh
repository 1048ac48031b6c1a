#!/usr/bin/env bash
# `railyard route` says what the balancing did on a degraded tree (text and
# --json): choices displaced from their nominal path, moves off the busiest
# links, and the pass over the rail-aligned and cross-rail shifts (entries
# moved, load above the shifts' bounds before and after). On a 3-level ROFT
# of 1,024 CAs with 5% of its switch links cut (102 of 2,048) the pass moves
# entries and lowers that load; on the healthy tree nothing is displaced and
# the pass does not run. (The tables' quality is the routing tests' to
# judge, tests/routing/shift_repair_test.cpp.)
#
# Usage (ctest does this): route_balancing_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_tmpdir

"$RAILYARD" topo gen --kind roft --rails 8 --levels 3 --radix 16 --servers 128 -o healthy.net 2>/dev/null
"$RAILYARD" route --topo healthy.net -o /dev/null --json 2>healthy.json
ry_assert_eq true "$(jq '.balancing.displaced_choices == 0 and .balancing.shift_moves == 0' healthy.json)" \
  "healthy: nothing displaced, no pass over shifts"

"$RAILYARD" topo gen --kind roft --rails 8 --levels 3 --radix 16 --servers 128 --remove-switch-links 102 --seed 1 \
  -o cut5.net 2>/dev/null
"$RAILYARD" route --topo cut5.net -o cut5.lfts 2>cut5.txt
ry_assert_file_contains cut5.txt "balancing: [1-9][0-9]* choices displaced, [0-9]* moves off the busiest links, [1-9][0-9]* for the shifts" \
  "5% cut: route's summary"
"$RAILYARD" route --topo cut5.net -o /dev/null --json 2>cut5.json
ry_assert_eq true "$(jq '.balancing.shift_moves > 0 and .balancing.shift_excess_after < .balancing.shift_excess_before' cut5.json)" \
  "5% cut: the pass moved entries and lowered the load above the shifts' bounds"
ry_pass "route balancing summary"
