#!/usr/bin/env bash
# measure_reroute.sh — how fast OpenSM, routed by its own engines or by
# railyard's plugin, reacts to a link failure on ibsim, and how much of the
# forwarding state it rewrites.
#
#   bash scripts/measure_reroute.sh [options] [--] <railyard topo gen arguments>
#   bash scripts/measure_reroute.sh --engines "ftree updn railyard" -- --servers 64 --rails 8 --levels 2 --radix 32
#   bash scripts/measure_reroute.sh --light --engines railyard -- --servers 2000 --rails 8 --radix 64 --levels 3
#
# For each engine: a fresh ibsim (console mode) runs the generated fabric under
# OpenSM `-R <engine>` (log_flags 0x43, dump_files_dir, per-module logging of
# osm_ucast_mgr.c). The engine `railyard` is railyard's OpenSM plugin
# (libosmrailyard.so, `routing_engine railyard`), measured the same way; its
# rows add the plugin's own routing-callback time ("railyard: pass N: time ...
# total") and the LFT blocks it found changed. After SUBNET UP the script cuts one leaf uplink with the
# ibsim console (`Unlink "<leaf>"[<port>]`, the first leaf's first uplink unless
# --link says otherwise), waits for the next SUBNET UP, then puts it back
# (`ReLink`) and waits again. From the OpenSM log (wall-clock timestamps in
# microseconds, the same clock as the script's) it reports, for both events:
#   trap     Unlink -> first "Received Generic Notice" / trap line after it
#   route    "building routing with" -> "tables configured on all switches"
#   tables   Unlink -> "tables configured on all switches" (LFT MADs sent)
#   up       Unlink -> "SUBNET UP" (all MADs answered: the new LFTs are on the switches)
# the engine(s) tried and used, and the LFT change: entries and 64-entry LFT
# blocks that differ between OpenSM's opensm-lfts.dump before and after, and
# the quality of the tables now on the switches (ibnetdiscover of the fabric as
# it is, `railyard verify --json`: reachability, rail-aligned shifts, all-to-all).
# Last rows: railyard offline on the same events (`railyard route` of the fabric
# as discovered before and after each event; LFT change between its tables).
# Prints a Markdown table.
#
# --light is for fabrics too big for OpenSM's dumps (gigabytes at 16k CAs):
# default log flags, no dumps, no verify, no offline rows; only the times and,
# for railyard, the blocks its pass reports.
#
# Options:
#   --railyard BIN     railyard binary (default: $RAILYARD, else build-cmp/, build/release/)
#   --engines "A B"    engines (default: ftree updn, and railyard when the plugin is found)
#   --plugin DIR       folder of libosmrailyard.so (default: sm_plugin/ next to the railyard binary)
#   --light            no dumps, verify or offline rows (big fabrics)
#   --link 'NODE[P]'   the link end to cut, as the ibsim console names it (default: first leaf uplink)
#   --timeout S        per wait (default 300)
#   --keep             keep the work directory
#   --title TEXT       heading
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

railyard=${RAILYARD:-}
engines=""
plugin_dir=""
light=0
link=""
timeout=300
title=""
gen_args=()
while (($#)); do
  case $1 in
    --railyard) railyard=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --plugin) plugin_dir=$2; shift 2 ;;
    --light) light=1; shift ;;
    --link) link=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) RY_KEEP_TMP=1; shift ;;
    --title) title=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; gen_args+=("$@"); break ;;
    *) gen_args+=("$1"); shift ;;
  esac
done
if [[ -z "$railyard" ]]; then
  for c in "$root/build-cmp/railyard" "$root/build/release/railyard"; do
    [[ -x "$c" ]] && { railyard=$c; break; }
  done
fi
[[ -n "$railyard" && -x "$railyard" ]] || ry_fail "no railyard binary (build it, or pass --railyard BIN)"
railyard=$(realpath "$railyard")
[[ -n "$plugin_dir" ]] || plugin_dir=$(dirname "$railyard")/sm_plugin
if [[ -z "$engines" ]]; then
  engines="ftree updn"
  [[ -f "$plugin_dir/libosmrailyard.so" ]] && engines="$engines railyard"
fi
if [[ " $engines " == *" railyard "* ]]; then
  [[ -f "$plugin_dir/libosmrailyard.so" ]] || ry_fail "engine railyard: no $plugin_dir/libosmrailyard.so (build it, or pass --plugin DIR)"
  plugin_dir=$(realpath "$plugin_dir")
fi
ry_require_tools ibsim opensm ibnetdiscover jq
ry_tmpdir
[[ -n "${RY_KEEP_TMP:-}" ]] && ry_log "work directory: $RY_TMP"

"$railyard" topo gen "${gen_args[@]}" -o fabric.net 2>gen.err || { cat gen.err >&2; ry_fail "topo gen failed"; }
gen_summary=$(grep -m1 '^generated' gen.err | sed 's/ -> fabric.net$//; s/^generated //')

if [[ -z "$link" ]]; then
  # The first leaf (by description) and its first port cabled to a switch.
  link=$(awk '/^Switch/ { name = $3; d = $0; sub(/^[^#]*# "/, "", d); sub(/".*$/, "", d); leaf = (d ~ /^leaf/); next }
              /^(Ca|Hca|Rt)/ { leaf = 0; next }
              leaf && /^\[[0-9]+\]/ && /"S-/ { p = $1; gsub(/[^0-9]/, "", p); print d "\t" name "[" p "]" }' fabric.net |
         sort | awk -F'\t' 'NR == 1 { print $2 }')
fi
[[ -n "$link" ]] || ry_fail "no leaf uplink found in the fabric"
link_desc=$(awk -v n="${link%%[*}" '/^Switch/ && $3 == n { d = $0; sub(/^[^#]*# "/, "", d); sub(/".*$/, "", d); print d }' fabric.net)
echo 'osm_ucast_mgr.c 0x07' >per_module.conf
printf 'log_level: info\n' >railyard-plugin.yaml

now_us() { date +%H:%M:%S.%N | awk -F'[:.]' '{ printf "%.0f\n", (($1 * 60 + $2) * 60 + $3) * 1e6 + substr($4, 1, 6) }'; }
# OpenSM log line "Mon DD HH:MM:SS usec [...]" -> microseconds since midnight
log_us() { awk '{ split($3, t, ":"); printf "%.0f\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e6 + $4 }'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") { print "n/a"; exit } d = b - a; if (d < 0) d += 86400e6; printf "%.0f", d / 1000 }'; }

# Lines of the log after line N matching a regex; the first one's time.
first_after() { tail -n +"$(($1 + 1))" "$RY_OPENSM_LOG" | grep -E -m1 -- "$2" | log_us || true; }
last_after() { tail -n +"$(($1 + 1))" "$RY_OPENSM_LOG" | grep -E -- "$2" | tail -n 1 | log_us || true; }

# "sw lid port" from an opensm-lfts.dump
norm() {
  awk '/^Unicast lids/ { match($0, / guid 0x[0-9a-fA-F]+/); sw = substr($0, RSTART + 6, RLENGTH - 6); next }
       /^0x[0-9a-fA-F]+ +[0-9]+ / { printf "%s %s %d\n", sw, tolower($1), $2 + 0 }' "$1"
}
# changed entries and 64-entry blocks between two dumps
lft_change() {
  awk 'function hex(s,   i, v) { s = tolower(substr(s, 3)); v = 0
         for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
       FNR == NR { a[$1 " " $2] = $3; next }
       { k = $1 " " $2; b[k] = $3 }
       END { for (k in a) if (!(k in b)) { gone++; mark(k) } else if (a[k] != b[k]) { moved++; mark(k) }
             for (k in b) if (!(k in a)) { added++; mark(k) }
             for (k in blk) nb++; for (k in sws) ns++
             printf "%d entries (%d moved, %d new, %d gone); %d blocks on %d switches\n", ne, moved, added, gone, nb, ns }
       function mark(k,   f) { split(k, f, " "); ne++; blk[f[1] " " int(hex(f[2]) / 64)] = 1; sws[f[1]] = 1 }' \
    <(norm "$1") <(norm "$2")
}

rows=()
status=0
for e in $engines; do
  rm -f "$RY_TMP/ibsim.console"
  ry_start_ibsim fabric.net --console
  osm_conf=(--conf "per_module_logging_file $RY_TMP/per_module.conf")
  ((light)) || osm_conf+=(--conf 'log_flags 0x43')
  if [[ $e == railyard ]]; then
    LD_LIBRARY_PATH=$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
      ry_start_opensm --timeout "$timeout" "${osm_conf[@]}" \
      --conf "event_plugin_name osmrailyard" \
      --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
      --conf "routing_engine railyard"
  else
    ry_start_opensm --timeout "$timeout" "${osm_conf[@]}" -- -R "$e"
  fi
  ((light)) || cp "$RY_OPENSM_DIR/opensm-lfts.dump" "$e.before.dump"
  engine0=$(ry_opensm_engine)
  ((light)) || ry_diag ibnetdiscover >"$e.before.topo" 2>/dev/null || ry_fail "ibnetdiscover failed"
  if [[ $e == railyard ]]; then
    ry_log "railyard first pass: $(grep -E 'railyard: pass 1: time ' "$RY_OPENSM_LOG" | sed 's/.*railyard: //')"
  fi
  for ev in Unlink ReLink; do
    n0=$(wc -l <"$RY_OPENSM_LOG")
    ups=$(ry_log_count 'SUBNET UP')
    t0=$(now_us)
    ry_ibsim_cmd "$ev $link"
    ry_wait_log 'SUBNET UP' "$timeout" "$RY_OPENSM_LOG" $((ups + 1))
    sleep 0.5  # the dump is written before SUBNET UP; let a racing sweep settle
    ((light)) || cp "$RY_OPENSM_DIR/opensm-lfts.dump" "$e.$ev.dump"
    tail -n +"$((n0 + 1))" "$RY_OPENSM_LOG" >"$e.$ev.log"
    t_trap=$(first_after "$n0" 'Generic Notice|[Tt]rap|HEAVY SWEEP|heavy sweep')
    t_build=$(first_after "$n0" 'building routing with')
    t_conf=$(last_after "$n0" 'tables configured on all switches')
    t_up=$(first_after "$n0" 'SUBNET UP')
    tried=$(sed -n "s/.*building routing with '\([^']*\)'.*/\1/p" "$e.$ev.log" | paste -sd, -)
    used=$(sed -n 's/.*osm_ucast_mgr_process: \(.*\) tables configured on all switches.*/\1/p' "$e.$ev.log" | tail -n 1)
    prev=$e.before.dump
    [[ $ev == ReLink ]] && prev=$e.Unlink.dump
    change="n/a (--light)"
    ((light)) || change=$(lft_change "$prev" "$e.$ev.dump")
    # railyard's own view of the pass: callback time and the blocks it changed.
    pass="-"
    if [[ $e == railyard ]]; then
      cb=$(sed -n 's/.*railyard: pass [0-9]*: time .* total \([0-9.]*\) ms.*/\1/p' "$e.$ev.log" | tail -n 1)
      blocks=$(sed -n 's/.*changed LFT blocks \([0-9]*\) on \([0-9]*\) of \([0-9]*\) switches.*/\1 blocks on \2 of \3 switches/p' "$e.$ev.log" | tail -n 1)
      pass="${cb:-n/a} ms; ${blocks:-n/a}"
    fi
    # Quality of the live tables on the fabric as it is now.
    quality="n/a | n/a | n/a"
    if ((!light)) && ry_diag ibnetdiscover >"$e.$ev.topo" 2>/dev/null; then
      rc=0
      "$railyard" verify --topo "$e.$ev.topo" --lfts "$e.$ev.dump" --json --permutations 2 \
        >"$e.$ev.verify.json" 2>"$e.$ev.verify.err" || rc=$?
      if ((rc <= 1)) && jq -e . "$e.$ev.verify.json" >/dev/null 2>&1; then
        quality=$(jq -r 'def pat(n): (.congestion[] | select(.pattern == n)) as $p | "\($p.max_load) / \($p.lower_bound)";
          "\(if .pairs > 0 then (.reachable * 100 / .pairs * 1000 | floor / 1000 | tostring) + "%" else "-" end) | \(pat("rail-aligned shifts")) | \(pat("all-to-all"))"' \
          "$e.$ev.verify.json")
      fi
    fi
    eng="${used:-?}"
    [[ "$tried" == *,* ]] && eng="$eng (tried $tried)"
    rows+=("| $e | $ev | $engine0 -> $eng | $(ms "$t0" "$t_trap") | $(ms "$t_build" "$t_conf") | $(ms "$t0" "$t_conf") | $(ms "$t0" "$t_up") | $change | $quality | $pass |")
    [[ -n "$used" ]] || status=1
  done
  ry_stop_ibsim
  [[ $e == railyard ]] || last=$e
done
((light)) && last=""

# railyard on the same events, offline: its tables for the fabric before and
# after each event (the topologies discovered in the last engine's run, same
# LIDs), the LFT change between them, and their quality.
quality_of() {
  jq -r 'def pat(n): (.congestion[] | select(.pattern == n)) as $p | "\($p.max_load) / \($p.lower_bound)";
    "\(if .pairs > 0 then (.reachable * 100 / .pairs * 1000 | floor / 1000 | tostring) + "%" else "-" end) | \(pat("rail-aligned shifts")) | \(pat("all-to-all"))"' "$1"
}
if [[ -n "${last:-}" && -s "$last.before.topo" ]]; then
  prev=before
  for st in before Unlink ReLink; do
    [[ -s "$last.$st.topo" ]] || continue
    "$railyard" route --topo "$last.$st.topo" -o "offline.$st.dump" 2>"offline.$st.route.err" ||
      { cat "offline.$st.route.err" >&2; ry_fail "railyard route failed"; }
    [[ $st == before ]] && continue
    rc=0
    "$railyard" verify --topo "$last.$st.topo" --lfts "offline.$st.dump" --json --permutations 2 \
      >"offline.$st.verify.json" 2>/dev/null || rc=$?
    quality="n/a | n/a | n/a"
    ((rc <= 1)) && quality=$(quality_of "offline.$st.verify.json")
    rt=$(sed -n 's/.* route \([0-9.]*\) ms.*/\1/p' "offline.$st.route.err" | awk 'NR == 1')
    rows+=("| railyard (offline) | $st | railyard | - | ${rt:-n/a} (offline) | - | - | $(lft_change "offline.$prev.dump" "offline.$st.dump") | $quality | - |")
    prev=$st
  done
fi

echo "#### ${title:-railyard topo gen ${gen_args[*]}}"
echo
port=${link##*[}; port=${port%]}
echo "Fabric: $gen_summary. Link cut and restored: \`$link\` (\"$link_desc\" port $port)."
echo
echo "| engine | event | engine used (before -> after) | to trap/sweep (ms) | route (ms, log) | to tables sent (ms) | to SUBNET UP (ms) | LFT change vs. the tables before the event (OpenSM dumps) | reachable CA pairs after | rail-aligned shifts max / bound after | all-to-all max / bound after | railyard pass: callback time; changed blocks |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
exit "$status"
