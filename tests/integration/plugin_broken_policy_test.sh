#!/usr/bin/env bash
# A broken policy file never takes routing down. OpenSM runs the railyard
# plugin with a policy file (named relative to the plugin config) that goes
# broken -> good -> broken; each change is picked up at the next routing pass
# (SIGHUP = heavy sweep, as an operator would trigger it):
#  1. broken from the start (YAML syntax error): the log names the file, line
#     and reason; railyard routes with the default policy; SUBNET UP.
#  2. fixed (drains a spine): loaded, the tables change.
#  3. broken again (unknown key): the log names file, line and reason; the last
#     good policy stays in force, so the tables do not change (0 blocks).
#  4. valid but naming a switch the fabric lacks: routing continues with the
#     last policy that applied, and the log says why.
# Throughout, railyard is the engine used and OpenSM never falls back.
#
# Usage (ctest does this): plugin_broken_policy_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$RAILYARD" topo gen --servers 16 --rails 8 --radix 32 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }

mkdir conf
POLICY=$RY_TMP/conf/policy.yaml
printf 'policy_file: policy.yaml\nlog_level: info\n' >conf/railyard-plugin.yaml
# Line 3 never closes the flow sequence: a YAML syntax error.
printf '# broken on purpose\ndrains:\n  switches: ["spine s00"\n' >"$POLICY"
echo "osm_ucast_mgr.c 0x07" >per_module_logging.conf

ry_start_ibsim f.net
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/conf/railyard-plugin.yaml" \
  --conf "routing_engine railyard" \
  --conf "per_module_logging_file $RY_TMP/per_module_logging.conf"

# pass_line N WHAT: the plugin's summary line "railyard: pass N: engine ..." or "...: unreachable ...".
pass_line() { grep -E "railyard: pass $1: $2" "$RY_OPENSM_LOG" | tail -n 1; }
changed_blocks() { pass_line "$1" unreachable | sed -n 's/.*changed LFT blocks \([0-9][0-9]*\) .*/\1/p'; }

# No fallback: every engine OpenSM tried ("building routing with '<engine>'")
# was railyard, every pass completed, none was refused.
assert_railyard_only() {
  local passes=$1 building
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used"
  building=$(ry_log_count "building routing with '")
  ((building >= passes)) || ry_fail "only $building 'building routing' lines after $passes passes"
  ry_assert_eq "$building" "$(ry_log_count "building routing with 'railyard'")" "'building routing' lines that are railyard's"
  ry_assert_eq "$building" "$(ry_log_count "railyard: pass [0-9]+: time ")" "railyard passes completed"
  ry_assert_eq 0 "$(ry_log_count "cannot build fwd tables|refused, OpenSM falls back")" "refusals"
}

# reroute N: asks OpenSM for a heavy sweep and waits for railyard's pass N.
reroute() {
  kill -HUP "$RY_OPENSM_PID"
  ry_wait_log "railyard: pass $1: time " 60
  ry_wait_log "railyard tables configured on all switches" 30 "$RY_OPENSM_LOG" "$1"
}

# --- 1. broken from the start -> default policy ---------------------------------
ry_wait_log "railyard: pass 1: time " 10
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: policy error: $POLICY:[0-9]+: .+; keeping the default policy" \
  "policy error names the file, line and reason"
ry_log "$(grep -m1 -o 'railyard: policy error: .*' "$RY_OPENSM_LOG")"
ry_assert_contains "$(pass_line 1 engine)" "policy default;" "pass 1 routes with the default policy"
assert_railyard_only 1

# --- 2. fixed: loaded at the next pass, the drain changes the tables -------------
sleep 1.1  # a visibly new mtime, even on coarse clocks
printf 'drains:\n  switches: ["spine s00"]\n' >"$POLICY"
reroute 2
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: policy loaded from $POLICY" "good policy loaded"
ry_assert_contains "$(pass_line 2 engine)" "policy $POLICY;" "pass 2 routes with the policy file"
blocks2=$(changed_blocks 2)
[[ -n "$blocks2" && "$blocks2" -gt 0 ]] || ry_fail "draining a spine should change LFT blocks, got '${blocks2}'"
assert_railyard_only 2

# --- 3. broken again: the last good policy stays in force ------------------------
sleep 1.1
printf 'drains:\n  switches: ["spine s00"]\ndrainz: {}\n' >"$POLICY"
reroute 3
errors=$(grep -o "railyard: policy error: .*" "$RY_OPENSM_LOG" | tail -n 1)
ry_log "$errors"
[[ "$errors" =~ $POLICY:3:\ .*drainz.*\;\ keeping\ the\ last\ good\ policy\ from\ $POLICY ]] ||
  ry_fail "second policy error should name the file, line 3, the key and the last good policy: $errors"
ry_assert_contains "$(pass_line 3 engine)" "policy $POLICY;" "pass 3 still routes with the last good policy"
ry_assert_eq 0 "$(changed_blocks 3)" "LFT blocks changed by pass 3 (same fabric, same policy)"
assert_railyard_only 3

# An unchanged broken file is reported once, not at every pass.
reroute 4
ry_assert_eq 2 "$(ry_log_count "railyard: policy error: ")" "policy errors logged (one per change of the file)"
ry_assert_eq 0 "$(changed_blocks 4)" "LFT blocks changed by pass 4"
assert_railyard_only 4

# --- 4. valid YAML that does not apply to this fabric (an unknown switch) ------
# The pass continues with the last policy that applied (the drain): no change.
sleep 1.1
printf 'drains:\n  switches: ["spine s99"]\n' >"$POLICY"
reroute 5
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: policy $POLICY does not apply to this fabric: .*spine s99.*; trying the last policy that applied" \
  "policy that names an unknown switch"
ry_log "$(grep -o 'railyard: policy .* does not apply .*' "$RY_OPENSM_LOG" | tail -n 1)"
ry_assert_contains "$(pass_line 5 engine)" "policy last policy that applied;" "pass 5 routes with the last policy that applied"
ry_assert_eq 0 "$(changed_blocks 5)" "LFT blocks changed by pass 5"
assert_railyard_only 5

ry_pass "broken policy: default, then last good policy kept; railyard routed all 5 passes"
