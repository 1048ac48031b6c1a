#!/usr/bin/env bash
# The fast path's port probe (sm_plugin/probe/port_probe.cpp) against the real
# ibsim, next to a running OpenSM: directed-route Get(PortInfo) of every port
# of a switch gives Active where the fabric file cables a port and Down where
# it does not; after an ibsim Unlink of one uplink that port reads Down (the
# others unchanged), after ReLink it is up again; a bad request gets an error
# line and the probe keeps answering; OpenSM keeps sweeping through it all
# (the probe's requester-only agent takes nothing from the SM).
#
# Usage (ctest does this): port_probe_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm smpquery
PROBE=$BIN/sm_plugin/railyard-port-probe
[[ -x "$PROBE" ]] || ry_fail "probe not built: $PROBE"
ry_tmpdir

# 4 servers x 8 rails on radix 16, two levels: leaves cable CAs on ports 1-4
# and spines on 9-16; ports 5-8 stay empty.
"$RAILYARD" topo gen --servers 4 --rails 8 --levels 2 --radix 16 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120

# The switch at directed route 0 (the node ibsim attaches clients to) and its
# record in the fabric file: the ports it cables.
DESC=$(ry_diag smpquery -D nodedesc 0 | sed -n 's/^Node Description:\.*//p')
[[ -n "$DESC" ]] || ry_fail "smpquery: no node description at route 0"
NODE=$(sed -n "s/^Switch[ \t]*\([0-9]*\)[ \t]*\"\(S-[0-9a-f]*\)\".*# \"$DESC\".*/\2 \1/p" f.net)
read -r SWITCH NPORTS <<<"$NODE"
[[ -n "$SWITCH" ]] || ry_fail "no switch record for '$DESC' in f.net"
CABLED=$(awk -v sw="\"$SWITCH\"" '/^Switch/ { mine = index($0, sw) > 0; next }
  mine && /^\[[0-9]+\]/ { match($0, /^\[[0-9]+\]/); print substr($0, 2, RLENGTH - 2) }
  /^$/ { mine = 0 }' f.net | sort -n | tr '\n' ' ')
ry_log "route 0 is $SWITCH ($DESC), $NPORTS ports, cabled: $CABLED"
UPLINK=$(echo "$CABLED" | tr ' ' '\n' | awk '$1 > 8' | head -1)
[[ -n "$UPLINK" ]] || ry_fail "no uplink (port > 8) on $SWITCH"

# The probe: requests through a fifo, answers appended to a file.
mkfifo probe.in
exec {PROBE_IN}<>probe.in
(cd "$RY_TMP" && IBSIM_SOCKNAME=$RY_SOCKNAME LD_PRELOAD=$RY_UMAD2SIM exec "$PROBE" --timeout-ms 200) \
  <probe.in >probe.out 2>probe.err &
PROBE_PID=$!
RY_CLIENT_PIDS+=("$PROBE_PID")
ry_wait_for 10 "the probe ready" grep -qs '^ready' probe.out

# ask ID LINE: sends a request and prints the answer line for ID.
ask() {
  local id=$1
  shift
  printf '%s\n' "$*" >&"$PROBE_IN"
  ry_wait_for 10 "probe answer $id" grep -qs "^$id " probe.out
  grep "^$id " probe.out | tail -1
}

ALL=$(seq 1 "$NPORTS" | tr '\n' ' ')
# state_of ANSWER PORT: the port's PortState in an answer line.
state_of() { tr ' ' '\n' <<<"$1" | tail -n +3 | awk -F: -v p="$2" '$1 == p { print $2 }'; }

A1=$(ask 1 "probe 1 0 0 $ALL")
ms=$(sed -n 's/.* ms=\([0-9.]*\)$/\1/p' <<<"$A1")
ry_log "probe of $NPORTS ports took ${ms} ms: $A1"
[[ "$A1" == "1 ok "* ]] || ry_fail "probe 1: $A1"
for p in $ALL; do
  if [[ " $CABLED " == *" $p "* ]]; then want=4; else want=1; fi
  ry_assert_eq "$want" "$(state_of "$A1" "$p")" "port $p state (cabled: $CABLED)"
done

# A bad request: an error line, and the probe answers the next one.
A2=$(ask 2 "probe 2 0 0,1,999 1")
[[ "$A2" == "2 error "* ]] || ry_fail "a bad route should be an error line: $A2"
A3=$(ask 3 "probe 3 zz 0 1")
[[ "$A3" == "3 error "* ]] || ry_fail "a bad M_Key should be an error line: $A3"
A3b=$(ask - "nonsense")
[[ "$A3b" == "- error "* ]] || ry_fail "a line that is no request should be an error line: $A3b"

sweeps=$(ry_log_count 'SUBNET UP')
ry_ibsim_cmd "Unlink \"$SWITCH\"[$UPLINK]"
A4=$(ask 4 "probe 4 0 0 $ALL")
ry_assert_eq 1 "$(state_of "$A4" "$UPLINK")" "port $UPLINK after Unlink"
for p in $ALL; do
  [[ "$p" == "$UPLINK" ]] && continue
  ry_assert_eq "$(state_of "$A1" "$p")" "$(state_of "$A4" "$p")" "port $p after the Unlink of $UPLINK"
done
# OpenSM still hears the trap and sweeps, with the probe running.
ry_wait_log 'SUBNET UP' 60 "$RY_OPENSM_LOG" $((sweeps + 1))

ry_ibsim_cmd "ReLink \"$SWITCH\"[$UPLINK]"
A5=$(ask 5 "probe 5 0 0 $UPLINK")
st=$(state_of "$A5" "$UPLINK")
[[ "$st" =~ ^[234]$ ]] || ry_fail "port $UPLINK after ReLink: state '$st' ($A5)"
_ry_alive "$PROBE_PID" || ry_fail "the probe died: $(cat probe.err)"
_ry_alive "$RY_OPENSM_PID" || ry_fail "OpenSM died"
ry_pass "port probe: states as cabled, Unlink/ReLink seen, ${ms} ms for $NPORTS ports, OpenSM unaffected"
