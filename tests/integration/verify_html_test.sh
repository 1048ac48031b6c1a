#!/usr/bin/env bash
# railyard verify --html: one self-contained page whose numbers are those of
# verify --json (parsed back out of the HTML, not trusted from the program),
# with nothing loaded from elsewhere; its per-link loads add up to the
# routes' switch hops; a broken routing's report says so and lists the
# examples. No daemon, no simulator (~2 s).
#
#   bash verify_html_test.sh RAILYARD_BIN SOURCE_DIR BINARY_DIR
set -euo pipefail

RAILYARD=$(realpath "$1")
SRC=$(realpath "$2")
# shellcheck source=lib.sh
source "$SRC/tests/integration/lib.sh"
ry_tmpdir

"$RAILYARD" verify --help | grep -q -- "--html" || ry_fail "verify --help does not document --html"
"$RAILYARD" topo gen --servers 32 --rails 4 --radix 16 --assign-lids -o full.topo 2>/dev/null
"$RAILYARD" route --topo full.topo -o full.lfts 2>route.err || { cat route.err >&2; ry_fail "railyard route failed"; }
"$RAILYARD" verify --topo full.topo --lfts full.lfts --json --html full.html >full.json
# Tables computed for the whole fabric, judged on one missing three spine links.
"$RAILYARD" topo gen --servers 32 --rails 4 --radix 16 --assign-lids --remove-switch-links 3 -o cut.topo 2>/dev/null
rc=0
"$RAILYARD" verify --topo cut.topo --lfts full.lfts --json --html cut.html >cut.json || rc=$?
ry_assert_eq 1 "$rc" "verify of tables over missing links exits 1"

/usr/bin/python3 - full.html full.json cut.html cut.json <<'PY'
import json, re, sys
from html.parser import HTMLParser

class Report(HTMLParser):
    """Tables by id: {row data-key: {data-field or 'value': text}}; scripts; external references."""
    def __init__(self):
        super().__init__()
        self.tables, self.scripts, self.external, self.classes = {}, {}, [], {}
        self.table = self.row = self.field = self.script = None
        self.text = ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a and not a[k].startswith("#"):
                self.external.append(a[k])
        if "id" in a and "class" in a:
            self.classes[a["id"]] = a["class"]
        if tag == "table":
            self.table = self.tables.setdefault(a.get("id"), {})
        elif tag == "tr" and self.table is not None:
            self.row = self.table.setdefault(a.get("data-key", f"#{len(self.table)}"), {})
        elif tag == "td" and self.row is not None:
            self.field, self.text = a.get("data-field", "value"), ""
        elif tag == "script":
            self.script, self.text = a.get("id", f"script{len(self.scripts)}"), ""
    def handle_endtag(self, tag):
        if tag == "td" and self.field:
            self.row[self.field] = self.text
            self.field = None
        elif tag == "tr":
            self.row = None
        elif tag == "table":
            self.table = None
        elif tag == "script" and self.script:
            self.scripts[self.script] = self.text
            self.script = None
    def handle_data(self, data):
        if self.field or self.script:
            self.text += data

def parse(path):
    r = Report()
    r.feed(open(path, encoding="utf-8").read())
    return r

def same(cell, value, what):
    if isinstance(value, bool):
        ok = cell == ("yes" if value else "no")
    elif isinstance(value, (int, float)):
        ok = abs(float(cell) - value) <= 1e-9 * max(1.0, abs(value))
    elif value is None:
        ok = cell == "-"
    else:
        ok = cell == str(value)
    if not ok:
        sys.exit(f"FAIL: {what}: the report says {cell!r}, --json {value!r}")

def check(html_path, json_path):
    r, j = parse(html_path), json.load(open(json_path))
    if r.external:
        sys.exit(f"FAIL: {html_path} references other files: {r.external}")
    for key in ("switches", "ca_ports", "lids", "pairs", "reachable", "blackholed", "looped", "switch_pairs",
                "switch_pairs_reachable", "mean_hops", "max_stretch", "mean_stretch"):
        same(r.tables["summary"][key]["value"], j[key], f"{html_path} summary {key}")
    for key in ("worst_up_spread", "worst_switch", "mean_up_spread"):
        same(r.tables["summary"]["balance." + key]["value"], j["balance"][key], f"{html_path} balance {key}")
    for key in ("ca_routes", "with_switch_lids"):
        for f in ("acyclic", "channels", "dependencies", "cycle"):
            same(r.tables["credit-loops"][key][f], j["credit_loops"][key][f], f"{html_path} credit loops {key} {f}")
    if len(r.tables["congestion"]) != len(j["congestion"]) + 1:  # + the header row
        sys.exit(f"FAIL: {html_path}: {len(r.tables['congestion']) - 1} congestion rows, --json has {len(j['congestion'])}")
    for p in j["congestion"]:
        row = r.tables["congestion"][p["pattern"]]
        for f in ("instances", "flows", "unrouted", "max_load", "lower_bound", "mean_max_load", "mean_link_load",
                  "worst_instance", "worst_link"):
            same(row[f], p[f], f"{html_path} congestion {p['pattern']} {f}")
    verdict = r.classes.get("verdict")
    if verdict != ("ok" if j["ok"] else "bad"):
        sys.exit(f"FAIL: {html_path}: verdict {verdict}, --json ok={j['ok']}")
    grid = json.loads(r.scripts["grid-data"])
    if "RailyardGrid" not in "".join(r.scripts.values()):
        sys.exit(f"FAIL: {html_path}: the drawing script is not inlined")
    return r, j, grid

r, j, grid = check(sys.argv[1], sys.argv[2])
# Every all-to-all flow crosses its route's switch links: the loads add up to
# the reachable pairs times their mean switch hops.
total = sum(a + b for a, b in grid["loads"])
if abs(total - j["mean_hops"] * j["reachable"]) > 0.5:
    sys.exit(f"FAIL: the links' loads add up to {total}, pairs x mean hops is {j['mean_hops'] * j['reachable']}")
worst = sorted((max(a, b) for a, b in grid["loads"]), reverse=True)[:20]
shown = [max(int(row["a_to_b"]), int(row["b_to_a"])) for k, row in r.tables["worst-links"].items() if not k.startswith("#")]
if shown != worst:
    sys.exit(f"FAIL: worst links {shown}, the loads say {worst}")
# All-to-all's busiest directed link is a switch link or a CA link (n - 1 flows).
a2a = next(p for p in j["congestion"] if p["pattern"] == "all-to-all")
if a2a["max_load"] != max(worst[0], j["ca_ports"] - 1):
    sys.exit(f"FAIL: all-to-all max {a2a['max_load']}, busiest switch link {worst[0]}, CA links {j['ca_ports'] - 1}")
if len(grid["links"]) != 256 - 128:
    sys.exit(f"FAIL: {len(grid['links'])} switch links in the picture, the generator made 128")
print(f"PASS: full.html: {total} flow-hops over {len(grid['links'])} switch links, worst {worst[0]}", file=sys.stderr)

r, j, grid = check(sys.argv[3], sys.argv[4])
if j["ok"] or not j["examples"]:
    sys.exit("FAIL: the cut fabric's --json should report problems with examples")
if len(r.tables.get("examples", {})) != len(j["examples"]) + 1:
    sys.exit(f"FAIL: cut.html lists {len(r.tables.get('examples', {})) - 1} examples, --json {len(j['examples'])}")
print(f"PASS: cut.html: {j['blackholed']} blackholed pairs reported, {len(j['examples'])} examples", file=sys.stderr)
PY
ry_pass "verify --html matches verify --json"
