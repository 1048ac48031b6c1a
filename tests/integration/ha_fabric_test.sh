#!/usr/bin/env bash
# The whole of issue 17 on one host: 3 etcd members + 3 railyardd (live, each
# with its own API port, plugin TLS port and folder) + 2 OpenSMs with the
# plugin on ibsim, every plugin given the three controllers' addresses.
#  1. One railyardd leads; both plugins end up connected to it (the followers
#     answer them not_leader); drains through the API follow the leader.
#  2. kill -9 of the railyardd leader: a new leader within 5 s (test's own
#     clock), the plugins reconnect to it (its /health turns 200: the master's
#     plugin and its fabric are there), more drains are acknowledged, and
#     every acknowledged drain is present exactly once on both live members.
#     Both SMs' policy files are the new leader's policy, with every drain.
#     A leaf uplink goes down while no railyardd leads: the master's plugin
#     keeps the events (trap 128 among them) and the new leader records them,
#     none dropped; the link comes back before the next drains.
#  3. kill -9 of the OpenSM master: the standby routes with the drains in
#     force, its tables byte-identical to the old master's (ibroute of every
#     switch), no CA route on any drained port, `railyard verify` clean.
#
# Usage (ctest does this): ha_fabric_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
HA_BIN=$BIN
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
# shellcheck source=ha_lib.sh
source "$SRC/tests/integration/ha_lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq curl openssl python3 etcd etcdctl
ry_plugin_tools "$BIN"
ry_tmpdir
T0=$SECONDS
ha_setup
read -r -a PP <<<"$(python3 -c '
import socket
ss=[socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"

"$RAILYARD" topo gen --servers 16 --rails 4 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
# Leaf uplinks to drain (radix 16: CA ports 1-8, uplinks 9-16): two before
# the controller's failover, two after.
DRAINS=("leaf g000 r1:10" "leaf g001 r2:11" "leaf g000 r3:12" "leaf g001 r0:13")
records=()
for d in "${DRAINS[@]}"; do records+=("$(ry_switch_record f.net "${d%:*}")"); done
# The uplink that goes down while no railyardd leads (drained by nobody).
GAP_LEAF=$(ry_switch_record f.net "leaf g001 r3")
GAP_PORT=14
# A drained link as the policy names it: '0x<switch guid>[port]'.
policy_link() { printf "'0x%016x[%s]'" "0x${records[$1]#S-}" "${DRAINS[$1]##*:}"; }
STANDBY_HOST=$(sed -n 's/^Ca.*# "\(.*\)".*/\1/p' f.net | tail -n 1)
[[ -n "$STANDBY_HOST" ]] || ry_fail "no CA in f.net"

bash "$SRC/tests/tools/make_test_certs.sh" "$RY_TMP/certs" || ry_fail "cannot make the test certificates"
printf 'plugin-token-%s\n' "$(openssl rand -hex 16)" >plugin.token
chmod 600 plugin.token

# --- 3 etcd + 3 railyardd (live) ------------------------------------------------------
ha_start_etcd_cluster
for i in 0 1 2; do
  mkdir -p "ry$i"
  cat >"ry$i/railyardd.yaml" <<CONF
listen: {address: 127.0.0.1, port: ${HA_API[$i]}}
tokens: [{name: ops, role: operator, token: "$HA_TOKEN"}]
database: state.db
fabric:
  source: live
  plugin_listen: 127.0.0.1:${PP[$i]}
  plugin_tls_cert: $RY_TMP/certs/server.crt
  plugin_tls_key: $RY_TMP/certs/server.key
  plugin_token_file: $RY_TMP/plugin.token
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 60}
ha:
  etcd: [$HA_ETCD_URLS]
  member: m$i
  advertise_api: http://127.0.0.1:${HA_API[$i]}
  advertise_plugin: tls://127.0.0.1:${PP[$i]}
  lease_ttl_s: 3
CONF
  ha_start_railyardd "$i"
done
has_leader() { [[ -n $(ha_leader) ]]; }
ry_wait_for 30 "a railyardd leader" has_leader
L=$(ha_leader)
ry_log "railyardd m$L leads"

# --- 2 OpenSMs, each plugin given the three controllers ---------------------------------
plugin_conf() {  # NAME
  cat >"$1-plugin.yaml" <<CONF
log_level: info
policy_file: $RY_TMP/$1-policy.yaml
controllers: [tls://127.0.0.1:${PP[0]}, tls://127.0.0.1:${PP[1]}, tls://127.0.0.1:${PP[2]}]
controller_ca: $RY_TMP/certs/ca.crt
controller_token_file: $RY_TMP/plugin.token
port_probe: off
CONF
}
plugin_conf master
plugin_conf standby
HA_CONF=("sminfo_polling_timeout 1000" "polling_retry_number 2" "event_plugin_name osmrailyard"
         "routing_engine railyard")
ry_start_ibsim f.net --console
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
healthy() { [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$(ha_url "$1")/api/v1/health") == 200 ]]; }
ry_wait_for 60 "the leader m$L healthy (the master's plugin and its fabric)" healthy "$L"
on_leader() { (($(ry_log_count "controller connected on tls://127.0.0.1:${PP[$L]}" "$SDIR/opensm.log") >= 1)); }
ry_wait_for 30 "the standby's plugin connected to the leader" on_leader
ry_pass "3 etcd, 3 railyardd (m$L leads), 2 OpenSMs whose plugins found the leader among three addresses"

body_of() {  # "NODE:PORT"
  printf '{"target":"link","node":"%s","port":%s,"reason":"ha fabric"}' "${1%:*}" "${1##*:}"
}
: >acked.txt
drain() {  # INDEX
  local res
  res=$(ha_drain "fabric-$1" "$(body_of "${DRAINS[$1]}")" 60)
  [[ -n "$res" ]] || ry_fail "drain ${DRAINS[$1]} not acknowledged within 60 s"
  echo "$1 $res" >>acked.txt
}
drain 0
drain 1

# --- kill -9 of the railyardd leader ----------------------------------------------------
failed_before=$(ry_log_count 'read failed' "$RY_OPENSM_LOG")
kill_ms=$(ha_now_ms)
ha_kill_leader_and_wait "$L" 15000 ry_ibsim_cmd "Unlink \"$GAP_LEAF\"[$GAP_PORT]"
new=$HA_NEW takeover_ms=$HA_TAKEOVER_MS
((takeover_ms < 5000)) || ry_fail "railyardd takeover took ${takeover_ms} ms (>= 5 s)"
ry_wait_for 30 "the new leader m$new healthy (the master's plugin reconnected with its fabric)" healthy "$new"
plugin_ms=$(($(ha_now_ms) - kill_ms))
# A connection m$new answered not_leader before it led (the standby's plugin
# cycles through the addresses during the election) is no reconnection:
# one that was not answered so is.
reconnected() {
  local to="tls://127.0.0.1:${PP[$new]}"
  (($(ry_log_count "controller connected on $to" "$SDIR/opensm.log") >
    $(ry_log_count "controller $to is not the leader" "$SDIR/opensm.log")))
}
ry_wait_for 30 "the standby's plugin reconnected to m$new" reconnected
# A follower says not_leader and closes: the plugin reads where the leader is
# (not a reset, not an end it stops at); only the killed leader's own end
# may be a failed read.
failed=$(($(ry_log_count 'read failed' "$RY_OPENSM_LOG") - failed_before))
((failed <= 1)) || ry_fail "the master's plugin had $failed failed reads after the kill (followers must be heard saying not_leader)"
ry_log "railyardd: kill -9 of m$L -> m$new leads after ${takeover_ms} ms, the master's plugin with it after ${plugin_ms} ms"
# The new leader gives the plugins the replicated policy (drains 0 and 1),
# not the one it started with: no SM may route without them, not even briefly.
same_policies() {
  cmp -s "ry$new/policy.yaml" master-policy.yaml && cmp -s "ry$new/policy.yaml" standby-policy.yaml
}
ry_wait_for 10 "both SMs' policy files equal to m$new's after the failover" same_policies
for k in 0 1; do
  grep -qF "$(policy_link "$k")" master-policy.yaml ||
    ry_fail "after the failover the SMs' policy lacks ${DRAINS[$k]}: $(cat master-policy.yaml)"
done
# The events of the link that went down after the kill reached the new
# leader: the master's plugin kept them and sent them again after its hello.
gap_trap() {
  ha_req GET "$(ha_url "$new")" "/api/v1/events?since=0&limit=1000" | sed '$d' |
    jq -e --argjson t "$kill_ms" '[.events[] | select(.source == "plugin" and .type == "trap" and
      .data.trap_num == 128 and .time * 1000 >= $t)] | length > 0' >/dev/null
}
ry_wait_for 20 "the trap raised while no railyardd led, on m$new" gap_trap
metric() { awk -v n="$1" '$1 == n {print $2}' <<<"$metrics"; }
# Both plugins' connections, within 20 s: the standby's plugin backs off a
# second after a round of not_leader answers, so it may still be on its way.
deadline=$((SECONDS + 20))
while metrics=$(ha_req GET "$(ha_url "$new")" /api/v1/metrics); [[ $(metric railyard_plugin_link_connections) != 2 ]]; do
  ((SECONDS < deadline)) || break
  sleep 0.2
done
ry_assert_eq 2 "$(metric railyard_plugin_link_connections)" "plugin connections on m$new (master and standby)"
ry_assert_eq 0 "$(metric railyard_plugin_events_dropped_total)" "plugin events dropped, as m$new counts them"
ry_assert_eq 0 "$(metric railyard_plugin_peers_refused_total)" "plugin peers refused by m$new"
ry_ibsim_cmd "ReLink \"$GAP_LEAF\"[$GAP_PORT]"
ry_pass "the uplink that went down while no railyardd led: its trap recorded by m$new, 0 events dropped"
drain 2
drain 3

# Every acknowledged drain exactly once on each live member.
lseq=$(ha_health "$new" | jq -r .ha.applied_seq)
for i in 0 1 2; do
  [[ $i == "$L" ]] && continue
  ry_wait_for 10 "m$i at log entry $lseq" \
    bash -c "[[ \$(curl -s $(ha_url "$i")/api/v1/health | jq -r .ha.applied_seq) -ge $lseq ]]"
  drains=$(ha_req GET "$(ha_url "$i")" /api/v1/drains | sed '$d')
  while read -r _idx id _att; do
    ry_assert_eq 1 "$(jq --argjson id "$id" '[.drains[] | select(.id == $id)] | length' <<<"$drains")" "drain $id on m$i"
  done <acked.txt
  ry_assert_eq 4 "$(jq '[.drains[] | select(.reason == "ha fabric")] | length' <<<"$drains")" "drains on m$i"
done
ry_pass "4 drains acknowledged (2 before, 2 after the failover), each exactly once on both live members"

# Both SMs route with the new leader's policy, every drain in it.
ry_wait_for 30 "both SMs' policy files equal to m$new's" same_policies
for k in "${!DRAINS[@]}"; do
  grep -qF "$(policy_link "$k")" master-policy.yaml || ry_fail "the SMs' policy lacks ${DRAINS[$k]}: $(cat master-policy.yaml)"
done
all_drained() {
  ry_snapshot drained
  local k
  for k in "${!DRAINS[@]}"; do
    (($(ry_port_uses drained "${records[$k]}" "${DRAINS[$k]##*:}") == 0)) || return 1
  done
}
ry_wait_for 60 "no CA route on the 4 drained ports" all_drained
ry_verify_ok "$RAILYARD" drained
ry_pass "both policy files are m$new's policy with the 4 drains; the tables carry them"

# --- kill -9 of the OpenSM master ------------------------------------------------------
start=$(date +%s%N)
kill -KILL "$RY_OPENSM_PID"
wait "$RY_OPENSM_PID" 2>/dev/null || true
RY_OPENSM_PID=""
ry_wait_log "Entering MASTER state" 30 "$SDIR/opensm.log"
ry_wait_log "SUBNET UP" 60 "$SDIR/opensm.log"
up_ms=$((($(date +%s%N) - start) / 1000000))
passes=$(ry_log_count 'railyard tables configured on all switches' "$SDIR/opensm.log")
((passes >= 1)) || ry_fail "the new master did not route with railyard"
ry_snapshot after
if ! cmp -s drained.ibroute after.ibroute; then
  diff drained.ibroute after.ibroute | head -n 20 >&2
  ry_fail "the new OpenSM master's tables differ from the old master's"
fi
for k in "${!DRAINS[@]}"; do
  ry_assert_eq 0 "$(ry_port_uses after "${records[$k]}" "${DRAINS[$k]##*:}")" "CA routes on ${DRAINS[$k]} after"
done
ry_verify_ok "$RAILYARD" after
ry_pass "OpenSM takeover in ${up_ms} ms: tables byte-identical, the 4 drains in force ($((SECONDS - T0)) s in all)"
