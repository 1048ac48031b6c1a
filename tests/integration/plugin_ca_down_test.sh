#!/usr/bin/env bash
# Issue 4, scenario c: a CA's last-hop link goes down (ibsim `Unlink` of the
# leaf port it hangs off). OpenSM's sweep drops the CA; railyard's next pass
#  - names it unreachable in OpenSM's log ("CA unreachable: <desc> (GUID, LID):
#    no longer in the subnet") and in its routing_pass event (unreachable_cas,
#    why "gone"), received by tests/tools/event_sink;
#  - leaves every other route as it was: read back with ibroute from every
#    switch, the only entries that differ are the lost CA's LID;
#  - changes few LFT blocks: at most one per switch (the 64-LID block holding
#    the lost LID, now "no path"), and the pass reports the count.
# ReLink: the CA is back and no longer listed.
#
# Usage (ctest does this): plugin_ca_down_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq
PLUGIN_DIR=$BIN/sm_plugin
SINK=$BIN/tests/event_sink
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
[[ -x "$SINK" ]] || ry_fail "event_sink not built: $SINK"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

# 32 servers x 8 rails, radix 64: 8 leaves (CA ports 1-32), 256 CAs.
"$RAILYARD" topo gen --servers 32 --rails 8 --radix 64 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
CA_PORT=3
CA_DESC="node003 mlx5_1"
LEAF=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$LEAF_DESC\".*/\1/p" f.net)
[[ -n "$LEAF" ]] || ry_fail "no record for '$LEAF_DESC' in f.net"
CA=$(awk -v leaf="\"$LEAF\"" -v p="[$CA_PORT]" '/^Switch/ { mine = index($0, leaf) > 0 }
      mine && index($0, p) == 1 { match($0, /"H-[0-9a-f]+"/); print substr($0, RSTART + 3, RLENGTH - 4); exit }' f.net)
[[ -n "$CA" ]] || ry_fail "nothing on $LEAF_DESC port $CA_PORT"
grep -q "^Ca.*\"H-$CA\".*# \"$CA_DESC\"" f.net || ry_fail "$LEAF_DESC port $CA_PORT is not $CA_DESC"

SOCK=$RY_TMP/c.sock
EVENTS=$RY_TMP/events.jsonl
: >"$EVENTS"
"$SINK" "$SOCK" "$EVENTS" >sink.out 2>&1 &
SINK_PID=$!
# The sink goes first; _ry_cleanup then sees the test's own exit status.
trap 'ry_rc=$?; set +e; kill -TERM "$SINK_PID" 2>/dev/null; wait "$SINK_PID" 2>/dev/null; (exit $ry_rc); _ry_cleanup' EXIT
ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
printf 'log_level: info\ncontroller_socket: %s\n' "$SOCK" >railyard-plugin.yaml

ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"

wait_pass() {
  ry_wait_log "railyard: pass $1: time " 60
  ry_wait_log "SUBNET UP" 60 "$RY_OPENSM_LOG" "$1"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used after pass $1"
  has_pass() { [[ -n "$(jq -c "select(.type == \"routing_pass\" and .pass == $1)" "$EVENTS")" ]]; }
  ry_wait_for 20 "routing_pass $1 at the sink" has_pass "$1"
}
# lfts NAME: "switch-guid lid port" for every switch, read back with ibroute.
lfts() {
  ry_snapshot "$1"
  awk '/^Unicast lids/ { match($0, / guid 0x[0-9a-f]+/); sw = substr($0, RSTART + 6, RLENGTH - 6); next }
       /^0x[0-9a-f]+ +[0-9]+ / { printf "%s %s %d\n", sw, tolower($1), $2 }' "$1.ibroute" | sort >"$1.lfts"
}

wait_pass 1
lfts before
SWITCHES=$(grep -c '^Switch' before.topo)
CA_LID=$(awk -v ca="\"H-$CA\"" '/^Ca/ { mine = index($0, ca) > 0 } mine && /^\[1\]/ { match($0, /# lid [0-9]+/); print substr($0, RSTART + 6, RLENGTH - 6); exit }' before.topo)
[[ -n "$CA_LID" ]] || ry_fail "no LID for $CA_DESC in the discovered fabric"
ry_log "$CA_DESC: GUID 0x$CA, LID $CA_LID; $SWITCHES switches, $(wc -l <before.lfts) LFT entries"

# --- the CA's only link goes down ------------------------------------------------
ry_ibsim_cmd "Unlink \"$LEAF\"[$CA_PORT]"
wait_pass 2
ry_assert_file_contains "$RY_OPENSM_LOG" \
  "railyard: pass 2: CA unreachable: $CA_DESC \\(GUID 0x$CA, LID $CA_LID\\): no longer in the subnet" \
  "the log names the lost CA"
pass2=$(jq -c 'select(.type == "routing_pass" and .pass == 2)' "$EVENTS" | head -n 1)
ry_log "routing_pass 2: $pass2"
listed=$(jq -r --arg g "0x$CA" '.unreachable_cas[] | select(.guid == $g) | "\(.name)|\(.lid)|\(.why)"' <<<"$pass2")
ry_assert_eq "$CA_DESC|$CA_LID|gone" "$listed" "the routing_pass event names the lost CA"
ry_assert_eq 1 "$(jq '.unreachable_cas | length' <<<"$pass2")" "CAs listed unreachable"
ry_assert_eq ok "$(jq -r .status <<<"$pass2")" "pass 2 status"
changed=$(jq -r .changed_blocks <<<"$pass2")
# One LFT block per switch at most: the block holding the lost LID, whose
# entry becomes "no path" everywhere. Anything more would mean other routes moved.
((changed >= 1 && changed <= SWITCHES)) || ry_fail "changed LFT blocks $changed, expected 1..$SWITCHES"

lfts down
# Entries that differ, apart from the lost LID: none.
lid_hex=$(printf '0x%04x' "$CA_LID")  # as ibroute prints it
moved=$(comm -3 before.lfts down.lfts | awk -v lid="$lid_hex" '$2 != lid' | wc -l)
gone=$(awk -v lid="$lid_hex" '$2 == lid' down.lfts | wc -l)
ry_assert_ne 0 "$(awk -v lid="$lid_hex" '$2 == lid' before.lfts | wc -l)" "switches routing the CA's LID before"
ry_assert_eq 0 "$moved" "LFT entries of other LIDs that changed"
ry_assert_eq 0 "$gone" "switches still routing the lost LID"
ry_pass "CA down: '$CA_DESC' reported unreachable (log, event); other routes unchanged; $changed changed LFT blocks on $SWITCHES switches"

# --- back ------------------------------------------------------------------------
ry_ibsim_cmd "ReLink \"$LEAF\"[$CA_PORT]"
wait_pass 3
pass3=$(jq -c 'select(.type == "routing_pass" and .pass == 3)' "$EVENTS" | head -n 1)
ry_assert_eq 0 "$(jq '.unreachable_cas | length' <<<"$pass3")" "CAs unreachable after ReLink"
ry_log "routing_pass 3: changed_blocks $(jq -r .changed_blocks <<<"$pass3")"
ry_pass "ReLink: $CA_DESC back, nothing unreachable"
