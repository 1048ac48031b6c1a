#!/usr/bin/env bash
# measure_drain.sh — drain-to-LFTs-in-place latency through the whole stack:
# ibsim fabric, OpenSM with railyard's plugin, railyardd (live). Drains a leaf
# uplink with railyardctl, waits until railyardd reports the request applied
# (the plugin's ucast_routing_done for it), then undrains; prints the
# controller's latency for each, the changed LFT blocks and railyard's routing
# callback time from OpenSM's log, and how the plugin applied it (its fast
# path's line: blocks changed, sent, acknowledged, stage times).
#   bash scripts/measure_drain.sh [BUILD_DIR (build/release)] -- TOPO-GEN-ARGS...
#   bash scripts/measure_drain.sh build/release -- --servers 2048 --rails 8 --levels 3 --radix 64
# RY_FAST_PATH=opensm measures OpenSM's force_reroute instead of the plugin's
# fast path (the plugin's `fast_path` setting).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath "${1:-$root/build/release}")
shift || true
[[ "${1:-}" == -- ]] && shift
gen=("$@")
((${#gen[@]})) || gen=(--servers 64 --rails 8 --levels 2 --radix 32)
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
ry_require_tools ibsim opensm curl jq
export LD_LIBRARY_PATH=$build/sm_plugin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ry_tmpdir

"$build/railyard" topo gen "${gen[@]}" -o fabric.net 2>/dev/null
echo "fabric: ${gen[*]}: $(grep -c '^Ca' fabric.net) CAs, $(grep -c '^Switch' fabric.net) switches"
(umask 077 && echo "op-token-0123456789abcdef" >op.token)
cat >railyardd.yaml <<CONF
tokens: [{name: bench, role: operator, token_file: op.token}]
database: state.db
fabric: {source: live, plugin_socket: $RY_TMP/p.sock}
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 900}
log_level: warn
CONF
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s/p.sock\nfast_path: %s\n' \
  "$RY_TMP" "$RY_TMP" "${RY_FAST_PATH:-push}" >plugin.yaml
ry_start_railyardd "$build" railyardd.yaml
ry_start_ibsim fabric.net
start=$SECONDS
ry_start_opensm --timeout 900 --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/plugin.yaml" --conf "routing_engine railyard"
echo "OpenSM SUBNET UP after $((SECONDS - start)) s, engine $(ry_opensm_engine)"
healthy() { [[ $(curl -s -o /dev/null -w '%{http_code}' "$RY_URL/api/v1/health") == 200 ]]; }
ry_wait_for 900 "railyardd to have the fabric" healthy
export RAILYARD_URL=$RY_URL RAILYARD_TOKEN_FILE=$RY_TMP/op.token
ctl() { "$build/railyardctl" "$@"; }
radix=$(awk '/^Switch/ { print $2; exit }' fabric.net)

wait_applied() {
  local id=$1 deadline=$((SECONDS + 900)) r
  while :; do
    r=$(ctl --json reroutes | jq -c --arg id "$id" '.reroutes[] | select(.id == $id)')
    [[ $(jq -r .status <<<"$r") != pending ]] && break
    ((SECONDS < deadline)) || ry_fail "reroute $id still pending"
    sleep 0.1
  done
  echo "$r"
}
report() {
  local what=$1 r=$2
  printf '%-8s status %-8s latency %8.1f ms  %s\n' "$what" "$(jq -r .status <<<"$r")" \
    "$(jq -r '.latency_ms // 0' <<<"$r")" "$(jq -r .detail <<<"$r")"
  grep -o 'railyard: pass [0-9]*: time .*' "$RY_OPENSM_LOG" | tail -n 1 | sed 's/^/         /'
  { grep -o 'railyard: fast path: .*' "$RY_OPENSM_LOG" || true; } | tail -n 1 | sed 's/^/         /'
}
t0=$(date +%s.%N)
out=$(ctl --json drain link "leaf g000 r1" $((radix / 2 + 1)) --reason benchmark)
t1=$(date +%s.%N)
echo "drain request answered in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms (what-if routing included):" \
  "$(jq -c '.impact | {pairs_rerouted, lft_blocks_changed, route_ms}' <<<"$out")"
report drain "$(wait_applied "$(jq -r .reroute.id <<<"$out")")"
out=$(ctl --json undrain "$(jq -r .drain.id <<<"$out")")
report undrain "$(wait_applied "$(jq -r .reroute.id <<<"$out")")"
