#!/usr/bin/env bash
# measure_hop_matrices.sh — how long railyard's plugin takes to fill OpenSM's
# min-hop matrices (build_lid_matrices, sm_plugin/hop_matrices.h) inside the
# real OpenSM 3.3.23 on ibsim, on the first sweep and on the heavy sweeps after
# a link goes down and comes back.
#
#   bash scripts/measure_hop_matrices.sh [options] [--] [railyard topo gen arguments]
#   nice -n 10 bash scripts/measure_hop_matrices.sh --railyard build/release/railyard
#
# Default fabric: --servers 2000 --rails 8 --levels 3 --radix 40 (16,000 CAs,
# 2,000 switches). ibsim is started with its -N/-S/-P caps raised from the
# file (tests/integration/lib.sh); OpenSM with the plugin (`routing_engine
# railyard`, plugin log_level verbose) and per-module logging of
# osm_ucast_mgr.c. After SUBNET UP, one leaf uplink is cut with the ibsim
# console (`Unlink`) and put back (`ReLink`), waiting for SUBNET UP each time.
# For every routing pass it prints the plugin's own hop-matrix time
# ("railyard: hop matrices: ... in X ms", a steady clock around the whole
# callback), its CPU time (the thread's; on a shared machine the wall time
# also counts the time others had the core), the split the plugin logs
# (distances, rows, rows allocated), and OpenSM's span from "building
# routing with" to "tables configured on all switches" (hop matrices + route
# + LFT MADs queued). docs/hop_matrices.md has results.
#
# Options:
#   --railyard BIN   railyard binary (default: $RAILYARD, else build/release/railyard)
#   --plugin DIR     folder of libosmrailyard.so (default: sm_plugin/ next to the binary)
#   --opensm-hops    also a run with `hop_matrices: opensm` (OpenSM's own builder;
#                    minutes at 2,000 switches)
#   --timeout S      per wait (default 900)
#   --keep           keep the work directory
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

railyard=${RAILYARD:-$root/build/release/railyard}
plugin_dir=""
modes="railyard"
timeout=900
gen_args=()
while (($#)); do
  case $1 in
    --railyard) railyard=$2; shift 2 ;;
    --plugin) plugin_dir=$2; shift 2 ;;
    --opensm-hops) modes="railyard opensm"; shift ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) RY_KEEP_TMP=1; shift ;;
    -h|--help) usage ;;
    --) shift; gen_args+=("$@"); break ;;
    *) gen_args+=("$1"); shift ;;
  esac
done
((${#gen_args[@]})) || gen_args=(--servers 2000 --rails 8 --levels 3 --radix 40)
[[ -x "$railyard" ]] || ry_fail "no railyard binary at $railyard (build it, or pass --railyard BIN)"
railyard=$(realpath "$railyard")
[[ -n "$plugin_dir" ]] || plugin_dir=$(dirname "$railyard")/sm_plugin
[[ -f "$plugin_dir/libosmrailyard.so" ]] || ry_fail "no $plugin_dir/libosmrailyard.so (build osmrailyard, or pass --plugin DIR)"
plugin_dir=$(realpath "$plugin_dir")
ry_require_tools ibsim opensm
ry_tmpdir
[[ -n "${RY_KEEP_TMP:-}" ]] && ry_log "work directory: $RY_TMP"

"$railyard" topo gen "${gen_args[@]}" -o fabric.net 2>gen.err || { cat gen.err >&2; ry_fail "topo gen failed"; }
gen_summary=$(grep -m1 '^generated' gen.err | sed 's/ -> fabric.net$//; s/^generated //')
# The first leaf (by description) and its first port cabled to a switch.
link=$(awk '/^Switch/ { name = $3; d = $0; sub(/^[^#]*# "/, "", d); sub(/".*$/, "", d); leaf = (d ~ /^leaf/); next }
            /^(Ca|Hca|Rt)/ { leaf = 0; next }
            leaf && /^\[[0-9]+\]/ && /"S-/ { p = $1; gsub(/[^0-9]/, "", p); print d "\t" name "[" p "]" }' fabric.net |
       sort | awk -F'\t' 'NR == 1 { print $2 }')
[[ -n "$link" ]] || ry_fail "no leaf uplink found in the fabric"
echo 'osm_ucast_mgr.c 0x07' >per_module.conf

# OpenSM log line "Mon DD HH:MM:SS usec [...]" -> microseconds since midnight
log_us() { awk '{ split($3, t, ":"); printf "%.0f\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e6 + $4 }'; }
span_ms() {  # LOGPART: "building routing with" -> "tables configured on all switches"
  local a b
  a=$(grep -E -m1 'building routing with' "$1" | log_us || true)
  b=$(grep -E 'tables configured on all switches' "$1" | tail -n 1 | log_us || true)
  awk -v a="$a" -v b="$b" 'BEGIN { if (a == "" || b == "") { print "n/a"; exit } d = b - a; if (d < 0) d += 86400e6; printf "%.0f", d / 1000 }'
}

rows=()
for mode in $modes; do
  printf 'hop_matrices: %s\nlog_level: verbose\n' "$mode" >"plugin-$mode.yaml"
  ry_start_ibsim fabric.net --console
  start=$SECONDS
  LD_LIBRARY_PATH=$plugin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    ry_start_opensm --timeout "$timeout" \
    --conf "per_module_logging_file $RY_TMP/per_module.conf" \
    --conf "event_plugin_name osmrailyard" \
    --conf "event_plugin_options $RY_TMP/plugin-$mode.yaml" \
    --conf "routing_engine railyard"
  ry_log "$mode: SUBNET UP after $((SECONDS - start)) s"
  cp "$RY_OPENSM_LOG" "$mode.start.log"
  for ev in start Unlink ReLink; do
    if [[ $ev != start ]]; then
      n0=$(wc -l <"$RY_OPENSM_LOG")
      ups=$(ry_log_count 'SUBNET UP')
      ry_ibsim_cmd "$ev $link"
      ry_wait_log 'SUBNET UP' "$timeout" "$RY_OPENSM_LOG" $((ups + 1))
      tail -n +"$((n0 + 1))" "$RY_OPENSM_LOG" >"$mode.$ev.log"
    fi
    log=$mode.$ev.log
    used=$(sed -n 's/.*osm_ucast_mgr_process: \(.*\) tables configured on all switches.*/\1/p' "$log" | tail -n 1)
    # "hop matrices: N switches, E entries in X ms (cpu C ms; distances D ms[ reused], rows R ms, A allocated[, P arrays prefaulted])";
    # builds before the cpu figure print only the first part.
    line=$(grep -o 'railyard: hop matrices: .*' "$log" | tail -n 1 || true)
    hops=$(sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' <<<"$line")
    cpu=$(sed -n 's/.*(cpu \([0-9.]*\) ms;.*/\1/p' <<<"$line")
    detail=$(sed -n 's/.*; \(distances .*\))$/\1/p' <<<"$line")
    [[ $mode == opensm ]] && { hops="by OpenSM"; cpu=""; detail=""; }
    route=$(sed -n 's/.*railyard: pass [0-9]*: time .* route \([0-9.]*\) ms.*total \([0-9.]*\) ms.*/\1 | \2/p' "$log" | tail -n 1)
    rows+=("| $mode | $ev | ${used:-?} | ${hops:-n/a} | ${cpu:--} | ${detail:--} | ${route:-n/a | n/a} | $(span_ms "$log") |")
    [[ $used == railyard ]] || ry_fail "$mode $ev: engine used '${used}', not railyard"
  done
  ry_stop_ibsim
done

echo "#### railyard topo gen ${gen_args[*]}"
echo
echo "Fabric: $gen_summary. Link cut and restored: \`$link\`."
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)."
echo
echo "| hop matrices by | sweep | engine used | hop matrices, wall (ms) | hop matrices, CPU (ms) | of which | plugin: route (ms) | plugin: callback total (ms) | OpenSM: building routing -> tables configured (ms) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
