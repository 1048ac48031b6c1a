#!/usr/bin/env bash
# railyard's plugin inside the real OpenSM talks to a controller over its Unix
# socket (issue 4, item 4; docs/plugin_protocol.md). The controller end is
# tests/tools/event_sink (appends every line it receives to a file, sends the
# lines appended to a commands file).
#  1. No controller at start: OpenSM comes up routed by railyard all the same;
#     the plugin says it cannot connect and keeps retrying.
#  2. The controller appears: `hello`, then the last fabric (pass 1), whole,
#     then the first sweep's events, which the plugin kept in its queue while
#     no controller was connected (routing_pass 1 among them), numbered after
#     the hello: every event before it is either kept or counted in `dropped`.
#  3. A leaf uplink Unlink'ed in ibsim: trap 128 and heavy_sweep_start (either
#     order: two OpenSM threads) -> heavy_sweep_done -> routing_pass (ok) ->
#     lft_change -> ucast_routing_done, in sequence order, plus the new fabric
#     without that link.
#  4. `reroute` with an id: ack, then a routing_pass and a ucast_routing_done
#     (reason reroute) that list the id; `policy_changed` likewise.
#
# Usage (ctest does this): plugin_events_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm jq
PLUGIN_DIR=$BIN/sm_plugin
SINK=$BIN/tests/event_sink
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
[[ -x "$SINK" ]] || ry_fail "event_sink not built: $SINK"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$RAILYARD" topo gen --servers 16 --rails 4 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
# A leaf that is not the first one (ibsim attaches the SM there), first uplink.
LEAF=$(sed -n 's/^Switch.*"\(S-[0-9a-f]*\)".*# "leaf g001 r1".*/\1/p' f.net)
[[ -n "$LEAF" ]] || ry_fail "no leaf g001 r1 in f.net"
UPLINK=9  # radix 16: CA ports 1-8, uplinks 9-16

SOCK=$RY_TMP/c.sock
((${#SOCK} <= 107)) || ry_fail "socket path too long for sun_path: $SOCK (use a shorter TMPDIR)"
EVENTS=$RY_TMP/events.jsonl
COMMANDS=$RY_TMP/commands.jsonl
: >"$EVENTS"
: >"$COMMANDS"
# Commands through OpenSM's own reroute (what part 4 checks); the plugin's
# fast path has its own test (plugin_fast_path_test.sh).
printf 'log_level: verbose\ncontroller_socket: %s\nfast_path: opensm\n' "$SOCK" >railyard-plugin.yaml

# events [JQ-FILTER]: the received events, one compact JSON per line.
events() { jq -c "${1:-.}" "$EVENTS"; }
# wait_event JQ-CONDITION [TIMEOUT]: until an event satisfies it.
has_event() { [[ -n "$(jq -c "select($1)" "$EVENTS" | head -n 1)" ]]; }
wait_event() { ry_wait_for "${2:-60}" "an event with $1" has_event "$1"; }
# seq_of JQ-CONDITION: seq of the first event satisfying it.
seq_of() { jq -r "select($1) | .seq" "$EVENTS" | head -n 1; }

SINK_PID=""
start_sink() {
  "$SINK" "$SOCK" "$EVENTS" "$COMMANDS" >sink.out 2>&1 &
  SINK_PID=$!
  ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
}
stop_sink() {
  [[ -n "$SINK_PID" ]] || return 0
  kill -TERM "$SINK_PID" 2>/dev/null || true
  wait "$SINK_PID" 2>/dev/null || true
  SINK_PID=""
}
# The sink goes first; _ry_cleanup then sees the test's own exit status.
trap 'ry_rc=$?; set +e; stop_sink; (exit $ry_rc); _ry_cleanup' EXIT

# --- 1. no controller: OpenSM runs on ------------------------------------------
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 30
ry_assert_eq railyard "$(ry_opensm_engine)" "engine of the first sweep"
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: controller socket $SOCK: cannot connect" "the plugin says why"
ry_pass "no controller: OpenSM up, routed by railyard; the plugin retries"

# --- 2. the controller appears -------------------------------------------------
start_sink
wait_event '.type == "hello"' 20
hello=$(events 'select(.type == "hello")' | head -n 1)
ry_log "hello: $hello"
[[ $(jq -r .plugin <<<"$hello") == osmrailyard ]] || ry_fail "hello.plugin: $hello"
[[ $(jq -r .opensm <<<"$hello") == "OpenSM 3.3.23" ]] || ry_fail "hello.opensm: $hello"
wait_event '.type == "fabric_changes" and .pass == 1 and .full' 20
(($(seq_of '.type == "fabric_changes"') > $(jq -r .seq <<<"$hello"))) || ry_fail "the fabric comes after the hello"
# The first sweep's events, kept: raised before the hello, sent after it.
hello_seq=$(jq -r .seq <<<"$hello")
hello_time=$(jq -r .time <<<"$hello")
wait_event ".seq > $hello_seq and .type == \"routing_pass\" and .pass == 1 and .status == \"ok\"" 20
kept_count() { events "select(.seq > $hello_seq and .time < $hello_time)" | wc -l; }
# Every event numbered before the hello is kept or counted as dropped.
all_kept_arrived() { ((hello_seq == $(jq -r .dropped <<<"$hello") + $(kept_count) + 1)); }
ry_wait_for 20 "the events before the hello: kept or dropped, hello seq $hello_seq" all_kept_arrived
kept=$(kept_count)
first_kept=$(jq -s -r --argjson h "$hello_seq" --argjson t "$hello_time" \
  'map(select(.seq > $h and .time < $t) | .seq) | min' "$EVENTS")
ry_log "kept from before the controller: $kept events (seq $first_kept on), dropped $(jq -r .dropped <<<"$hello")"
((first_kept > $(seq_of '.type == "fabric_changes"'))) || ry_fail "the kept events follow the whole fabric"
LEAF_GUID=$(printf '0x%016x' "0x${LEAF#S-}")
# The leaf's uplink in the whole fabric: its end with the lower (GUID, port).
uplink_end=$(jq -c --arg g "$LEAF_GUID" --argjson p "$UPLINK" 'select(.type == "fabric_changes" and .pass == 1) |
  .links[] | select((.a == $g and .a_port == $p) or (.b == $g and .b_port == $p)) | {node: .a, port: .a_port}' "$EVENTS")
[[ -n "$uplink_end" ]] || ry_fail "the whole fabric has no link on $LEAF[$UPLINK]"
ry_pass "controller connected: hello (dropped $(jq -r .dropped <<<"$hello")), fabric of pass 1, $kept events kept from before"

# --- 3. a link goes down -------------------------------------------------------
mark=$(jq -s 'map(.seq) | max' "$EVENTS")
ry_ibsim_cmd "Unlink \"$LEAF\"[$UPLINK]"
wait_event ".seq > $mark and .type == \"ucast_routing_done\"" 60
wait_event ".seq > $mark and .type == \"fabric_changes\" and .pass == 2" 20
after() { seq_of ".seq > $mark and ($1)"; }
s_trap=$(after '.type == "trap" and .trap_num == 128')
s_start=$(after '.type == "heavy_sweep_start"')
s_done=$(after '.type == "heavy_sweep_done"')
s_pass=$(after '.type == "routing_pass" and .status == "ok" and .pass == 2')
s_lft=$(after '.type == "lft_change"')
s_rdone=$(after '.type == "ucast_routing_done" and .reason == "heavy_sweep" and .engine_ok')
for v in s_trap s_start s_done s_pass s_lft s_rdone; do
  [[ -n "${!v}" ]] || { events "select(.seq > $mark) | del(.nodes, .links)" >&2; ry_fail "missing after Unlink: $v"; }
done
# OpenSM reports the trap from its dispatcher after handing the sweep to its
# sweeper thread, so HEAVY_SWEEP_START may be numbered before the TRAP that
# caused it (seen in CI); the trap still precedes the sweep's end.
((s_trap < s_done && s_start < s_done && s_done < s_pass && s_pass < s_lft && s_lft < s_rdone)) ||
  ry_fail "order: trap $s_trap, sweep start $s_start, done $s_done, routing_pass $s_pass, lft_change $s_lft, routing done $s_rdone"
pass2=$(events "select(.seq == $s_pass)")
ry_log "routing_pass 2: $(jq -c 'del(.unreachable_cas)' <<<"$pass2")"
(($(jq -r .changed_blocks <<<"$pass2") > 0)) || ry_fail "pass 2 changed no LFT block: $pass2"
lfts=$(events "select(.seq > $s_pass and .seq < $s_rdone and .type == \"lft_change\")" | wc -l)
ry_log "lft_change events between routing_pass 2 and ucast_routing_done: $lfts (changed_blocks $(jq -r .changed_blocks <<<"$pass2"))"
(($(jq -r '.switch_lid' <<<"$(events "select(.seq == $s_lft)")") > 0)) || ry_fail "lft_change without a switch LID"
# The new fabric, as changes from the last one: the leaf's uplink is gone.
changes2=$(events 'select(.type == "fabric_changes" and .pass == 2)')
ry_assert_eq false "$(jq -r .full <<<"$changes2")" "pass 2's fabric is sent as changes"
ry_assert_eq "$(jq -r 'select(.type == "fabric_changes" and .pass == 1) | .fingerprint' "$EVENTS")" \
  "$(jq -r .base <<<"$changes2")" "the changes' base is the whole fabric's fingerprint"
jq -e --argjson e "$uplink_end" 'any(.links_removed[]; . == $e)' <<<"$changes2" >/dev/null ||
  ry_fail "pass 2's changes do not remove $LEAF[$UPLINK]: $(jq -c .links_removed <<<"$changes2")"
ry_pass "Unlink: trap 128, heavy sweep, routing_pass, $lfts lft_change, ucast_routing_done, new fabric"

# --- 4. commands ---------------------------------------------------------------
mark=$(jq -s 'map(.seq) | max' "$EVENTS")
echo '{"type":"reroute","id":"it-reroute-1"}' >>"$COMMANDS"
wait_event ".type == \"ack\" and .id == \"it-reroute-1\" and .command == \"reroute\"" 20
wait_event ".type == \"ucast_routing_done\" and (.requests | index(\"it-reroute-1\"))" 60
s_ack=$(after '.type == "ack" and .id == "it-reroute-1"')
s_pass=$(after '.type == "routing_pass" and (.requests | index("it-reroute-1"))')
s_rdone=$(after '.type == "ucast_routing_done" and (.requests | index("it-reroute-1"))')
[[ -n "$s_pass" ]] || ry_fail "no routing_pass lists it-reroute-1"
rdone=$(events "select(.seq == $s_rdone)")
ry_log "ucast_routing_done: $rdone"
[[ $(jq -r '.reason + " " + (.engine_ok | tostring)' <<<"$rdone") == "reroute true" ]] ||
  ry_fail "the reroute's ucast_routing_done: $rdone"
((s_pass < s_rdone)) || ry_fail "routing_pass ($s_pass) before ucast_routing_done ($s_rdone)"
[[ $(events "select(.seq == $s_pass) | .status") == '"ok"' ]] || ry_fail "the reroute's pass was not ok"
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: controller: reroute 'it-reroute-1': reroute requested" "log of the command"
ry_pass "reroute it-reroute-1: ack (seq $s_ack), routing_pass (seq $s_pass), ucast_routing_done reason reroute (seq $s_rdone)"

echo '{"type":"policy_changed","id":"it-policy-1"}' >>"$COMMANDS"
wait_event ".type == \"ack\" and .id == \"it-policy-1\" and .command == \"policy_changed\"" 20
wait_event ".type == \"routing_pass\" and .status == \"ok\" and (.requests | index(\"it-policy-1\"))" 60
wait_event ".type == \"ucast_routing_done\" and (.requests | index(\"it-policy-1\"))" 60
ry_pass "policy_changed it-policy-1: ack, routing_pass and ucast_routing_done list it"

# Nothing the plugin sent was unparseable or unknown to this test's reading.
bad=$(jq -r 'select((.type | type) != "string" or (.seq | type) != "number" or (.time | type) != "number") | .seq' "$EVENTS" | wc -l)
ry_assert_eq 0 "$bad" "events without type/seq/time"
ry_log "event types received: $(jq -r .type "$EVENTS" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')"
ry_pass "plugin events: $(wc -l <"$EVENTS") lines received"
