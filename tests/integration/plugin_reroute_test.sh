#!/usr/bin/env bash
# railyard inside the real OpenSM reacts to the fabric and to the policy
# (issue 4, scenarios b and d):
#  b. a leaf uplink taken down in ibsim (console `Unlink`): OpenSM resweeps,
#     railyard reroutes; the tables read back with ibroute reach every CA pair
#     of the fabric as it now is, with no credit loop and nothing sent over the
#     dead port; `ReLink`: balanced again (every rail-aligned shift at most one
#     flow per link);
#  d. a link drained in the policy file takes effect on the next sweep (SIGHUP),
#     without restarting OpenSM: no CA route leaves the leaf over it.
#
# Usage (ctest does this): plugin_reroute_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

# 32 servers x 8 rails, radix 64: 8 leaves with CA ports 1-32 and uplinks 33-64.
"$RAILYARD" topo gen --servers 32 --rails 8 --radix 64 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
# Not the first leaf: ibsim attaches the SM and the diags there, and a spine
# that lost its link to that leaf is out of LID reach of it under up*/down*
# (switch-to-switch routes have no valleys; see docs/routing.md).
LEAF_DESC="leaf g000 r1"
LEAF=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$LEAF_DESC\".*/\1/p" f.net)
[[ -n "$LEAF" ]] || ry_fail "no record for '$LEAF_DESC' in f.net"
DEAD_PORT=33
DRAIN_PORT=34

: >policy.yaml
printf 'log_level: info\npolicy_file: %s/policy.yaml\n' "$RY_TMP" >railyard-plugin.yaml

ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 30

# wait_pass N: railyard's pass N is done and its tables are on the switches.
wait_pass() {
  ry_wait_log "railyard: pass $1: time " 60
  ry_wait_log "SUBNET UP" 60 "$RY_OPENSM_LOG" "$1"
  ry_assert_eq railyard "$(ry_opensm_engine)" "engine used after pass $1"
}


# verify_ok NAME [extra verify args]: every CA pair reachable, no credit loop.
verify_ok() {
  local name=$1 rc=0
  shift
  "$RAILYARD" verify --topo "$name.topo" --lfts "$name.ibroute" --json "$@" >"$name.verify.json" 2>"$name.verify.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    head -c 3000 "$name.verify.json" >&2
    cat "$name.verify.err" >&2
    ry_fail "$name: railyard verify exit $rc"
  fi
  python3 - "$name.verify.json" "$name" <<'PY' || ry_fail "$name: not every pair reachable, or a credit loop"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: {r['reachable']}/{r['pairs']} CA pairs reachable, credit loops: "
      f"CA routes {not r['credit_loops']['ca_routes']['acyclic']}, "
      f"with switch LIDs {not r['credit_loops']['with_switch_lids']['acyclic']}", file=sys.stderr)
assert r["pairs"] > 0 and r["reachable"] == r["pairs"]
assert r["credit_loops"]["ca_routes"]["acyclic"] and r["credit_loops"]["with_switch_lids"]["acyclic"]
PY
}

# leaf_port_uses NAME PORT: CA LIDs the leaf's table sends out of PORT.
leaf_port_uses() { ry_port_uses "$1" "$LEAF" "$2"; }

# --- b. link down, reroute, link up ---------------------------------------------
ry_snapshot before
verify_ok before --no-congestion
before_uses=$(leaf_port_uses before "$DEAD_PORT")
((before_uses > 0)) || ry_fail "the leaf sent nothing over port $DEAD_PORT before the failure"

ry_ibsim_cmd "Unlink \"$LEAF\"[$DEAD_PORT]"
wait_pass 2
ry_snapshot down
# The leaf's record in the rediscovered fabric no longer lists the dead port.
listed=$(awk -v leaf="\"$LEAF\"" -v p="[$DEAD_PORT]" '
  /^Switch/ { mine = index($0, leaf) > 0 } mine && index($0, p) == 1 { n++ } END { print n + 0 }' down.topo)
ry_assert_eq 0 "$listed" "port $DEAD_PORT of $LEAF_DESC in the rediscovered fabric"
verify_ok down --no-congestion
ry_assert_eq 0 "$(leaf_port_uses down "$DEAD_PORT")" "CA LIDs routed over the dead port"
ry_pass "link down: railyard rerouted (pass 2), every pair reachable, nothing over the dead port"

ry_ibsim_cmd "ReLink \"$LEAF\"[$DEAD_PORT]"
wait_pass 3
ry_snapshot up
verify_ok up --max-shifts 8 --permutations 1 --no-all-to-all
python3 - up.verify.json <<'PY' || ry_fail "not balanced again after ReLink"
import json, sys
r = json.load(open(sys.argv[1]))
shifts = next(p for p in r["congestion"] if p["pattern"] == "rail-aligned shifts")
print(f"after ReLink: rail-aligned shifts max {shifts['max_load']} (bound {shifts['lower_bound']})", file=sys.stderr)
assert shifts["max_load"] == 1
PY
ry_pass "link up: balanced again (pass 3)"

# --- d. a drain in the policy file, applied on the next sweep --------------------
up_uses=$(leaf_port_uses up "$DRAIN_PORT")
((up_uses > 0)) || ry_fail "the leaf sends nothing over port $DRAIN_PORT before the drain"
printf 'drains:\n  links: ["%s[%d]"]\n' "$LEAF_DESC" "$DRAIN_PORT" >policy.yaml
kill -HUP "$RY_OPENSM_PID"
wait_pass 4
ry_snapshot drained
verify_ok drained --no-congestion
ry_assert_eq 0 "$(leaf_port_uses drained "$DRAIN_PORT")" "CA LIDs routed over the drained link"
ry_pass "drain: pass 4 applied the policy without a restart; no CA route over the drained link"
