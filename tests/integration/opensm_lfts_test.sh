#!/usr/bin/env bash
# railyard's LFT readers and the dump format against the real tools.
#
# For each fabric (ibsim's "net" example and a 10-switch tree fixture):
#  1. stock OpenSM (minhop) brings it up and writes opensm-lfts.dump; `ibroute`
#     of every switch reads what is really on the switches; `railyard lfts
#     diff` must find the two identical (our dump and ibroute readers agree
#     with the tools on real output).
#  2. one entry of the dump is changed (an up port to its sibling) and OpenSM
#     is restarted with `-R file -U <that dump>`: its log must show the file
#     engine (not a fallback, no parse error), ibroute must now equal the
#     changed dump, differ from minhop's in exactly that entry, and OpenSM's
#     own dump of what it loaded must be byte-identical to the file it loaded.
#
# Usage (ctest does this): opensm_lfts_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute ibswitches
ry_tmpdir

# ibroute of every switch, switch LIDs from ibswitches ("... base port 0 lid 3 lmc 0").
ibroute_all() {
  local lids lid
  lids=$(ry_diag ibswitches 2>/dev/null | sed -n 's/.* lid \([0-9][0-9]*\) lmc [0-9]*$/\1/p')
  [[ -n "$lids" ]] || ry_fail "ibswitches listed no switches"
  for lid in $lids; do
    ry_diag ibroute "$lid" 2>>"$RY_TMP/ibroute.err" || ry_fail "ibroute $lid failed: $(tail -n 3 "$RY_TMP/ibroute.err")"
  done
}

# lfts_diff EXPECTED_RC OUT TOPO A B: runs `railyard lfts diff`, checks its exit code.
lfts_diff() {
  local want=$1 out=$2 rc=0
  shift 2
  "$RAILYARD" lfts diff --topo "$@" >"$out" 2>"$out.err" || rc=$?
  if [[ "$rc" != "$want" ]]; then
    cat "$out" "$out.err" >&2
    ry_fail "lfts diff $* exited $rc, expected $want"
  fi
}

# check_fabric NAME NETFILE DEST_TYPE
# DEST_TYPE picks the entry to change: the first entry of the first switch's
# table that leaves on port 3 towards a node of that type goes to port 4
# instead (both fixtures cable ports 3 and 4 to equivalent next hops).
check_fabric() {
  local name=$1 net=$2 dest_type=$3
  mkdir -p "$RY_TMP/$name"
  cd "$RY_TMP/$name"

  ry_start_ibsim "$net"
  ry_start_opensm --conf 'log_flags 0x43' -- -R minhop
  ry_assert_eq minhop "$(ry_opensm_engine)" "$name: engine of the first run"
  cp "$RY_OPENSM_DIR/opensm-lfts.dump" minhop.dump
  ry_diag ibnetdiscover >topo.txt 2>ibnetdiscover.err || ry_fail "$name: ibnetdiscover failed"
  ibroute_all >ibroute.txt
  cd "$RY_TMP/$name"

  # 1. OpenSM's dump == what ibroute reads from the switches.
  lfts_diff 0 same.txt topo.txt minhop.dump ibroute.txt
  ry_assert_contains "$(cat same.txt)" "identical" "$name: dump vs ibroute"
  lfts_diff 0 same.json topo.txt ibroute.txt minhop.dump --json
  ry_assert_contains "$(cat same.json)" '"identical": true' "$name: JSON report"
  ry_assert_contains "$(cat same.json)" '"format": "ibroute"' "$name: format detection"
  ry_pass "$name: OpenSM's opensm-lfts.dump equals ibroute of every switch ($(sed -n 3p same.txt))"

  # 2. A changed dump loaded by OpenSM's file engine.
  awk -v type="$dest_type" '
    /^Unicast lids/ { sections++ }
    sections == 1 && !done && $1 ~ /^0x/ && $2 == "003" && index($0, "# " type " portguid") {
      sub(/ 003 /, " 004 "); done = 1; changed = $1
    }
    { print }
    END { if (!done) exit 1; print changed > "changed_lid" }' minhop.dump >changed.dump ||
    ry_fail "$name: no entry to change in minhop.dump"
  local lid switches
  lid=$(cat changed_lid)
  switches=$(grep -c '^Unicast lids' minhop.dump)

  ry_stop_opensm
  ry_start_opensm --conf 'log_flags 0x43' -- -R file -U "$RY_TMP/$name/changed.dump"
  ry_assert_eq file "$(ry_opensm_engine)" "$name: engine after -R file (a fallback means the dump was refused)"
  if grep -Eq 'PARSE ERROR|Invalid port|ERR 630' "$RY_OPENSM_LOG"; then
    grep -E 'PARSE ERROR|Invalid port|ERR 630' "$RY_OPENSM_LOG" >&2
    ry_fail "$name: the file engine complained about the dump"
  fi
  cd "$RY_TMP/$name"
  ibroute_all >ibroute_file.txt
  cd "$RY_TMP/$name"

  lfts_diff 0 loaded.txt topo.txt changed.dump ibroute_file.txt
  lfts_diff 1 moved.txt topo.txt minhop.dump ibroute_file.txt
  ry_assert_contains "$(cat moved.txt)" "different: 1 entries on 1 of $switches switches, 1 changed 64-entry LFT blocks" \
    "$name: minhop vs loaded"
  ry_assert_contains "$(cat moved.txt)" "LID $lid" "$name: the changed LID"
  ry_assert_contains "$(cat moved.txt)" "A port 3, B port 4" "$name: the changed port"
  cmp -s changed.dump "$RY_OPENSM_DIR/opensm-lfts.dump" ||
    { diff changed.dump "$RY_OPENSM_DIR/opensm-lfts.dump" | head -n 20 >&2; ry_fail "$name: OpenSM's dump after loading differs from the file it loaded"; }
  ry_pass "$name: OpenSM's file engine loaded the changed dump (LID $lid), ibroute and OpenSM's re-dump agree"

  ry_stop_ibsim
  cd "$RY_TMP"
}

check_fabric net /usr/share/doc/ibsim-utils/net-examples/net Switch
check_fabric tree "$SRC/tests/data/lfts/tree.net" "Channel Adapter"

# Bad input is exit 2 with the file and line.
cd "$RY_TMP"
printf 'Unicast lids [0-4] of switch Lid 1 guid 0x00000000deadbeef (x):\n' >bad.dump
lfts_diff 2 bad.txt net/topo.txt net/minhop.dump bad.dump
ry_assert_contains "$(cat bad.txt.err)" "bad.dump:1: unknown switch GUID 0x00000000deadbeef" "error message"
ry_pass "bad input: exit 2, $(cat bad.txt.err)"
