#!/usr/bin/env bash
# The fast path on a link failure (issue 11, deliverable 2): ibsim `Unlink` of
# a leaf uplink makes the leaf send trap 128; the plugin asks the leaf which
# port changed (railyard-port-probe, directed-route PortInfo), routes the
# subnet with that link down and pushes the changed LFT blocks itself, before
# OpenSM's heavy sweep (`sweep_on_trap FALSE`, as recommended: the plugin asks
# for the sweep once its blocks are acknowledged).
#  1. the plugin's fast_path event (trigger trap) names the link that went
#     down, path push, blocks changed == sent == acknowledged == the blocks
#     this test counts itself between ibroute dumps before and after; the
#     push is logged before OpenSM's next SUBNET UP; no CA route leaves the
#     leaf by the dead port; railyard verify: every CA pair reachable, no
#     credit loop;
#  2. OpenSM's heavy sweep that follows finds nothing left to send: railyard's
#     pass on the rediscovered subnet has 0 changed blocks;
#  3. ReLink: the probe finds the port up but OpenSM's model no longer has the
#     cable, so the trap is left to OpenSM's sweep (and says so); after it the
#     tables are those before the Unlink;
#  3c. a second failure after the first push, during the sweep the plugin
#     asked for: pushed (routed with the first link down: its tables are
#     OpenSM's full route once both cables are gone, by digest) or left to
#     OpenSM with a reason; no CA route on either dead port, 100% reachable,
#     no credit loop, and a later sweep has nothing to send;
#  4. an uplink of the SM's own leaf: OpenSM's directed routes to the
#     switches behind it cross the dead link; the push goes around it
#     (detours > 0); that leaf is also the switch LIDs' turn switch, so the
#     CA columns go first; every block acknowledged, and OpenSM's next pass
#     has nothing to send.
#
# Usage (ctest does this): plugin_trap_fast_path_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq python3
ry_plugin_tools "$BIN"
ry_tmpdir

# 32 servers x 8 rails, radix 64: leaves with CA ports 1-32, uplinks 33-64.
# Not the leaf ibsim attaches the diags to (g000 r0): ibroute reads switches
# by LID from there.
"$RAILYARD" topo gen --servers 32 --rails 8 --radix 64 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
LEAF=$(ry_switch_record f.net "$LEAF_DESC")
LEAF_GUID=$(printf '0x%016x' "0x${LEAF#S-}")
PORT=35
LEAF2=$(ry_switch_record f.net "leaf g000 r2")
LEAF2_GUID=$(printf '0x%016x' "0x${LEAF2#S-}")
SPINE=$(awk -v sw="\"$LEAF\"" -v p="[$PORT]" '/^Switch/ { mine = index($0, sw) > 0; next }
  mine && index($0, p) == 1 { match($0, /"S-[0-9a-f]+"\[[0-9]+\]/); print substr($0, RSTART + 1, RLENGTH - 1); exit }' f.net)
[[ -n "$SPINE" ]] || ry_fail "nothing on $LEAF_DESC port $PORT"
SPINE_GUID=$(printf '0x%016x' "0x$(sed 's/^S-\([0-9a-f]*\)".*/\1/' <<<"$SPINE")")
SPINE_PORT=$(sed 's/.*\[\([0-9]*\)\]$/\1/' <<<"$SPINE")

SOCK=$RY_TMP/c.sock
((${#SOCK} <= 107)) || ry_fail "socket path too long for sun_path: $SOCK (use a shorter TMPDIR)"
EVENTS=$RY_TMP/events.jsonl
: >"$EVENTS"
: >policy.yaml
# ca_first_blocks 0: the CA columns go first whenever more blocks change only
# switch LIDs than change a CA LID (section 4 needs it on this small fabric).
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\nport_probe: %s\nca_first_blocks: 0\n' \
  "$RY_TMP" "$SOCK" "$PROBE" >railyard-plugin.yaml

has_event() { [[ -n "$(jq -c "select($1)" "$EVENTS" | head -n 1)" ]]; }
wait_event() { ry_wait_for "${2:-60}" "an event with $1" has_event "$1"; }
event() { jq -c "select($1)" "$EVENTS" | head -n 1; }
last_seq() { jq -s 'map(.seq) | max // 0' "$EVENTS"; }
# settled: OpenSM is done with what came before (no plugin event for 1.5 s,
# every heavy sweep that started has finished); a trap then races no sweep.
settled() {
  local before
  before=$(wc -l <"$EVENTS")
  sleep 1.5
  [[ $(wc -l <"$EVENTS") == "$before" ]] &&
    (($(grep -c '"type":"heavy_sweep_start"' "$EVENTS") == $(grep -c '"type":"heavy_sweep_done"' "$EVENTS")))
}

# heavy_sweep_sends_nothing WHAT: a heavy sweep (SIGHUP) whose railyard pass
# finds every block in place; its routing_pass event is left in $pass.
heavy_sweep_sends_nothing() {
  local m
  m=$(last_seq)
  kill -HUP "$RY_OPENSM_PID"
  wait_event ".seq > $m and .type == \"routing_pass\"" 60
  pass=$(event ".seq > $m and .type == \"routing_pass\"")
  ry_assert_eq "ok 0" "$(jq -r '"\(.status) \(.changed_blocks)"' <<<"$pass")" "$1"
  wait_event ".seq > $m and .type == \"ucast_routing_done\"" 60
}

SINK_PID=""
"$SINK" "$SOCK" "$EVENTS" >sink.out 2>&1 &
SINK_PID=$!
ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
trap 'ry_rc=$?; set +e; [[ -n "$SINK_PID" ]] && { kill -TERM "$SINK_PID"; wait "$SINK_PID"; }; (exit $ry_rc); _ry_cleanup' EXIT

ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard" \
  --conf "sweep_on_trap FALSE"
ry_wait_log "railyard: pass 1: time " 30
ry_assert_file_contains "$RY_OPENSM_LOG" "link failures \(trap 128\): probed with $PROBE" "the port probe is on"
ry_wait_log "fast path: ready" 60

# --- 0. before ------------------------------------------------------------------
ry_snapshot before
ry_verify_ok "$RAILYARD" before
uses=$(ry_port_uses before "$LEAF" "$PORT")
((uses > 0)) || ry_fail "the leaf sends nothing over port $PORT before the Unlink"

# --- 1. Unlink: the plugin pushes before OpenSM sweeps -----------------------------
ups=$(ry_log_count 'SUBNET UP')
mark=$(last_seq)
ry_ibsim_cmd "Unlink \"$LEAF\"[$PORT]"
wait_event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\" and .path == \"push\"" 30
fp=$(event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\" and .path == \"push\"")
ry_log "trap: $fp"
links=$(jq -r '.links | join(", ")' <<<"$fp")
[[ "$links" == "$LEAF_GUID[$PORT] down" || "$links" == "$SPINE_GUID[$SPINE_PORT] down" ]] ||
  ry_fail "the probe should find $LEAF_GUID[$PORT] (or $SPINE_GUID[$SPINE_PORT]) down, found: $links"
# Logged before the heavy sweep that follows it is done.
push_line=$(grep -n "fast path: trap from LID .*: path push: " "$RY_OPENSM_LOG" | head -n 1 | cut -d: -f1)
[[ -n "$push_line" ]] || ry_fail "no trap push in OpenSM's log"
up_line=$(grep -n 'SUBNET UP' "$RY_OPENSM_LOG" | sed -n "$((ups + 1))p" | cut -d: -f1)
[[ -z "$up_line" ]] || ((push_line < up_line)) || ry_fail "the push (line $push_line) came after OpenSM's SUBNET UP (line $up_line)"
ry_snapshot trapped
ry_assert_eq 0 "$(ry_port_uses trapped "$LEAF" "$PORT")" "CA LIDs the leaf still sends out of the dead port"
ry_verify_ok "$RAILYARD" trapped
counted=$(ry_changed_blocks before trapped)
((counted > 0)) || ry_fail "the failure changed no block on the switches"
ry_assert_eq "$counted $counted $counted" "$(jq -r '"\(.blocks_changed) \(.blocks_sent) \(.blocks_acked)"' <<<"$fp")" \
  "blocks changed (ibroute before/after) vs the plugin's changed, sent, acknowledged"
ry_pass "Unlink: the plugin found $links in $(jq -r .probe_ms <<<"$fp") ms and pushed $counted blocks (= changed on the switches) in $(jq -r .total_ms <<<"$fp") ms, before OpenSM's sweep; 100% reachable, no credit loop"

# --- 2. OpenSM's heavy sweep finds the tables in place ---------------------------
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
wait_event ".seq > $mark and .type == \"routing_pass\"" 60
pass=$(event ".seq > $mark and .type == \"routing_pass\"")
ry_assert_eq "ok 0" "$(jq -r '"\(.status) \(.changed_blocks)"' <<<"$pass")" "OpenSM's pass after the push: status, changed blocks"
ry_pass "OpenSM's heavy sweep after the push: railyard's pass computes the pushed tables, 0 blocks to send"

# --- 3. ReLink: left to OpenSM, tables back ----------------------------------------
ups=$(ry_log_count 'SUBNET UP')
mark=$(last_seq)
ry_ibsim_cmd "ReLink \"$LEAF\"[$PORT]"
wait_event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\"" 30
fp=$(event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\"")
ry_assert_eq "opensm" "$(jq -r .path <<<"$fp")" "ReLink: the path ($fp)"
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
ry_snapshot relinked
ry_assert_eq 0 "$(ry_changed_blocks before relinked)" "blocks that differ from the tables before the Unlink"
ry_pass "ReLink: left to OpenSM's sweep ($(jq -r .reason <<<"$fp")); the tables are those before the Unlink"

# --- 3b. two failures back to back: the second is routed with the first down ------
# (The second trap may come while the first is handled, or before OpenSM's
# sweep has unlinked the first cable; either way its route must avoid both.)
ups=$(ry_log_count 'SUBNET UP')
mark=$(last_seq)
printf 'Unlink "%s"[36]\n' "$LEAF" >&"$RY_IBSIM_FD"
printf 'Unlink "%s"[37]\n' "$LEAF" >&"$RY_IBSIM_FD"
# Both traps in one batch, or the second after the first's push (then routed
# with the first link down though OpenSM's model may still have it): either
# way at least one push, and once OpenSM has swept, no route on either port.
wait_event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\" and .path == \"push\"" 30
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
ry_log "back to back: $(jq -c "select(.seq > $mark and .type == \"fast_path\" and .trigger == \"trap\") | {links, path, reason}" "$EVENTS" | tr '\n' ' ')"
ry_snapshot twice
ry_assert_eq 0 "$(ry_port_uses twice "$LEAF" 36)" "CA LIDs the leaf sends out of the first dead port"
ry_assert_eq 0 "$(ry_port_uses twice "$LEAF" 37)" "CA LIDs the leaf sends out of the second dead port"
ry_verify_ok "$RAILYARD" twice
heavy_sweep_sends_nothing "a heavy sweep after both failures"
ups=$(ry_log_count 'SUBNET UP')
ry_ibsim_cmd "ReLink \"$LEAF\"[36]"
ry_ibsim_cmd "ReLink \"$LEAF\"[37]"
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
ry_pass "two failures back to back: pushed, no CA route on either dead port, 100% reachable, a later sweep finds nothing to send"

# --- 3c. a second failure after the first push, while OpenSM's sweep runs --------
# The first push ends with the plugin asking OpenSM for a heavy sweep; the
# second trap comes during that sweep, before (or while) OpenSM unlinks the
# first cable from its model. The second cable is another leaf's, to another
# spine, so that probing the second failure's switches (its two ends) does
# not find the first cable down again: only the fast path's memory of it
# (known_down) keeps the second route off it. The plugin either routes it
# with the first link still down and pushes, or leaves it to OpenSM (it
# routed meanwhile); either way no CA route may be left on either dead port,
# nothing may loop, and a later sweep finds nothing to send.
ry_wait_for 30 "OpenSM settled after the ReLinks" settled
mark=$(last_seq)
pushes=$(ry_log_count 'fast path: trap from .*: path push: ')
printf 'Unlink "%s"[38]\n' "$LEAF" >&"$RY_IBSIM_FD"
# The second Unlink as soon as the first push is logged (checked every 10 ms),
# so that its trap meets the sweep the plugin has just asked for.
deadline=$((SECONDS + 30))
while (($(ry_log_count 'fast path: trap from .*: path push: ') <= pushes)); do
  ((SECONDS < deadline)) || ry_fail "no push for the first failure in 30 s"
  sleep 0.01
done
printf 'Unlink "%s"[39]\n' "$LEAF2" >&"$RY_IBSIM_FD"
wait_event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\" and .path == \"push\"" 30
first=$(event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\" and .path == \"push\"")
mark1=$(jq -r .seq <<<"$first")
# The traps of the second cable (and the first cable's other end) after the
# first push: each handled by a push or left to OpenSM with a reason.
wait_event ".seq > $mark1 and .type == \"fast_path\" and .trigger == \"trap\"" 30
ry_wait_for 60 "OpenSM settled after the second failure" settled
later=$(jq -c "select(.seq > $mark1 and .type == \"fast_path\" and .trigger == \"trap\") | {links, path, reason, blocks_sent, blocks_acked}" "$EVENTS")
while read -r ev; do
  case $(jq -r .path <<<"$ev") in
    push)
      (($(jq -r '.links | length' <<<"$ev") > 0)) || ry_fail "a push that names no link: $ev"
      ry_assert_eq "$(jq -r .blocks_sent <<<"$ev")" "$(jq -r .blocks_acked <<<"$ev")" "blocks sent vs acknowledged: $ev"
      ;;
    *) [[ -n "$(jq -r '.reason // empty' <<<"$ev")" ]] || ry_fail "left to OpenSM without a reason: $ev" ;;
  esac
done <<<"$later"
# The second cable's pushes; known_down says whether OpenSM's model still
# had the first cable then (the case the digest check below is about).
second_pushes=$(jq -c "select(.seq > $mark1 and .type == \"fast_path\" and .path == \"push\" and (.links | any(startswith(\"$LEAF2_GUID[39]\"))))" "$EVENTS")
known=$(jq -s 'map(.known_down // 0) | add // 0' <<<"$second_pushes")
when="the second cable pushed $(grep -c . <<<"$second_pushes" || true) time(s), routed with $known cable(s) OpenSM still had as down"
ry_log "after the first push: $(tr '\n' ' ' <<<"$later")"
ry_snapshot second
ry_assert_eq 0 "$(ry_port_uses second "$LEAF" 38)" "CA LIDs the leaf sends out of the first dead port"
ry_assert_eq 0 "$(ry_port_uses second "$LEAF2" 39)" "CA LIDs the second leaf sends out of its dead port"
ry_verify_ok "$RAILYARD" second
heavy_sweep_sends_nothing "a heavy sweep after the second failure"
# Every push that names the second cable carried exactly OpenSM's full
# route of the subnet with both cables gone: it was routed with the first
# still down, though OpenSM's model may still have had it. (A later push or
# sweep would have hidden a wrong one from the checks above.)
while read -r p2; do
  [[ -n "$p2" ]] || continue
  ry_assert_eq "$(jq -r .digests.lfts <<<"$pass")" "$(jq -r .digests.lfts <<<"$p2")" \
    "the tables of the second cable's push (seq $(jq -r .seq <<<"$p2")) vs the full route once both cables are gone"
done <<<"$second_pushes"
ry_ibsim_cmd "ReLink \"$LEAF\"[38]"
ry_ibsim_cmd "ReLink \"$LEAF2\"[39]"
ry_pass "a second failure after the first push ($when): no CA route on either dead port, 100% reachable, a later sweep finds nothing to send"

# --- 4. the SM's own leaf: its directed routes cross the dead link ---------------
SM_DESC=$(ry_diag smpquery -D nodedesc 0 | sed -n 's/^Node Description:\.*//p')
SM_LEAF=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$SM_DESC\".*/\1/p" f.net)
[[ -n "$SM_LEAF" ]] || ry_fail "route 0 is '$SM_DESC', not a switch of f.net"
# The two ReLinks may still have a sweep coming: one that routes while the
# plugin pushes makes its patch stale (it then leaves the failure to OpenSM).
ry_wait_for 30 "OpenSM settled after the ReLinks" settled
ups=$(ry_log_count 'SUBNET UP')
mark=$(last_seq)
ry_ibsim_cmd "Unlink \"$SM_LEAF\"[33]"
wait_event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\"" 30
fp=$(event ".seq > $mark and .type == \"fast_path\" and .trigger == \"trap\"")
ry_log "trap at the SM's leaf: $fp"
ry_assert_eq push "$(jq -r .path <<<"$fp")" "the SM's own uplink: path ($(jq -r .reason <<<"$fp"))"
(($(jq -r .detours <<<"$fp") > 0)) || ry_fail "no switch was sent to around the dead link: $fp"
# On a healthy tree this leaf (the lowest GUID) is also the turn switch of
# the spine and core LIDs: losing an uplink it gives that role to another
# leaf under the same spines, whose fills move (the turn tree,
# routing/unicast_engine/switch_turns.cpp): more blocks change only switch
# LIDs than change a CA LID, so with ca_first_blocks 0 the CA columns go
# first (a block with both kinds of change is sent in each order). With the
# default (16,384) this push is one order, every block sent once
# (docs/fast_path.md measures it at 2k and 16k CAs).
ry_assert_eq true "$(jq -r .ca_first <<<"$fp")" "the CA columns pushed first"
ry_assert_eq "$(jq -r .blocks_sent <<<"$fp")" "$(jq -r .blocks_acked <<<"$fp")" "blocks sent vs acknowledged"
(($(jq -r .blocks_sent <<<"$fp") >= $(jq -r .blocks_changed <<<"$fp"))) || ry_fail "fewer blocks sent than changed: $fp"
# (No ibroute read-back here: the diags sit on this leaf, and a spine that lost
# its cable to a leaf has no route to that leaf's own switch LID, see
# docs/routing.md; OpenSM's next pass says whether the tables are right.)
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((ups + 1))
wait_event ".seq > $mark and .type == \"routing_pass\"" 60
pass=$(event ".seq > $mark and .type == \"routing_pass\"")
ry_assert_eq "ok 0" "$(jq -r '"\(.status) \(.changed_blocks)"' <<<"$pass")" "OpenSM's pass after the push around the failure"
ry_pass "the SM's own uplink: $(jq -r .blocks_acked <<<"$fp") blocks pushed, $(jq -r .detours <<<"$fp") switches by a detour; OpenSM's next pass finds nothing to send"
