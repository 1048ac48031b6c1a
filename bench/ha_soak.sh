#!/usr/bin/env bash
# ha_soak.sh — issue 17's controller soak: three etcd members and three
# railyardd (offline, ha:) on 127.0.0.1; a long stream of drains through the
# API, each with its Idempotency-Key and retried on the other members until
# acknowledged (up to 30 s); the leader is killed with SIGKILL every KILL_EVERY
# acknowledged drains and restarted once a new leader is up. At the end every
# member must hold every acknowledged drain exactly once.
#   bash bench/ha_soak.sh [BUILD_DIR (build/release)] [DRAINS (192)] [KILL_EVERY (40)]
# Prints each takeover time, then: drains sent, acknowledged, lost (sent and
# never acknowledged), duplicates, retried; exits 1 if anything was lost or
# doubled.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HA_BIN=$(realpath "${1:-$root/build/release}")
DRAINS=${2:-192}
KILL_EVERY=${3:-40}
# shellcheck source=../tests/integration/lib.sh
source "$root/tests/integration/lib.sh"
# shellcheck source=../tests/integration/ha_lib.sh
source "$root/tests/integration/ha_lib.sh"
ry_tmpdir
ha_setup
START=$SECONDS

"$HA_BIN/railyard" topo gen --servers 32 --rails 8 --radix 32 -o "$RY_TMP/roft.net" >/dev/null 2>&1
ha_start_etcd_cluster
for i in 0 1 2; do
  ha_config "$i" "$RY_TMP/roft.net"
  ha_start_railyardd "$i"
done
has_leader() { [[ -n $(ha_leader) ]]; }
ry_wait_for 20 "a leader" has_leader

# Targets: 16 leaves x uplinks 17..32 (256 links).
: >acked.txt
: >lost.txt
stream() {
  local n=0 p g r res
  for p in $(seq 17 32); do
    for g in 000 001; do
      for r in 0 1 2 3 4 5 6 7; do
        ((n < DRAINS)) || return 0
        n=$((n + 1))
        res=$(ha_drain "soak-$n" "{\"target\":\"link\",\"node\":\"leaf g$g r$r\",\"port\":$p,\"reason\":\"soak\"}" 30)
        if [[ -n "$res" ]]; then echo "soak-$n $res" >>acked.txt; else echo "soak-$n" >>lost.txt; fi
      done
    done
  done
}
stream &
STREAM_PID=$!

kills=0
takeovers=()
next=$KILL_EVERY
while _ry_alive "$STREAM_PID"; do
  if (($(wc -l <acked.txt) >= next)); then
    L=$(ha_leader)
    [[ -n "$L" ]] || { sleep 0.1; continue; }
    ha_kill_leader_and_wait "$L" 30000
    new=$HA_NEW ms=$HA_TAKEOVER_MS
    kills=$((kills + 1))
    takeovers+=("$ms")
    printf 'kill %d: m%s killed at %d acknowledged, m%s leads after %d.%03d s\n' "$kills" "$L" "$(wc -l <acked.txt)" \
      "$new" $((ms / 1000)) $((ms % 1000))
    ha_start_railyardd "$L"  # it comes back as a follower
    next=$((next + KILL_EVERY))
  fi
  sleep 0.1
done
wait "$STREAM_PID" || true

# Every member holds every acknowledged drain exactly once.
sleep 1
L=$(ha_leader)
lseq=$(ha_health "$L" | jq -r .ha.applied_seq)
dups=0
for i in 0 1 2; do
  ry_wait_for 30 "m$i at log entry $lseq" bash -c "[[ \$(curl -s $(ha_url "$i")/api/v1/health | jq -r .ha.applied_seq) -ge $lseq ]]"
  drains=$(ha_req GET "$(ha_url "$i")" /api/v1/drains | sed '$d')
  while read -r _key id _att; do
    c=$(jq --argjson id "$id" '[.drains[] | select(.id == $id)] | length' <<<"$drains")
    [[ $c == 1 ]] || ry_fail "drain $id is on m$i $c times"
  done <acked.txt
  total=$(jq '[.drains[] | select(.reason == "soak")] | length' <<<"$drains")
  distinct=$(jq '[.drains[] | select(.reason == "soak") | .key] | unique | length' <<<"$drains")
  dups=$((dups + total - distinct))
  [[ $total == $(wc -l <acked.txt) ]] || ry_log "m$i holds $total soak drains, $(wc -l <acked.txt) acknowledged"
done
sorted=$(printf '%s\n' "${takeovers[@]}" | sort -n)
echo "takeover times (ms): $(tr '\n' ' ' <<<"$sorted")"
echo "takeover min/median/max: $(head -n1 <<<"$sorted") / $(sed -n "$(((${#takeovers[@]} + 1) / 2))p" <<<"$sorted") / $(tail -n1 <<<"$sorted") ms"
echo "drains sent $DRAINS, acknowledged $(wc -l <acked.txt), lost $(wc -l <lost.txt), duplicates $dups," \
  "retried $(awk '$3 > 1' acked.txt | wc -l), leader kills $kills, log entries $lseq, $((SECONDS - START)) s"
[[ $(wc -l <lost.txt) == 0 && $dups == 0 ]]
