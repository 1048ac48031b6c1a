#!/usr/bin/env bash
# Automatic isolation end to end: ibsim (console) + the real OpenSM + railyard's
# plugin + railyardd (live) with isolation on (short windows: 3 downs in 60 s,
# clean 8 s, cap max(2 links, 0%)).
#  1. ibsim flaps one spine link (Unlink/ReLink, 3 times): railyardd drains it
#     by itself (created_by auto, reason "auto: flapping"), the reroute is
#     applied and ibroute shows no CA route over the port; the decision is in
#     the audit log with actor auto.
#  2. It stops flapping: after the clean period the drain is gone (undrained by
#     auto) and the port carries routes again.
#  3. A storm: three other links flap together. Two are isolated (the cap), the
#     third trips the breaker: GET /isolation says tripped, nothing more is
#     drained, the isolated ones are not restored while tripped.
#     `railyardctl isolation reset` clears it and automation resumes (the two
#     are restored once clean).
#
# Usage (ctest does this): auto_isolation_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute curl jq sqlite3
ry_plugin_tools "$BIN"
[[ -x "$BIN/railyardctl" ]] || ry_fail "railyardctl not built: $BIN/railyardctl"
ry_tmpdir
T0=$SECONDS

"$RAILYARD" topo gen --servers 16 --rails 4 --radix 16 -o f.net 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
# radix 16: CA ports 1-8, uplinks 9-16.
LEAF_DESC="leaf g000 r1"
LEAF=$(ry_switch_record f.net "$LEAF_DESC")
PORT=9
STORM_DESCS=("leaf g000 r0" "leaf g000 r2" "leaf g000 r3")
STORM_PORT=10

SOCK=$RY_TMP/p.sock
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\n' "$RY_TMP" "$SOCK" >railyard-plugin.yaml
cat >railyardd.yaml <<CONF
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
database: state.db
fabric: {source: live, plugin_socket: $SOCK}
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 60, reroutes_per_minute: 60}
isolation: {enabled: true, flaps: 3, window_s: 60, clean_s: 8, max_links: 2, max_percent: 0}
log_level: info
CONF
export RY_TOKEN=operator-token-0123456789 RAILYARD_TOKEN=operator-token-0123456789
ctl() { "$BIN/railyardctl" --url "$RY_URL" "$@"; }
body() { sed '$d'; }
iso() { ry_api GET /api/v1/isolation | body; }

ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok
ry_assert_eq true "$(iso | jq .enabled)" "isolation enabled"
ry_assert_eq 2 "$(iso | jq .cap)" "the cap: max(2 links, 0%)"

# key_of DESC PORT: the link's canonical key (events, drains and /isolation name it so).
key_of() {
  ry_api GET /api/v1/links | body | jq -r --arg d "$1" --argjson p "$2" \
    '[.links[] | select((.a.node == $d and .a.port == $p) or (.b.node == $d and .b.port == $p))][0].link // empty'
}
# events_of TYPE KEY: link events of that type for the link.
events_of() {
  ry_api GET "/api/v1/events?since=0&limit=1000" | body |
    jq --arg t "$1" --arg k "$2" '[.events[] | select(.type == $t and .data.link == $k)] | length'
}
auto_drains() { ry_api GET /api/v1/drains | body | jq '[.drains[] | select(.created_by == "auto")]'; }
reroutes_settled() { [[ $(ry_api GET /api/v1/reroutes | body | jq '[.reroutes[] | select(.status == "pending" or .status == "queued")] | length') == 0 ]]; }
# flap_round PORT N RECORD... : Unlink then ReLink port PORT of each switch record, waiting
# for railyardd to have seen down/up number N of each link in KEYS (OpenSM
# sweeps on the trap).
flap_round() {
  local port=$1 want=$2 rec d
  shift 2
  for rec in "$@"; do ry_ibsim_cmd "Unlink \"$rec\"[$port]"; done
  for d in "${KEYS[@]}"; do ry_wait_for 30 "link_down #$want of $d" down_seen "$d" "$want"; done
  for rec in "$@"; do ry_ibsim_cmd "ReLink \"$rec\"[$port]"; done
  for d in "${KEYS[@]}"; do ry_wait_for 30 "link_up #$want of $d" up_seen "$d" "$want"; done
}
down_seen() { (($(events_of link_down "$1") >= $2)); }
up_seen() { (($(events_of link_up "$1") >= $2)); }

ry_snapshot before
(($(ry_port_uses before "$LEAF" $PORT) > 0)) || ry_fail "$LEAF_DESC sends nothing over port $PORT before the flaps"

# --- 1. one link flaps: isolated ------------------------------------------------------
KEY=$(key_of "$LEAF_DESC" $PORT)
[[ -n "$KEY" ]] || ry_fail "no link $LEAF_DESC[$PORT] in GET /links"
KEYS=("$KEY")
for i in 1 2 3; do flap_round $PORT $i "$LEAF"; done
has_auto_drain() { [[ $(auto_drains | jq 'length') -ge 1 ]]; }
ry_wait_for 20 "a drain by auto" has_auto_drain
auto_drains >drain.json
ry_assert_eq 1 "$(jq length drain.json)" "drains by auto after one link flapped 3 times"
ry_assert_eq "auto: flapping" "$(jq -r '.[0].reason' drain.json)" "the drain's reason"
jq -e --arg k "$KEY" '.[0].key == $k' drain.json >/dev/null ||
  ry_fail "the auto drain is not of $LEAF_DESC[$PORT]: $(jq -c '.[0]' drain.json)"
DRAIN_ID=$(jq -r '.[0].id' drain.json)
ry_wait_for 60 "the isolation's reroute applied" reroutes_settled
ry_snapshot isolated
ry_assert_eq 0 "$(ry_port_uses isolated "$LEAF" $PORT)" "CA routes over the isolated link"
audit=$(sqlite3 state.db "select count(*) from audit where actor = 'auto' and action like 'isolation: isolate %'")
((audit >= 1)) || ry_fail "no audit record by auto for the isolation"
ry_pass "flapping link isolated by auto (drain $DRAIN_ID, auto: flapping); ibroute avoids it; audited"

# --- 2. it stops flapping: restored after the clean period ------------------------------
no_auto_drain() { [[ $(auto_drains | jq 'length') -eq 0 ]]; }
ry_wait_for 30 "the clean link restored" no_auto_drain
ry_wait_for 60 "the restore's reroute applied" reroutes_settled
ry_snapshot restored
(($(ry_port_uses restored "$LEAF" $PORT) > 0)) || ry_fail "port $PORT carries nothing after the restore"
removed_by=$(sqlite3 state.db "select removed_by from drains where id = $DRAIN_ID")
ry_assert_eq auto "$removed_by" "who removed the drain"
ry_pass "clean for 8 s: restored by auto; the port carries routes again"

# --- 3. a storm trips the breaker -----------------------------------------------------------
RECS=() KEYS=()
for d in "${STORM_DESCS[@]}"; do
  RECS+=("$(ry_switch_record f.net "$d")")
  KEYS+=("$(key_of "$d" $STORM_PORT)")
done
for i in 1 2 3; do flap_round $STORM_PORT $i "${RECS[@]}"; done
tripped() { [[ $(iso | jq .breaker.tripped) == true ]]; }
ry_wait_for 20 "the breaker tripped" tripped
two_drains() { [[ $(auto_drains | jq length) -ge 2 ]]; }
ry_wait_for 20 "the two links decided before the trip drained" two_drains
ry_assert_eq 2 "$(auto_drains | jq length)" "links isolated when the breaker tripped (the cap)"
ctl isolation status >status.txt || ry_fail "railyardctl isolation status failed"
ry_assert_file_contains status.txt "breaker TRIPPED" "railyardctl isolation status"
ctl --json isolation status | jq -e '.breaker.tripped and (.isolated | length) == 2' >/dev/null ||
  ry_fail "railyardctl --json isolation status: $(ctl --json isolation status)"
sleep 9  # past the clean period: while tripped nothing is restored
ry_assert_eq 2 "$(auto_drains | jq length)" "auto drains while tripped, past the clean period"
ry_pass "storm: 2 isolated (the cap), the breaker tripped, automation stopped"

ctl isolation reset >reset.txt || ry_fail "railyardctl isolation reset failed"
ry_assert_file_contains reset.txt "breaker reset" "railyardctl isolation reset"
ry_assert_eq false "$(iso | jq .breaker.tripped)" "breaker after reset"
ry_assert_eq ops "$(iso | jq -r .breaker.reset_by)" "who reset it"
ry_wait_for 30 "automation resumed: the clean links restored" no_auto_drain
ry_pass "reset by ops: automation resumed, the storm's links restored once clean"

# --- 4. the exclude list over REST/railyardctl ------------------------------------------------
ctl isolation exclude "$KEY" --reason "vendor RMA" --expires +3600 >/dev/null || ry_fail "railyardctl isolation exclude failed"
ctl --json isolation status | jq -e --arg k "$KEY" '.excluded | length == 1 and .[0].target == $k and .[0].by == "ops" and .[0].expires_at > now' >/dev/null ||
  ry_fail "exclude list: $(ctl --json isolation status | jq -c .excluded)"
ry_run_expect_rc 2 "$BIN/railyardctl" --url "$RY_URL" isolation exclude "leaf g000 r1"
ctl isolation unexclude "$KEY" >/dev/null || ry_fail "railyardctl isolation unexclude failed"
ry_assert_eq 0 "$(iso | jq '.excluded | length')" "exclude list after unexclude"
ry_pass "exclude list: added with expiry by ops, a bad target refused (400 -> exit 2), removed"
ry_log "auto_isolation_test: $((SECONDS - T0)) s"
