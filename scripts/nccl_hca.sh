#!/usr/bin/env bash
# nccl_hca.sh — NCCL_IB_HCA for this host from railyard's per-rail health:
# every rail whose health is healthy or degraded, none that is down, drained
# or isolated (its traffic could not leave the leaf). A job launcher runs it
# on each host before starting the ranks:
#
#   export NCCL_IB_HCA=$(scripts/nccl_hca.sh)            # "=mlx5_0,mlx5_1,mlx5_3"
#   scripts/nccl_hca.sh --host node017                   # another host
#   scripts/nccl_hca.sh --watch                          # a new line on every change
#
# The leading "=" makes NCCL match the names exactly (without it "mlx5_1" also
# selects mlx5_10 and mlx5_11). The device is the CA description's last word
# ("node017 mlx5_3" -> mlx5_3), as the default rail naming has it.
#
# Environment: RAILYARD_URL (default http://127.0.0.1:8640), RAILYARD_TOKEN_FILE
# or RAILYARD_TOKEN (a viewer token). Needs curl and jq.
# Exit: 0 printed; 1 railyardd unreachable or an error; 2 usage; 3 no usable rail.
set -euo pipefail

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
HOST=$(hostname -s)
WATCH=0
while (($#)); do
  case $1 in
    --host) HOST=${2:?--host needs a name}; shift 2 ;;
    --watch) WATCH=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "nccl_hca.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null && command -v curl >/dev/null || { echo "nccl_hca.sh: needs curl and jq" >&2; exit 1; }
URL=${RAILYARD_URL:-http://127.0.0.1:8640}
TOKEN=${RAILYARD_TOKEN:-}
if [[ -z "$TOKEN" && -n "${RAILYARD_TOKEN_FILE:-}" ]]; then TOKEN=$(tr -d ' \t\r\n' <"$RAILYARD_TOKEN_FILE"); fi
AUTH=()
[[ -n "$TOKEN" ]] && AUTH=(-H "Authorization: Bearer $TOKEN")
# The value from one host's rails document (GET /hosts/{host}/rails).
FILTER='[.cas[] | select(.health == "healthy" or .health == "degraded") | .name | split(" ") | last] | join(",")'
host_path=$(jq -rn --arg h "$HOST" '$h | @uri')

if ((WATCH)); then
  # Server-sent events: one "data:" line per change of this host's rails.
  curl -sS -N --fail-with-body "${AUTH[@]}" "$URL/api/v1/rails/events?host=$host_path" |
    while IFS= read -r line; do
      [[ "$line" == data:* ]] || continue
      value=$(jq -r "$FILTER" <<<"${line#data: }")
      echo "=${value}"
    done
  exit 1  # the stream ended: railyardd went away
fi

body=$(curl -sS --fail-with-body "${AUTH[@]}" "$URL/api/v1/hosts/$host_path/rails") || {
  echo "nccl_hca.sh: $URL: ${body:-no answer}" >&2
  exit 1
}
value=$(jq -r "$FILTER" <<<"$body")
if [[ -z "$value" ]]; then
  echo "nccl_hca.sh: $HOST has no usable rail: $(jq -c '[.cas[] | {rail, health}]' <<<"$body")" >&2
  exit 3
fi
echo "=$value"
