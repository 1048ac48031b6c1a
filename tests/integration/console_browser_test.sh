#!/usr/bin/env bash
# The web console in headless Chromium (chromedriver + python3-selenium)
# against a real railyardd on an offline generated 32-server x 4-rail fabric:
# no console errors, the counts of the topology file, read-only for a viewer,
# a drain through the page changes the route, a link downed over REST is red
# within 2 s (tests/integration/console_browser.py).
#
#   bash console_browser_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
# RY_SCREENSHOT_DIR=DIR writes the healthy, degraded and hotspot views there
# (how docs/console-*.png are made).
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
BIN=$(realpath "$3")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"

[[ -x "$BIN/railyardd" ]] || ry_fail "no railyardd in $BIN (build the railyardd target)"
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
  [[ -x $tool ]] || ry_fail "$tool not found (packages chromium, chromium-driver: run scripts/setup.sh)"
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || ry_fail "python3-selenium not installed (run scripts/setup.sh)"
shots=""
if [[ -n "${RY_SCREENSHOT_DIR:-}" ]]; then
  mkdir -p "$RY_SCREENSHOT_DIR"
  shots=$(realpath "$RY_SCREENSHOT_DIR")
fi

ry_tmpdir
"$RAILYARD" topo gen --servers 32 --rails 4 --radix 16 -o roft.net 2>/dev/null
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
CONF
ry_start_railyardd "$BIN" railyardd.yaml

# The page and its files are served without a token, with a CSP of this origin only.
headers=$(curl -sS -D - -o page.html "$RY_URL/console/")
ry_assert_contains "$headers" "Content-Security-Policy: default-src 'self'" "the console is served with a same-origin CSP"
ry_assert_file_contains page.html '<script src="console.js"' "GET /console/ is the page"
if grep -Eq '(src|href)="(https?:)?//' page.html; then ry_fail "the page loads something from another origin"; fi

start=$SECONDS
HOME=$RY_TMP /usr/bin/python3 "$SRC/tests/integration/console_browser.py" "$RY_URL" "$OPERATOR" "$VIEWER" roft.net $shots
ry_pass "console in Chromium ($((SECONDS - start)) s)"
