#!/usr/bin/env bash
# scripts/measure_reroute.sh on a small ROFT (16 servers x 4 rails, radix 16):
# for ftree, updn and railyard's plugin, a leaf uplink is cut and restored on
# the ibsim console; each event must give a row with times from the OpenSM log
# and a non-empty LFT change. ftree must be seen falling back to minhop after
# the cut (it refuses a fat tree with a missing switch link, OPENSM_NOTES.md)
# and coming back when the link returns; railyard must route every sweep
# itself, and its rows carry the plugin's callback time and changed blocks,
# which must agree with the blocks that differ in OpenSM's dumps.
#
# Usage (ctest does this): measure_reroute_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools ibsim opensm
ry_tmpdir

rc=0
RY_KEEP_TMP='' bash "$SRC/scripts/measure_reroute.sh" --railyard "$RAILYARD" \
  --plugin "$BIN/sm_plugin" --engines "ftree updn railyard" \
  -- --servers 16 --rails 4 --levels 2 --radix 16 >table.md 2>reroute.err || rc=$?
if [[ $rc -ne 0 ]]; then
  cat table.md reroute.err >&2
  ry_fail "measure_reroute.sh exited $rc"
fi
cat table.md >&2
ry_assert_file_contains table.md 'Link cut and restored: `"S-[0-9a-f]+"\[[0-9]+\]` \("leaf ' "the cut link"
ry_assert_eq 6 "$(grep -Ec '^\| (ftree|updn|railyard) \| (Unlink|ReLink) \|' table.md)" "a row per engine and event"
n='[0-9]+'
while IFS= read -r row; do
  [[ "$row" =~ \|\ $n\ \|\ $n\ \|\ $n\ \|\ $n\ \|\ ([0-9]+)\ entries ]] || ry_fail "row without numbers: $row"
  ((BASH_REMATCH[1] > 0)) || ry_fail "no LFT change after the event: $row"
done < <(grep -E '^\| (ftree|updn|railyard) \|' table.md)
ry_assert_file_contains table.md '^\| ftree \| Unlink \| ftree -> minhop \(tried ftree,minhop\) \|' "ftree falls back after a cut"
ry_assert_file_contains table.md '^\| ftree \| ReLink \| ftree -> ftree \|' "ftree back after the link returns"
for ev in Unlink ReLink; do
  row=$(grep -E "^\| railyard \| $ev \|" table.md)
  [[ "$row" == "| railyard | $ev | railyard -> railyard |"* ]] || ry_fail "railyard did not route the $ev sweep: $row"
  # The plugin's own count of changed blocks equals the blocks that differ in OpenSM's dumps.
  [[ "$row" =~ \;\ ([0-9]+)\ blocks\ on\ [0-9]+\ switches\ \|.*\|\ [0-9.]+\ ms\;\ ([0-9]+)\ blocks\ on ]] ||
    ry_fail "railyard row without dump blocks and pass blocks: $row"
  ry_assert_eq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "railyard $ev: blocks changed in the dumps vs. reported by the pass"
done
ry_pass "measure_reroute.sh: reaction to Unlink/ReLink measured for ftree, updn and railyard's plugin"
