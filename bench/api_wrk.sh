#!/usr/bin/env bash
# api_wrk.sh — railyardd's REST API under load (issue 5 benchmark): an offline
# 16,384-CA fabric (2,048 servers x 8 rails, 3 levels, radix 64), railyardd on
# loopback, wrk against GET fabric, hosts and routes/{src}/{dst}. Prints req/s
# and latency percentiles per endpoint.
#   bash bench/api_wrk.sh [BUILD_DIR (build/release)] [SECONDS (10)] [SERVERS (2048)]
# Needs wrk (Debian package). Not a test: numbers depend on the machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath "${1:-$root/build/release}")
secs=${2:-10}
servers=${3:-2048}
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
ry_require_tools wrk curl jq
ry_tmpdir

"$build/railyard" topo gen --servers "$servers" --rails 8 --levels 3 --radix 64 -o fabric.net 2>/dev/null
token=bench-token-0123456789abcdef
cat >railyardd.yaml <<CONF
tokens: [{name: bench, role: viewer, token: "$token"}]
database: state.db
fabric: {source: offline, topology_file: fabric.net}
log_level: warn
CONF
start=$SECONDS
ry_start_railyardd "$build" railyardd.yaml
echo "railyardd up in $((SECONDS - start)) s on $RY_URL ($(grep -c '^Ca' fabric.net) CAs, $(grep -c '^Switch' fabric.net) switches)"
grep -o 'fabric: .*' "$RY_RAILYARDD_LOG" || true

bench() {
  local name=$1 path=$2 threads=$3 conns=$4 bytes
  bytes=$(curl -s -H "Authorization: Bearer $token" "$RY_URL$path" | wc -c)
  echo
  echo "== GET $path  ($bytes bytes, $threads threads, $conns connections, ${secs}s)"
  wrk -t "$threads" -c "$conns" -d "${secs}s" --latency -H "Authorization: Bearer $token" "$RY_URL$path" |
    grep -E 'Requests/sec|Latency|50%|90%|99%|Transfer/sec|requests in|Non-2xx'
}
hosts=$(curl -s -H "Authorization: Bearer $token" "$RY_URL/api/v1/hosts")
src=$(jq -r '.hosts[0].cas[3].name | @uri' <<<"$hosts")
dst=$(jq -r '.hosts[-1].cas[3].name | @uri' <<<"$hosts")
bench fabric /api/v1/fabric 2 16
bench routes "/api/v1/routes/$src/$dst" 2 16
bench hosts /api/v1/hosts 1 4
echo
echo "railyardd RSS: $(ps -o rss= -p "$RY_RAILYARDD_PID" | awk '{printf "%.0f MB", $1 / 1024}')"
