#!/usr/bin/env bash
# The `railyard topo` commands as an operator runs them (no simulator needed):
# gen's summary and removed links (whole switches and one tier's links too),
# show's odd-link findings on a degraded fabric, diff's exit codes, and the
# error path (file:line: reason, exit 2).
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

# Whole switches: --remove-switch LEVEL N (or LEVEL:N). A removed core stays in
# the file with no link; show reports it without a level; every listed link
# names it; LEVEL N and LEVEL:N give the same file; the seed decides which.
"$RAILYARD" "${base[@]}" --remove-switch 3 1 -o one_core.net 2>one_core.err
ry_assert_file_contains one_core.err \
  '^generated .*: 160 switches, 512 CAs, 1520 links, 16 removed \(1 switch without links\)' "summary of a removed core"
core=$(sed -n 's/^removed switch: //p' one_core.err)
[[ "$core" =~ ^core\ p[0-9]+\ c[0-9]+$ ]] || ry_fail "removed switch line: $(cat one_core.err)"
ry_assert_eq 16 "$(grep -c "^removed: spine p[0-9]* s[0-9]*\[[0-9]*\] <-> $core\[" one_core.err)" \
  "the core's 16 links listed"
"$RAILYARD" topo show one_core.net >one_core.txt
ry_assert_file_contains one_core.txt "without level: $core" "removed core has no level"
"$RAILYARD" "${base[@]}" --remove-switch 3:1 -o one_core_colon.net 2>/dev/null
cmp -s one_core.net one_core_colon.net || ry_fail "--remove-switch 3 1 and 3:1 differ"
"$RAILYARD" "${base[@]}" --remove-switch 3 1 -o one_core_again.net 2>/dev/null
cmp -s one_core.net one_core_again.net || ry_fail "same seed, different fabric"
# A removed leaf takes its CAs' cables: 8 CAs without a cable.
"$RAILYARD" "${base[@]}" --remove-switch 1:1 --remove-switch 2 1 -o leaf_spine.net 2>leaf_spine.err
ry_assert_eq 2 "$(grep -c '^removed switch: ' leaf_spine.err)" "a leaf and a spine removed"
ry_assert_eq 8 "$(grep -Ec '^removed: node[0-9]+ mlx5_[0-9]+\[1\] <-> leaf ' leaf_spine.err)" "the leaf's CA links"
"$RAILYARD" topo show leaf_spine.net >leaf_spine.txt
ry_assert_file_contains leaf_spine.txt '^CAs: 512 \(504 cabled\)' "the leaf's CAs uncabled"

# Links of one tier: --remove-links-at restricts --remove-switch-links.
"$RAILYARD" "${base[@]}" --remove-switch-links 5 --remove-links-at spine-core -o sc.net 2>sc.err
ry_assert_eq 5 "$(grep -Ec '^removed: spine p[0-9]+ s[0-9]+\[[0-9]+\] <-> core ' sc.err)" "5 spine-core links"
ry_assert_eq 5 "$(grep -c '^removed: ' sc.err)" "nothing else removed"
"$RAILYARD" "${base[@]}" --remove-switch-links 5 --remove-links-at leaf-spine -o ls.net 2>ls.err
ry_assert_eq 5 "$(grep -Ec '^removed: leaf g[0-9]+ r[0-9]+\[[0-9]+\] <-> spine ' ls.err)" "5 leaf-spine links"
# The default tier is all: the same links as without the option.
"$RAILYARD" "${base[@]}" --remove-switch-links 1 --remove-links-at all -o one_sw_all.net 2>/dev/null
cmp -s one_sw.net one_sw_all.net || ry_fail "--remove-links-at all changed the fabric"

# Refusals name the limit (exit 2); a malformed --remove-switch is a usage error.
rc=0
"$RAILYARD" "${base[@]}" --remove-switch 3 33 2>err.txt >/dev/null || rc=$?
ry_assert_eq 2 "$rc" "exit code for more cores than the fabric has"
ry_assert_file_contains err.txt 'remove_switches at level 3 \(core\)=33 but the fabric has only 32 core switches' \
  "limit in the message"
rc=0
"$RAILYARD" topo gen --servers 16 --levels 2 --radix 16 --remove-switch-links 1 --remove-links-at spine-core \
  2>err.txt >/dev/null || rc=$?
ry_assert_eq 2 "$rc" "exit code for spine-core links on 2 levels"
ry_assert_file_contains err.txt 'only 0 spine-core links \(no cores: 2 levels\)' "no spine-core tier"
rc=0
"$RAILYARD" "${base[@]}" --remove-switch 4 1 2>err.txt >/dev/null || rc=$?
((rc >= 100)) || ry_fail "exit code for level 4: $rc"
ry_assert_file_contains err.txt 'level must be 1 \(leaf\), 2 \(spine\) or 3 \(core\)' "bad level message"
"$RAILYARD" topo gen --help >help.txt
ry_assert_file_contains help.txt '--remove-switch LEVEL N' "help names --remove-switch"
ry_assert_file_contains help.txt '--remove-links-at spine-core' "help example of a tier"

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
