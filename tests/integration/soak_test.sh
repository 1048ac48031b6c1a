#!/usr/bin/env bash
# Soak (issue 13): the fabric keeps changing while operators drain. ibsim +
# the real OpenSM + railyard's plugin + railyardd (live).
#  - RY_SOAK_EVENTS (default 40) seeded link events (RY_SOAK_SEED, default 13):
#    a random leaf uplink is Unlink'ed in ibsim's console and ReLink'ed a
#    moment later (one event each), with a random pause;
#  - meanwhile a loop drains a random leaf uplink through railyardctl and
#    undrains it, again and again, remembering every request railyardd
#    acknowledged (2xx: a drain id, a reroute id).
# Then, once the fabric is quiet:
#  - no acknowledged request is lost: every reroute id is known to railyardd
#    and finished (applied or failed, with a reason), no drain of the loop is
#    left active, and the audit log holds every acknowledged drain;
#  - every "applied" is digest-verified (its detail carries the digest railyardd
#    computed, equal to the plugin's);
#  - zero divergences (the plugin's tables always one of railyardd's views);
#  - railyardd's RSS is flat: at the end at most 25% (and 16 MB) above what it
#    was after the warm-up.
# The full count runs from bench/soak.sh (1,000 events). Prints the counts.
#
# Usage (ctest does this): soak_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm curl jq sqlite3
ry_plugin_tools "$BIN"
[[ -x "$BIN/railyardctl" ]] || ry_fail "railyardctl not built: $BIN/railyardctl"
ry_tmpdir
T0=$SECONDS

EVENTS=${RY_SOAK_EVENTS:-40}
SEED=${RY_SOAK_SEED:-13}
SERVERS=16 RAILS=4 RADIX=16
"$RAILYARD" topo gen --servers "$SERVERS" --rails "$RAILS" --radix "$RADIX" -o f.net 2>gen.err ||
  ry_fail "topo gen: $(cat gen.err)"
FIRST_UP=$((RADIX / 2 + 1))
# Leaves by description and ibsim record: "leaf gGGG rR" for 2 groups x 4 rails.
LEAVES=()
for g in 000 001; do
  for r in $(seq 0 $((RAILS - 1))); do LEAVES+=("leaf g$g r$r"); done
done
declare -A RECORD
for leaf in "${LEAVES[@]}"; do RECORD[$leaf]=$(ry_switch_record f.net "$leaf"); done

SOCK=$RY_TMP/p.sock
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"
printf 'log_level: info\npolicy_file: %s/policy.yaml\ncontroller_socket: %s\nport_probe: off\n' \
  "$RY_TMP" "$SOCK" >railyard-plugin.yaml
cat >railyardd.yaml <<CONF
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
database: state.db
fabric: {source: live, plugin_socket: $SOCK}
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 120, reroutes_per_minute: 600}
log_level: info
CONF
export RY_TOKEN=operator-token-0123456789 RAILYARD_TOKEN=operator-token-0123456789
ctl() { "$BIN/railyardctl" --url "$RY_URL" "$@"; }
body() { sed '$d'; }
status() { ry_api GET /api/v1/health | body | jq -c ".plugin_status$1"; }
health_ok() { [[ $(ry_api GET /api/v1/health | tail -n1) == 200 ]]; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$RY_RAILYARDD_PID/status"; }

ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 60
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok

# --- the drain loop ------------------------------------------------------------------
# Each acknowledged request is one line in acked.tsv: KIND DRAIN_ID REROUTE_ID.
: >acked.tsv
: >refused.txt
drain_loop() {
  RANDOM=$((SEED * 7 + 1))
  while [[ -e drain.run ]]; do
    local leaf=${LEAVES[$((RANDOM % ${#LEAVES[@]}))]} port=$((FIRST_UP + RANDOM % (RADIX / 2)))
    if ctl --json drain link "$leaf" "$port" --reason "soak" >d.json 2>d.err; then
      local id rid
      id=$(jq -r .drain.id d.json) rid=$(jq -r '.reroute.id // ""' d.json)
      printf 'drain\t%s\t%s\n' "$id" "$rid" >>acked.tsv
      sleep 0.$((RANDOM % 5))
      # An undrain is retried until acknowledged: the loop leaves nothing drained.
      local tries=0
      until ctl --json undrain "$id" >u.json 2>u.err; do
        echo "undrain $id: $(cat u.err)" >>refused.txt
        ((++tries < 20)) || break
        sleep 0.5
      done
      [[ -s u.json ]] && printf 'undrain\t%s\t%s\n' "$id" "$(jq -r '.reroute.id // ""' u.json)" >>acked.tsv
      rm -f u.json
    else
      echo "drain $leaf $port: $(cat d.err)" >>refused.txt
    fi
    sleep 0.$((RANDOM % 5))
  done
}
touch drain.run
drain_loop &
DRAIN_PID=$!
RY_CLIENT_PIDS+=("$DRAIN_PID")   # stopped by lib.sh's cleanup if the test ends early

# Warm-up: the first acknowledged drain, then the baseline RSS.
first_ack() { [[ -s acked.tsv ]]; }
ry_wait_for 60 "the first acknowledged drain" first_ack
RSS0=$(rss_kb)

# --- the link events -------------------------------------------------------------------
RANDOM=$SEED
n=0
while ((n < EVENTS)); do
  leaf=${LEAVES[$((RANDOM % ${#LEAVES[@]}))]} port=$((FIRST_UP + RANDOM % (RADIX / 2)))
  ry_ibsim_cmd "Unlink \"${RECORD[$leaf]}\"[$port]"
  n=$((n + 1))
  sleep 0.$((RANDOM % 8))
  ry_ibsim_cmd "ReLink \"${RECORD[$leaf]}\"[$port]"
  n=$((n + 1))
  sleep 0.$((RANDOM % 8))
  _ry_alive "$RY_RAILYARDD_PID" || ry_fail "railyardd died during the soak"
done
rm -f drain.run
wait "$DRAIN_PID" || true
ry_log "$n link events sent; $(grep -c . acked.tsv) requests acknowledged, $(grep -c . refused.txt) refused"

# --- once quiet ------------------------------------------------------------------------
finished() {
  local rid st
  while IFS=$'\t' read -r _ _ rid; do
    [[ -n "$rid" ]] || continue
    st=$(ry_api GET "/api/v1/reroutes/$rid" | body | jq -r .status)
    [[ $st == applied || $st == failed ]] || return 1
  done <acked.tsv
}
ry_wait_for 180 "every acknowledged request finished" finished

applied=0 failed=0
: >failed.txt
while IFS=$'\t' read -r kind id rid; do
  out=$(ry_api GET "/api/v1/reroutes/$rid")
  [[ $(tail -n1 <<<"$out") == 200 ]] || ry_fail "acknowledged $kind of drain $id: reroute $rid unknown to railyardd (lost)"
  r=$(body <<<"$out")
  case $(jq -r .status <<<"$r") in
    applied)
      applied=$((applied + 1))
      ry_assert_contains "$(jq -r .detail <<<"$r")" "digest 0x" "applied reroute $rid's detail (digest-verified)"
      ;;
    failed)
      failed=$((failed + 1))
      [[ -n $(jq -r '.detail // ""' <<<"$r") ]] || ry_fail "reroute $rid failed without a reason"
      jq -r '"\(.id): \(.detail)"' <<<"$r" >>failed.txt
      ;;
  esac
done < <(awk -F'\t' '$3 != ""' acked.tsv)
((applied > 0)) || ry_fail "no request was applied"

# Nothing of the loop is left drained, and every acknowledged drain is audited.
left=$(ry_api GET /api/v1/drains | body | jq '[.drains[] | select(.reason == "soak")] | length')
ry_assert_eq 0 "$left" "soak drains left active"
audit_drains=$(sqlite3 state.db \
  "SELECT count(*) FROM audit WHERE action LIKE 'POST /api/v1/drains%' AND status BETWEEN 200 AND 299")
acked_drains=$(grep -c '^drain' acked.tsv)
((audit_drains == acked_drains)) || ry_fail "the audit log holds $audit_drains drains, $acked_drains were acknowledged"

divergences=$(status .divergences)
checks=$(status .checks)
ry_assert_eq 0 "$divergences" "divergences over $checks checks"
ev=$(sqlite3 state.db "SELECT count(*) FROM events WHERE type = 'routing_divergence'")
ry_assert_eq 0 "$ev" "routing_divergence events"

RSS1=$(rss_kb)
limit=$((RSS0 + (RSS0 / 4 > 16384 ? RSS0 / 4 : 16384)))
((RSS1 <= limit)) || ry_fail "railyardd's RSS grew from ${RSS0} kB to ${RSS1} kB (limit ${limit} kB)"
ry_log "requests: $applied applied (digest-verified), $failed failed with a reason; divergences 0 over $checks checks;" \
  "RSS ${RSS0} -> ${RSS1} kB"
[[ -s failed.txt ]] && ry_log "failed: $(sort -t: -k2 failed.txt | cut -d: -f2- | sort | uniq -c | sort -rn | head -n 5 | tr '\n' ';')"
ry_pass "soak: $n link events, $(grep -c . acked.tsv) acknowledged requests, none lost; $applied applied with their digest;" \
  "0 divergences; RSS flat (${RSS0} -> ${RSS1} kB) (test time $((SECONDS - T0)) s)"
