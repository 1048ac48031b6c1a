#!/usr/bin/env bash
# The fast path across an OpenSM restart (issue 11, deliverable 6): OpenSM is
# killed (SIGKILL: no goodbye, the plugin dies with it) at two points of a
# link failure's fast path, and a new OpenSM started on the same subnet.
#  1. killed in the middle of a push: the leaf that lost an uplink does not
#     answer its LFT Sets (ibsim drops them), so the other switches have the
#     patch and the leaf has its old tables when OpenSM dies (the plugin
#     waits for the leaf's acknowledgements); the leaf answers again and a
#     new OpenSM starts: its first sweep programs the subnet; its tables have
#     no CA route over the dead link, every CA pair is reachable, there is no
#     credit loop (no switch is left with a mix of two patches that loops),
#     and a heavy sweep afterwards finds nothing to send;
#  2. killed after a push was acknowledged: the restarted OpenSM's railyard
#     routes the same subnet to the same tables (the pushed ones).
# (A new plugin numbers its events afresh: events are told apart by their
# line in the sink's file, not by seq.)
#
# Usage (ctest does this): plugin_fast_path_restart_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
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
# Not the leaf the diags hang off (g000 r0).
"$RAILYARD" topo gen --servers 32 --rails 8 --radix 64 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r2"
LEAF=$(ry_switch_record f.net "$LEAF_DESC")

SOCK=$RY_TMP/c.sock
((${#SOCK} <= 107)) || ry_fail "socket path too long for sun_path: $SOCK (use a shorter TMPDIR)"
EVENTS=$RY_TMP/events.jsonl
: >"$EVENTS"
: >policy.yaml
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\nport_probe: %s\n' \
  "$RY_TMP" "$SOCK" "$PROBE" >railyard-plugin.yaml

# Events after line MARK of the sink's file.
event() { tail -n +"$(($2 + 1))" "$EVENTS" | jq -c "select($1)" | head -n 1; }
has_event() { [[ -n "$(event "$1" "$2")" ]]; }
wait_event() { ry_wait_for "${3:-60}" "an event with $1" has_event "$1" "$2"; }
mark_events() { wc -l <"$EVENTS"; }

SINK_PID=""
"$SINK" "$SOCK" "$EVENTS" >sink.out 2>&1 &
SINK_PID=$!
ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
trap 'ry_rc=$?; set +e; [[ -n "$SINK_PID" ]] && { kill -TERM "$SINK_PID"; wait "$SINK_PID"; }; (exit $ry_rc); _ry_cleanup' EXIT

start_opensm() {
  ry_start_opensm --timeout 120 \
    --conf "event_plugin_name osmrailyard" \
    --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
    --conf "routing_engine railyard" \
    --conf "sweep_on_trap FALSE"
  ry_wait_log "fast path: ready" 60
}
# SIGKILL, then a new OpenSM (its log starts afresh: ry_start_opensm removes it).
restart_opensm() {
  kill -KILL "$RY_OPENSM_PID"
  wait "$RY_OPENSM_PID" 2>/dev/null || true
  RY_OPENSM_PID=""
  cp "$RY_OPENSM_LOG" "$RY_TMP/opensm.$1.log"
  start_opensm
}
# After a heavy sweep, railyard's pass finds nothing left to send.
nothing_to_send() {
  local mark pass
  mark=$(mark_events)
  kill -HUP "$RY_OPENSM_PID"
  wait_event '.type == "routing_pass"' "$mark" 60
  pass=$(event '.type == "routing_pass"' "$mark")
  ry_assert_eq "ok 0" "$(jq -r '"\(.status) \(.changed_blocks)"' <<<"$pass")" "$1: a heavy sweep's pass (status, changed blocks)"
}

ry_start_ibsim f.net --console
start_opensm
ry_snapshot before
ry_verify_ok "$RAILYARD" before

# --- 1. killed in the middle of a push ------------------------------------------
ry_ibsim_cmd "Error \"$LEAF\" 100 25"  # attribute 0x19: LinearForwardingTable
ry_ibsim_cmd "Unlink \"$LEAF\"[35]"
# The patch is posted within milliseconds; the plugin waits over a second
# for the leaf, says so and posts its blocks once more: killed then, the
# other switches have the patch and the leaf has not.
ry_wait_log "fast path: [0-9]+ blocks unanswered after [0-9]+ ms .*posting them once more" 30
kill -KILL "$RY_OPENSM_PID"
wait "$RY_OPENSM_PID" 2>/dev/null || true
RY_OPENSM_PID=""
cp "$RY_OPENSM_LOG" "$RY_TMP/opensm.mid.log"
! grep -qE "fast path: trap from LID .*: path push" "$RY_TMP/opensm.mid.log" ||
  ry_fail "the push had finished before OpenSM was killed: $(grep -E 'fast path: trap from LID' "$RY_TMP/opensm.mid.log" | tail -n 1)"
ry_ibsim_cmd "Error \"$LEAF\" 0"
start_opensm
ry_snapshot restarted
ry_assert_eq 0 "$(ry_port_uses restarted "$LEAF" 35)" "CA LIDs the leaf sends out of the dead port after the restart"
ry_verify_ok "$RAILYARD" restarted
nothing_to_send "restart in the middle"
ry_pass "OpenSM killed in the middle of a push (the leaf silent), restarted: no route over the dead link, 100% reachable, no credit loop, nothing left to send"

# --- 2. killed after an acknowledged push ----------------------------------------
mark=$(mark_events)
ry_ibsim_cmd "Unlink \"$LEAF\"[36]"
want='.type == "fast_path" and .trigger == "trap" and .path == "push"'
wait_event "$want" "$mark" 30
fp=$(event "$want" "$mark")
ry_assert_eq "$(jq -r .blocks_sent <<<"$fp")" "$(jq -r .blocks_acked <<<"$fp")" "blocks sent vs acknowledged"
ry_snapshot pushed
ry_verify_ok "$RAILYARD" pushed
restart_opensm pushed
ry_snapshot after_push
ry_assert_eq 0 "$(ry_changed_blocks pushed after_push)" "blocks the restarted OpenSM's tables differ from the pushed ones"
ry_assert_eq 0 "$(ry_port_uses after_push "$LEAF" 36)" "CA LIDs the leaf sends out of the second dead port"
nothing_to_send "restart after the push"
ry_pass "OpenSM killed after an acknowledged push ($(jq -r .blocks_acked <<<"$fp") blocks), restarted: the same tables as pushed"
