#!/usr/bin/env bash
# ha_lib.sh — helpers for the high-availability tests (ha_controller_test.sh,
# bench/ha_soak.sh): three etcd members and three railyardd (offline, one
# topology file) on 127.0.0.1, each with its own ports and folder. Source
# after lib.sh and ry_tmpdir. Every process is stopped by its PID.

HA_ETCD_PIDS=(0 0 0)
HA_RY_PIDS=(0 0 0)
HA_RELAY_PIDS=(0 0 0)   # ha_start_relay: member i's path to etcd
HA_CLIENT=()   # client ports of the etcd members
HA_PEER=()
HA_API=()      # railyardd ports
HA_TOKEN=operator-token-0123456789

# Nine distinct free ports, held until all are chosen.
_ha_ports() {
  python3 -c '
import socket
ss=[socket.socket() for _ in range(9)]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'
}

ha_setup() {
  local ports
  read -r -a ports <<<"$(_ha_ports)"
  HA_CLIENT=("${ports[0]}" "${ports[1]}" "${ports[2]}")
  HA_PEER=("${ports[3]}" "${ports[4]}" "${ports[5]}")
  HA_API=("${ports[6]}" "${ports[7]}" "${ports[8]}")
  HA_CLUSTER="e0=http://127.0.0.1:${HA_PEER[0]},e1=http://127.0.0.1:${HA_PEER[1]},e2=http://127.0.0.1:${HA_PEER[2]}"
  HA_ETCD_URLS="http://127.0.0.1:${HA_CLIENT[0]}, http://127.0.0.1:${HA_CLIENT[1]}, http://127.0.0.1:${HA_CLIENT[2]}"
  trap '_ha_cleanup' EXIT
}

_ha_cleanup() {
  local rc=$? i
  set +e
  for i in 0 1 2; do
    if [[ $rc -ne 0 && -f "$RY_TMP/ry$i/railyardd.log" ]]; then
      echo "---- last lines of railyardd $i ----" >&2
      tail -n 12 "$RY_TMP/ry$i/railyardd.log" >&2
    fi
  done
  for i in 0 1 2; do ha_kill_railyardd "$i" KILL; done
  for i in 0 1 2; do ha_stop_etcd "$i"; done
  for i in 0 1 2; do
    [[ ${HA_RELAY_PIDS[$i]} != 0 ]] && { kill -TERM "${HA_RELAY_PIDS[$i]}" 2>/dev/null; wait "${HA_RELAY_PIDS[$i]}" 2>/dev/null; }
  done
  (exit $rc)
  _ry_cleanup
}

# ha_start_etcd I [new|existing]
ha_start_etcd() {
  local i=$1 state=${2:-new}
  mkdir -p "$RY_TMP/etcd$i"
  etcd --name "e$i" --data-dir "$RY_TMP/etcd$i/data" \
    --listen-client-urls "http://127.0.0.1:${HA_CLIENT[$i]}" --advertise-client-urls "http://127.0.0.1:${HA_CLIENT[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${HA_PEER[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${HA_PEER[$i]}" \
    --initial-cluster "$HA_CLUSTER" --initial-cluster-state "$state" --initial-cluster-token "ry-$$" \
    --heartbeat-interval 50 --election-timeout 500 >>"$RY_TMP/etcd$i/etcd.log" 2>&1 &
  HA_ETCD_PIDS[$i]=$!
}

ha_stop_etcd() {
  local i=$1 pid=${HA_ETCD_PIDS[$1]}
  [[ $pid != 0 ]] || return 0
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  HA_ETCD_PIDS[$i]=0
}

# ha_start_etcd_cluster: the three members, healthy within 30 s.
ha_start_etcd_cluster() {
  local i
  for i in 0 1 2; do ha_start_etcd "$i"; done
  ry_wait_for 30 "etcd cluster healthy" ha_etcd_healthy
}

ha_etcd_healthy() {
  ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:${HA_CLIENT[0]},127.0.0.1:${HA_CLIENT[1]},127.0.0.1:${HA_CLIENT[2]}" \
    --command-timeout=1s endpoint health >/dev/null 2>&1
}

# ha_start_relay I: a relay (tests/tools/cut_proxy.py) to etcd member I, whose
# path the test cuts (kill -USR1) and heals (kill -USR2); its URL is
# HA_RELAY_URLS[I] once it listens.
HA_RELAY_URLS=("" "" "")
ha_start_relay() {
  local i=$1 deadline=$((SECONDS + 10))
  "$RY_PYTHON" "$SRC/tests/tools/cut_proxy.py" "${HA_CLIENT[$i]}" "$RY_TMP/relay$i.port" 2>>"$RY_TMP/relay$i.log" &
  HA_RELAY_PIDS[$i]=$!
  until [[ -s "$RY_TMP/relay$i.port" ]]; do
    ((SECONDS < deadline)) || ry_fail "relay $i to etcd did not listen within 10 s: $(cat "$RY_TMP/relay$i.log")"
    sleep 0.05
  done
  HA_RELAY_URLS[$i]="http://127.0.0.1:$(cat "$RY_TMP/relay$i.port")"
}

# ha_config I TOPOLOGY [ETCD_URLS]: railyardd I's config in ry$I/ (etcd: the
# three members, or ETCD_URLS).
ha_config() {
  local i=$1 topo=$2 etcd=${3:-$HA_ETCD_URLS}
  mkdir -p "$RY_TMP/ry$i"
  cat >"$RY_TMP/ry$i/railyardd.yaml" <<CONF
listen: {address: 127.0.0.1, port: ${HA_API[$i]}}
tokens: [{name: ops, role: operator, token: "$HA_TOKEN"}]
database: state.db
fabric: {source: offline, topology_file: $topo}
policy: {output_file: policy.yaml}
ha:
  etcd: [$etcd]
  member: m$i
  advertise_api: http://127.0.0.1:${HA_API[$i]}
  lease_ttl_s: 3
CONF
}

ha_start_railyardd() {
  local i=$1
  (cd "$RY_TMP/ry$i" && exec "$HA_BIN/railyardd" --config railyardd.yaml >>railyardd.log 2>&1) &
  HA_RY_PIDS[$i]=$!
}

# ha_kill_railyardd I [KILL]
ha_kill_railyardd() {
  local i=$1 pid=${HA_RY_PIDS[$1]}
  [[ $pid != 0 ]] || return 0
  if [[ ${2:-} == KILL ]]; then
    kill -KILL "$pid" 2>/dev/null || true
  else
    kill -TERM "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  HA_RY_PIDS[$i]=0
}

ha_url() { echo "http://127.0.0.1:${HA_API[$1]}"; }

# ha_health I: /health's JSON of member I ("{}" when it does not answer).
ha_health() { curl -s --max-time 2 "$(ha_url "$1")/api/v1/health" 2>/dev/null || echo '{}'; }
ha_role() { ha_health "$1" | jq -r '.ha.role // "down"' 2>/dev/null || echo down; }

# ha_leader: the index of the member that says it leads, or nothing.
ha_leader() {
  local i
  for i in 0 1 2; do
    [[ ${HA_RY_PIDS[$i]} != 0 ]] || continue
    [[ $(ha_role "$i") == leader ]] && { echo "$i"; return 0; }
  done
  return 0
}

# ha_req METHOD URL PATH [BODY] [KEY]: curl; prints body then the status on the last line.
ha_req() {
  local method=$1 url=$2 path=$3 body=${4:-} key=${5:-}
  local args=(-s -X "$method" -w '\n%{http_code}' --max-time 5 -H "Authorization: Bearer $HA_TOKEN")
  [[ -n "$body" ]] && args+=(-H 'Content-Type: application/json' --data "$body")
  [[ -n "$key" ]] && args+=(-H "Idempotency-Key: $key")
  curl "${args[@]}" "$url$path" 2>/dev/null || printf '\n000'
}

# ha_drain KEY BODY DEADLINE_S: sends the drain with its Idempotency-Key to a
# member, follows a 503's leader, tries the others, until it is acknowledged
# (201, or 200 replayed) or the deadline passes. Prints "ID ATTEMPTS", or
# nothing (not acknowledged).
ha_drain() {
  local key=$1 body=$2 deadline=$((SECONDS + $3)) attempts=0 i=0 url out code leader_url
  url=$(ha_url 0)
  while ((SECONDS < deadline)); do
    attempts=$((attempts + 1))
    out=$(ha_req POST "$url" /api/v1/drains "$body" "$key")
    code=$(tail -n1 <<<"$out")
    out=$(sed '$d' <<<"$out")
    if [[ $code == 201 || $code == 200 ]]; then
      echo "$(jq -r '.drain.id' <<<"$out") $attempts"
      return 0
    fi
    if [[ $code == 4* ]]; then
      echo "ha_drain $key: $code $out" >&2
      return 0
    fi
    leader_url=""
    [[ $code == 503 ]] && leader_url=$(jq -r '.error.leader_url // empty' <<<"$out" 2>/dev/null)
    if [[ -n "$leader_url" && "$leader_url" != "$url" ]]; then
      url=$leader_url
    else
      i=$(((i + 1) % 3))
      url=$(ha_url "$i")
      sleep 0.1
    fi
  done
}

# Milliseconds on the shell's own clock (no process per poll: the machine may be loaded).
ha_now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# ha_kill_leader_and_wait OLD LIMIT_MS [CMD...]: kill -9 of member OLD, runs
# CMD (while no member leads), then polls (every 50 ms) until another running
# member says it leads. Sets HA_NEW (its index) and HA_TAKEOVER_MS (from the
# kill); fails after LIMIT_MS.
ha_kill_leader_and_wait() {
  local old=$1 limit=$2 t0 i
  shift 2
  t0=$(ha_now_ms)
  ha_kill_railyardd "$old" KILL
  (($#)) && "$@"
  HA_NEW=""
  until [[ -n "$HA_NEW" ]]; do
    for i in 0 1 2; do
      [[ $i == "$old" || ${HA_RY_PIDS[$i]} == 0 ]] && continue
      curl -s --max-time 1 "$(ha_url "$i")/api/v1/health" 2>/dev/null | grep -q '"role":"leader"' && HA_NEW=$i
    done
    (($(ha_now_ms) - t0 < limit)) || ry_fail "no new leader $((limit / 1000)) s after kill -9 of m$old"
    [[ -n "$HA_NEW" ]] || sleep 0.05
  done
  HA_TAKEOVER_MS=$(($(ha_now_ms) - t0))
}
