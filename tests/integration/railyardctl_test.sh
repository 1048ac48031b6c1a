#!/usr/bin/env bash
# railyardctl against a real railyardd serving an offline 32-server x 8-rail
# fabric: every command's table and --json output, and each documented exit
# code (0 ok, 1 no connection or 5xx, 2 usage, 3 auth, 4 not found,
# 5 conflict/cut, 6 rate limited, 7 failed reroute).
#
#   bash railyardctl_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
BIN=$(realpath "$3")
CTL=$BIN/railyardctl
DAEMON=$BIN/railyardd
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

[[ -x "$CTL" ]] || ry_fail "no railyardctl in $BIN (build the railyardctl target)"
[[ -x "$DAEMON" ]] || ry_fail "no railyardd in $BIN (build the railyardd target)"
command -v jq >/dev/null || ry_fail "jq is required"

ry_tmpdir
DAEMON_PID=""
stop_daemon() { _ry_stop_pid "$DAEMON_PID" 5 railyardd; DAEMON_PID=""; }
# lib.sh's EXIT trap removes the temp dir: stop railyardd (by its PID) first,
# show its log on failure, and hand the exit status on to _ry_cleanup.
trap 'rc=$?; set +e; stop_daemon; if [[ $rc -ne 0 && -f daemon.log ]]; then tail -n 30 daemon.log >&2; fi; (exit $rc); _ry_cleanup' EXIT

"$RAILYARD" topo gen --servers 32 --rails 8 --radix 32 -o roft.net >/dev/null
OPERATOR=operator-token-0123456789
VIEWER=viewer-token-0123456789
cat >railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens:
  - {name: ops, role: operator, token: "$OPERATOR"}
  - {name: dash, role: viewer, token: "$VIEWER"}
database: state.db
fabric: {source: offline, topology_file: roft.net}
policy: {output_file: policy.out.yaml}
limits: {reroutes_per_minute: 2}
CONF
"$DAEMON" config check railyardd.yaml >/dev/null || ry_fail "railyardd rejects the test config"
"$DAEMON" --config railyardd.yaml --port 0 --port-file port >daemon.log 2>&1 &
DAEMON_PID=$!
ry_wait_for 60 "railyardd's port file" test -s port
RAILYARD_URL="http://127.0.0.1:$(cat port)"
export RAILYARD_URL
printf '%s\n' "$OPERATOR" >operator.token
printf '%s\n' "$VIEWER" >viewer.token
chmod 600 ./*.token
unset RAILYARD_TOKEN RAILYARD_TOKEN_FILE

# op ARGS...: railyardctl as the operator (token from a file given by env).
op() { RAILYARD_TOKEN_FILE=$PWD/operator.token "$CTL" "$@"; }
viewer() { "$CTL" --token-file viewer.token "$@"; }
# rc CMD...: prints CMD's exit code; stdout to out.txt, stderr to err.txt.
rc() { local r=0; "$@" >out.txt 2>err.txt || r=$?; echo "$r"; }

# ---- help and usage ---------------------------------------------------------
help=$("$CTL" --help)
ry_assert_contains "$help" "Exit codes:" "--help documents exit codes"
ry_assert_contains "$help" "429" "--help documents the rate-limit exit"
for cmd in status hosts switches links route "drain link" "drain port" "drain switch" drains undrain reroute \
  reroutes events link-event slurm kubernetes rails ar; do
  # shellcheck disable=SC2086
  h=$("$CTL" $cmd --help) || ry_fail "railyardctl $cmd --help failed"
  ry_assert_contains "$h" "Examples:" "railyardctl $cmd --help has examples"
done
ry_assert_eq 2 "$(rc "$CTL")" "no command is a usage error"
ry_assert_eq 2 "$(rc "$CTL" links --state sideways)" "a bad --state is a usage error"
ry_assert_eq 2 "$(rc "$CTL" drain link "leaf g000 r0" 17)" "a drain without --reason is a usage error"
ry_assert_eq 2 "$(rc "$CTL" --url ftp://x status)" "a non-http URL is a usage error"
ry_assert_eq 2 "$(rc "$CTL" --token-file missing.token hosts)" "an unreadable token file is a usage error"
ry_pass "help and usage errors"

# ---- status, hosts, switches, links, route ----------------------------------
out=$(viewer status)
ry_assert_contains "$out" "controller  ok" "status shows health"
ry_assert_contains "$out" "32 hosts, 256 CAs" "status shows the fabric size"
viewer --json status | jq -e '.health.status == "ok" and .fabric.hosts == 32' >/dev/null ||
  ry_fail "status --json"

ry_assert_eq 32 "$(viewer --json hosts | jq '.hosts | length')" "hosts --json counts 32 hosts"
out=$(viewer hosts)
ry_assert_contains "$out" "32 hosts, 256 CAs, 0 not healthy" "hosts table summary"
ry_assert_eq 8 "$(viewer hosts node001 | grep -c '^node001 ')" "hosts node001: one row per rail"
ry_assert_eq 4 "$(rc viewer hosts node999)" "an unknown host exits 4"

ry_assert_eq "$(viewer --json switches | jq '.switches | length')" \
  "$(viewer switches | tail -n 1 | awk '{print $1}')" "switches table and --json agree"

out=$(viewer route "node001 mlx5_0" "node017 mlx5_0")
ry_assert_contains "$out" "delivered in" "route is delivered"
ry_assert_contains "$out" "leaf g000 r0" "the route leaves node001 through its rail-0 leaf"
viewer --json route "node001 mlx5_0" "node017 mlx5_0" |
  jq -e '.delivered and (.hops | length) >= 3 and .hops[0].node == "node001 mlx5_0"' >/dev/null ||
  ry_fail "route --json"
ry_assert_eq 4 "$(rc viewer route "node001 mlx5_0" "nosuch mlx5_0")" "route to an unknown node exits 4"
ry_assert_contains "$(cat err.txt)" "railyardctl: 404 unknown destination" "the 404 message"

grep -q '^SwitchName=' <<<"$(viewer slurm)" || ry_fail "slurm prints topology.conf"
viewer --json ar | jq -e '.switches | length > 0' >/dev/null || ry_fail "ar --json"
ry_assert_eq 0 "$(rc viewer ar "leaf g000 r0")" "ar for one switch"
ry_pass "status, hosts, switches, route, slurm, ar"

# ---- auth ---------------------------------------------------------------------
ry_assert_eq 3 "$(rc "$CTL" hosts)" "no token exits 3"
ry_assert_contains "$(cat err.txt)" "railyardctl: 401" "no token: 401 on stderr"
ry_assert_eq 3 "$(rc "$CTL" --token wrong-token-000000000 hosts)" "a bad token exits 3"
ry_assert_eq 3 "$(rc viewer drain link "leaf g000 r0" 17 --reason test)" "a viewer's drain exits 3"
ry_assert_contains "$(cat err.txt)" "railyardctl: 403" "viewer drain: 403 on stderr"
ry_assert_eq 0 "$(rc env RAILYARD_TOKEN="$VIEWER" "$CTL" hosts node002)" "token from \$RAILYARD_TOKEN"
ry_pass "auth exit codes"

# ---- drains ---------------------------------------------------------------------
# "leaf g000 r0" port 17 is a link to a spine: the other spines carry the traffic.
out=$(op drain link "leaf g000 r0" 17 --reason test --expires +3600)
ry_assert_contains "$out" "drained leaf g000 r0" "drain link message"
ry_assert_contains "$out" "0 CA pairs cut" "the spine link cuts nothing"
drained=$(op --json links --state drained)
ry_assert_eq 1 "$(jq '.count' <<<"$drained")" "links --state drained lists the drained link"
jq -e '.links[0].a.node == "leaf g000 r0" or .links[0].b.node == "leaf g000 r0"' <<<"$drained" >/dev/null ||
  ry_fail "the drained link is the one at leaf g000 r0"
drain_id=$(jq '.links[0].drains[0]' <<<"$drained")
ry_assert_contains "$(viewer links --state drained)" "1 links drained" "links table"
ry_assert_eq "$drain_id" "$(viewer --json drains | jq '.drains[0].id')" "drains lists it"

ry_assert_eq 5 "$(rc op drain link "leaf g000 r0" 17 --reason again)" "draining it again exits 5"
ry_assert_contains "$(cat err.txt)" "already drained" "the conflict says why"

# Port 1 of a leaf is a CA's only link: draining it would cut that CA off.
ry_assert_eq 5 "$(rc op drain link "leaf g000 r0" 1 --reason test)" "a cutting drain exits 5"
ry_assert_contains "$(cat err.txt)" "would cut" "the cut refusal says why"
ry_assert_contains "$(cat out.txt)" "CA pairs left without a path" "the cut pairs are printed"
ry_assert_eq 5 "$(rc op --json drain link "leaf g000 r0" 1 --reason test --dry-run)" "a cutting dry run exits 5"
cut=$(jq '.error.impact.pairs_cut' out.txt)
((cut > 0)) || ry_fail "--dry-run --json shows pairs_cut > 0 (got $cut)"
op --json drain link "leaf g000 r0" 1 --reason test --dry-run --force |
  jq -e '.dry_run == true and .impact.pairs_cut > 0' >/dev/null || ry_fail "a forced dry run reports the cut"
ry_assert_eq 1 "$(viewer --json drains | jq '.drains | length')" "dry runs change nothing"

ry_assert_eq 4 "$(rc op drain link "no such leaf" 3 --reason test)" "an unknown node exits 4"
ry_assert_eq 2 "$(rc op drain switch "node001 mlx5_0" --reason test)" "a CA is not a switch: 400 exits 2"
ry_assert_eq 2 "$(rc op drain link "leaf g000 r0" 17 --reason test --expires soon)" "a bad --expires exits 2"

ry_assert_eq 0 "$(rc op undrain "$drain_id" --dry-run)" "undrain --dry-run"
ry_assert_eq 1 "$(viewer --json drains | jq '.drains | length')" "undrain --dry-run changes nothing"
out=$(op undrain "$drain_id")
ry_assert_contains "$out" "undrained leaf g000 r0" "undrain message"
ry_assert_eq 0 "$(viewer --json links --state drained | jq '.count')" "no drained links after undrain"
ry_assert_eq 4 "$(rc op undrain "$drain_id")" "undraining twice exits 4"
ry_pass "drain, drains, undrain"

# ---- link events ----------------------------------------------------------------
out=$(op link-event "leaf g000 r0" 18 down --id mon-1 --reason "symbol errors")
ry_assert_contains "$out" "recorded event" "the first report is recorded"
out=$(op link-event "leaf g000 r0" 18 down --id mon-1 --reason "symbol errors")
ry_assert_contains "$out" "duplicate" "the same id again is a duplicate"
op --json link-event "leaf g000 r0" 18 down --id mon-1 | jq -e '.duplicate == true' >/dev/null ||
  ry_fail "link-event --json duplicate"
ry_assert_eq 1 "$(viewer --json links --state down | jq '.count')" "the reported link is down"
op link-event "leaf g000 r0" 18 up --id mon-2 >/dev/null
ry_assert_eq 0 "$(viewer --json links --state down | jq '.count')" "and up again"
ry_assert_eq 3 "$(rc viewer link-event "leaf g000 r0" 18 down --id mon-3)" "a viewer's link event exits 3"
events=$(viewer --json events --limit 1000)
jq -e '[.events[] | select(.external_id == "mon-1")] | length == 1' <<<"$events" >/dev/null ||
  ry_fail "events --json holds mon-1 once"
ry_assert_contains "$(viewer events --limit 1000)" "link_down" "events table"
last=$(jq '.last_id' <<<"$events")
ry_assert_eq 0 "$(viewer --json events --since "$last" | jq '.events | length')" "events --since the last id is empty"
# --follow prints what exists, then keeps polling: stop it ourselves.
"$CTL" --token-file viewer.token --json events --follow --limit 5 --interval 0.1 >follow.txt 2>&1 &
follow_pid=$!
ry_wait_for 10 "events --follow output" test -s follow.txt
kill "$follow_pid" 2>/dev/null || true
wait "$follow_pid" 2>/dev/null || true
head -n 1 follow.txt | jq -e '.id > 0' >/dev/null || ry_fail "events --follow --json prints one event per line"
ry_pass "link-event idempotency, events"

# ---- reroutes -------------------------------------------------------------------
# limits.reroutes_per_minute is 2: the third request within a minute is refused.
out=$(op reroute --reason first --wait)
ry_assert_contains "$out" "applied in" "reroute --wait prints the latency"
op --json reroute --reason second | jq -e '.reroute.status == "applied"' >/dev/null || ry_fail "reroute --json"
ry_assert_eq 6 "$(rc op reroute --reason third)" "the third reroute in a minute exits 6"
ry_assert_contains "$(cat err.txt)" "railyardctl: 429" "429 on stderr"
ry_assert_contains "$(cat err.txt)" "retry after" "Retry-After is printed"
ry_assert_contains "$(viewer reroutes)" "first" "reroutes lists the requests"
ry_assert_eq 2 "$(viewer --json reroutes | jq '[.reroutes[] | select(.requested_by == "ops" and (.reason == "first" or .reason == "second"))] | length')" \
  "reroutes --json"
ry_pass "reroute, rate limit, reroutes"

# ---- SHARP jobs -------------------------------------------------------------------
# 32 servers x 8 rails, 2 groups: every rail's two leaves meet at a spine
# (height 1). Leaves hold 4 trees (the default policy): the 5th whole-fabric
# job is refused with exit 5, deleting one frees its slots.
hosts=$(seq -f 'node%03g' 1 32 | paste -sd,)
out=$(op --json job create j1 --hosts "$hosts")
ry_assert_eq 8 "$(jq '.trees | length' <<<"$out")" "one tree per rail"
ry_assert_eq '[1]' "$(jq -c '[.trees[].height] | unique' <<<"$out")" "tree heights on a 2-level ROFT"
ry_assert_eq 32 "$(jq '[.trees[] | .cas] | min' <<<"$out")" "every tree holds its rail's 32 CAs"
for j in j2 j3 j4; do op job create "$j" --hosts "$hosts" >/dev/null || ry_fail "job $j"; done
ry_assert_eq 5 "$(rc op job create j5 --hosts "$hosts")" "the 5th whole-fabric job exits 5 (capacity)"
ry_assert_contains "$(cat err.txt)" "capacity exhausted" "the refusal says why"
ry_assert_eq 3 "$(rc viewer job create jv --hosts node001)" "a viewer cannot create jobs"
ry_assert_eq 4 "$(rc op job create jx --hosts nobody)" "an unknown host exits 4"
ry_assert_contains "$(op job show j1)" "rail 7: root" "job show lists the trees"
ry_assert_eq 0 "$(rc op job delete j4)" "job delete"
ry_assert_eq 4 "$(rc op job delete j4)" "deleting twice exits 4"
ry_assert_eq 0 "$(rc op job create j5 --hosts "$hosts" --rails 0,1)" "capacity freed by the delete"
ry_assert_eq 4 "$(viewer --json job list | jq '.jobs | length')" "job list"
ry_pass "SHARP jobs: create, capacity refusal, show, delete, list"

# ---- a live controller without its plugin ------------------------------------------
# No OpenSM plugin connects: no fabric (503 -> exit 1) and a reroute cannot be
# delivered (failed at once -> reroute --wait exits 7).
stop_daemon
mkdir live
cat >live/railyardd.yaml <<CONF
listen: {address: 127.0.0.1, port: 0}
tokens:
  - {name: ops, role: operator, token: "$OPERATOR"}
database: live.db
fabric: {source: live, plugin_socket: plugin.sock}
policy: {output_file: policy.out.yaml}
CONF
"$DAEMON" --config live/railyardd.yaml --port 0 --port-file live/port >daemon.log 2>&1 &
DAEMON_PID=$!
ry_wait_for 60 "railyardd's port file (live)" test -s live/port
RAILYARD_URL="http://127.0.0.1:$(cat live/port)"
export RAILYARD_URL
ry_assert_eq 1 "$(rc op status)" "status of a controller without a fabric exits 1"
ry_assert_contains "$(cat out.txt)" "controller  degraded" "status shows it degraded"
ry_assert_contains "$(cat err.txt)" "railyardctl: 503" "and says 503"
ry_assert_eq 7 "$(rc op reroute --wait --reason "no plugin")" "a failed reroute with --wait exits 7"
ry_assert_contains "$(cat err.txt)" "plugin not connected" "the failure says why"
ry_assert_eq 0 "$(rc op reroute --reason "no plugin")" "without --wait the accepted request exits 0"
ry_pass "degraded controller, failed reroute"

# ---- transport ------------------------------------------------------------------
stop_daemon
ry_assert_eq 1 "$(rc viewer --timeout 2 status)" "no controller exits 1"
ry_assert_contains "$(cat err.txt)" "cannot reach railyardd" "the transport error says so"
ry_pass "railyardctl"
