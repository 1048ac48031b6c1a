#!/usr/bin/env bash
# railyardd when its file systems fail and when it runs out of descriptors
# (issue 12, rows 2-5). The database and the policy file live on two small
# tmpfs mounts in a private mount namespace (nothing outlives the test):
#   - policy file system full: a drain is refused with 503 "nothing changed",
#     not stored, /health is degraded; once there is room again /health
#     recovers by itself and the same drain is a 201;
#   - database file system full: /health says so before any request trips on
#     it; a drain is refused the same way, the policy file is put back as it
#     was, nothing half-done; recovery the same;
#   - ulimit -n 256 and 400 connections trickling headers: /health is still
#     answered (503 "too many connections" is an answer) and railyardd does
#     not spin.
# Needs root (mount). Usage (ctest): railyardd_faults_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

if [[ -z "${RY_IN_MOUNT_NS:-}" ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "FAIL: railyardd_faults_test needs root (it mounts tmpfs file systems); the test command runs as root" >&2
    exit 1
  fi
  exec unshare --mount --propagation private env RY_IN_MOUNT_NS=1 bash "$0" "$@"
fi

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools curl jq python3
ry_tmpdir

mkdir db pol
mount -t tmpfs -o size=4m,mode=0700 tmpfs db
mount -t tmpfs -o size=1m,mode=0700 tmpfs pol
# The mounts go before lib.sh's cleanup removes the folder (railyardd first).
trap 'rc=$?; set +e; ry_stop_railyardd; umount -l "$RY_TMP/db" "$RY_TMP/pol" 2>/dev/null; (exit $rc); _ry_cleanup' EXIT

"$RAILYARD" topo gen --servers 16 --rails 4 --radix 16 -o roft.net >/dev/null
cat >railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens: [{name: ops, role: operator, token: "operator-token-0123456789"}]
database: db/state.db
fabric: {source: offline, topology_file: roft.net}
policy: {output_file: pol/policy.yaml}
limits: {reroutes_per_minute: 600}
CONF
export RY_TOKEN=operator-token-0123456789
ry_start_railyardd "$BIN" railyardd.yaml

code() { tail -n1 <<<"$1"; }
body() { if (($#)); then sed '$d' <<<"$1"; else sed '$d'; fi; }
drain_body() { echo "{\"target\":\"link\",\"node\":\"leaf g000 r0\",\"port\":$1,\"reason\":\"faults test\"}"; }
health_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$RY_URL/api/v1/health"; }
n_drains() { ry_api GET /api/v1/drains | body | jq '.drains | length'; }

ry_assert_eq 200 "$(health_code)" "healthy at start"

# ---- row 5: the policy file's file system is full -------------------------
before=$(md5sum <pol/policy.yaml)
dd if=/dev/zero of=pol/filler bs=4k 2>/dev/null || true
out=$(ry_api POST /api/v1/drains "$(drain_body 9)")
ry_assert_eq 503 "$(code "$out")" "a drain while the policy file cannot be written"
ry_assert_contains "$(body "$out")" "nothing changed" "the answer says nothing changed"
ry_assert_contains "$(body "$out")" "policy file" "the answer names the policy file"
ry_assert_eq 0 "$(n_drains)" "the refused drain is not stored"
ry_assert_eq "$before" "$(md5sum <pol/policy.yaml)" "the policy file is as it was"
h=$(curl -s --max-time 5 "$RY_URL/api/v1/health")
ry_assert_eq degraded "$(jq -r .status <<<"$h")" "health is degraded"
ry_assert_contains "$(jq -r '.reasons[]' <<<"$h")" "policy file cannot be written" "health says why"
rm pol/filler
ry_wait_for 10 "health back to ok once there is room" bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' $RY_URL/api/v1/health) == 200 ]]"
out=$(ry_api POST /api/v1/drains "$(drain_body 9)")
ry_assert_eq 201 "$(code "$out")" "the same drain once there is room (not 409: nothing was left behind)"
guid=$(body "$out" | jq -r '.drain.target' | sed 's/\[.*//')
ry_assert_file_contains pol/policy.yaml "$guid" "the policy file names the drain"
ry_pass "policy file system full: refused, nothing changed, degraded, recovered"

# ---- rows 3 and 4: the database's file system is full ----------------------
dd if=/dev/zero of=db/filler bs=4k 2>/dev/null || true
ry_wait_for 15 "health degraded while the database has no room" bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' $RY_URL/api/v1/health) == 503 ]]"
h=$(curl -s --max-time 5 "$RY_URL/api/v1/health")
ry_assert_eq failing "$(jq -r .database <<<"$h")" "health names the database (was \"ok\")"
# SQLite may still have room in pages it holds: drains go in until one does not.
refused=""
for port in 11 12 13 14 15 16; do
  policy_before=$(md5sum <pol/policy.yaml)
  out=$(ry_api POST /api/v1/drains "$(drain_body "$port")")
  if [[ $(code "$out") != 201 ]]; then refused=$port; break; fi
done
[[ -n "$refused" ]] || ry_fail "no drain was refused on a full database file system"
ry_assert_eq 503 "$(code "$out")" "a drain on a full database"
ry_assert_contains "$(body "$out")" "database cannot be written" "the answer names the database"
ry_assert_contains "$(body "$out")" "nothing changed" "the answer says nothing changed (was: 'the change was made')"
ry_assert_eq "$policy_before" "$(md5sum <pol/policy.yaml)" "the policy file is put back as it was"
acked=$((refused - 11 + 1))
ry_assert_eq "$acked" "$(n_drains)" "the refused drain is not stored"
ry_assert_eq 503 "$(health_code)" "health is degraded"
rm db/filler
ry_wait_for 10 "health back to ok" bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' $RY_URL/api/v1/health) == 200 ]]"
out=$(ry_api POST /api/v1/drains "$(drain_body "$refused")")
ry_assert_eq 201 "$(code "$out")" "the refused drain goes in once there is room"
ry_stop_railyardd
ry_pass "full database: refused, nothing changed, degraded, recovered"

# ---- row 2: out of descriptors ----------------------------------------------
ulimit -Sn 256
ry_start_railyardd "$BIN" railyardd.yaml "$RY_TMP/railyardd-fds.log"
ulimit -Sn "$(ulimit -Hn)"
cat >hold.py <<'PY'
import socket, sys, time
port, n, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
held = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    held.append(s)
open("holding", "w").write("%d\n" % len(held))
end = time.time() + seconds
while time.time() < end:
    for s in held:
        try:
            s.sendall(b"a")
        except OSError:
            pass
    time.sleep(1)
PY
port=${RY_URL##*:}
"$RY_PYTHON" hold.py "$port" 400 8 &
hold_pid=$!
ry_wait_for 20 "400 connections held" test -s holding
ticks() { awk '{print $14 + $15}' "/proc/$RY_RAILYARDD_PID/stat"; }
t0=$(ticks)
start=$(date +%s.%N)
status=$(curl -s -o health.txt -w '%{http_code}' --max-time 3 "$RY_URL/api/v1/health" || echo timeout)
took=$(echo "$(date +%s.%N) - $start" | bc)
ry_log "/health with 400 connections held and ulimit -n 256: $status in ${took}s"
[[ $status == 200 || $status == 503 ]] || ry_fail "/health was not answered within 3 s ($status)"
sleep 3
cpu=$(( $(ticks) - t0 ))
hz=$(getconf CLK_TCK)
ry_log "railyardd used $cpu ticks of CPU ($hz/s) in about 3 s"
((cpu < hz)) || ry_fail "railyardd spins with its descriptors used up: $cpu ticks in 3 s"
kill "$hold_pid" 2>/dev/null || true
wait "$hold_pid" 2>/dev/null || true
ry_wait_for 15 "health answered 200 once the connections are gone" bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' $RY_URL/api/v1/health) == 200 ]]"
ry_pass "out of descriptors: answered, no spin, recovered"
