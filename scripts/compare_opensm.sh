#!/usr/bin/env bash
# compare_opensm.sh — stock OpenSM's routing engines and railyard, side by side,
# on ONE generated fabric running in ibsim.
#
#   bash scripts/compare_opensm.sh [options] [--] <railyard topo gen arguments>
#   bash scripts/compare_opensm.sh -- --servers 64 --rails 8 --levels 2 --radix 32
#   bash scripts/compare_opensm.sh --remove-switch-pct 5 -- --servers 64 --levels 2 --radix 32 --remove-ca-links 2
#   bash scripts/compare_opensm.sh --remove-switch 3 1 -- --servers 128 --levels 3 --radix 16 --seed 2
#   bash scripts/compare_opensm.sh --remove-tier spine-core --remove-switch-links 1 \
#     -- --servers 128 --levels 3 --radix 16
#
# For each engine (default: ftree updn minhop railyard) OpenSM is started on
# the same simulator with `-R <engine>` (railyard: its offline tables, routed
# from the discovered topology, loaded with `-R file -U`), with log_flags 0x43,
# dump_files_dir and per-module logging of osm_ucast_mgr.c. After SUBNET UP the
# script keeps OpenSM's own opensm-lfts.dump (the tables it put on the
# switches), the engine that actually configured the switches and the engines
# tried (a fallback shows as a second "building routing with" line), and the
# routing time from the log (first "building routing with" to "tables
# configured on all switches", microsecond timestamps). Every dump is judged by
# `railyard verify --json` against the discovered topology (ibnetdiscover, with
# OpenSM's LIDs, which stay the same across the runs: one guid2lid cache).
#
# Prints a Markdown block: the fabric, then one table row per engine.
#
# Options:
#   --railyard BIN          railyard binary (default: $RAILYARD, else build-cmp/, build/release/)
#   --engines "A B ..."     engines to compare: OpenSM names (-R NAME), "railyard" (its
#                           tables through -R file -U) and "updn-roots" (updn with the
#                           discovered top-level switches in root_guid_file)
#   --remove-switch-pct P   remove P% of the switch-switch links of the healthy fabric (seeded,
#                           via --remove-switch-links N, N rounded; with --remove-tier, P% of
#                           that tier's links)
#   --remove-switch LEVEL N remove N whole switches of level 1 (leaf), 2 (spine) or 3 (core)
#                           (topo gen --remove-switch; repeatable, once per level; LEVEL:N too).
#                           They stay in the simulated fabric without links: OpenSM never
#                           discovers them. Any P% counts the links of the healthy fabric and
#                           is drawn among the links the removed switches left.
#   --remove-tier T         leaf-spine or spine-core: --remove-switch-links (given here or
#                           after --, or from --remove-switch-pct) only removes links of that
#                           tier (topo gen --remove-links-at T)
#   --permutations N        random permutations for verify (default 4)
#   --timeout S             per OpenSM run, start to SUBNET UP (default 300)
#   --keep                  keep the work directory (printed on stderr)
#   --title TEXT            heading of the block (default: the gen arguments)
# Environment: RY_IBSIM_ARGS (extra ibsim arguments), RY_VERBOSE=1.
# Exit: 0 when every engine brought the subnet up and was measured; 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

railyard=${RAILYARD:-}
engines="ftree updn minhop railyard"
remove_pct=""
remove_tier=""
permutations=4
timeout=300
title=""
gen_args=()
while (($#)); do
  case $1 in
    --railyard) railyard=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --remove-switch-pct) remove_pct=$2; shift 2 ;;
    --remove-switch)
      if [[ "${2:-}" == *:* ]]; then gen_args+=(--remove-switch "$2"); shift 2
      else
        (($# >= 3)) || ry_fail "--remove-switch: LEVEL N or LEVEL:N"
        gen_args+=(--remove-switch "$2" "$3"); shift 3
      fi ;;
    --remove-tier)
      case ${2:-} in
        leaf-spine|spine-core) remove_tier=$2 ;;
        *) ry_fail "--remove-tier: leaf-spine or spine-core, not '${2:-}'" ;;
      esac
      shift 2 ;;
    --permutations) permutations=$2; shift 2 ;;
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
ry_require_tools ibsim opensm ibnetdiscover jq
ry_tmpdir
[[ -n "${RY_KEEP_TMP:-}" ]] && ry_log "work directory: $RY_TMP"

# --- the fabric ---------------------------------------------------------------
[[ -n "$remove_tier" ]] && gen_args+=(--remove-links-at "$remove_tier")
if [[ -n "$remove_pct" ]]; then
  # Count the switch-switch links of the healthy fabric (of one tier with
  # --remove-tier): the same arguments without any removal.
  healthy=()
  skip=0
  for a in "${gen_args[@]}"; do
    if ((skip)); then
      skip=$((skip - 1))
      # --remove-switch takes LEVEL N, or one LEVEL:N
      [[ "$a" == *:* ]] && skip=0
      continue
    fi
    case $a in
      --remove-switch-links|--remove-ca-links|--remove-uplink-per-leaf|--remove-links-at) skip=1; continue ;;
      --remove-switch) skip=2; continue ;;
    esac
    healthy+=("$a")
  done
  "$railyard" topo gen "${healthy[@]}" -o healthy.net 2>healthy.err || { cat healthy.err >&2; ry_fail "topo gen failed"; }
  "$railyard" topo show --json healthy.net >healthy.json || ry_fail "topo show of the healthy fabric failed"
  tier_links() {
    jq --arg a "$1" --arg b "$2" '[.links.by_level[] | select(.from == $a and .to == $b) | .count] | add // 0' \
      healthy.json
  }
  case $remove_tier in
    "") sw_links=$(jq '.summary.switch_links' healthy.json) ;;
    leaf-spine) sw_links=$(tier_links leaf spine) ;;
    spine-core) sw_links=$(tier_links spine core) ;;
  esac
  remove_n=$(( (sw_links * remove_pct + 50) / 100 ))
  gen_args+=(--remove-switch-links "$remove_n")
fi
"$railyard" topo gen "${gen_args[@]}" -o fabric.net 2>gen.err || { cat gen.err >&2; ry_fail "topo gen failed"; }
gen_summary=$(grep -m1 '^generated' gen.err | sed 's/ -> fabric.net$//')

ry_start_ibsim fabric.net
echo 'osm_ucast_mgr.c 0x07' >per_module.conf

# "Mon DD HH:MM:SS usec [thread] ..." -> microseconds since midnight
log_us() { awk '{ split($3, t, ":"); printf "%.0f\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e6 + $4 }'; }

# run_engine NAME: OpenSM with that engine; leaves $NAME.dump, $NAME.log, $NAME.meta
run_engine() {
  local name=$1 args=() conf=() t0 t1 tried used first last route_ms
  case $name in
    railyard) args=(-R file -U "$RY_TMP/railyard.lfts") ;;
    updn-roots)
      # updn with the top level of the discovered fabric as roots (root_guid_file).
      "$railyard" topo show --json --long disc.topo | jq -r '.levels[-1].switches[].guid' >roots.txt
      [[ -s roots.txt ]] || ry_fail "no top-level switches found for updn-roots"
      args=(-R updn)
      conf=(--conf "root_guid_file $RY_TMP/roots.txt") ;;
    *) args=(-R "$name") ;;
  esac
  t0=$(date +%s.%N)
  ry_start_opensm --timeout "$timeout" --conf 'log_flags 0x43' "${conf[@]}" \
    --conf "per_module_logging_file $RY_TMP/per_module.conf" -- "${args[@]}"
  t1=$(date +%s.%N)
  # Copy right away: the next sweep may rewrite the dump.
  cp "$RY_OPENSM_DIR/opensm-lfts.dump" "$name.dump"
  cp "$RY_OPENSM_LOG" "$name.log"
  [[ -f "$RY_OPENSM_DIR/opensm-subnet.lst" ]] && cp "$RY_OPENSM_DIR/opensm-subnet.lst" "$name.subnet.lst"
  ry_stop_opensm
  tried=$(sed -n "s/.*building routing with '\([^']*\)'.*/\1/p" "$name.log" | paste -sd, -)
  used=$(sed -n 's/.*osm_ucast_mgr_process: \(.*\) tables configured on all switches.*/\1/p' "$name.log" | tail -n 1)
  first=$(grep -m1 "building routing with" "$name.log" | log_us || true)
  last=$(grep "tables configured on all switches" "$name.log" | tail -n 1 | log_us || true)
  route_ms=""
  if [[ -n "$first" && -n "$last" ]]; then
    route_ms=$(awk -v a="$first" -v b="$last" 'BEGIN { d = b - a; if (d < 0) d += 86400e6; printf "%.1f", d / 1000 }')
  fi
  jq -n --arg tried "$tried" --arg used "$used" --arg route_ms "$route_ms" \
    --arg up_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" \
    '{tried: $tried, used: $used, route_ms: $route_ms, up_s: $up_s}' >"$name.meta"
  [[ -n "${RY_VERBOSE:-}" ]] && ry_log "$name: tried $tried, used $used, $route_ms ms"
  return 0
}

# --- the engines ------------------------------------------------------------
# A first run of OpenSM (default engine) assigns the LIDs, which every later run
# keeps (same guid2lid cache), and ibnetdiscover records them with the fabric.
ry_start_opensm --timeout "$timeout"
ry_diag ibnetdiscover >disc.topo 2>ibnetdiscover.err || { cat ibnetdiscover.err >&2; ry_fail "ibnetdiscover failed"; }
ry_stop_opensm
for e in $engines; do
  if [[ "$e" == railyard ]]; then
    "$railyard" route --topo disc.topo -o railyard.lfts 2>railyard.route.err ||
      { cat railyard.route.err >&2; ry_fail "railyard route failed"; }
  fi
  run_engine "$e"
done
ncas=$(grep -Ec '^(Ca|Hca)' disc.topo)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)
if [[ -n "$commit" ]] && ! git -C "$root" diff --quiet HEAD -- routing cli 2>/dev/null; then commit="$commit+local changes"; fi
nsw=$(grep -c '^Switch' disc.topo)

# --- judge every engine's tables --------------------------------------------
status=0
rows=()
for e in $engines; do
  rc=0
  "$railyard" verify --topo disc.topo --lfts "$e.dump" --json --permutations "$permutations" \
    >"$e.verify.json" 2>"$e.verify.err" || rc=$?
  if ((rc > 1)) || ! jq -e . "$e.verify.json" >/dev/null 2>&1; then
    ry_log "verify of $e failed (exit $rc): $(head -c 300 "$e.verify.err")"
    rows+=("| $e | $(jq -r .used "$e.meta") | verify failed | | | | | | | |")
    status=1
    continue
  fi
  extra=""
  if [[ "$e" == railyard ]]; then
    extra=$(sed -n 's/.* route \([0-9.]*\) ms.*/; offline route \1 ms/p' railyard.route.err | awk 'NR == 1')
    # What OpenSM put on the switches must be exactly the file it was given.
    if "$railyard" lfts diff --help >/dev/null 2>&1; then
      if ! "$railyard" lfts diff --topo disc.topo railyard.lfts railyard.dump >railyard.lfts_diff.txt 2>&1; then
        extra="$extra; OpenSM's tables DIFFER from railyard.lfts"
        status=1
      fi
    fi
  fi
  row=$(jq -r --slurpfile m "$e.meta" --arg name "$e" --arg extra "$extra" '
    def pat(n): (.congestion[] | select(.pattern == n)) as $p
      | "\($p.max_load) / \($p.lower_bound)" + (if $p.unrouted > 0 then " (\($p.unrouted) unrouted)" else "" end);
    def pct: if .pairs > 0 then (.reachable * 100 / .pairs * 1000 | floor / 1000 | tostring) + "%" else "-" end;
    def loops: if .credit_loops.ca_routes.acyclic | not then "CA routes"
               elif .credit_loops.with_switch_lids.acyclic | not then "with switch LIDs"
               else "none" end;
    $m[0] as $m
    | ($m.used // "") as $used
    | (if $m.tried == "" then $used elif ($m.tried | split(",") | length) > 1 then "\($used) (tried \($m.tried))" else $used end) as $eng
    | "| \($name) | \(if $eng == "" then "?" else $eng end) | \(pct) | \(loops) | \(.max_stretch) | "
      + "\(pat("rail-aligned shifts")) | \(pat("cross-rail shifts")) | \(pat("random permutations")) | \(pat("all-to-all")) | "
      + "\(if $m.route_ms == "" then "n/a" else $m.route_ms + " ms" end)\($extra); up \($m.up_s) s |"
  ' "$e.verify.json")
  rows+=("$row")
  # An engine that did not configure the switches itself is a finding, not a failure.
  [[ -n "$(jq -r .used "$e.meta")" ]] || status=1
done

{
  echo "#### ${title:-railyard topo gen ${gen_args[*]}}"
  echo
  echo "Fabric: ${gen_summary#generated }; discovered $nsw switches, $ncas CAs." \
    "railyard: $("$railyard" --version 2>/dev/null | awk '{ print $NF }')${commit:+, source tree at commit $commit}."
  echo
  echo "| engine | engine used (OpenSM log) | reachable CA pairs | credit loops (1 VL) | max stretch | rail-aligned shifts max / bound | cross-rail shifts max / bound | random perm. max / bound | all-to-all max / bound | route time (OpenSM log); SM start to SUBNET UP |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
}
exit "$status"
