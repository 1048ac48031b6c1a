#!/usr/bin/env bash
# scripts/compare_opensm.sh on a small ROFT (16 servers x 4 rails, radix 16):
# it must exit 0 and print a Markdown table with one row per engine (ftree,
# updn, minhop, railyard), each naming the engine OpenSM actually used and
# carrying numbers in every measured column. On this healthy 2-level tree no
# engine may fall back, every pair must be reachable, and railyard's row must
# be loaded through the file engine at the lower bounds. A second, railyard-only
# run checks that --remove-switch, --remove-tier and --remove-switch-pct reach
# the generator.
#
# Usage (ctest does this): compare_opensm_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools ibsim opensm ibnetdiscover jq
ry_tmpdir

rc=0
RY_KEEP_TMP='' bash "$SRC/scripts/compare_opensm.sh" --railyard "$RAILYARD" \
  -- --servers 16 --rails 4 --levels 2 --radix 16 --seed 3 >table.md 2>compare.err || rc=$?
if [[ $rc -ne 0 ]]; then
  cat table.md compare.err >&2
  ry_fail "compare_opensm.sh exited $rc"
fi
cat table.md >&2

ry_assert_file_contains table.md '^#### ' "block heading"
ry_assert_file_contains table.md '^Fabric: roft: 16 servers x 4 rails, 2 levels, radix 16: 16 switches, 64 CAs' "fabric line"
ry_assert_file_contains table.md '^\| engine \| engine used' "table header"
ry_assert_eq 4 "$(grep -Ec '^\| (ftree|updn|minhop|railyard) \|' table.md)" "one row per engine"

num='[0-9]+(\.[0-9]+)?'
frac="$num / $num"
for e in ftree updn minhop railyard; do
  row=$(grep -E "^\| $e \|" table.md)
  want=$e
  [[ $e == railyard ]] && want="file"
  # | name | used | reach | loops | stretch | rail | cross | perm | a2a | time |
  IFS="|" read -r _ _ used reach loops stretch rail cross perm a2a time _ <<<"$row"
  trim() { sed 's/^ *//; s/ *$//' <<<"$1"; }
  ry_assert_eq "$want" "$(trim "$used")" "$e: engine used (no fallback on a healthy tree)"
  ry_assert_eq "100%" "$(trim "$reach")" "$e: reachability"
  [[ "$(trim "$loops")" =~ ^(none|CA\ routes|with\ switch\ LIDs)$ ]] || ry_fail "$e: credit loops column: $loops"
  [[ "$(trim "$stretch")" =~ ^[0-9]+$ ]] || ry_fail "$e: stretch column: $stretch"
  for col in "$rail" "$cross" "$perm" "$a2a"; do
    [[ "$(trim "$col")" =~ ^$frac$ ]] || ry_fail "$e: expected 'max / bound', got '$col' in: $row"
  done
  [[ "$(trim "$time")" =~ ^$num\ ms ]] || ry_fail "$e: route time from the OpenSM log missing: $time"
  [[ "$time" == *"up $num s"* || "$time" =~ up\ $num\ s ]] || ry_fail "$e: SM start to SUBNET UP missing: $time"
done

# railyard through the file engine: at the lower bounds for shifts and all-to-all.
row=$(grep -E '^\| railyard \|' table.md)
IFS='|' read -r _ _ _ _ loops _ rail cross _ a2a time _ <<<"$row"
ry_assert_eq "none" "$(trim "$loops")" "railyard: credit loops"
for col in "$rail" "$cross" "$a2a"; do
  read -r mx _ bd <<<"$(trim "$col")"
  ry_assert_eq "$bd" "$mx" "railyard at the bound ($col)"
done
[[ "$time" == *"offline route"* ]] || ry_fail "railyard row lacks the offline route time: $time"
[[ "$time" != *DIFFER* ]] || ry_fail "OpenSM's tables differ from railyard's file: $time"

# The degraded-fabric options reach the generator: a 3-level tree (40
# switches) without one core (8 links) and 10% of its 64 spine-core links cut
# (6), railyard only (OpenSM loads its file) to stay fast.
rc=0
RY_KEEP_TMP='' bash "$SRC/scripts/compare_opensm.sh" --railyard "$RAILYARD" --engines railyard \
  --remove-switch 3 1 --remove-tier spine-core --remove-switch-pct 10 \
  -- --servers 16 --rails 4 --levels 3 --radix 8 --seed 3 >degraded.md 2>degraded.err || rc=$?
if [[ $rc -ne 0 ]]; then
  cat degraded.md degraded.err >&2
  ry_fail "compare_opensm.sh on a degraded fabric exited $rc"
fi
cat degraded.md >&2
fabric='^Fabric: roft: 16 servers x 4 rails, 3 levels, radix 8: 40 switches, 64 CAs, 178 links, 14 removed'
ry_assert_file_contains degraded.md "$fabric \\(1 switch without links\\); discovered 39 switches, 64 CAs" \
  "a core and 6 spine-core links removed, the core not discovered"
ry_assert_file_contains degraded.md \
  '^#### railyard topo gen .*--remove-switch 3 1 .*--remove-links-at spine-core --remove-switch-links 6' \
  "the generator arguments in the heading"
row=$(grep -E '^\| railyard \|' degraded.md)
IFS='|' read -r _ _ used reach _ <<<"$row"
ry_assert_eq "file" "$(trim "$used")" "railyard loaded through the file engine"
ry_assert_eq "100%" "$(trim "$reach")" "railyard reaches every pair without the core"
ry_pass "compare_opensm.sh: one row per engine with numbers; degraded-fabric options"
