#!/usr/bin/env bash
# Switch LIDs reachable on the simulated switches, in the real OpenSM with the
# plugin, on a fabric where the turn switch alone leaves pairs unreachable
# (3-level ROFT, 512 CAs, every leaf missing one uplink: the repair fills
# them, routing/unicast_engine/switch_repair.cpp). Checks, on what the
# switches hold (ibroute of every switch, read back):
#  - railyard verify: every switch LID reachable from every switch, every CA
#    pair reachable, the channel dependency graph with switch LIDs acyclic;
#  - the management diags work by LID: ibtracert between sampled spine and
#    core LIDs of different planes arrives at the destination, and perfquery
#    reads a core's counters by its LID.
#
# Usage (ctest does this): plugin_switch_lids_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm ibnetdiscover ibroute ibtracert perfquery jq
ry_plugin_tools "$BIN"
ry_tmpdir

"$RAILYARD" topo gen --servers 64 --rails 8 --levels 3 --radix 16 --remove-uplink-per-leaf 1 -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }
# The same fabric offline: the turn switch leaves entries the repair fills.
"$RAILYARD" route --topo f.net -o /dev/null --json 2>offline.json
ry_assert_eq true "$(jq '.switch_lids.repaired > 0 and .switch_lids.empty == 0' offline.json)" \
  "offline: the repair fills what the turn switch leaves, nothing stays empty"

printf 'log_level: info\n' >railyard-plugin.yaml
ry_start_ibsim f.net
ry_start_opensm --timeout 180 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_assert_eq railyard "$(ry_opensm_engine)" "engine that configured the switches"

# --- what the switches hold ------------------------------------------------------
ry_diag ibnetdiscover >disc.topo 2>ibnetdiscover.err || { cat ibnetdiscover.err >&2; ry_fail "ibnetdiscover failed"; }
: >ibroute.txt
while read -r lid; do
  ry_diag ibroute "$lid" >>ibroute.txt 2>>ibroute.err ||
    { cat ibroute.err >&2; ry_fail "ibroute $lid failed: the SM's port does not reach that switch LID"; }
done < <(sed -n 's/^Switch.* port 0 lid \([0-9][0-9]*\) .*/\1/p' disc.topo)
"$RAILYARD" verify --topo disc.topo --lfts ibroute.txt --json --no-congestion >verify.json 2>verify.err ||
  { cat verify.err >&2; ry_fail "railyard verify of the switches' tables failed"; }
ry_log "verify: $(jq -c '{switch_pairs, switch_pairs_reachable, pairs, reachable, acyclic: .credit_loops.with_switch_lids.acyclic}' verify.json)"
ry_assert_eq 25600 "$(jq .switch_pairs verify.json)" "switch pairs walked (160 x 160)"
ry_assert_eq true "$(jq '.switch_pairs == .switch_pairs_reachable' verify.json)" "every switch LID reachable from every switch"
ry_assert_eq true "$(jq '.pairs > 0 and .pairs == .reachable' verify.json)" "every CA pair reachable"
ry_assert_eq true "$(jq '.credit_loops.with_switch_lids.acyclic' verify.json)" "no credit loop, switch LIDs included"

# --- the diags by LID ------------------------------------------------------------
# Spines ("spine pPOD sPLANE": spine k of a pod is in plane k) and cores
# ("core pPLANE cK"). Pairs of different planes are those up*/down* cannot
# join.
awk '/^Switch/ && / port 0 lid / {
       match($0, /"(spine|core) p[0-9]+ [sc][0-9]+"/); if (!RSTART) next
       d = substr($0, RSTART + 1, RLENGTH - 2); split(d, w, " ")
       match($0, / lid [0-9]+ /); lid = substr($0, RSTART + 5, RLENGTH - 6)
       print lid, w[1], substr(w[1] == "core" ? w[2] : w[3], 2) + 0 }' disc.topo >upper.txt
((($(wc -l <upper.txt)) > 0)) || ry_fail "no spine or core LIDs found in disc.topo"
traced=0
while read -r slid skind splane && ((traced < 24)); do
  while read -r dlid dkind dplane; do
    [[ $splane != "$dplane" && $slid != "$dlid" ]] || continue
    ry_diag ibtracert "$slid" "$dlid" >tr.out 2>tr.err ||
      { cat tr.out tr.err >&2; ry_fail "ibtracert $slid ($skind plane $splane) -> $dlid ($dkind plane $dplane) failed"; }
    [[ $traced -gt 0 ]] || ry_log "ibtracert $slid -> $dlid: $(tail -n 1 tr.out)"
    grep -Eq "^To switch .* lid $dlid-$dlid " tr.out ||
      { cat tr.out >&2; ry_fail "ibtracert $slid -> $dlid did not arrive at LID $dlid"; }
    traced=$((traced + 1))
    break
  done < <(awk -v s="$splane" '$3 != s' upper.txt | sort -R --random-source=<(yes))
done < <(sort -R --random-source=<(yes 1) upper.txt)
ry_assert_eq 24 "$traced" "ibtracert by LID between planes"
core_lid=$(awk '$2 == "core" { print $1; exit }' upper.txt)
ry_diag perfquery "$core_lid" 1 >pq.out 2>pq.err || { cat pq.out pq.err >&2; ry_fail "perfquery $core_lid 1 failed"; }
grep -q "PortXmitData" pq.out || { cat pq.out >&2; ry_fail "perfquery $core_lid: no counters"; }
ry_pass "switch LIDs: every pair reachable on the switches; $traced ibtracert between planes and perfquery by LID work"
