#!/usr/bin/env bash
# railyardd as an operator meets it: `config check` says ok or names the file,
# line and mistake (exit 2); --help teaches; the example config in config/ is
# valid once its token files exist; SIGTERM stops it cleanly (exit 0) and the
# socket and port are released; a database it cannot open is a clear error.
#
# Usage (ctest does this): railyardd_cli_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_require_tools curl
ry_tmpdir
D=$BIN/railyardd

help=$("$D" --help)
ry_assert_contains "$help" "config check" "--help names config check"
ry_assert_contains "$help" "--port-file" "--help names --port-file"

# The shipped example, with its paths pointed into this folder.
mkdir -p etc
echo "slurm-token-0123456789abcdef" >etc/slurm.token
echo "grafana-token-0123456789abcdef" >etc/grafana.token
chmod 600 etc/*.token  # railyardd refuses token files others can read
sed -e "s#/etc/railyard/#$RY_TMP/etc/#g" -e "s#/var/lib/railyard/#$RY_TMP/#" -e "s#/run/railyard/#$RY_TMP/#" \
  "$SRC/config/railyardd.yaml" >etc/railyardd.yaml
out=$("$D" config check etc/railyardd.yaml) || ry_fail "the example config does not check: $out"
ry_assert_contains "$out" "ok (listen 127.0.0.1:8640, 2 tokens" "config check summary"

printf 'fabric: {source: offline, topology_file: f}\nlisten: {adress: 0.0.0.0}\n' >bad.yaml
rc=0
err=$("$D" config check bad.yaml 2>&1) || rc=$?
ry_assert_eq 2 "$rc" "config check of a bad file"
ry_assert_contains "$err" "bad.yaml:2: unknown key 'adress'" "the error names file, line and key"

printf 'fabric: {source: offline, topology_file: f}\nlog_level: info\nlog_level: debug\n' >dup.yaml
rc=0
err=$("$D" config check dup.yaml 2>&1) || rc=$?
ry_assert_eq 2 "$rc" "config check of a file with a repeated key"
ry_assert_contains "$err" "dup.yaml:3: duplicate key 'log_level' at top level" "the error names file, line and key"

# Start offline, then SIGTERM.
"$RAILYARD" topo gen --servers 8 --rails 2 --radix 8 -o f.net 2>/dev/null
printf 'fabric: {source: offline, topology_file: f.net}\ndatabase: s.db\n' >ok.yaml
ry_start_railyardd "$BIN" ok.yaml
ry_assert_eq 200 "$(curl -s -o /dev/null -w '%{http_code}' "$RY_URL/api/v1/health")" "health"
kill -TERM "$RY_RAILYARDD_PID"
rc=0
wait "$RY_RAILYARDD_PID" || rc=$?
RY_RAILYARDD_PID=""
ry_assert_eq 0 "$rc" "exit status after SIGTERM"
grep -q "shutting down" "$RY_RAILYARDD_LOG" || ry_fail "no shutdown line in the log"
curl -s -o /dev/null --max-time 2 "$RY_URL/api/v1/health" && ry_fail "still answering after SIGTERM"

printf 'fabric: {source: offline, topology_file: f.net}\ndatabase: /nonexistent/dir/s.db\n' >nodb.yaml
rc=0
"$D" --config nodb.yaml --port 0 >nodb.log 2>&1 || rc=$?
ry_assert_eq 1 "$rc" "exit status with an unopenable database"
ry_assert_file_contains nodb.log "cannot open the database" "the log says why"
ry_pass "railyardd: config check, help, SIGTERM, bad database"
