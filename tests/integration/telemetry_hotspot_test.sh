#!/usr/bin/env bash
# Telemetry end to end: ibsim + the real OpenSM with its perf manager on
# (perfmgr TRUE, 1 s sweeps) + railyard's plugin (relays port_errors and
# port_counters) + railyardd (rates, hot ports) + railyardctl.
#  1. The perf manager's counters reach railyardd: every switch port of the
#     fabric is followed, with rates after the first (baseline) sample, and
#     none of them is stored as an event.
#  2. The test plays a congested spine link: ibsim's PerformanceSet raises
#     PortXmitWait on the spine's port toward a leaf by 2,000,000 every 0.5 s.
#     Within two perf-manager samples of that port, it is the top hotspot over
#     REST (GET /api/v1/hotspots) and in `railyardctl hotspots`, at a rate the
#     test computes from what it set.
#  3. GET /api/v1/links/{link}/counters names both ends, the spine's history
#     shows the rise; /metrics exports it (promtool check metrics passes on
#     this live output), with at most top_n per-port series.
#  4. The congestion stops: the port leaves the hotspots.
#
# Usage (ctest does this): telemetry_hotspot_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm curl jq promtool
[[ -f "$BIN/sm_plugin/libosmrailyard.so" ]] || ry_fail "plugin not built: $BIN/sm_plugin/libosmrailyard.so"
[[ -x "$BIN/railyardctl" ]] || ry_fail "railyardctl not built: $BIN/railyardctl"
export LD_LIBRARY_PATH=$BIN/sm_plugin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir
START=$SECONDS

# radix 8: leaf ports 1-4 to CAs, 5-8 up to the spines.
"$RAILYARD" topo gen --servers 8 --rails 2 --radix 8 -o f.net 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
LEAF_DESC="leaf g000 r1"
LEAF_PORT=6
LEAF=$(ry_switch_record f.net "$LEAF_DESC")
# The spine end of the leaf's uplink: '[6]  "S-..."[p]  # "spine s01" ...' in the leaf's block.
read -r SPINE SPINE_PORT SPINE_DESC < <(awk -v leaf="\"$LEAF\"" -v port="[$LEAF_PORT]" '
  /^Switch/ { mine = index($0, leaf) > 0; next }
  mine && $1 == port && match($2, /^"S-[0-9a-f]+"\[[0-9]+\]/) {
    split($2, a, /[]["]+/); d = $0; sub(/.*# "/, "", d); sub(/".*/, "", d); print a[2], a[3], d; exit }' f.net)
[[ -n "${SPINE:-}" && -n "${SPINE_PORT:-}" ]] || ry_fail "no spine at the end of $LEAF_DESC[$LEAF_PORT] in f.net"
SWITCH_PORTS=$(awk '/^Switch/ { sw = 1; next } /^(Ca|Hca)/ { sw = 0 } sw && /^\[[0-9]+\]/ { n++ } END { print n }' f.net)
ry_log "congested link: $SPINE_DESC[$SPINE_PORT] -> $LEAF_DESC[$LEAF_PORT]; $SWITCH_PORTS cabled switch ports"

SOCK=$RY_TMP/p.sock
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\n' "$RY_TMP" "$SOCK" >railyard-plugin.yaml
TOP_N=3
cat >railyardd.yaml <<CONF
tokens:
  - {name: viewer, role: viewer, token: "viewer-token-0123456789"}
database: state.db
fabric: {source: live, plugin_socket: $SOCK}
policy: {output_file: policy.yaml}
telemetry: {history: 30, hot_xmit_wait_per_s: 10000, top_n: $TOP_N, error_burst: 10}
CONF
export RY_TOKEN=viewer-token-0123456789 RAILYARD_TOKEN=viewer-token-0123456789
ctl() { "$BIN/railyardctl" --url "$RY_URL" "$@"; }
body() { sed '$d'; }
get() { ry_api GET "$1" | body; }

ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net --console
SWEEP_S=1
ry_start_opensm --timeout 60 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard" \
  --conf "perfmgr TRUE" \
  --conf "perfmgr_sweep_time_s $SWEEP_S"
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok

# --- 1. the perf manager's counters reach railyardd --------------------------------------
LINK_REF=$(jq -rn --arg n "$LEAF_DESC[$LEAF_PORT]" '$n|@uri')
SPINE_KEY="0x${SPINE#S-}[$SPINE_PORT]"  # record names carry the 16-digit GUID
spine_samples() {
  get "/api/v1/links/$LINK_REF/counters" | jq --arg p "$SPINE_KEY" '.ends[] | select(.port == $p) | .history.wait | length'
}
has_rates() { (($(spine_samples) >= 1)) && (($(get /api/v1/hotspots | jq .ports) >= SWITCH_PORTS)); }
ry_wait_for 30 "rates for $SPINE_DESC[$SPINE_PORT] and every switch port" has_rates
get /api/v1/hotspots >before.json
ry_assert_eq 0 "$(jq '.hot | length' before.json)" "hot ports before any congestion"
get "/api/v1/events?since=0&limit=1000" | jq -e '[.events[] | select(.type == "port_errors" or .type == "port_counters")] | length == 0' >/dev/null ||
  ry_fail "perf-manager samples were stored as events"
ry_pass "perf manager on: $(jq .ports before.json) ports followed, $(jq .samples before.json) samples, sweep $(jq .sweep_interval_s before.json) s"

# --- 2. congestion on one spine link -------------------------------------------------------
STEP=2000000
congest() {  # in the background: PortXmitWait += STEP every 0.5 s, until killed
  local v=0
  while :; do
    v=$((v + STEP))
    printf 'PerformanceSet "%s"[%d] PortCounters.PortXmitWait=%d\n' "$SPINE" "$SPINE_PORT" "$v" >&"$RY_IBSIM_FD"
    sleep 0.5
  done
}
samples_before=$(spine_samples)
t0=$(date +%s.%N)
congest &
CONGEST_PID=$!
RY_CLIENT_PIDS+=("$CONGEST_PID")
top_is_spine() {
  get /api/v1/hotspots >hot.json
  [[ $(jq -r '.hot[0].port // ""' hot.json) == "$SPINE_KEY" ]]
}
ry_wait_for 20 "$SPINE_DESC[$SPINE_PORT] as the top hotspot" top_is_spine
t1=$(date +%s.%N)
grep -q "PortXmitWait has been set to" "$RY_IBSIM_LOG" || ry_fail "ibsim did not take PerformanceSet: $(tail -n 3 "$RY_IBSIM_LOG")"
elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
LINK_KEY=$(get "/api/v1/links/$LINK_REF/counters" | jq -r .link)
ry_assert_eq "$LINK_KEY" "$(jq -r '.hot[0].link' hot.json)" "the top hotspot's link"
ry_assert_eq "$LEAF_DESC[$LEAF_PORT]" "$(jq -r '.hot[0].peer' hot.json)" "the top hotspot's peer"
# Which sample of the port, counted from the congestion's start, was the first hot one.
sweeps=$(get "/api/v1/links/$LINK_REF/counters" |
  jq --arg p "$SPINE_KEY" --argjson t0 "$t0" --argjson bar 10000 \
    '.ends[] | select(.port == $p) | .history.wait | map(select(.time > $t0)) | (map(.xmit_wait_per_s >= $bar) | index(true)) + 1')
((sweeps >= 1 && sweeps <= 2)) || ry_fail "the port was hot in its sample $sweeps after the congestion started (want within two sweeps)"
# The rate: STEP every 0.5 s is 2 x STEP ticks/s; a sample's interval (a
# sweep, ~1 s) holds one step more or less than that: between 0.5 x and 4 x
# STEP per second. Off by 4 (words as bytes) or by the interval would not fit.
rate=$(jq '.hot[0].xmit_wait_per_s' hot.json)
awk -v r="$rate" -v s="$STEP" 'BEGIN { exit !(r >= s * 0.5 && r <= s * 4) }' ||
  ry_fail "the hot rate $rate ticks/s is not what the test set (about 2 x $STEP per second)"
ctl hotspots >hotspots.txt || ry_fail "railyardctl hotspots failed"
cat hotspots.txt >&2
awk 'NR == 2 { exit !($1 == 1) }' hotspots.txt || ry_fail "railyardctl hotspots: no rank 1 row"
sed -n 2p hotspots.txt | grep -qF "$SPINE_DESC[$SPINE_PORT]" || ry_fail "railyardctl hotspots: rank 1 is not $SPINE_DESC[$SPINE_PORT]"
ry_assert_eq "$LINK_KEY" "$(ctl --json hotspots | jq -r '.hot[0].link')" "railyardctl --json hotspots: top link"
ry_pass "top hotspot after ${elapsed} s, $sweeps perf-manager samples of the port: $SPINE_DESC[$SPINE_PORT] at $rate ticks/s"

# --- 3. the link's counters and the metrics ------------------------------------------------
get "/api/v1/links/$LINK_REF/counters" >counters.json
jq -e --arg p "$SPINE_KEY" '[.ends[].port] | index($p) != null' counters.json >/dev/null || ry_fail "counters: the spine end is missing"
jq -e --arg p "$SPINE_KEY" '.ends[] | select(.port == $p) | .history.wait | (.[0].xmit_wait_per_s == 0) and (.[-1].xmit_wait_per_s > 0)' \
  counters.json >/dev/null || ry_fail "counters: the spine's history does not show the rise: $(jq -c '.ends[].history.wait' counters.json)"
jq -e --arg p "$SPINE_KEY" '.ends[] | select(.port != $p) | .history.data | length > 0' counters.json >/dev/null ||
  ry_fail "counters: no data samples for the leaf end"
ctl counters "$LEAF_DESC" "$LEAF_PORT" >counters.txt || ry_fail "railyardctl counters failed"
cat counters.txt >&2
grep -qF "$SPINE_DESC[$SPINE_PORT]" counters.txt && grep -qF "$LEAF_DESC[$LEAF_PORT]" counters.txt ||
  ry_fail "railyardctl counters does not list both ends"
curl -sS "$RY_URL/api/v1/metrics" >metrics.txt
promtool check metrics <metrics.txt || ry_fail "promtool check metrics failed on the live /metrics"
grep -qF "railyard_hotspot_xmit_wait_ticks_per_second{port=\"$SPINE_KEY\"" metrics.txt ||
  ry_fail "/metrics has no hotspot series for $SPINE_KEY"
series=$(grep -c '^railyard_hotspot_xmit_wait_ticks_per_second{' metrics.txt || true)
((series >= 1 && series <= TOP_N)) || ry_fail "$series hotspot series (want 1..$TOP_N)"
ry_pass "counters of both ends with the rise in the history; /metrics passes promtool with $series hotspot series"

# --- 4. the congestion stops -----------------------------------------------------------------
kill "$CONGEST_PID" 2>/dev/null || true
wait "$CONGEST_PID" 2>/dev/null || true
cooled() { [[ $(get /api/v1/hotspots | jq --arg p "$SPINE_KEY" '[.hot[] | select(.port == $p)] | length') == 0 ]]; }
ry_wait_for 15 "$SPINE_DESC[$SPINE_PORT] to leave the hotspots" cooled
ry_pass "congestion over: the port left the hotspots"
ry_log "telemetry_hotspot_test took $((SECONDS - START)) s"
