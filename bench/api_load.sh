#!/usr/bin/env bash
# api_load.sh — reads while the fabric changes (issue 13): an offline
# 16,384-CA fabric (2,048 servers x 8 rails, 3 levels, radix 64), railyardd on
# loopback; a steady stream of drains (RATE a second, each undrained a second
# later, so as many undrains) through the API while wrk reads GET fabric,
# hosts and routes/{src}/{dst} at once. Prints, per read endpoint, requests,
# p50/p90/p99 latency and non-2xx answers; for the mutations, how many were
# sent, answered 2xx, 5xx, and their latency; railyardd's RSS.
#   bash bench/api_load.sh [BUILD_DIR (build/release)] [SECONDS (30)] [RATE (5)] [SERVERS (2048)]
# RATE 0 is the baseline: the same reads with no change at all. A mutation
# not answered within 120 s is counted with status 000.
# Targets (docs/controller.md "Measuring"): p99 of every read <= 20 ms, zero 5xx.
# Needs wrk and curl. Not a test: numbers depend on the machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath "${1:-$root/build/release}")
secs=${2:-30}
rate=${3:-5}
servers=${4:-2048}
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
ry_require_tools wrk curl jq
ry_tmpdir

"$build/railyard" topo gen --servers "$servers" --rails 8 --levels 3 --radix 64 -o fabric.net 2>/dev/null
viewer=bench-viewer-0123456789abcdef
operator=bench-operator-0123456789abcdef
cat >railyardd.yaml <<CONF
tokens:
  - {name: bench, role: viewer, token: "$viewer"}
  - {name: drainer, role: operator, token: "$operator"}
database: state.db
fabric: {source: offline, topology_file: fabric.net}
limits: {reroutes_per_minute: 600}
log_level: warn
CONF
ry_start_railyardd "$build" railyardd.yaml
echo "railyardd on $RY_URL ($(grep -c '^Ca' fabric.net) CAs, $(grep -c '^Switch' fabric.net) switches)"
grep -o 'fabric: .*' "$RY_RAILYARDD_LOG" || true

get() { curl -s -H "Authorization: Bearer $viewer" "$RY_URL$1"; }
hosts=$(get /api/v1/hosts)
src=$(jq -r '.hosts[0].cas[3].name | @uri' <<<"$hosts")
dst=$(jq -r '.hosts[-1].cas[3].name | @uri' <<<"$hosts")
# Switch-to-switch links (CAs are named "<host> mlx5_N"): what gets drained.
get /api/v1/links | jq -r '[.links[] | select((.a.node | test("mlx5") | not) and (.b.node | test("mlx5") | not))]
  | .[:400][] | "\(.a.node)\t\(.a.port)"' >links.tsv
mapfile -t links <links.tsv
echo "${#links[@]} switch links to drain in turn; $rate drains/s, each undrained 1 s later"

# The mutations: one drain every 1/RATE s, fired without waiting for the one
# before (a steady offered rate), each undrained a second after its answer.
# Every answer's status and time go to mutations.log.
# Background jobs are waited for by PID: a bare `wait` would wait for
# railyardd too.
mutate() {
  local i=0 period
  local -a pids=()
  if [[ $rate == 0 ]]; then  # the baseline: the same reads, nothing changes
    sleep "$secs"
    return
  fi
  period=$(awk -v r="$rate" 'BEGIN { printf "%.3f", 1 / r }')
  local until=$((SECONDS + secs))
  while ((SECONDS < until)); do
    local link=${links[$((i % ${#links[@]}))]}
    local node=${link%%$'\t'*} port=${link##*$'\t'}
    (
      body=$(jq -nc --arg n "$node" --argjson p "$port" '{target: "link", node: $n, port: $p, reason: "load test"}')
      out=$(curl -s --max-time 120 -o drain.$i.json -w '%{http_code} %{time_total}' -X POST -H "Authorization: Bearer $operator" \
        -H 'Content-Type: application/json' -d "$body" "$RY_URL/api/v1/drains")
      echo "drain $out" >>mutations.log
      id=$(jq -r '.drain.id // empty' drain.$i.json 2>/dev/null || true)
      if [[ -n "$id" ]]; then
        sleep 1
        out=$(curl -s --max-time 120 -o /dev/null -w '%{http_code} %{time_total}' -X DELETE -H "Authorization: Bearer $operator" \
          "$RY_URL/api/v1/drains/$id")
        echo "undrain $out" >>mutations.log
      fi
      rm -f drain.$i.json
    ) &
    pids+=($!)
    i=$((i + 1))
    sleep "$period"
  done
  ((${#pids[@]})) && wait "${pids[@]}"
  return 0
}

read_load() {
  local name=$1 path=$2 conns=$3
  wrk -t 1 -c "$conns" -d "${secs}s" --latency -H "Authorization: Bearer $viewer" "$RY_URL$path" >"wrk.$name.txt"
}

: >mutations.log
readers=()
read_load fabric /api/v1/fabric 4 &
readers+=($!)
read_load routes "/api/v1/routes/$src/$dst" 4 &
readers+=($!)
read_load hosts /api/v1/hosts 2 &
readers+=($!)
mutate
wait "${readers[@]}"

for name in fabric routes hosts; do
  echo
  echo "== GET $name while draining"
  grep -E 'requests in|Requests/sec|50%|90%|99%|Non-2xx|Socket errors' "wrk.$name.txt"
done
echo
echo "== mutations ($rate drains/s offered for ${secs}s)"
awk '{ n[$1]++; if ($2 >= 200 && $2 < 300) ok[$1]++; if ($2 >= 500) bad[$1]++; t[$1] += $3; if ($3 > m[$1]) m[$1] = $3 }
     END { for (k in n) printf "%-8s %5d answered, %5d 2xx, %3d 5xx, mean %.3f s, max %.3f s\n", k, n[k], ok[k], bad[k], t[k] / n[k], m[k] }' \
  mutations.log
awk '$2 != "" && ($2 < 200 || $2 >= 300) { print "  not 2xx: " $0 }' mutations.log | sort | uniq -c | head
echo
echo "railyardd RSS: $(ps -o rss= -p "$RY_RAILYARDD_PID" | awk '{printf "%.0f MB", $1 / 1024}')"
