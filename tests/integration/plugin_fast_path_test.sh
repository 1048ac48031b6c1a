#!/usr/bin/env bash
# The fast path (sm_plugin/fast_path.h, issue 11 deliverable 4): a drain or
# undrain from the controller is applied by the plugin pushing only the
# changed LFT blocks, acknowledged by the switches, with no OpenSM reroute.
# The controller end of the plugin's socket is tests/tools/event_sink.
#  1. drain a leaf uplink in the policy file + `policy_changed`: the plugin's
#     ucast_routing_done (reason fast_path) lists the request; its fast_path
#     event says path push, blocks sent == acknowledged == changed == the
#     blocks this test counts itself between ibroute dumps before and after;
#     OpenSM ran no routing pass and sent no block of its own meanwhile;
#     ibroute shows no CA route over the drained link; railyard verify: every
#     CA pair reachable, no credit loop;
#  2. a heavy sweep afterwards (SIGHUP): railyard's pass computes exactly the
#     pushed tables (0 changed blocks): OpenSM has nothing left to send;
#  3. undrain: pushed the same way; the tables are again those of step 0;
#  4. a policy file that does not parse: the fast path does not guess, it
#     leaves the command to OpenSM's reroute (fast_path event path opensm,
#     then routing_pass and ucast_routing_done reason reroute list the id,
#     and OpenSM keeps the last policy the fast path applied);
#  5. a switch that does not answer (ibsim drops the leaf's LFT SMPs): the
#     silent blocks are posted once more, then the command is left to
#     OpenSM's reroute and the reason reported; once the switch answers
#     again, OpenSM's next heavy sweep puts the drained tables in place.
# The standby case: plugin_fast_path_standby_test.sh.
#
# Usage (ctest does this): plugin_fast_path_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq python3
PLUGIN_DIR=$BIN/sm_plugin
SINK=$BIN/tests/event_sink
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
[[ -x "$SINK" ]] || ry_fail "event_sink not built: $SINK"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

# 32 servers x 8 rails, radix 64: leaves with CA ports 1-32, uplinks 33-64.
"$RAILYARD" topo gen --servers 32 --rails 8 --radix 64 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
LEAF=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$LEAF_DESC\".*/\1/p" f.net)
[[ -n "$LEAF" ]] || ry_fail "no record for '$LEAF_DESC' in f.net"
DRAIN_PORT=34

SOCK=$RY_TMP/c.sock
((${#SOCK} <= 107)) || ry_fail "socket path too long for sun_path: $SOCK (use a shorter TMPDIR)"
EVENTS=$RY_TMP/events.jsonl
COMMANDS=$RY_TMP/commands.jsonl
: >"$EVENTS"
: >"$COMMANDS"
: >policy.yaml
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\n' "$RY_TMP" "$SOCK" >railyard-plugin.yaml

has_event() { [[ -n "$(jq -c "select($1)" "$EVENTS" | head -n 1)" ]]; }
wait_event() { ry_wait_for "${2:-60}" "an event with $1" has_event "$1"; }
event() { jq -c "select($1)" "$EVENTS" | head -n 1; }
last_seq() { jq -s 'map(.seq) | max // 0' "$EVENTS"; }

SINK_PID=""
"$SINK" "$SOCK" "$EVENTS" "$COMMANDS" >sink.out 2>&1 &
SINK_PID=$!
ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
trap 'ry_rc=$?; set +e; [[ -n "$SINK_PID" ]] && { kill -TERM "$SINK_PID"; wait "$SINK_PID"; }; (exit $ry_rc); _ry_cleanup' EXIT

ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 30
ry_assert_eq railyard "$(ry_opensm_engine)" "engine of the first sweep"
wait_event '.type == "hello"' 20
ry_assert_file_contains "$RY_OPENSM_LOG" "its commands applied by the fast path" "fast path on by default"

# push_ok ID NAME: the command ID was applied by a push; prints its fast_path event.
push_ok() {
  local id=$1 mark=$2 done fp
  wait_event ".type == \"ucast_routing_done\" and (.requests | index(\"$id\"))" 60
  done=$(event ".type == \"ucast_routing_done\" and (.requests | index(\"$id\"))")
  [[ $(jq -r '.reason + " " + (.engine_ok | tostring)' <<<"$done") == "fast_path true" ]] ||
    ry_fail "$id: ucast_routing_done: $done"
  fp=$(event ".type == \"fast_path\" and (.requests | index(\"$id\"))")
  [[ -n "$fp" ]] || ry_fail "$id: no fast_path event"
  [[ $(jq -r .path <<<"$fp") == push ]] || ry_fail "$id: not pushed: $fp"
  (($(jq -r .blocks_changed <<<"$done") == $(jq -r .blocks_changed <<<"$fp"))) || ry_fail "$id: counts differ: $done / $fp"
  # OpenSM neither routed nor sent a block of its own meanwhile.
  local own
  own=$(jq -c "select(.seq > $mark and (.type == \"routing_pass\" or .type == \"lft_change\"))" "$EVENTS" | wc -l)
  ry_assert_eq 0 "$own" "$id: routing_pass/lft_change events from OpenSM during the push"
  echo "$fp"
}

# --- 0. before ------------------------------------------------------------------
ry_snapshot before
ry_verify_ok "$RAILYARD" before
passes=$(ry_log_count "railyard: pass [0-9]+: time ")
uses=$(ry_port_uses before "$LEAF" "$DRAIN_PORT")
((uses > 0)) || ry_fail "the leaf sends nothing over port $DRAIN_PORT before the drain"

# --- 1. drain -------------------------------------------------------------------
printf 'drains:\n  links: ["%s[%d]"]\n' "$LEAF_DESC" "$DRAIN_PORT" >policy.yaml
mark=$(last_seq)
echo '{"type":"policy_changed","id":"fp-drain-1"}' >>"$COMMANDS"
fp=$(push_ok fp-drain-1 "$mark")
ry_log "drain: $fp"
ry_snapshot drained
ry_verify_ok "$RAILYARD" drained
ry_assert_eq 0 "$(ry_port_uses drained "$LEAF" "$DRAIN_PORT")" "CA LIDs routed over the drained link"
counted=$(ry_changed_blocks before drained)
((counted > 0)) || ry_fail "the drain changed no block on the switches"
ry_assert_eq "$counted $counted $counted" "$(jq -r '"\(.blocks_changed) \(.blocks_sent) \(.blocks_acked)"' <<<"$fp")" \
  "blocks changed (ibroute before/after) vs the plugin's changed, sent, acknowledged"
ry_assert_eq "$passes" "$(ry_log_count "railyard: pass [0-9]+: time ")" "railyard routing passes in OpenSM during the drain"
ry_assert_file_contains "$RY_OPENSM_LOG" "fast path: 'fp-drain-1': path push: " "the path is logged"
ry_pass "drain pushed: $counted blocks changed on the switches = sent = acknowledged, in $(jq -r .rounds <<<"$fp") rounds, $(jq -r .total_ms <<<"$fp") ms; no OpenSM pass; 100% reachable, no credit loop"

# --- 2. OpenSM's next heavy sweep finds nothing to send ----------------------------
mark=$(last_seq)
kill -HUP "$RY_OPENSM_PID"
wait_event ".seq > $mark and .type == \"routing_pass\"" 60
pass=$(event ".seq > $mark and .type == \"routing_pass\"")
ry_assert_eq "ok 0" "$(jq -r '"\(.status) \(.changed_blocks)"' <<<"$pass")" "heavy sweep after the push: status, changed blocks"
ry_pass "heavy sweep after the push: railyard's pass $(jq -r .pass <<<"$pass") computes the pushed tables, 0 blocks to send"

# --- 3. undrain -----------------------------------------------------------------
wait_event ".seq > $mark and .type == \"ucast_routing_done\"" 60
: >policy.yaml
mark=$(last_seq)
passes=$(ry_log_count "railyard: pass [0-9]+: time ")
echo '{"type":"policy_changed","id":"fp-undrain-1"}' >>"$COMMANDS"
fp=$(push_ok fp-undrain-1 "$mark")
ry_log "undrain: $fp"
ry_snapshot undrained
ry_assert_eq 0 "$(ry_changed_blocks before undrained)" "blocks that differ from the tables before the drain"
ry_assert_eq "$counted $counted" "$(jq -r '"\(.blocks_sent) \(.blocks_acked)"' <<<"$fp")" "undrain: blocks sent, acknowledged"
ry_assert_eq "$passes" "$(ry_log_count "railyard: pass [0-9]+: time ")" "railyard routing passes in OpenSM during the undrain"
ry_pass "undrain pushed ($(jq -r .incremental <<<"$fp" | sed 's/true/incremental route/;s/false/full route/')): the tables are those before the drain"

# --- 4. a broken policy file: left to OpenSM -----------------------------------------
printf 'drains: [\n' >policy.yaml
mark=$(last_seq)
echo '{"type":"policy_changed","id":"fp-broken-1"}' >>"$COMMANDS"
wait_event ".type == \"ucast_routing_done\" and (.requests | index(\"fp-broken-1\"))" 60
fp=$(event ".type == \"fast_path\" and (.requests | index(\"fp-broken-1\"))")
[[ $(jq -r .path <<<"$fp") == opensm && $(jq -r .reason <<<"$fp") == "policy file: "* ]] ||
  ry_fail "broken policy: fast_path event $fp"
done=$(event ".type == \"ucast_routing_done\" and (.requests | index(\"fp-broken-1\"))")
ry_assert_eq "reroute" "$(jq -r .reason <<<"$done")" "broken policy: served by OpenSM's reroute"
has_event ".seq > $mark and .type == \"routing_pass\" and (.requests | index(\"fp-broken-1\"))" ||
  ry_fail "no routing_pass lists fp-broken-1"
ry_assert_file_contains "$RY_OPENSM_LOG" "fast path: 'fp-broken-1': path opensm \(force_reroute\): policy file: " "fallback logged"
# The last good policy is the one the fast path applied (undrained), not the
# one OpenSM's own pass read last (drained).
ry_snapshot broken
ry_assert_eq 0 "$(ry_changed_blocks before broken)" "blocks that differ from the undrained tables after OpenSM's reroute"
ry_pass "broken policy file: left to OpenSM's reroute, which served the request with the last policy applied (undrained)"

# --- 5. a switch that does not answer --------------------------------------------
ry_ibsim_cmd "Error \"$LEAF\" 100 25"  # attribute 0x19: LinearForwardingTable
printf 'drains:\n  links: ["%s[%d]"]\n' "$LEAF_DESC" "$DRAIN_PORT" >policy.yaml
mark=$(last_seq)
echo '{"type":"policy_changed","id":"fp-silent-1"}' >>"$COMMANDS"
wait_event ".type == \"fast_path\" and (.requests | index(\"fp-silent-1\"))" 30
fp=$(event ".type == \"fast_path\" and (.requests | index(\"fp-silent-1\"))")
ry_log "silent switch: $fp"
# OpenSM gives up on its own Sets to the silent leaf before the plugin's
# ack timeout ends (by design: the timeout is OpenSM's give-up time plus a
# margin), and may start a sweep of its own then. So the re-posted round ends
# one of two ways, both honest and both left to OpenSM: the re-posted blocks
# stay unanswered (no acknowledgement), or OpenSM routes before the re-post
# goes out (stale). Either way the re-post was started and logged, and
# fewer blocks were acknowledged than changed.
reason=$(jq -r .reason <<<"$fp")
[[ $(jq -r .path <<<"$fp") == opensm ]] || ry_fail "silent switch: not left to OpenSM: $fp"
if [[ $reason == *"no acknowledgement: "*"unanswered after a re-post"* ]]; then
  (($(jq -r .reposted <<<"$fp") > 0)) || ry_fail "silent switch: no acknowledgement but nothing re-posted: $fp"
elif [[ $reason != *"stale: OpenSM routed since the patch was computed"* ]]; then
  ry_fail "silent switch: neither unanswered after a re-post nor overtaken by OpenSM's routing: $fp"
fi
(($(jq -r .blocks_acked <<<"$fp") < $(jq -r .blocks_changed <<<"$fp"))) ||
  ry_fail "silent switch: fewer blocks acknowledged than changed: $fp"
ry_assert_file_contains "$RY_OPENSM_LOG" "fast path: [0-9]+ blocks unanswered after [0-9]+ ms .*posting them once more" "re-post logged"
wait_event ".seq > $mark and .type == \"routing_pass\" and (.requests | index(\"fp-silent-1\"))" 60
ry_ibsim_cmd "Error \"$LEAF\" 0"
mark=$(last_seq)
kill -HUP "$RY_OPENSM_PID"
wait_event ".seq > $mark and .type == \"ucast_routing_done\" and .reason == \"heavy_sweep\"" 60
ry_snapshot repaired
ry_verify_ok "$RAILYARD" repaired
ry_assert_eq 0 "$(ry_port_uses repaired "$LEAF" "$DRAIN_PORT")" "CA LIDs over the drained link once the leaf answers again"
ry_pass "silent switch: re-post started ($(jq -r .reposted <<<"$fp") blocks re-posted), left to OpenSM ($(jq -r .reason <<<"$fp" | cut -c1-60)...); repaired by OpenSM's heavy sweep"
