#!/usr/bin/env bash
# measure_failover.sh — how long traffic stays black-holed after a link
# fails, seen from the switches: ibsim with OpenSM and railyard's plugin;
# Unlink one uplink of the leaf ibsim attaches its clients to (directed route
# 0), then read that leaf's LFT back with ibroute, only the blocks that hold
# the destinations it sent out of the dead port, until none does; and wait for
# OpenSM's next SUBNET UP. Prints, for the Unlink:
#   entries   destinations the leaf sent out of the dead port
#   acked     Unlink -> the plugin's fast path logged every changed block of
#             every switch acknowledged (OpenSM's log time, less the digests
#             the plugin computes after the push; fast mode); with the CA
#             columns pushed first, also when those were
#   moved     Unlink -> the last of them moved off it (polled: +/- one read,
#             and a read takes ibroute tens to hundreds of ms on ibsim: the
#             time of one whole-LFT read is printed before; with --poll quiet
#             the reads start when the plugin has logged)
#   subnet_up Unlink -> OpenSM's next SUBNET UP
#   pair_s    leaf-side CA-pair-seconds black-holed: CAs on the leaf x entries
#             x their time on the dead port (each entry counted until a read
#             showed it moved: an upper bound, coarse where reads are slow)
#   bound_s   the same with every entry counted until `acked` (fast mode) or
#             `subnet_up` (OpenSM's path: its tables are on the switches then)
# and the plugin's last pass and fast-path lines from OpenSM's log.
#
#   bash scripts/measure_failover.sh [BUILD_DIR (build/release)] [--mode fast|opensm] [--poll quiet|eager] [--leaf DESC|next] [--opensm-conf 'KEY VALUE']... [--plugin-conf 'LINE']... -- TOPO-GEN-ARGS...
#   bash scripts/measure_failover.sh build/release -- --servers 256 --rails 8 --levels 3 --radix 64
#   bash scripts/measure_failover.sh build/release --mode opensm -- --servers 256 --rails 8 --levels 3 --radix 64
# --leaf DESC|next: that leaf instead, or the next leaf under the route-0
# leaf's second uplink (its LFT is read through that uplink); the route-0 leaf is also the turn switch of the switch
# LIDs on a healthy tree (docs/routing.md), whose failures move every turned
# entry.
# --mode fast (default): the plugin's fast path on traps (port_probe from the
# build, `sweep_on_trap FALSE`); --mode opensm: traps left to OpenSM's sweep
# (port_probe: off, OpenSM's defaults), as before the fast path.
# --poll quiet|eager: when the reads of the leaf start. quiet (default): in
# fast mode, once the plugin has logged the trap's outcome (its log checked
# every 20 ms), so that ibroute and ibsim answering it do not take the two
# cores of this machine from the fast path they are timing (on a fabric the
# reader runs elsewhere); eager: right after the Unlink, back to back, as
# before (--mode opensm always reads so: OpenSM logs nothing per trap).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/release
if [[ $# -gt 0 && "$1" != -* ]]; then
  build=$(realpath "$1")
  shift
fi
osm_conf=()
plugin_conf=()
mode=fast
other_leaf=""
poll=quiet
while (($#)); do
  case $1 in
    --poll) poll=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --leaf) other_leaf=$2; shift 2 ;;
    --opensm-conf) osm_conf+=(--conf "$2"); shift 2 ;;
    --plugin-conf) plugin_conf+=("$2"); shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "measure_failover.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
gen=("$@")
case $mode in
  fast)
    plugin_conf+=("port_probe: $build/sm_plugin/railyard-port-probe")
    osm_conf+=(--conf "sweep_on_trap FALSE")
    ;;
  opensm) plugin_conf+=("port_probe: off") ;;
  *) echo "measure_failover.sh: --mode fast or opensm" >&2; exit 2 ;;
esac
case $poll in
  quiet | eager) ;;
  *) echo "measure_failover.sh: --poll quiet or eager" >&2; exit 2 ;;
esac
((${#gen[@]})) || gen=(--servers 64 --rails 8 --levels 3 --radix 32)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
ry_require_tools ibsim opensm ibroute smpquery
export LD_LIBRARY_PATH=$build/sm_plugin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$build/railyard" topo gen "${gen[@]}" -o fabric.net 2>/dev/null
echo "fabric: ${gen[*]}: $(grep -c '^Ca' fabric.net) CAs, $(grep -c '^Switch' fabric.net) switches; mode $mode"
{
  echo "log_level: info"
  for line in "${plugin_conf[@]}"; do echo "$line"; done
} >plugin.yaml
ry_start_ibsim fabric.net --console
start=$SECONDS
ry_start_opensm --timeout 900 --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/plugin.yaml" --conf "routing_engine railyard" "${osm_conf[@]}"
echo "OpenSM SUBNET UP after $((SECONDS - start)) s, engine $(ry_opensm_engine)"
# The fast path routes the subnet once in the background after SUBNET UP.
[[ $mode != fast ]] || ry_wait_log "fast path: ready" 900

# The leaf at route 0 (or --leaf), its CAs and its first uplink.
desc=$(ry_diag smpquery -D nodedesc 0 | sed -n 's/^Node Description:\.*//p')
leaf=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$desc\".*/\1/p" fabric.net)
route=0
if [[ -n "$other_leaf" ]]; then
  # ports_of SWITCH: "port remote-record remote-port" per cabled port.
  ports_of() {
    awk -v sw="\"$1\"" '/^Switch/ { mine = index($0, sw) > 0; next } /^$/ { mine = 0 }
      mine && /^\[[0-9]+\]/ { match($0, /^\[[0-9]+\]/); p = substr($0, 2, RLENGTH - 2)
        match($0, /"[SH]-[0-9a-f]+"\[[0-9]+\]/); r = substr($0, RSTART + 1, RLENGTH - 1)
        split(r, a, "\""); rp = a[2]; gsub(/[\[\]]/, "", rp); print p, a[1], rp }' fabric.net
  }
  # Out of the route-0 leaf by its second uplink, down to the target.
  read -r hop1 spine _ <<<"$(ports_of "$leaf" | awk '$2 ~ /^S-/' | sed -n 2p)"
  if [[ "$other_leaf" == next ]]; then  # the next leaf under that spine
    target=$(ports_of "$spine" | awk -v me="$leaf" '$2 ~ /^S-/ && $2 != me { print $2 }' |
      while read -r sw; do ports_of "$sw" | grep -q ' H-' && { echo "$sw"; break; }; done)
    other_leaf=$(sed -n "s/^Switch.*\"$target\".*# \"\([^\"]*\)\".*/\1/p" fabric.net)
  else
    target=$(sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$other_leaf\".*/\1/p" fabric.net)
  fi
  [[ -n "$target" ]] || ry_fail "no switch '$other_leaf' in fabric.net"
  hop2=$(ports_of "$spine" | awk -v t="$target" '$2 == t { print $1; exit }')
  [[ -n "$hop2" ]] || ry_fail "'$other_leaf' is not under the spine on $desc's port $hop1"
  route="0,$hop1,$hop2"
  leaf=$target
  desc=$other_leaf
fi
[[ -n "$leaf" ]] || ry_fail "route 0 is '$desc', not a switch of fabric.net"
ports=$(awk -v sw="\"$leaf\"" '/^Switch/ { mine = index($0, sw) > 0; next }
  mine && /^\[[0-9]+\]/ { match($0, /^\[[0-9]+\]/); p = substr($0, 2, RLENGTH - 2);
    print p, (index($0, "\"S-") ? "S" : "H") } /^$/ { mine = 0 }' fabric.net)
cas=$(awk '$2 == "H"' <<<"$ports" | wc -l)
uplink=$(awk '$2 == "S" { print $1; exit }' <<<"$ports")
[[ -n "$uplink" ]] || ry_fail "$desc has no uplink"

# LFT of the leaf: "LID PORT" lines, LIDs as ibroute writes them (0x hex).
lft() { ry_diag ibroute -D "$route" "$@" | awk '/^0x/ { print $1, $2 + 0 }'; }
read_t0=$(date +%s%N)
lft >before.lft
read_ms=$((($(date +%s%N) - read_t0) / 1000000))
awk -v p="$uplink" '$2 == p { print $1 }' before.lft >affected
entries=$(wc -l <affected)
((entries > 0)) || ry_fail "no destination leaves $desc by port $uplink"
dec() { while read -r h; do printf '%d\n' "$h"; done; }
lo=$(dec <affected | sort -n | head -1)
hi=$(dec <affected | sort -n | tail -1)
echo "leaf '$desc' ($leaf): $cas CAs; $entries destinations leave by port $uplink (LIDs $lo-$hi); one read of its whole LFT took $read_ms ms"

ups=$(ry_log_count 'SUBNET UP')
traps=$(ry_log_count 'fast path: trap from ')
now_us() { date +%H:%M:%S.%N | awk -F'[:.]' '{ printf "%.0f\n", (($1 * 60 + $2) * 60 + $3) * 1e6 + substr($4, 1, 6) }'; }
# OpenSM log line "Mon DD HH:MM:SS usec [...]" -> microseconds since midnight
log_us() { awk '{ split($3, t, ":"); printf "%.0f\n", ((t[1] * 60 + t[2]) * 60 + t[3]) * 1e6 + $4 }'; }
log_lines=$(wc -l <"$RY_OPENSM_LOG")
# Straight to the console (ry_ibsim_cmd waits 0.3 s after it).
t0_us=$(now_us)
t0=$(date +%s%N)
printf 'Unlink "%s"[%s]\n' "$leaf" "$uplink" >&"$RY_IBSIM_FD"
moved_ms=""
pair_ns=0
declare -A still
while read -r l; do still[$l]=1; done <affected
if [[ $mode == fast && $poll == quiet ]]; then
  # Every 20 ms, one grep: a few % of a core.
  while (($(ry_log_count 'fast path: trap from ') <= traps)); do
    (($(date +%s%N) - t0 < 300 * 1000000000)) || ry_fail "no fast-path line 300 s after the Unlink"
    sleep 0.02
  done
fi
while ((${#still[@]})); do
  now=$(date +%s%N)
  ((now - t0 < 300 * 1000000000)) || ry_fail "entries still on the dead port after 300 s"
  lft "$lo" "$hi" >now.lft
  while read -r l p; do
    if [[ -n "${still[$l]:-}" && "$p" != "$uplink" ]]; then
      unset "still[$l]"
      pair_ns=$((pair_ns + now - t0))
    fi
  done <now.lft
done
moved_ms=$((($(date +%s%N) - t0) / 1000000))
ry_wait_log 'SUBNET UP' 900 "$RY_OPENSM_LOG" $((ups + 1))
up_ms=$((($(date +%s%N) - t0) / 1000000))
push_line=$(tail -n +"$((log_lines + 1))" "$RY_OPENSM_LOG" | grep -m1 'fast path: trap from .*: path push: ' || true)
acked_us=$(log_us <<<"$push_line" || true)
acked=n/a
[[ -z "$push_line" ]] || acked="$(awk -v a="$t0_us" -v b="$acked_us" 'BEGIN { d = b - a; if (d < 0) d += 86400e6; printf "%.0f", d / 1000 }') ms"
# The line is logged after the digests of the new tables, which the plugin
# computes once every block is acknowledged: their time comes off.
digest_ms=$(sed -n 's/.*; digests after the push \([0-9.]*\) ms.*/\1/p' <<<"$push_line")
if [[ -n "$digest_ms" && "$acked" != n/a ]]; then
  acked="$(awk -v a="${acked% ms}" -v d="$digest_ms" 'BEGIN { printf "%.0f", a - d }') ms"
fi
# CA columns pushed first: when they were acknowledged (push end - push + CA).
if [[ "$push_line" == *"the CA columns first, acknowledged "* && "$acked" != n/a ]]; then
  push_ms=$(sed -n 's/.* push \([0-9.]*\) ms (lock.*/\1/p' <<<"$push_line")
  ca_ms=$(sed -n 's/.*the CA columns first, acknowledged \([0-9]*\) ms into the push.*/\1/p' <<<"$push_line")
  acked="$acked (CA columns $(awk -v a="${acked% ms}" -v p="$push_ms" -v c="$ca_ms" 'BEGIN { printf "%.0f", a - p + c }') ms)"
fi
awk -v c="$cas" -v ns="$pair_ns" -v e="$entries" -v m="$moved_ms" -v u="$up_ms" -v a="$acked" 'BEGIN {
  until = a == "n/a" ? u : a + 0  # leading number: every block acknowledged
  printf "entries %d  acked %s  moved %d ms  subnet_up %d ms  pair_s %.1f  bound_s %.1f\n", e, a, m, u,
    c * ns / 1e9, c * e * until / 1000 }'
grep -o 'railyard: pass [0-9]*: time .*' "$RY_OPENSM_LOG" | tail -n 1 | sed 's/^/  /'
grep -o 'railyard: fast path: .*' "$RY_OPENSM_LOG" | tail -n 2 | sed 's/^/  /' || true
