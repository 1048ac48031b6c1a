#!/usr/bin/env bash
# End to end: ibsim + the real OpenSM + railyard's plugin + railyardd (live).
#  1. railyardd (live) gets the fabric from the plugin's snapshot; health ok.
#  2. `railyardctl drain link` of a spine link: the reroute request goes to
#     the plugin and is reported applied with its latency; ibroute shows no CA
#     route over the link, the verifier 100% reachability and no credit loop,
#     and ibtracert paths from the leaf avoid the port.
#  3. kill -9 railyardd, restart: the drain is intact and still applied (the
#     policy file names it; a reroute keeps the link unused).
#  4. An outside link-down event via REST is recorded and visible
#     (events, links?state=down).
#  5. undrain: applied; the link carries routes again and the tables are
#     balanced again (rail-aligned shifts max load 1).
#
# Usage (ctest does this): railyardd_live_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute ibtracert curl jq
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
[[ -x "$BIN/railyardctl" ]] || ry_fail "railyardctl not built: $BIN/railyardctl"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$RAILYARD" topo gen --servers 16 --rails 4 --radix 16 -o f.net 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
LEAF_DESC="leaf g000 r1"   # radix 16: CA ports 1-8, uplinks 9-16
LEAF=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$LEAF_DESC\".*/\1/p" f.net)
[[ -n "$LEAF" ]] || ry_fail "no record for '$LEAF_DESC' in f.net"
PORT=9

SOCK=$RY_TMP/p.sock
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\n' "$RY_TMP" "$SOCK" >railyard-plugin.yaml
cat >railyardd.yaml <<CONF
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
database: state.db
fabric: {source: live, plugin_socket: $SOCK}
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 120}
log_level: debug
CONF
export RY_TOKEN=operator-token-0123456789 RAILYARD_TOKEN=operator-token-0123456789
ctl() { "$BIN/railyardctl" --url "$RY_URL" "$@"; }
body() { sed '$d'; }

# --- 1. live fabric from the plugin -----------------------------------------------
ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 60
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok
ry_assert_eq 64 "$(ry_api GET /api/v1/fabric | body | jq .cas)" "CAs railyardd sees"
ry_pass "railyardd has the live fabric from the plugin"

verify_ok() {
  "$RAILYARD" verify --topo "$1.topo" --lfts "$1.ibroute" --json --max-shifts 8 --permutations 1 --no-all-to-all \
    >"$1.verify.json" 2>"$1.verify.err" || { cat "$1.verify.err" >&2; ry_fail "$1: railyard verify failed"; }
  jq -e '.pairs > 0 and .reachable == .pairs and .credit_loops.ca_routes.acyclic' "$1.verify.json" >/dev/null ||
    ry_fail "$1: not every CA pair reachable or a credit loop: $(jq -c '{pairs, reachable}' "$1.verify.json")"
}
max_shift_load() { jq '[.congestion[] | select(.pattern == "rail-aligned shifts") | .max_load][0]' "$1.verify.json"; }
leaf_port_uses() { ry_port_uses "$1" "$LEAF" "$2"; }
# wait_reroute ID: until the request is applied; prints its latency (ms).
wait_reroute() {
  local deadline=$((SECONDS + 120)) status
  while :; do
    status=$(ry_api GET "/api/v1/reroutes/$1" | body | jq -r .status)
    [[ $status == applied ]] && break
    [[ $status == failed ]] && ry_fail "reroute $1 failed: $(ry_api GET "/api/v1/reroutes/$1" | body)"
    ((SECONDS < deadline)) || ry_fail "reroute $1 still $status after 120 s"
    sleep 0.2
  done
  ry_api GET "/api/v1/reroutes/$1" | body | jq -r .latency_ms
}

ry_snapshot before
verify_ok before
((  $(leaf_port_uses before $PORT) > 0 )) || ry_fail "$LEAF_DESC sends nothing over port $PORT before the drain"

# --- 2. drain with railyardctl -------------------------------------------------------
ctl --json drain link "$LEAF_DESC" $PORT --reason "e2e: flapping" >drain.json || ry_fail "railyardctl drain failed"
DRAIN_ID=$(jq -r .drain.id drain.json)
REROUTE_ID=$(jq -r .reroute.id drain.json)
ry_assert_eq pending "$(jq -r .reroute.status drain.json)" "reroute status right after the drain"
latency=$(wait_reroute "$REROUTE_ID")
ry_log "drain $DRAIN_ID: LFTs in place after $latency ms (request -> ucast_routing_done)"
ry_snapshot drained
verify_ok drained
ry_assert_eq 0 "$(leaf_port_uses drained $PORT)" "CA LIDs routed over the drained link"
# ibtracert from each CA on the leaf to a CA on another leaf: never out of port 9.
src_lids=$(awk -v leaf="\"$LEAF\"" '/^Ca/ { ca = 1; next } ca && index($0, leaf) && match($0, /# lid [0-9]+/) {
  print substr($0, RSTART + 6, RLENGTH - 6) } /^$/ { ca = 0 }' drained.topo | head -n 4)
dst_lid=$(ry_api GET "/api/v1/hosts" | body | jq -r '.hosts[-1].cas[1].lid')
[[ -n "$src_lids" && -n "$dst_lid" ]] || ry_fail "no CA LIDs for ibtracert"
for s in $src_lids; do
  ry_diag ibtracert "$s" "$dst_lid" >trace.txt 2>&1 || { cat trace.txt >&2; ry_fail "ibtracert $s $dst_lid"; }
  if grep -A1 "\"$LEAF_DESC\"" trace.txt | grep -q "^\[$PORT\]"; then
    cat trace.txt >&2
    ry_fail "ibtracert $s -> $dst_lid leaves $LEAF_DESC by the drained port $PORT"
  fi
done
ry_pass "drained with railyardctl: applied in $latency ms; ibroute/ibtracert avoid the link; 100% reachable"

# --- 3. kill -9 and restart -------------------------------------------------------------
ry_stop_railyardd KILL
ry_start_railyardd "$BIN" railyardd.yaml
ry_wait_for 60 "railyardd healthy again" health_ok
ry_assert_eq "$DRAIN_ID" "$(ry_api GET /api/v1/drains | body | jq -r '.drains[0].id')" "drain after kill -9"
grep -q "\[$PORT\]" policy.yaml || ry_fail "the policy file lost the drain"
ctl --json reroute --reason "after restart" --wait >reroute.json || ry_fail "railyardctl reroute --wait failed"
ry_snapshot restarted
verify_ok restarted
ry_assert_eq 0 "$(leaf_port_uses restarted $PORT)" "CA LIDs over the drained link after restart + reroute"
ry_pass "kill -9 + restart: drain $DRAIN_ID intact and still applied"

# --- 4. outside monitoring reports a link down ---------------------------------------------
out=$(ry_api POST /api/v1/events/link '{"id": "mon-e2e-1", "node": "leaf g001 r2", "port": 10, "state": "down", "reason": "BER"}')
ry_assert_eq 201 "$(tail -n1 <<<"$out")" "POST events/link"
ry_api GET "/api/v1/events?since=0&limit=1000" | body | jq -e '.events | any(.external_id == "mon-e2e-1" and .type == "link_down")' >/dev/null ||
  ry_fail "the link-down event is not listed"
ry_api GET "/api/v1/links?state=down" | body | jq -e '.count >= 1' >/dev/null || ry_fail "links?state=down is empty"
ry_pass "outside link-down event recorded and visible"

# --- 5. undrain: tables back ------------------------------------------------------------------
out=$(ry_api POST /api/v1/events/link '{"id": "mon-e2e-2", "node": "leaf g001 r2", "port": 10, "state": "up"}')
ry_assert_eq 201 "$(tail -n1 <<<"$out")" "POST events/link (up)"
ctl --json undrain "$DRAIN_ID" >undrain.json || ry_fail "railyardctl undrain failed"
latency=$(wait_reroute "$(jq -r .reroute.id undrain.json)")
ry_snapshot undrained
verify_ok undrained
((  $(leaf_port_uses undrained $PORT) > 0 )) || ry_fail "port $PORT carries nothing after the undrain"
ry_assert_eq 1 "$(max_shift_load undrained)" "rail-aligned shift max load after undrain"
ry_pass "undrained: applied in $latency ms; balanced again"
