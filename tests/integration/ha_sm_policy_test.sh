#!/usr/bin/env bash
# SM takeover with the policy from the controller (issue 17, deliverables 1
# and 3, on one host): two OpenSMs on one ibsim fabric, each loading
# railyard's plugin (master priority 15, standby priority 1,
# sminfo_polling_timeout 1000, polling_retry_number 2: docs/ha.md), both
# connected to one railyardd (live) over TLS with a token. Each plugin has
# its own policy file, which nobody writes but the plugin itself, from the
# controller's `policy` lines.
#  1. Both plugins connect (TLS, token); the master's is *the* plugin.
#  2. A drain through the API: the master's fast path applies it; both SMs'
#     policy files become, byte for byte, the policy railyardd wrote.
#  3. kill -9 of the master: the standby becomes master, routes with
#     railyard from the policy file the controller gave it, and becomes the
#     controller's plugin. Its tables are byte-identical to the old master's:
#     ibroute of every switch, and the LFT digest of its routing_pass equals
#     the digest of the tables the old master left; the drain is in force.
#     Prints the takeover times (test's own clock, from the kill).
#
# Usage (ctest does this): ha_sm_policy_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq curl openssl python3
ry_plugin_tools "$BIN"
ry_tmpdir
T0=$SECONDS

"$RAILYARD" topo gen --servers 16 --rails 4 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
DRAIN_PORT=10  # radix 16: CA ports 1-8, uplinks 9-16
LEAF_REC=$(ry_switch_record f.net "$LEAF_DESC")
STANDBY_HOST=$(sed -n 's/^Ca.*# "\(.*\)".*/\1/p' f.net | tail -n 1)
[[ -n "$STANDBY_HOST" ]] || ry_fail "no CA in f.net"

# TLS: a CA, railyardd's certificate for 127.0.0.1, and the plugins' token.
bash "$SRC/tests/tools/make_test_certs.sh" "$RY_TMP/certs" || ry_fail "cannot make the test certificates"
printf 'plugin-token-%s\n' "$(openssl rand -hex 16)" >plugin.token
chmod 600 plugin.token
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat >railyardd.yaml <<CONF
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
database: state.db
fabric:
  source: live
  plugin_listen: 127.0.0.1:$PORT
  plugin_tls_cert: certs/server.crt
  plugin_tls_key: certs/server.key
  plugin_token_file: plugin.token
policy: {output_file: controller-policy.yaml}
limits: {reroute_timeout_s: 60}
log_level: debug
CONF
out=$("$BIN/railyardd" config check railyardd.yaml) || ry_fail "config check: $out"
ry_assert_contains "$out" "TLS on 127.0.0.1:$PORT" "config check summary"
export RY_TOKEN=operator-token-0123456789
body() { sed '$d'; }
plugin_conf() {  # NAME: a plugin config with its own policy file, NAME-policy.yaml
  cat >"$1-plugin.yaml" <<CONF
log_level: info
policy_file: $RY_TMP/$1-policy.yaml
controllers: [tls://127.0.0.1:$PORT]
controller_ca: $RY_TMP/certs/ca.crt
controller_token_file: $RY_TMP/plugin.token
port_probe: off
CONF
}
plugin_conf master
plugin_conf standby
HA_CONF=("sminfo_polling_timeout 1000" "polling_retry_number 2" "event_plugin_name osmrailyard"
         "routing_engine railyard")

# --- 1. two SMs, one railyardd over TLS -----------------------------------------------
ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net
conf_args=()
for line in "sm_priority 15" "${HA_CONF[@]}" "event_plugin_options $RY_TMP/master-plugin.yaml"; do
  conf_args+=(--conf "$line")
done
ry_start_opensm --timeout 120 "${conf_args[@]}"
ry_assert_eq railyard "$(ry_opensm_engine)" "the master's engine"
SDIR=$RY_TMP/standby
ry_start_standby_opensm "$SDIR" "$STANDBY_HOST" "sm_priority 1" "${HA_CONF[@]}" \
  "event_plugin_options $RY_TMP/standby-plugin.yaml"
ry_wait_log "Entering STANDBY state" 60 "$SDIR/opensm.log"
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
ry_wait_for 60 "railyardd healthy (the master's plugin connected, fabric received)" health_ok
both_connected() { (($(ry_log_count 'controller connected on tls://' "$SDIR/opensm.log") >= 1)); }
ry_wait_for 30 "the standby's plugin connected over TLS" both_connected
ry_assert_eq 1 "$(ry_log_count 'controller connected on tls://' "$RY_OPENSM_LOG")" "the master's plugin connections"
((RY_OPENSM_PID > 0)) || ry_fail "no master pid"
ry_pass "two SMs with railyard (priorities 15 and 1), both plugins connected to railyardd over TLS with the token"

# The drained port carries CA routes before the drain.
ry_snapshot before
uses=$(ry_port_uses before "$LEAF_REC" "$DRAIN_PORT")
((uses > 0)) || ry_fail "the port to drain carries no CA route before the drain: the test would prove nothing"

# --- 2. a drain through the API: every SM's policy file is the controller's ---------
ry_api POST /api/v1/drains "{\"target\":\"link\",\"node\":\"$LEAF_DESC\",\"port\":$DRAIN_PORT,\"reason\":\"ha test\"}" \
  >drain.out
[[ $(tail -n1 drain.out) == 20[01] ]] || ry_fail "drain refused: $(cat drain.out)"
RID=$(body <drain.out | jq -r .reroute.id)
applied() { [[ $(ry_api GET "/api/v1/reroutes/$RID" | body | jq -r .status) == applied ]]; }
ry_wait_for 60 "the drain's reroute applied" applied
grep -q "\[$DRAIN_PORT\]'" controller-policy.yaml || ry_fail "the controller's policy file has no drain: $(cat controller-policy.yaml)"
same_policies() { cmp -s controller-policy.yaml master-policy.yaml && cmp -s controller-policy.yaml standby-policy.yaml; }
ry_wait_for 15 "both SMs' policy files equal to the controller's" same_policies
ry_snapshot drained
ry_assert_eq 0 "$(ry_port_uses drained "$LEAF_REC" "$DRAIN_PORT")" "CA routes on the drained port after the drain"
ry_verify_ok "$RAILYARD" drained
ry_pass "drain applied by the master; both policy files are the controller's policy, byte for byte"

# The LFT digest of the tables in place, as the old master last reported it
# (its ucast_routing_done after the fast path's push).
events() { ry_api GET "/api/v1/events?since=0&limit=1000" | body; }
events >events.before.json
OLD_DIGEST=$(jq -r '[.events[] | select(.type == "ucast_routing_done")] | last | .data | .digests.lfts' events.before.json)
[[ $OLD_DIGEST == 0x* ]] || ry_fail "no LFT digest from the old master: $OLD_DIGEST"

# --- 3. kill -9 of the master -------------------------------------------------------
start=$(date +%s%N)
kill -KILL "$RY_OPENSM_PID"
wait "$RY_OPENSM_PID" 2>/dev/null || true
RY_OPENSM_PID=""
ry_wait_log "Entering MASTER state" 30 "$SDIR/opensm.log"
master_ms=$((($(date +%s%N) - start) / 1000000))
ry_wait_log "SUBNET UP" 60 "$SDIR/opensm.log"
up_ms=$((($(date +%s%N) - start) / 1000000))
passes=$(ry_log_count 'railyard tables configured on all switches' "$SDIR/opensm.log")
((passes >= 1)) || ry_fail "the new master did not route with railyard: $(grep -m1 'tables configured' "$SDIR/opensm.log")"
grep -q "policy loaded from $RY_TMP/standby-policy.yaml" "$SDIR/opensm.log" ||
  ry_fail "the new master did not route with the policy file the controller wrote"
# The controller follows: the standby's plugin is now *the* plugin and its
# routing_pass reaches railyardd.
new_pass() {
  events >events.after.json
  NEW_DIGEST=$(jq -r --argjson n "$(jq '.events | length' events.before.json)" \
    '[.events[$n:][] | select(.type == "routing_pass")] | last | .data | .digests.lfts // empty' \
    events.after.json)
  [[ $NEW_DIGEST == 0x* ]]
}
ry_wait_for 30 "the new master's routing_pass at railyardd" new_pass
ctl_ms=$((($(date +%s%N) - start) / 1000000))
ry_log "takeover: kill -9 -> standby MASTER in ${master_ms} ms, SUBNET UP in ${up_ms} ms, its routing_pass at railyardd by ${ctl_ms} ms"

ry_assert_eq "$OLD_DIGEST" "$NEW_DIGEST" "LFT digest: the old master's tables vs the new master's routing pass"
ry_snapshot after
if ! cmp -s drained.ibroute after.ibroute; then
  diff drained.ibroute after.ibroute | head -n 20 >&2
  ry_fail "the new master's tables differ from the old master's"
fi
ry_assert_eq 0 "$(ry_port_uses after "$LEAF_REC" "$DRAIN_PORT")" "CA routes on the drained port after the takeover"
ry_verify_ok "$RAILYARD" after
ry_pass "takeover in ${up_ms} ms (MASTER after ${master_ms} ms): tables byte-identical (digest $NEW_DIGEST), the drain holds ($((SECONDS - T0)) s)"
