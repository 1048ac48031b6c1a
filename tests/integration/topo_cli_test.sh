#!/usr/bin/env bash
# The `railyard topo` commands as an operator runs them (no simulator needed):
# gen's summary and removed links, show's odd-link findings on a degraded
# fabric, diff's exit codes, and the error path (file:line: reason, exit 2).
#
# Usage (ctest does this): topo_cli_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_tmpdir

base=(topo gen --kind roft --servers 64 --rails 8 --levels 3 --radix 16 --seed 3)

# A healthy 3-level tree: nothing odd, diff against itself is empty.
"$RAILYARD" "${base[@]}" -o full.net 2>gen.err
ry_assert_contains "$(cat gen.err)" "160 switches, 512 CAs" "gen summary"
"$RAILYARD" topo show full.net >show.txt
ry_assert_contains "$(head -n 1 show.txt)" "160 switches in 3 levels, 512 CAs on 64 hosts, 8 rails" "summary"
ry_assert_contains "$(cat show.txt)" "missing or odd links: none" "healthy fabric"
ry_run_expect_rc 0 "$RAILYARD" topo diff full.net full.net

# One uplink removed from a leaf and one CA cable removed: show names both
# ends of each, and the leaf's missing uplink.
"$RAILYARD" "${base[@]}" --remove-switch-links 0 --remove-ca-links 1 --remove-uplink-per-leaf 0 \
  -o one_ca.net 2>one_ca.err
ca_removed=$(sed -n 's/^removed: //p' one_ca.err)
ry_assert_eq 1 "$(grep -c . <<<"$ca_removed")" "one CA link removed"
"$RAILYARD" topo show one_ca.net >one_ca.txt
ca_end=$(grep -o 'node[0-9]* mlx5_[0-9]*' <<<"$ca_removed")
ry_assert_file_contains one_ca.txt "CA \"$ca_end\" has no cabled port" "uncabled CA reported"
ry_assert_file_contains one_ca.txt '^missing or odd links: 2$' "uncabled CA + free leaf port"

"$RAILYARD" "${base[@]}" --remove-switch-links 1 -o one_sw.net 2>one_sw.err
sw_removed=$(sed -n 's/^removed: //p' one_sw.err)
leaf=$(sed -E 's/^(.*)\[([0-9]+)\] <-> (.*)\[([0-9]+)\]$/\1/' <<<"$sw_removed")
leaf_port=$(sed -E 's/^(.*)\[([0-9]+)\] <-> (.*)\[([0-9]+)\]$/\2/' <<<"$sw_removed")
far=$(sed -E 's/^(.*)\[([0-9]+)\] <-> (.*)\[([0-9]+)\]$/\3/' <<<"$sw_removed")
far_port=$(sed -E 's/^(.*)\[([0-9]+)\] <-> (.*)\[([0-9]+)\]$/\4/' <<<"$sw_removed")
"$RAILYARD" topo show one_sw.net >one_sw.txt
ry_assert_file_contains one_sw.txt "unconnected: \"$leaf\" port $leaf_port \(" "lower end of the removed link"
ry_assert_file_contains one_sw.txt "unconnected: \"$far\" port $far_port \(" "upper end of the removed link"
ry_assert_file_contains one_sw.txt "\"$leaf\" has [0-9]+ up-links, most" "switch with fewer uplinks"

# diff: exit 1 and the link, in both directions; --json says equal false.
ry_run_expect_rc 1 "$RAILYARD" topo diff full.net one_sw.net
"$RAILYARD" topo diff full.net one_sw.net --json >diff.json || true
ry_assert_file_contains diff.json '"equal": false' "json diff"
ry_assert_file_contains diff.json '"kind": "link_only_in_a"' "json diff kind"

# A changed description moves a CA to another host/rail: diff reports the mapping.
sed 's/"node001 mlx5_3"/"node001 mlx5_4"/' full.net >renamed.net
rc=0
"$RAILYARD" topo diff full.net renamed.net >renamed.txt || rc=$?
ry_assert_eq 1 "$rc" "diff exit code for a re-described CA"
ry_assert_file_contains renamed.txt '^~ CA .*host node001 rail 3 in A, host node001 rail 4 in B' "rail change"

# Errors: unreadable and malformed input exit 2 with file[:line]: reason.
rc=0
"$RAILYARD" topo show missing.net 2>err.txt || rc=$?
ry_assert_eq 2 "$rc" "exit code for a missing file"
ry_assert_file_contains err.txt 'missing.net: cannot open' "missing file message"
printf 'Switch 8 "S1"\n[1] "H1"[1]\n[99] "H2"[1]\n' >bad.net
rc=0
"$RAILYARD" topo show bad.net 2>err.txt || rc=$?
ry_assert_eq 2 "$rc" "exit code for a malformed file"
ry_assert_file_contains err.txt '^railyard: bad.net:3: ' "file:line in the message"
rc=0
"$RAILYARD" topo gen --servers 3 --levels 5 2>err.txt >/dev/null || rc=$?
ry_assert_eq 2 "$rc" "exit code for an impossible spec"

ry_pass "topo gen/show/diff"
