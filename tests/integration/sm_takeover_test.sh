#!/usr/bin/env bash
# An SM takeover keeps the tables (issue 17, deliverable 1, on one host): two
# OpenSMs on one ibsim fabric, each loading railyard's plugin with the same
# policy (a drained leaf uplink), master priority 15 and standby priority 1,
# both with sminfo_polling_timeout 1000 and polling_retry_number 2 (the
# settings docs/ha.md recommends). kill -9 of the master: the standby becomes
# master, routes with railyard, and the switches' tables afterwards are
# exactly those the old master left (ibroute of every switch, compared byte
# for byte): no entry moved, so no pair was black-holed by the takeover; the
# drain is still in force (no CA route on the drained port) and `railyard
# verify` finds every pair reachable without a credit loop. Prints the
# takeover time (kill -> the new master's SUBNET UP), measured with the
# test's own clock.
#
# Usage (ctest does this): sm_takeover_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute jq
ry_plugin_tools "$BIN"
ry_tmpdir

"$RAILYARD" topo gen --servers 16 --rails 4 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
LEAF_DESC="leaf g000 r1"
DRAIN_PORT=10  # radix 16: CA ports 1-8, uplinks 9-16
LEAF_REC=$(ry_switch_record f.net "$LEAF_DESC")
# The standby's port: the last CA of the file (the master and the diags get the first).
STANDBY_HOST=$(sed -n 's/^Ca.*# "\(.*\)".*/\1/p' f.net | tail -n 1)
[[ -n "$STANDBY_HOST" ]] || ry_fail "no CA in f.net"

# One policy for both plugins (on separate hosts each would have its copy).
printf 'drains:\n  links: ["%s[%d]"]\n' "$LEAF_DESC" "$DRAIN_PORT" >policy.yaml
printf 'log_level: info\npolicy_file: %s/policy.yaml\n' "$RY_TMP" >plugin.yaml
HA_CONF=("sminfo_polling_timeout 1000" "polling_retry_number 2" "event_plugin_name osmrailyard"
         "event_plugin_options $RY_TMP/plugin.yaml" "routing_engine railyard")

ry_start_ibsim f.net
conf_args=()
for line in "sm_priority 15" "${HA_CONF[@]}"; do conf_args+=(--conf "$line"); done
ry_start_opensm --timeout 120 "${conf_args[@]}"
ry_assert_eq railyard "$(ry_opensm_engine)" "the master's engine"
SDIR=$RY_TMP/standby
ry_start_standby_opensm "$SDIR" "$STANDBY_HOST" "sm_priority 1" "${HA_CONF[@]}"
ry_wait_log "Entering STANDBY state" 60 "$SDIR/opensm.log"
ry_pass "two SMs with railyard: master (priority 15), standby (priority 1, on '$STANDBY_HOST')"

ry_snapshot before
ry_assert_eq 0 "$(ry_port_uses before "$LEAF_REC" "$DRAIN_PORT")" "CA routes on the drained port before"
ry_verify_ok "$RAILYARD" before

# kill -9: no goodbye to the standby, which notices by its SMInfo polling.
start=$(date +%s%N)
kill -KILL "$RY_OPENSM_PID"
wait "$RY_OPENSM_PID" 2>/dev/null || true
RY_OPENSM_PID=""
ry_wait_log "Entering MASTER state" 30 "$SDIR/opensm.log"
master_ms=$((($(date +%s%N) - start) / 1000000))
ry_wait_log "SUBNET UP" 60 "$SDIR/opensm.log"
up_ms=$((($(date +%s%N) - start) / 1000000))
ry_log "takeover: kill -9 -> standby MASTER in ${master_ms} ms, SUBNET UP in ${up_ms} ms"
passes=$(ry_log_count 'railyard tables configured on all switches' "$SDIR/opensm.log")
((passes >= 1)) || ry_fail "the new master did not route with railyard: $(grep -m1 'tables configured' "$SDIR/opensm.log")"

ry_snapshot after
if ! cmp -s before.ibroute after.ibroute; then
  diff before.ibroute after.ibroute | head -n 20 >&2
  ry_fail "the new master's tables differ from the old master's"
fi
ry_assert_eq 0 "$(ry_port_uses after "$LEAF_REC" "$DRAIN_PORT")" "CA routes on the drained port after"
ry_verify_ok "$RAILYARD" after
ry_pass "takeover in ${up_ms} ms (MASTER after ${master_ms} ms): the new master's tables are the old master's, byte for byte; the drain holds"
