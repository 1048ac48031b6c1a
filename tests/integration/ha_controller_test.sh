#!/usr/bin/env bash
# railyardd as three members over a three-member etcd (docs/ha.md), all on
# 127.0.0.1 with their own ports and folders, offline on one topology file:
#   1. one leader is elected; followers serve reads and refuse mutations
#      with 503 naming the leader;
#   2. a stream of drains (each with its Idempotency-Key, retried on another
#      member when unanswered); the leader is killed with SIGKILL in the
#      middle -> a new leader within 5 s (measured), every acknowledged
#      drain present exactly once on every member, no target drained twice;
#   3. the old leader restarted rejoins as a follower, catches up and writes
#      nothing (the log does not move);
#   4. two of three etcd members stopped -> every member refuses mutations
#      with a clear error (no quorum) and still serves reads.
#
# Usage (ctest does this): ha_controller_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
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

"$RAILYARD" topo gen --servers 32 --rails 8 --radix 32 -o "$RY_TMP/roft.net" 2>gen.err || ry_fail "topo gen: $(cat gen.err)"
ha_start_etcd_cluster
for i in 0 1 2; do
  ha_config "$i" "$RY_TMP/roft.net"
  ha_start_railyardd "$i"
done
has_leader() { [[ -n $(ha_leader) ]]; }
ry_wait_for 20 "a leader" has_leader
L=$(ha_leader)
ry_log "member m$L leads"

# 1. Followers: reads served, mutations refused naming the leader.
for i in 0 1 2; do
  [[ $i == "$L" ]] && continue
  ry_wait_for 10 "m$i follows" bash -c "curl -s $(ha_url "$i")/api/v1/health | jq -e '.ha.role == \"follower\"' >/dev/null"
  out=$(ha_req GET "$(ha_url "$i")" /api/v1/drains)
  ry_assert_eq 200 "$(tail -n1 <<<"$out")" "GET /drains on follower m$i"
  out=$(ha_req POST "$(ha_url "$i")" /api/v1/drains '{"target":"link","node":"leaf g001 r7","port":19,"reason":"refused"}')
  ry_assert_eq 503 "$(tail -n1 <<<"$out")" "POST /drains on follower m$i"
  ry_assert_eq "m$L" "$(sed '$d' <<<"$out" | jq -r .error.leader)" "leader named by m$i's 503"
  ry_assert_contains "$(sed '$d' <<<"$out" | jq -r .error.message)" "not the leader"
done
ry_pass "followers serve reads and refuse mutations naming m$L"

# 2. A stream of drains; kill -9 the leader after 8 are acknowledged.
: >acked.txt
stream() {
  local n=0 g r p res
  for p in 17 18; do
  for g in 000 001; do
    for r in 0 1 2 3 4 5 6 7; do
      n=$((n + 1))
      res=$(ha_drain "key-$n" "{\"target\":\"link\",\"node\":\"leaf g$g r$r\",\"port\":$p,\"reason\":\"ha test\"}" 20)
      if [[ -n "$res" ]]; then echo "key-$n $res" >>acked.txt; else echo "key-$n" >>lost.txt; fi
    done
  done
  done
}
stream &
STREAM_PID=$!
ry_wait_for 30 "8 acknowledged drains" bash -c '[[ $(wc -l <acked.txt) -ge 8 ]]'
ha_kill_leader_and_wait "$L" 15000
new=$HA_NEW takeover_ms=$HA_TAKEOVER_MS
takeover=$(printf '%d.%03d' $((takeover_ms / 1000)) $((takeover_ms % 1000)))
ry_log "m$new leads ${takeover} s after kill -9 of m$L"
((takeover_ms < 5000)) || ry_fail "takeover took ${takeover} s (>= 5 s)"
wait "$STREAM_PID" || true
acked=$(wc -l <acked.txt)
ry_assert_eq 32 "$acked" "drains acknowledged (of 32 sent; a lost one was not acknowledged within 20 s)"
retried=$(awk '$3 > 1' acked.txt | wc -l)
ry_log "$acked drains acknowledged, $retried after a retry"

# Every member that runs holds each acknowledged drain exactly once.
lseq=$(ha_health "$new" | jq -r .ha.applied_seq)
for i in 0 1 2; do
  [[ $i == "$L" ]] && continue
  ry_wait_for 10 "m$i at log entry $lseq" bash -c "[[ \$(curl -s $(ha_url "$i")/api/v1/health | jq -r .ha.applied_seq) -ge $lseq ]]"
  drains=$(ha_req GET "$(ha_url "$i")" /api/v1/drains | sed '$d')
  while read -r _key id _att; do
    ry_assert_eq 1 "$(jq --argjson id "$id" '[.drains[] | select(.id == $id)] | length' <<<"$drains")" "drain $id on m$i"
  done <acked.txt
  ry_assert_eq 32 "$(jq '[.drains[] | select(.reason == "ha test")] | length' <<<"$drains")" "ha test drains on m$i"
  ry_assert_eq 32 "$(jq '[.drains[] | select(.reason == "ha test") | .key] | unique | length' <<<"$drains")" \
    "distinct targets on m$i"
  vv=$(curl -s -D - -o /dev/null "$(ha_url "$i")/api/v1/drains" -H "Authorization: Bearer $HA_TOKEN" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "x-railyard-view-version" {print $2}')
  ry_assert_ne "" "$vv" "X-Railyard-View-Version from m$i"
done
# A retry of an acknowledged request changes nothing and answers the same drain.
read -r key id _ < <(head -n1 acked.txt)
out=$(ha_req POST "$(ha_url "$new")" /api/v1/drains '{"target":"link","node":"leaf g000 r0","port":17,"reason":"ha test"}' "$key")
ry_assert_eq 200 "$(tail -n1 <<<"$out")" "retry with $key"
ry_assert_eq "$id" "$(sed '$d' <<<"$out" | jq -r .drain.id)" "drain of the retried $key"
ry_pass "every acknowledged drain is present exactly once on every member; a retry replays"

# 3. The old leader comes back: it follows, catches up and writes nothing.
seq_before=$(ha_health "$new" | jq -r .ha.applied_seq)
ha_start_railyardd "$L"
ry_wait_for 15 "m$L back as a follower at entry $seq_before" bash -c \
  "curl -s $(ha_url "$L")/api/v1/health | jq -e '.ha.role == \"follower\" and .ha.applied_seq == $seq_before' >/dev/null"
sleep 1
ry_assert_eq "$seq_before" "$(ha_health "$new" | jq -r .ha.applied_seq)" "log entry after m$L came back"
ry_assert_eq follower "$(ha_role "$L")" "m$L's role"
drains=$(ha_req GET "$(ha_url "$L")" /api/v1/drains | sed '$d')
ry_assert_eq 32 "$(jq '[.drains[] | select(.reason == "ha test")] | length' <<<"$drains")" "drains on the returned m$L"
ry_pass "the old leader m$L rejoined as a follower, caught up, wrote nothing"

# railyardctl with several URLs: a dead one first, then a follower; reads
# from the first that answers, a drain follows the leader the follower names.
CTL=$HA_BIN/railyardctl
export RAILYARD_TOKEN=$HA_TOKEN
ctl_urls="http://127.0.0.1:1,$(ha_url "$L"),$(ha_url "$new")"
status=$("$CTL" --url "$ctl_urls" --timeout 5 status) || ry_fail "railyardctl status: $status"
ry_assert_contains "$status" "m$L is follower, leader m$new"
out=$("$CTL" --url "$ctl_urls" --timeout 5 drain link "leaf g001 r7" 19 --reason "via ctl" 2>&1) ||
  ry_fail "railyardctl drain through a follower: $out"
ry_assert_contains "$out" "leaf g001 r7[19]"
ry_wait_for 10 "the ctl drain on m$L" bash -c \
  "RAILYARD_TOKEN=$HA_TOKEN '$CTL' --url '$ctl_urls' --json drains | jq -e '[.drains[] | select(.reason == \"via ctl\")] | length == 1' >/dev/null"
ry_pass "railyardctl with several URLs reads from the first that answers and follows the leader for a drain"

# 4. etcd loses quorum: mutations refused with a clear error, reads served.
others=()
for i in 0 1 2; do [[ $i == 0 ]] || others+=("$i"); done
ha_stop_etcd 1
ha_stop_etcd 2
ry_wait_for 10 "m$new steps down" bash -c "[[ \$(curl -s --max-time 4 $(ha_url "$new")/api/v1/health | jq -r .ha.role) != leader ]]"
sleep 4  # every member has failed to reach etcd at least once since
for i in 0 1 2; do
  out=$(ha_req POST "$(ha_url "$i")" /api/v1/drains '{"target":"link","node":"leaf g001 r7","port":19,"reason":"no quorum"}')
  ry_assert_eq 503 "$(tail -n1 <<<"$out")" "POST /drains on m$i without quorum"
  ry_assert_contains "$(sed '$d' <<<"$out" | jq -r .error.message)" "no leader"
  out=$(ha_req GET "$(ha_url "$i")" /api/v1/drains)
  ry_assert_eq 200 "$(tail -n1 <<<"$out")" "GET /drains on m$i without quorum"
  ry_assert_eq 32 "$(sed '$d' <<<"$out" | jq '[.drains[] | select(.reason == "ha test")] | length')" "drains read on m$i"
done
msg=$(ha_req POST "$(ha_url 0)" /api/v1/drains '{"target":"link","node":"leaf g001 r7","port":19,"reason":"x"}' | sed '$d' | jq -r .error.message)
ry_log "without quorum: $msg"
ry_assert_contains "$msg" "etcd"
ry_pass "without etcd quorum mutations are refused ($msg) and reads are served"
ry_log "takeover ${takeover} s; test took $((SECONDS - START)) s"
