#!/usr/bin/env bash
# One routing, verified, end to end: ibsim + the real OpenSM + railyard's
# plugin + railyardd (live). The plugin reads its policy through a symlink to
# railyardd's policy file, so both route under the same policy, until the test
# points it at another file.
#  1. Normal: the plugin's passes agree with railyardd's route (zero
#     divergences, /health 200); a drain's reroute is applied with the digest
#     railyardd computed.
#  2. A link goes down (ibsim Unlink, heavy sweep): the plugin sends only the
#     change (bytes from its log line, against the whole fabric's), railyardd's
#     copy takes it (the link is down in its view, no resync) and still agrees;
#     after a restart of railyardd the whole fabric gives the same fingerprint.
#  3. Diverge on purpose: the plugin's policy file gets a drain railyardd does
#     not have. A reroute is not applied ("not railyardd's route"), a
#     routing_divergence event names the policy, /health is 503 with the
#     reason, the metric counts it.
#  4. The plugin's file follows railyardd's again: the next reroute is
#     applied, /health 200.
#
# Usage (ctest does this): plugin_divergence_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$2
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

ry_require_tools ibsim opensm curl jq
ry_plugin_tools "$BIN"
[[ -x "$BIN/railyardctl" ]] || ry_fail "railyardctl not built: $BIN/railyardctl"
ry_tmpdir
T0=$SECONDS

# A bigger fabric for measurements: RY_DIVERGENCE_SERVERS, _RAILS, _RADIX.
SERVERS=${RY_DIVERGENCE_SERVERS:-16} RAILS=${RY_DIVERGENCE_RAILS:-4} RADIX=${RY_DIVERGENCE_RADIX:-16}
"$RAILYARD" topo gen --servers "$SERVERS" --rails "$RAILS" --radix "$RADIX" -o f.net 2>gen.err ||
  ry_fail "topo gen: $(cat gen.err)"
UP1=$((RADIX / 2 + 1)) UP2=$((RADIX / 2 + 2))   # a leaf's first two uplinks
UNLINKED=$(ry_switch_record f.net "leaf g001 r2")

SOCK=$RY_TMP/p.sock
((${#SOCK} <= 100)) || ry_fail "socket path too long: $SOCK (use a shorter TMPDIR)"
ln -s policy.yaml plugin-policy.yaml
printf 'log_level: info\npolicy_file: %s/plugin-policy.yaml\ncontroller_socket: %s\nport_probe: off\n' \
  "$RY_TMP" "$SOCK" >railyard-plugin.yaml
cat >railyardd.yaml <<CONF
tokens:
  - {name: ops, role: operator, token: "operator-token-0123456789"}
database: state.db
fabric: {source: live, plugin_socket: $SOCK}
policy: {output_file: policy.yaml}
limits: {reroute_timeout_s: 60}
log_level: debug
CONF
export RY_TOKEN=operator-token-0123456789 RAILYARD_TOKEN=operator-token-0123456789
ctl() { "$BIN/railyardctl" --url "$RY_URL" "$@"; }
body() { sed '$d'; }
status() { ry_api GET /api/v1/health | body | jq -c ".plugin_status$1"; }
health_code() { ry_api GET /api/v1/health | tail -n1; }
health_ok() { [[ $(health_code) == 200 ]]; }
# reroute_status ID: until the request is no longer pending; prints status, then detail.
reroute_done() {
  local deadline=$((SECONDS + 60)) r
  while :; do
    r=$(ry_api GET "/api/v1/reroutes/$1" | body)
    [[ $(jq -r .status <<<"$r") == applied || $(jq -r .status <<<"$r") == failed ]] && break
    ((SECONDS < deadline)) || ry_fail "reroute $1 still $(jq -r .status <<<"$r") after 60 s"
    sleep 0.2
  done
  jq -r '.status, .detail' <<<"$r"
}
events_of() { ry_api GET "/api/v1/events?since=0&limit=1000" | body | jq -c "[.events[] | select(.type == \"$1\")]"; }

# --- 1. normal: they agree ---------------------------------------------------------
ry_start_railyardd "$BIN" railyardd.yaml
ry_start_ibsim f.net --console
ry_start_opensm --timeout 120 \
  --conf "event_plugin_name osmrailyard" \
  --conf "event_plugin_options $RY_TMP/railyard-plugin.yaml" \
  --conf "routing_engine railyard"
ry_wait_log "railyard: pass 1: time " 60
ry_wait_for 60 "railyardd healthy (plugin connected, fabric received)" health_ok
checked() { (($(status .checks) >= $1)); }
ry_wait_for 30 "the first pass compared" checked 1
ry_assert_eq 0 "$(status .divergences)" "divergences after the first pass"
ry_assert_eq '"0.1.0"' "$(status .version)" "plugin version from its hello"
ry_assert_eq 1 "$(status .fabric.whole)" "whole fabrics received"

ctl --json drain link "leaf g000 r1" "$UP1" --reason "divergence test" >drain.json || ry_fail "railyardctl drain failed"
mapfile -t r < <(reroute_done "$(jq -r .reroute.id drain.json)")
ry_assert_eq applied "${r[0]}" "the drain's reroute (${r[1]})"
ry_assert_contains "${r[1]}" "digest 0x" "the applied request's detail"
ctl --json undrain "$(jq -r .drain.id drain.json)" >undrain.json || ry_fail "railyardctl undrain failed"
mapfile -t r < <(reroute_done "$(jq -r .reroute.id undrain.json)")
ry_assert_eq applied "${r[0]}" "the undrain's reroute (${r[1]})"
ry_assert_eq 0 "$(status .divergences)" "divergences after a drain and an undrain"
ry_pass "normal: the plugin's tables are railyardd's route; requests applied with their digest"

# --- 2. a link goes down: only the change is sent ---------------------------------------
whole_line=$(grep -E "railyard: fabric of pass [0-9]+ sent whole" "$RY_OPENSM_LOG" | tail -n 1)
[[ -n "$whole_line" ]] || ry_fail "no 'sent whole' line in the OpenSM log"
whole_bytes=$(sed -n 's/.* \([0-9][0-9]*\) bytes$/\1/p' <<<"$whole_line")
change_lines() { ry_log_count "railyard: fabric of pass [0-9]+ sent as changes"; }
more_changes() { (($(change_lines) > $1)); }
# The first pass routed ports still ARMED: a heavy sweep first, so that the
# fabric has settled (its changes, every port now ACTIVE, go out here).
passes_before=$(status .pass)
kill -HUP "$RY_OPENSM_PID"   # a heavy sweep, as an operator would ask
passed() { (($(status .pass) > passes_before)); }
ry_wait_for 60 "a settling pass" passed
sleep 1
settled=$(change_lines)
passes_before=$(status .pass)
ry_ibsim_cmd "Unlink \"$UNLINKED\"[$UP2]"
kill -HUP "$RY_OPENSM_PID"
ry_wait_for 60 "the plugin's changes after the Unlink" more_changes "$settled"
change_line=$(grep -E "railyard: fabric of pass [0-9]+ sent as changes" "$RY_OPENSM_LOG" | tail -n 1)
change_bytes=$(sed -n 's/.* \([0-9][0-9]*\) bytes$/\1/p' <<<"$change_line")
ry_log "fabric bytes: whole $whole_bytes, after one link down $change_bytes (${change_line##*-> });" \
  "the topology text a changed pass sent before: ~$(wc -c <f.net) bytes"
((change_bytes * 20 < whole_bytes)) || ry_fail "the change ($change_bytes bytes) is not small next to the whole fabric ($whole_bytes)"
applied_changes() { (($(status .fabric.changes) >= 1)); }
ry_wait_for 30 "railyardd applied the changes" applied_changes
ry_assert_eq 0 "$(status .fabric.resyncs)" "resyncs (changes that did not apply)"
link_down() { ry_api GET "/api/v1/links?state=down" | body | jq -e '.count >= 1' >/dev/null; }
ry_wait_for 30 "the unlinked link down in railyardd's view" link_down
ry_wait_for 30 "a pass after the Unlink" passed
ry_assert_eq 0 "$(status .divergences)" "divergences after the link change"
fingerprint=$(status .fabric.fingerprint)
ry_stop_railyardd
ry_start_railyardd "$BIN" railyardd.yaml
ry_wait_for 60 "railyardd healthy again" health_ok
whole_again() { [[ $(status .fabric.whole) == 1 ]]; }
ry_wait_for 30 "the whole fabric after the restart" whole_again
ry_assert_eq "$fingerprint" "$(status .fabric.fingerprint)" "fingerprint: copy built from changes vs the whole fabric"
ry_pass "a link down: $change_bytes bytes sent instead of $whole_bytes; railyardd's copy is the whole fabric"

# --- 3. diverge on purpose ---------------------------------------------------------------------
printf 'drains:\n  links: ["leaf g000 r1[%s]"]\n' "$UP2" >plugin-policy.new
mv -f plugin-policy.new plugin-policy.yaml   # replaces the symlink
ctl --json reroute --reason "diverge on purpose" >reroute.json || ry_fail "railyardctl reroute failed"
mapfile -t r < <(reroute_done "$(jq -r .reroute.id reroute.json)")
ry_assert_eq failed "${r[0]}" "a reroute whose tables are not railyardd's"
ry_assert_contains "${r[1]}" "not railyardd's route" "its detail"
ev=$(events_of routing_divergence)
ry_assert_eq 1 "$(jq length <<<"$ev")" "routing_divergence events"
ry_assert_eq '"policy"' "$(jq '.[0].data.kind' <<<"$ev")" "the divergence's kind"
out=$(ry_api GET /api/v1/health)
ry_assert_eq 503 "$(tail -n1 <<<"$out")" "/health while diverged"
ry_assert_contains "$(body <<<"$out" | jq -r '.reasons[]')" "the plugin's tables diverge from railyardd's" "/health reasons"
# Read whole first: grep -q stops reading at its match, and under pipefail the
# writer's SIGPIPE would fail the pipeline.
metrics=$(ry_api GET /api/v1/metrics | body)
grep -q '^railyard_routing_divergences_total 1$' <<<"$metrics" ||
  ry_fail "railyard_routing_divergences_total is not 1: $(grep divergence <<<"$metrics")"
ry_pass "diverged on purpose: request failed with the reason, event, /health 503, metric"

# --- 4. back ------------------------------------------------------------------------------------
ln -sfn policy.yaml plugin-policy.yaml
ctl --json reroute --reason "agree again" >reroute2.json || ry_fail "railyardctl reroute failed"
mapfile -t r < <(reroute_done "$(jq -r .reroute.id reroute2.json)")
ry_assert_eq applied "${r[0]}" "the reroute after the plugin's file follows railyardd's again (${r[1]})"
ry_wait_for 30 "railyardd healthy after the divergence" health_ok
ry_assert_eq 1 "$(status .divergences)" "divergences in all"
ry_pass "agree again: applied, /health 200 (test time $((SECONDS - T0)) s)"
ry_api GET /api/v1/health | body >health.json   # kept with RY_KEEP_TMP (docs/controller.md shows it)
