#!/usr/bin/env bash
# The per-host per-rail health feed for job launchers, against a real
# railyardd (offline, 32 servers x 4 rails): GET /hosts/{host}/rails,
# scripts/nccl_hca.sh turning it into NCCL_IB_HCA (a drained rail left out),
# the server-sent-event stream /rails/events (a change arrives as an event
# within a second; other hosts' changes do not reach a filtered stream), the
# cap of 64 streams (the 65th is a 503, and a closed stream frees its slot),
# and railyardctl's rails and kubernetes commands.
#
#   bash rail_health_feed_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
BIN=$(realpath "$3")
CTL=$BIN/railyardctl
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools jq curl python3
ry_tmpdir
STREAM_PIDS=()
# Our stream clients, by PID (nccl_hca.sh --watch's curl is its child).
stop_streams() {
  local p
  for p in "${STREAM_PIDS[@]}"; do
    pkill -TERM -P "$p" 2>/dev/null || true
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  STREAM_PIDS=()
}
# set +e: under errexit "(exit $rc)" would end the trap before _ry_cleanup.
trap 'rc=$?; set +e; stop_streams; (exit $rc); _ry_cleanup' EXIT
T0=$SECONDS

"$RAILYARD" topo gen --servers 32 --rails 4 --radix 16 -o roft.net >/dev/null 2>&1
VIEWER=viewer-token-0123456789
OPERATOR=operator-token-0123456789
cat >railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens:
  - {name: ops, role: operator, token: "$OPERATOR"}
  - {name: launcher, role: viewer, token: "$VIEWER"}
database: state.db
fabric: {source: offline, topology_file: roft.net}
policy: {output_file: policy.out.yaml}
CONF
ry_start_railyardd "$BIN" railyardd.yaml
export RAILYARD_URL=$RY_URL RAILYARD_TOKEN=$VIEWER RY_TOKEN=$VIEWER

# ---- one host's rails -----------------------------------------------------------
out=$(ry_api GET /api/v1/hosts/node005/rails)
ry_assert_eq 200 "$(tail -n1 <<<"$out")" "GET hosts/node005/rails"
body=$(sed '$d' <<<"$out")
ry_assert_eq "node005 4 4" "$(jq -r '"\(.host) \(.rails) \(.rails_healthy)"' <<<"$body")" "host, rails, healthy"
ry_assert_eq "0 1 2 3" "$(jq -r '[.cas[].rail] | join(" ")' <<<"$body")" "rails in order"
ry_assert_eq "leaf g000 r2" "$(jq -r '.cas[2].leaf' <<<"$body")" "node005's rail-2 leaf (group 0: node001-node008)"
ry_assert_eq 404 "$(ry_api GET /api/v1/hosts/nosuchhost/rails | tail -n1)" "an unknown host"
ry_assert_eq 401 "$(ry_api GET /api/v1/hosts/node005/rails "" none | tail -n1)" "a token is needed"
ry_assert_eq "=mlx5_0,mlx5_1,mlx5_2,mlx5_3" "$(bash "$SRC/scripts/nccl_hca.sh" --host node005)" "NCCL_IB_HCA, all healthy"
ry_pass "GET /hosts/{host}/rails and nccl_hca.sh"

# ---- the event stream -----------------------------------------------------------
curl -sS -N -H "Authorization: Bearer $VIEWER" "$RY_URL/api/v1/rails/events?host=node005" >events.txt 2>events.err &
STREAM_PIDS+=($!)
curl -sS -N -H "Authorization: Bearer $VIEWER" "$RY_URL/api/v1/rails/events?host=node020" >other.txt 2>&1 &
STREAM_PIDS+=($!)
bash "$SRC/scripts/nccl_hca.sh" --host node005 --watch >watch.txt 2>&1 &
STREAM_PIDS+=($!)
data_lines() { grep -c '^data: ' "$1" 2>/dev/null || true; }
# at_least FILE N: FILE has N "data:" lines (for ry_wait_for, which re-runs it).
at_least() { (($(data_lines "$1") >= $2)); }
lines_at_least() { (($(wc -l <"$1") >= $2)); }
ry_wait_for 5 "the first event" at_least events.txt 1
ry_wait_for 5 "the other stream's first event" at_least other.txt 1
ry_assert_eq 1 "$(data_lines events.txt)" "one event per host on connect"
# Drain node005's rail-1 cable (leaf g000 r1, port 5): the stream says so.
t_drain=$(date +%s.%N)
RAILYARD_TOKEN=$OPERATOR "$CTL" drain link "leaf g000 r1" 5 --reason "launcher test" --force >/dev/null
ry_wait_for 5 "the change as an event" at_least events.txt 2
t_event=$(date +%s.%N)
last=$(grep '^data: ' events.txt | tail -n1 | sed 's/^data: //')
ry_assert_eq "drained 3" "$(jq -r '"\(.cas[1].health) \(.rails_healthy)"' <<<"$last")" "the event's content"
ry_assert_eq "event: rails" "$(grep '^event: ' events.txt | tail -n1)" "the event's type"
ry_wait_for 5 "nccl_hca.sh --watch's new line" lines_at_least watch.txt 2
ry_assert_eq "=mlx5_0,mlx5_2,mlx5_3" "$(tail -n1 watch.txt)" "--watch follows the change"
ry_assert_eq "=mlx5_0,mlx5_2,mlx5_3" "$(bash "$SRC/scripts/nccl_hca.sh" --host node005)" "NCCL_IB_HCA without the drained rail"
sleep 0.6
ry_assert_eq 1 "$(data_lines other.txt)" "node020's stream saw nothing of node005"
latency=$(python3 -c "print(round(($t_event - $t_drain) * 1000))")
ry_pass "event stream: the drain arrived ${latency} ms after the drain command started"

# ---- at most 64 streams -------------------------------------------------------
stop_streams
# The streams just stopped free their slots once railyardd sees them gone:
# the 64 below must not find some still taken (they would be refused, and
# the 65th never).
streams_open() { curl -s -m 2 "$RY_URL/api/v1/metrics" | awk '$1 == "railyard_event_streams" {print $2}'; }
no_stream_open() { [[ "$(streams_open)" == 0 ]]; }
ry_wait_for 15 "the stopped streams' slots freed" no_stream_open
for _ in $(seq 64); do
  curl -sS -N -H "Authorization: Bearer $VIEWER" "$RY_URL/api/v1/rails/events?host=node001" >/dev/null 2>&1 &
  STREAM_PIDS+=($!)
done
# probe: the status of one more stream (a 200 stream is cut after 1 s).
probe() { curl -s -m 1 -o probe.body -w '%{http_code}' -H "Authorization: Bearer $VIEWER" \
  "$RY_URL/api/v1/rails/events?host=node001" 2>/dev/null || true; }
full() { [[ "$(probe)" == 503 ]]; }
free() { [[ "$(probe)" == 200 ]]; }
# The slots are taken as the streams open; wait until all 64 are in (64
# curl processes: seconds on a loaded 2-core machine; the cap is the point).
all_open() { [[ "$(streams_open)" == 64 ]]; }
ry_wait_for 30 "64 streams open" all_open
ry_wait_for 10 "the 65th stream refused" full
ry_assert_contains "$(jq -r .error.message probe.body)" "too many event streams" "the 503 says why"
# A client that goes away frees its slot at once (railyardd watches the
# connection, it does not wait for its next write).
kill "${STREAM_PIDS[0]}"; wait "${STREAM_PIDS[0]}" 2>/dev/null || true
ry_wait_for 5 "a slot freed by the closed stream" free
stop_streams
ry_pass "64 streams at most; a closed one frees its slot"

# ---- railyardctl rails and kubernetes ---------------------------------------------
out=$("$CTL" rails node005)
ry_assert_contains "$out" "3 of 4 rails healthy" "railyardctl rails"
ry_assert_contains "$out" "drained" "railyardctl rails shows the drained rail"
"$CTL" kubernetes -o k8s.yaml >/dev/null
python3 - k8s.yaml <<'PY' || ry_fail "the Kubernetes YAML"
import sys, json, subprocess
docs = [d for d in open(sys.argv[1]).read().split('\n---') if 'kind:' in d]
assert len(docs) == 33, len(docs)
assert 'kind: Topology' in docs[0] and 'kueue.x-k8s.io/v1alpha1' in docs[0]
n5 = [d for d in docs if 'name: node005' in d][0]
assert 'railyard.io/rail-1: drained' in n5, n5
assert 'network.topology.nvidia.com/leaf: leaf_g000_r0' in n5, n5
PY
ry_assert_eq "k8s.yaml unchanged" "$("$CTL" kubernetes -o k8s.yaml)" "no change, no write"
ry_pass "railyardctl rails and kubernetes"
ry_log "done in $((SECONDS - T0)) s"
