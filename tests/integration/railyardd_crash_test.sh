#!/usr/bin/env bash
# railyardd loses nothing it acknowledged, even to kill -9 in the middle of
# requests. An offline railyardd (real SQLite file, real HTTP on loopback)
# takes a stream of drains and outside link-down events; once 10 of them have
# been acknowledged it is killed with SIGKILL while the stream goes on. After
# a restart on the same database every acknowledged drain and event is there
# (by id), drains are still applied (routes avoid them, the policy file names
# them), and a repeated event id is still recognised as a duplicate.
#
# Usage (ctest does this): railyardd_crash_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools curl jq
ry_tmpdir

"$RAILYARD" topo gen --servers 32 --rails 8 --radix 32 -o roft.net 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
cat >railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens: [{name: ops, role: operator, token: "operator-token-0123456789"}]
database: state.db
fabric: {source: offline, topology_file: roft.net}
policy: {output_file: policy.yaml}
CONF
export RY_TOKEN=operator-token-0123456789
ry_start_railyardd "$BIN" railyardd.yaml

# The request stream: per leaf, drain uplink 17 and report uplink 18 down.
# A request counts as acknowledged once its 2xx answer was read; ids go to
# acked.txt only then.
: >acked_drains.txt
: >acked_events.txt
stream() {
  local leaf out code
  for g in 000 001 002 003; do
    for r in 0 1 2 3 4 5 6 7; do
      leaf="leaf g$g r$r"
      out=$(ry_api POST /api/v1/drains "{\"target\":\"link\",\"node\":\"$leaf\",\"port\":17,\"reason\":\"crash test\"}" 2>/dev/null) || return 0
      code=$(tail -n1 <<<"$out")
      [[ $code == 201 ]] && sed '$d' <<<"$out" | jq -r '.drain.id' >>acked_drains.txt
      out=$(ry_api POST /api/v1/events/link "{\"id\":\"mon-$g-$r\",\"node\":\"$leaf\",\"port\":18,\"state\":\"down\"}" 2>/dev/null) || return 0
      code=$(tail -n1 <<<"$out")
      [[ $code == 201 ]] && sed '$d' <<<"$out" | jq -r '.event.id' >>acked_events.txt
    done
  done
}
stream &
STREAM_PID=$!
ry_wait_for 60 "10 acknowledged drains" bash -c '[[ $(wc -l <acked_drains.txt) -ge 10 ]]'
ry_stop_railyardd KILL
wait "$STREAM_PID" || true
n_drains=$(wc -l <acked_drains.txt)
n_events=$(wc -l <acked_events.txt)
ry_log "killed railyardd with SIGKILL after $n_drains acknowledged drains and $n_events events"
ry_assert_ne 0 "$n_events" "acknowledged events"

ry_start_railyardd "$BIN" railyardd.yaml
drains=$(ry_api GET /api/v1/drains | sed '$d')
while read -r id; do
  jq -e --argjson id "$id" '.drains | any(.id == $id)' <<<"$drains" >/dev/null ||
    ry_fail "acknowledged drain $id is gone after kill -9 and restart"
done <acked_drains.txt
events=$(ry_api GET '/api/v1/events?limit=1000' | sed '$d')
while read -r id; do
  jq -e --argjson id "$id" '.events | any(.id == $id)' <<<"$events" >/dev/null ||
    ry_fail "acknowledged event $id is gone after kill -9 and restart"
done <acked_events.txt
ry_pass "all $n_drains drains and $n_events events acknowledged before kill -9 are back"

# Still applied: the policy file names every drain, no route leaves a drained leaf by port 17.
for key in $(jq -r '.drains[].key' <<<"$drains"); do
  grep -qF "$key" policy.yaml || ry_fail "drain $key missing from the policy file after restart"
done
route=$(ry_api GET "/api/v1/routes/node001%20mlx5_0/node017%20mlx5_0" | sed '$d')
ry_assert_eq true "$(jq -r .delivered <<<"$route")" "route after restart"
if jq -e '.hops[] | select(.node == "leaf g000 r0" and .out_port == 17)' <<<"$route" >/dev/null; then
  ry_fail "a route still uses the drained leaf g000 r0[17]: $route"
fi
# Idempotency survives too: the first event id is a duplicate now.
out=$(ry_api POST /api/v1/events/link '{"id":"mon-000-0","node":"leaf g000 r0","port":18,"state":"down"}')
ry_assert_eq 200 "$(tail -n1 <<<"$out")" "repeated event id after restart"
ry_assert_eq true "$(sed '$d' <<<"$out" | jq -r .duplicate)" "duplicate flag"
ry_pass "drains still applied and event ids still idempotent after the restart"
