#!/usr/bin/env bash
# The fast path pushes nothing from a standby SM (issue 11, deliverable 6):
# two OpenSMs on one ibsim fabric, the master (priority 15) on the simulator's
# default port, the standby (priority 1) on another CA's port, each loading
# railyard's plugin; the standby's plugin talks to tests/tools/event_sink.
# A drain in the policy file + `policy_changed` to the standby's plugin: its
# fast_path event says path opensm ("this SM may not push"), its log has no
# push, and the switches' tables (ibroute) are exactly those before.
#
# Usage (ctest does this): plugin_fast_path_standby_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
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

"$RAILYARD" topo gen --servers 16 --rails 4 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
DRAIN_PORT=10  # radix 16: CA ports 1-8, uplinks 9-16
# The standby's port: the last CA of the file (ibsim gives the first to
# clients that name none, i.e. the master and the diags).
STANDBY_HOST=$(sed -n 's/^Ca.*# "\(.*\)".*/\1/p' f.net | tail -n 1)
[[ -n "$STANDBY_HOST" ]] || ry_fail "no CA in f.net"

SOCK=$RY_TMP/c.sock
((${#SOCK} <= 107)) || ry_fail "socket path too long for sun_path: $SOCK (use a shorter TMPDIR)"
EVENTS=$RY_TMP/events.jsonl
COMMANDS=$RY_TMP/commands.jsonl
: >"$EVENTS"
: >"$COMMANDS"
# The master reads a policy of its own: it must not route the drain either.
: >policy.yaml
: >master-policy.yaml
printf 'log_level: info\npolicy_file: %s/master-policy.yaml\n' "$RY_TMP" >master-plugin.yaml
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\n' "$RY_TMP" "$SOCK" >standby-plugin.yaml

has_event() { [[ -n "$(jq -c "select($1)" "$EVENTS" | head -n 1)" ]]; }
wait_event() { ry_wait_for "${2:-60}" "an event with $1" has_event "$1"; }

SINK_PID=""
"$SINK" "$SOCK" "$EVENTS" "$COMMANDS" >sink.out 2>&1 &
SINK_PID=$!
ry_wait_for 10 "event_sink listening" grep -qs listening sink.out
trap 'ry_rc=$?; set +e; [[ -n "$SINK_PID" ]] && { kill -TERM "$SINK_PID"; wait "$SINK_PID"; }; (exit $ry_rc); _ry_cleanup' EXIT

ry_start_ibsim f.net
ry_start_opensm --timeout 120 \
  --conf "sm_priority 15" \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/master-plugin.yaml" \
  --conf "routing_engine railyard"
ry_assert_eq railyard "$(ry_opensm_engine)" "the master's engine"

# The standby: a second OpenSM on another port (SIM_HOST).
SDIR=$RY_TMP/standby
ry_start_standby_opensm "$SDIR" "$STANDBY_HOST" "sm_priority 1" "event_plugin_name osmrailyard" \
  "event_plugin_options $RY_TMP/standby-plugin.yaml" "routing_engine railyard"
ry_wait_log "Entering STANDBY state" 60 "$SDIR/opensm.log"
wait_event '.type == "hello"' 20
ry_pass "two SMs: master (priority 15) and standby (priority 1, on '$STANDBY_HOST')"

ry_snapshot before
printf 'drains:\n  links: ["%s[%d]"]\n' "$LEAF_DESC" "$DRAIN_PORT" >policy.yaml
echo '{"type":"policy_changed","id":"fp-standby-1"}' >>"$COMMANDS"
wait_event '.type == "fast_path" and (.requests | index("fp-standby-1"))' 30
fp=$(jq -c 'select(.type == "fast_path" and (.requests | index("fp-standby-1")))' "$EVENTS" | head -n 1)
ry_log "standby: $fp"
[[ $(jq -r .path <<<"$fp") == opensm && $(jq -r .reason <<<"$fp") == "this SM may not push"* ]] ||
  ry_fail "the standby's fast path: $fp"
ry_assert_eq 0 "$(ry_log_count 'fast path: .*path push' "$SDIR/opensm.log")" "pushes logged by the standby"
ry_snapshot after
cmp -s before.ibroute after.ibroute || { diff before.ibroute after.ibroute | head -n 20 >&2; ry_fail "the switches' tables changed"; }
ry_pass "standby: nothing pushed ($(jq -r .reason <<<"$fp")); the switches' tables are unchanged"
