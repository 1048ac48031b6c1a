#!/usr/bin/env bash
# Partitions of railyardd from etcd, on one host (docs/ha.md, the failure
# matrix): three etcd members, three railyardd (offline), each member talking
# to etcd through its own relay (tests/tools/cut_proxy.py) whose path the test
# cuts, as a network that drops every packet would.
#  1. The leader's path to etcd is cut while the others' are not: it stops
#     accepting mutations (503, "etcd") before another member takes the lead
#     (both measured on the test's clock), within the lease TTL; meanwhile it
#     still serves reads; the new leader takes a drain.
#  2. The path heals: the old leader follows the new one, catches up, holds
#     every drain, and writes nothing of its own (the log does not move).
#  3. The leader is frozen (SIGSTOP: to everyone else, its host is cut off);
#     a mutation sent to it waits in its socket; another member takes the
#     lead; the frozen member resumes believing it leads, and the mutation is
#     refused (503), never written anywhere (the fencing compare of every
#     append), and it follows the new leader.
#  Every acknowledged drain is then on every member exactly once.
#
# Usage (ctest does this): ha_partition_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
HA_BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
# shellcheck source=ha_lib.sh
source "$SRC/tests/integration/ha_lib.sh"
ry_require_tools curl jq etcd etcdctl python3
ry_tmpdir
ha_setup
START=$SECONDS

"$RAILYARD" topo gen --servers 16 --rails 4 --radix 16 -o "$RY_TMP/f.net" 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
ha_start_etcd_cluster

# Member i reaches etcd member i through relay i, and nothing else.
for i in 0 1 2; do
  ha_start_relay "$i"
  ha_config "$i" "$RY_TMP/f.net" "${HA_RELAY_URLS[$i]}"
  ha_start_railyardd "$i"
done
has_leader() { [[ -n $(ha_leader) ]]; }
ry_wait_for 20 "a leader" has_leader
L=$(ha_leader)
ry_log "member m$L leads"

: >acked.txt
drain() {  # KEY NODE PORT
  local res
  res=$(ha_drain "$1" "{\"target\":\"link\",\"node\":\"$2\",\"port\":$3,\"reason\":\"partition\"}" 20)
  [[ -n "$res" ]] || ry_fail "drain $1 not acknowledged within 20 s"
  echo "$1 $res" >>acked.txt
}
drain before "leaf g000 r0" 9
role_of() { ha_health "$1" | jq -r '.ha.role // "down"'; }

# --- 1. the leader cut off from etcd ------------------------------------------------
cut_ms=$(ha_now_ms)
kill -USR1 "${HA_RELAY_PIDS[$L]}"
down_ms="" new="" new_ms=""
until [[ -n "$down_ms" && -n "$new" ]]; do
  now=$(ha_now_ms)
  ((now - cut_ms < 15000)) || ry_fail "15 s after the cut: m$L stepped down at '${down_ms}', new leader '${new}'"
  if [[ -z "$down_ms" && $(role_of "$L") != leader ]]; then down_ms=$(($(ha_now_ms) - cut_ms)); fi
  for i in 0 1 2; do
    [[ $i == "$L" || -n "$new" ]] && continue
    [[ $(role_of "$i") == leader ]] && { new=$i; new_ms=$(($(ha_now_ms) - cut_ms)); }
  done
  sleep 0.05
done
ry_log "m$L cut from etcd: it stopped leading after ${down_ms} ms; m$new leads after ${new_ms} ms"
# What matters: it stops before its lease can expire and another member
# take the lead (its last keepalive was up to TTL/3 before the cut, so that
# can be 2-3 s after it: the order is asserted, not a figure).
((down_ms < new_ms)) || ry_fail "m$new led (${new_ms} ms) before m$L stopped (${down_ms} ms): two leaders"
((new_ms < 5000)) || ry_fail "m$new took the lead ${new_ms} ms after the cut (>= 5 s)"
out=$(ha_req POST "$(ha_url "$L")" /api/v1/drains '{"target":"link","node":"leaf g001 r1","port":9,"reason":"cut"}')
ry_assert_eq 503 "$(tail -n1 <<<"$out")" "POST /drains on m$L cut from etcd"
msg=$(sed '$d' <<<"$out" | jq -r .error.message)
ry_assert_contains "$msg" "etcd"
out=$(ha_req GET "$(ha_url "$L")" /api/v1/drains)
ry_assert_eq 200 "$(tail -n1 <<<"$out")" "GET /drains on m$L cut from etcd"
ry_assert_eq 1 "$(sed '$d' <<<"$out" | jq '[.drains[] | select(.reason == "partition")] | length')" "drains read on m$L"
drain during "leaf g000 r1" 10
ry_pass "m$L cut from etcd stopped leading after ${down_ms} ms, before m$new led (${new_ms} ms); it refused a drain ($msg) and served reads"

# --- 2. the path heals ----------------------------------------------------------------
kill -USR2 "${HA_RELAY_PIDS[$L]}"
seq_now=$(ha_health "$new" | jq -r .ha.applied_seq)
ry_wait_for 15 "m$L following m$new at entry $seq_now" bash -c \
  "curl -s $(ha_url "$L")/api/v1/health | jq -e '.ha.role == \"follower\" and .ha.leader == \"m$new\" and .ha.applied_seq == $seq_now' >/dev/null"
sleep 1
ry_assert_eq "$seq_now" "$(ha_health "$new" | jq -r .ha.applied_seq)" "log entry after m$L healed"
out=$(ha_req POST "$(ha_url "$L")" /api/v1/drains '{"target":"link","node":"leaf g001 r1","port":9,"reason":"cut"}')
ry_assert_eq 503 "$(tail -n1 <<<"$out")" "POST /drains on the healed m$L"
ry_assert_eq "m$new" "$(sed '$d' <<<"$out" | jq -r .error.leader)" "the leader m$L names"
ry_pass "healed, m$L follows m$new, caught up, wrote nothing"

# --- 3. the leader frozen, then resumed ------------------------------------------------
F=$new
frozen_ms=$(ha_now_ms)
kill -STOP "${HA_RY_PIDS[$F]}"
# Sent while it is frozen: the request waits in its socket.
ha_req POST "$(ha_url "$F")" /api/v1/drains '{"target":"link","node":"leaf g001 r2","port":11,"reason":"stale"}' \
  "" stale-key >stale.out &
STALE_PID=$!
new=""
until [[ -n "$new" ]]; do
  (($(ha_now_ms) - frozen_ms < 15000)) || { kill -CONT "${HA_RY_PIDS[$F]}"; ry_fail "no new leader 15 s after m$F froze"; }
  for i in 0 1 2; do
    [[ $i == "$F" || -n "$new" ]] && continue
    [[ $(role_of "$i") == leader ]] && new=$i
  done
  sleep 0.05
done
took=$(($(ha_now_ms) - frozen_ms))
kill -CONT "${HA_RY_PIDS[$F]}"
wait "$STALE_PID" || true
code=$(tail -n1 stale.out)
ry_log "m$F frozen: m$new leads after ${took} ms; m$F resumed and answered the request it held: $code $(sed '$d' stale.out | jq -c .error 2>/dev/null)"
ry_assert_eq 503 "$code" "the drain the frozen m$F held, answered after it resumed"
[[ $(sed '$d' stale.out | jq -r .error.message) != *"leader m$F"* ]] ||
  ry_fail "the resumed m$F named itself as the leader: $(sed '$d' stale.out | jq -r .error.message)"
ry_wait_for 15 "m$F following m$new" bash -c \
  "curl -s $(ha_url "$F")/api/v1/health | jq -e '.ha.role == \"follower\" and .ha.leader == \"m$new\"' >/dev/null"
drain after "leaf g000 r2" 11
ry_pass "m$F frozen: m$new led after ${took} ms; resumed, m$F refused what it held and follows"

# Every acknowledged drain once on every member; the stale one nowhere.
lseq=$(ha_health "$new" | jq -r .ha.applied_seq)
for i in 0 1 2; do
  ry_wait_for 10 "m$i at log entry $lseq" bash -c "[[ \$(curl -s $(ha_url "$i")/api/v1/health | jq -r .ha.applied_seq) -ge $lseq ]]"
  drains=$(ha_req GET "$(ha_url "$i")" /api/v1/drains | sed '$d')
  while read -r _key id _att; do
    ry_assert_eq 1 "$(jq --argjson id "$id" '[.drains[] | select(.id == $id)] | length' <<<"$drains")" "drain $id on m$i"
  done <acked.txt
  ry_assert_eq 3 "$(jq '[.drains[] | select(.reason == "partition")] | length' <<<"$drains")" "drains on m$i"
  ry_assert_eq 0 "$(jq '[.drains[] | select(.reason == "stale" or .reason == "cut")] | length' <<<"$drains")" \
    "refused drains on m$i"
done
ry_pass "3 acknowledged drains once on every member, the refused ones nowhere ($((SECONDS - START)) s)"
