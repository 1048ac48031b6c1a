#!/usr/bin/env bash
# railyard inside the real OpenSM: libosmrailyard.so is loaded with
# `event_plugin_name osmrailyard`, selected with `routing_engine railyard`, and
# routes a generated 2-level ROFT simulated by ibsim. Checks:
#  - OpenSM's log shows railyard as the engine used, with exactly one
#    "building routing" line per pass (a fallback would add a second one) and
#    the plugin's own summary (fabric size, time per stage);
#  - the tables read back from the switches with ibroute reach every CA pair
#    without credit loops (railyard verify);
#  - they equal what `railyard route` computes offline from ibnetdiscover's
#    view of the same fabric (railyard lfts diff): one engine, two shells.
#
# Usage (ctest does this): plugin_route_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
# Knobs: PR_SERVERS, PR_RAILS, PR_RADIX (fabric), PR_LMC (OpenSM's lmc; with 2,
# every CA port has 4 LIDs and the same checks hold).
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

SERVERS=${PR_SERVERS:-32}
RAILS=${PR_RAILS:-8}
RADIX=${PR_RADIX:-64}
LMC=${PR_LMC:-0}  # OpenSM's lmc: each CA port answers to 2^LMC LIDs

ry_require_tools ibsim opensm ibnetdiscover ibroute
PLUGIN_DIR=$BIN/sm_plugin
[[ -f "$PLUGIN_DIR/libosmrailyard.so" ]] || ry_fail "plugin not built: $PLUGIN_DIR/libosmrailyard.so"
export LD_LIBRARY_PATH=$PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$RAILYARD" topo gen --servers "$SERVERS" --rails "$RAILS" --radix "$RADIX" -o f.net 2>gen.err ||
  { cat gen.err >&2; ry_fail "topo gen failed"; }

# Per-module logging puts osm_ucast_mgr.c's VERBOSE "building routing with
# '<engine>'" lines in the log: one per engine tried.
echo "osm_ucast_mgr.c 0x07" >per_module_logging.conf
printf 'log_level: info\n' >railyard-plugin.yaml

ry_start_ibsim f.net
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard" \
  --conf "lmc $LMC" \
  --conf "per_module_logging_file $RY_TMP/per_module_logging.conf"

# --- railyard was the engine, and not a fallback ---------------------------
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: routing engine 'railyard' registered" "plugin registration"
ry_assert_eq railyard "$(ry_opensm_engine)" "engine that configured the switches"
# Every engine OpenSM tried is one "building routing with '<engine>'" line: all
# must be railyard's (a fallback adds one for another engine). Usually there is
# exactly one pass; a spontaneous second heavy sweep would add another railyard line.
building=$(ry_log_count "building routing with '")
((building >= 1)) || ry_fail "no 'building routing' line: per-module logging not in effect"
ry_assert_eq "$building" "$(ry_log_count "building routing with 'railyard'")" "'building routing' lines that are railyard's"
ry_assert_eq "$building" "$(ry_log_count "railyard: pass [0-9]+: time ")" "railyard passes completed"
ry_assert_eq 0 "$(ry_log_count "cannot build fwd tables|refused, OpenSM falls back")" "refusals"
cas=$((SERVERS * RAILS))
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: engine railyard routed [0-9]+ switches, $cas CA ports" "pass summary"
ry_assert_file_contains "$RY_OPENSM_LOG" "railyard: pass 1: unreachable CA pairs 0," "no unreachable pairs"
timing=$(grep -Eo 'railyard: pass 1: time .*' "$RY_OPENSM_LOG")
ry_log "$timing"

# --- the tables on the switches -----------------------------------------------
ry_diag ibnetdiscover >disc.topo 2>ibnetdiscover.err || { cat ibnetdiscover.err >&2; ry_fail "ibnetdiscover failed"; }
# Switch records: 'Switch 64 "S-..." # "desc" enhanced port 0 lid 5 lmc 0'.
mapfile -t lids < <(sed -n 's/^Switch.* port 0 lid \([0-9][0-9]*\) .*/\1/p' disc.topo)
switches=$(grep -c '^Switch' disc.topo)
ry_assert_eq "$switches" "${#lids[@]}" "switch LIDs found in disc.topo"
: >ibroute.txt
for lid in "${lids[@]}"; do
  ry_diag ibroute "$lid" >>ibroute.txt 2>>ibroute.err || { cat ibroute.err >&2; ry_fail "ibroute $lid failed"; }
done

# 100% reachability and no credit loops.
rc=0
"$RAILYARD" verify --topo disc.topo --lfts ibroute.txt --json --no-congestion >verify.json 2>verify.err || rc=$?
if [[ $rc -ne 0 ]]; then
  head -c 3000 verify.json >&2; cat verify.err >&2
  ry_fail "railyard verify of the switches' tables: exit $rc"
fi
python3 - verify.json <<'EOF' || ry_fail "verify report: not every pair reachable, or a credit loop"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"verify: {r['reachable']}/{r['pairs']} CA pairs reachable, "
      f"CDG acyclic (CA routes) {r['credit_loops']['ca_routes']['acyclic']}, "
      f"(with switch LIDs) {r['credit_loops']['with_switch_lids']['acyclic']}", file=sys.stderr)
assert r["ok"] and r["pairs"] > 0 and r["reachable"] == r["pairs"], "reachability below 100%"
assert r["blackholed"] == 0 and r["looped"] == 0
assert r["credit_loops"]["ca_routes"]["acyclic"] and r["credit_loops"]["with_switch_lids"]["acyclic"]
EOF

# --- equal to railyard's offline tables ----------------------------------------
# The engine is a function of the fabric, and a fabric's node order is part of
# it: switch-LID routes take their slot from the switch's index (routing/
# unicast_engine.cpp), so the same cabling listed in another order can route
# switch LIDs (not CA LIDs) over other spines. The plugin lists switches, then
# CAs and routers, each by node GUID (sm_plugin/subnet_snapshot.h);
# ibnetdiscover lists them in discovery order. Offline routing therefore reads
# the same records in the plugin's order.
python3 - disc.topo canonical.topo <<'EOF' || ry_fail "reordering disc.topo"
import re, sys
text = open(sys.argv[1]).read()
blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
head = [b for b in blocks if b.lstrip().startswith("#")]
records = []
for b in blocks:
    if b.lstrip().startswith("#"):
        continue
    m = re.search(r'^(Switch|Ca|Hca|Rt)\s+\d+\s+"[SHR]-([0-9a-fA-F]+)"', b, re.M)
    if not m:
        sys.exit("no node line in record: " + b[:80])
    records.append((0 if m.group(1) == "Switch" else 1, int(m.group(2), 16), b))
records.sort(key=lambda r: (r[0], r[1]))
open(sys.argv[2], "w").write("\n\n".join(head + [r[2] for r in records]) + "\n")
EOF
"$RAILYARD" route --topo canonical.topo -o offline.lfts 2>route.err || { cat route.err >&2; ry_fail "railyard route failed"; }
if "$RAILYARD" lfts diff --help >/dev/null 2>&1; then
  rc=0
  "$RAILYARD" lfts diff --topo disc.topo offline.lfts ibroute.txt >lfts_diff.txt 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    head -n 40 lfts_diff.txt >&2
    ry_fail "switch tables differ from railyard's offline tables (lfts diff exit $rc)"
  fi
  ry_log "lfts diff: $(grep -m1 -Ei 'identical|same|different' lfts_diff.txt || head -n 1 lfts_diff.txt)"
else
  # A railyard without `lfts diff`: the same comparison as (switch GUID, LID,
  # port) triples. Both formats have a "... guid 0x<switch> ..." header per
  # switch and one "0x<lid> <port> ..." line per routed LID.
  triples() {
    awk '/^Unicast lids/ { for (i = 1; i <= NF; i++) if ($i == "guid") g = $(i + 1); next }
         /^0x[0-9a-fA-F]+ [0-9]+ / { printf "%s %s %d\n", g, tolower($1), $2 + 0 }' "$1" | sort
  }
  triples offline.lfts >offline.triples
  triples ibroute.txt >switches.triples
  [[ -s offline.triples ]] || ry_fail "no entries read from offline.lfts"
  if ! diff -q offline.triples switches.triples >/dev/null; then
    diff offline.triples switches.triples | head -n 40 >&2
    ry_fail "switch tables differ from railyard's offline tables"
  fi
  ry_log "tables equal: $(wc -l <offline.triples) (switch, LID, port) entries"
fi

ry_pass "OpenSM routed $cas CAs on $switches switches with railyard ($timing); tables verified and equal to offline"
