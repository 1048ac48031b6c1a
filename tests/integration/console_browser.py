#!/usr/bin/python3
"""The web console in a real browser (headless Chromium through chromedriver)
against a real railyardd serving an offline generated fabric.

  console_browser.py URL OPERATOR_TOKEN VIEWER_TOKEN TOPOLOGY [SCREENSHOT_DIR]

Checks: the page loads without console errors; the counts it shows equal the
ones computed here from the topology file; a viewer gets a read-only page; a
host's panel lists one CA per rail; a drain made through the page (dry run,
impact, confirm) changes the route (read over REST); a link reported down
over REST is drawn red within 2 s. With SCREENSHOT_DIR, writes the healthy,
degraded and hotspot views there (docs/console-*.png).
"""
import json
import os
import re
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

URL, OPERATOR, VIEWER, TOPO = sys.argv[1:5]
SHOTS = sys.argv[5] if len(sys.argv) > 5 else ""
T0 = time.monotonic()


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"PASS: {msg}", file=sys.stderr)


def rest(method, path, body=None, token=OPERATOR):
    req = urllib.request.Request(URL + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


# ---- expected counts, from the topology file itself ------------------------
def topology_counts(path):
    switches, cas, hosts, rails = set(), set(), set(), set()
    switch_links, ca_links = set(), set()
    kind = node = None
    for line in open(path):
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"', line)
        if m:
            kind, node, desc = m.groups()
            if kind == "Switch":
                switches.add(node)
            else:
                cas.add(node)
                dm = re.match(r"^(\S+)[ -]mlx5_(\d+)$", desc)
                if dm:
                    hosts.add(dm.group(1))
                    rails.add(int(dm.group(2)))
            continue
        pm = re.match(r'^\[(\d+)\][^"]*"([^"]+)"\[(\d+)\]', line)
        if pm and node:
            a = (node, int(pm.group(1)))
            b = (pm.group(2), int(pm.group(3)))
            key = tuple(sorted([a, b]))
            if node.startswith("S-") and pm.group(2).startswith("S-"):
                switch_links.add(key)
            else:
                ca_links.add(key)
    return {"switches": len(switches), "cas": len(cas), "hosts": len(hosts), "rails": max(rails) + 1,
            "switch_links": len(switch_links), "links": len(switch_links) + len(ca_links)}


expected = topology_counts(TOPO)

# ---- the browser --------------------------------------------------------------
opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,1000",
            "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--disable-component-update", "--disable-default-apps", "--force-device-scale-factor=1",
            "--user-data-dir=" + tempfile.mkdtemp(prefix="railyard-chromium.")):
    opts.add_argument(arg)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=opts)
driver.set_page_load_timeout(30)


def console_errors():
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def wait(cond, what, timeout=10):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: cond())
    except Exception:
        fail(f"timed out after {timeout}s waiting for {what}")


def text(id_):
    return driver.find_element(By.ID, id_).text


def shot(name):
    if SHOTS:
        driver.save_screenshot(os.path.join(SHOTS, f"console-{name}.png"))


try:
    # ---- viewer: read-only ----------------------------------------------------
    driver.get(URL + "/console/#token=" + VIEWER)
    wait(lambda: text("n-switches") not in ("", "–"), "the fabric summary (viewer)")
    wait(lambda: driver.execute_script("return !!(window.railyardConsole.state.grid)"), "the grid (viewer)")
    check("read-only" in text("role"), "a viewer token is shown read-only")
    driver.execute_script("railyardConsole.view.onSelect('link', 0)")
    check("read-only" in text("panel") and not driver.find_elements(By.ID, "drain-dry-run"),
          "a viewer's link panel offers no drain")
    check(not console_errors(), "viewer page: no console errors")

    # ---- operator: counts ---------------------------------------------------------
    driver.get("about:blank")
    driver.get(URL + "/console/#token=" + OPERATOR)
    wait(lambda: driver.execute_script("return !!(window.railyardConsole && window.railyardConsole.state.grid)"),
         "the grid (operator)")
    wait(lambda: text("n-switches") not in ("", "–"), "the fabric summary")
    check("operator" in text("role"), "the operator token is recognised")
    wait(lambda: driver.execute_script("return railyardConsole.state.streaming"), "the event stream (SSE) open")
    check("stream" in text("live"), "the event log follows GET /api/v1/events/stream")
    shown = {k: int(text("n-" + k)) for k in ("switches", "cas", "hosts", "rails", "links-up", "links-down",
                                               "links-drained")}
    drawn = int(driver.find_element(By.ID, "legend").get_attribute("data-links"))
    check(shown["switches"] == expected["switches"], f"switches shown {shown['switches']} == {expected['switches']}")
    check(shown["cas"] == expected["cas"], f"CAs shown {shown['cas']} == {expected['cas']}")
    check(shown["hosts"] == expected["hosts"], f"hosts shown {shown['hosts']} == {expected['hosts']}")
    check(shown["rails"] == expected["rails"], f"rails shown {shown['rails']} == {expected['rails']}")
    check(shown["links-up"] == expected["links"] and shown["links-down"] == 0 and shown["links-drained"] == 0,
          f"links up {shown['links-up']} == {expected['links']}, none down or drained")
    check(drawn == expected["switch_links"], f"switch links drawn {drawn} == {expected['switch_links']}")
    shot("healthy")

    # ---- a host's panel: one CA per rail ---------------------------------------------
    box = driver.find_element(By.ID, "search")
    box.send_keys("node002\n")
    wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#host-cas tr"), "the host panel")
    rows = driver.find_elements(By.CSS_SELECTOR, "#host-cas tr")[1:]
    check(len(rows) == expected["rails"] and all("healthy" in r.text for r in rows),
          f"host node002 shows {len(rows)} CAs, one per rail, healthy")

    # ---- drain through the page changes the route ---------------------------------------
    src, dst = "node001 mlx5_0", "node009 mlx5_0"  # another leaf of rail 0: over a spine
    q = urllib.parse.quote
    status, before = rest("GET", f"/api/v1/routes/{q(src)}/{q(dst)}", token=VIEWER)
    check(status == 200 and before["delivered"], "the route before the drain is delivered")
    leaf_hop = before["hops"][1]
    key_before = [(h["node"], h.get("out_port")) for h in before["hops"]]

    def link_index(guid, port):
        return driver.execute_script(
            """const g = railyardConsole.state.grid;
               return g.links.findIndex(l => (g.switches[l[0]].guid === arguments[0] && l[1] === arguments[1]) ||
                                             (g.switches[l[2]].guid === arguments[0] && l[3] === arguments[1]));""",
            guid, port)

    # A whole-pixel point of link k that the page's own hit test gives to it,
    # and every pixel around it too (the midpoint may be where another link
    # crosses it; a click lands on whole pixels), or None when there is none
    # (a parallel cable drawn on the same line).
    def link_point(k):
        return driver.execute_script(
            """const v = railyardConsole.view, k = arguments[0], [a, , b] = v.doc.links[k];
               const mine = (x, y) => { const h = v.hit(x, y); return h && h.kind === "link" && h.index === k; };
               for (let i = 1; i < 20; i++) {
                 const f = i / 20;
                 const x = Math.round(v.lay.x[a] + f * (v.lay.x[b] - v.lay.x[a]));
                 const y = Math.round(v.lay.y[a] + f * (v.lay.y[b] - v.lay.y[a]));
                 let all = true;
                 for (let dx = -1; dx <= 1 && all; dx++) for (let dy = -1; dy <= 1 && all; dy++) all = mine(x + dx, y + dy);
                 if (all) return {x: x, y: y};
               }
               return null;""", k)

    def click_link(k):
        canvas = driver.find_element(By.ID, "grid")
        p = link_point(k) or driver.execute_script("return railyardConsole.view.linkMidpoint(arguments[0])", k)
        size = canvas.size
        driver.execute_script("arguments[0].scrollIntoView()", canvas)
        ActionChains(driver).move_to_element_with_offset(canvas, p["x"] - size["width"] / 2,
                                                         p["y"] - size["height"] / 2).click().perform()

    k = link_index(leaf_hop["guid"], leaf_hop["out_port"])
    check(k >= 0, f"the route's first switch link {leaf_hop['node']}[{leaf_hop['out_port']}] is drawn")
    click_link(k)
    wait(lambda: driver.find_elements(By.ID, "drain-dry-run"), "the link panel with a drain button")
    check(leaf_hop["node"] in text("panel"), "clicking the link opens its panel")
    driver.find_element(By.ID, "drain-reason").send_keys("browser test")
    driver.find_element(By.ID, "drain-dry-run").click()
    wait(lambda: driver.find_elements(By.ID, "impact"), "the dry run's impact")
    impact = text("impact")
    check("pairs rerouted" in impact and "CA pairs cut" in impact, "the dry run's impact is shown before the drain")
    status, drains = rest("GET", "/api/v1/drains", token=VIEWER)
    check(not drains["drains"], "the dry run drained nothing")
    driver.find_element(By.ID, "drain-confirm").click()
    wait(lambda: driver.find_elements(By.ID, "drain-done"), "the drain's confirmation")
    status, drains = rest("GET", "/api/v1/drains", token=VIEWER)
    check(len(drains["drains"]) == 1 and drains["drains"][0]["created_by"] == "ops", "the page made one drain, as ops")
    status, after = rest("GET", f"/api/v1/routes/{q(src)}/{q(dst)}", token=VIEWER)
    key_after = [(h["node"], h.get("out_port")) for h in after["hops"]]
    check(after["delivered"] and key_after != key_before and
          (leaf_hop["node"], leaf_hop["out_port"]) not in key_after,
          f"the route no longer leaves {leaf_hop['node']} by port {leaf_hop['out_port']}")

    # ---- a link downed over REST is red within 2 s --------------------------------------
    status, links = rest("GET", "/api/v1/links", token=VIEWER)
    spine_links = [l for l in links["links"] if l["a"]["node"].startswith("leaf g003 r3") and
                   l["b"]["node"].startswith("spine")] + \
                  [l for l in links["links"] if l["b"]["node"].startswith("leaf g003 r3") and
                   l["a"]["node"].startswith("spine")]
    check(spine_links, "a leaf-spine link of rail 3 to take down")
    target = spine_links[0]
    leaf_end = target["a"] if target["a"]["node"].startswith("leaf") else target["b"]
    k2 = link_index(leaf_end["guid"], leaf_end["port"])

    def red_at_midpoint():
        return driver.execute_script(
            """const v = railyardConsole.view, p = v.linkMidpoint(arguments[0]);
               const d = document.getElementById('grid').getContext('2d').getImageData(Math.round(p.x), Math.round(p.y), 1, 1).data;
               return d[0] > 180 && d[1] < 90 && d[2] < 90;""", k2)

    check(not red_at_midpoint(), "the link is not red before it goes down")
    t_down = time.monotonic()
    status, body = rest("POST", "/api/v1/events/link", {"id": "browser-test-1", "node": leaf_end["guid"],
                                                          "port": leaf_end["port"], "state": "down",
                                                          "reason": "browser test"})
    check(status == 201, f"link event down accepted ({status})")
    wait(red_at_midpoint, "the downed link drawn red", timeout=2)
    took = time.monotonic() - t_down
    check(took <= 2.0, f"the downed link is red after {took:.2f} s (<= 2 s)")
    wait(lambda: driver.find_elements(By.CSS_SELECTOR, f'#bad-links tr.down[data-key="{target["link"]}"]'),
         "the downed link in the list", timeout=2)
    wait(lambda: "link_down" in text("events"), "the link_down event in the live log", timeout=2)
    check(int(text("n-links-down")) == 1 and int(text("n-links-drained")) == 1, "one link down, one drained shown")
    driver.execute_script("railyardConsole.view.selected = null; railyardConsole.view.draw()")
    shot("degraded")

    # ---- hotspot view: colour by predicted load ----------------------------------------
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element(By.ID, "mode")).select_by_value("predicted")
    wait(lambda: driver.execute_script("return !!railyardConsole.state.grid.loads"), "the predicted loads")
    max_load = driver.execute_script("return railyardConsole.state.grid.load_max")
    check(max_load > 0, f"predicted loads drawn (busiest switch link {max_load} all-to-all flows)")
    # The busiest links; the first one a click can pick out.
    hottest = driver.execute_script(
        """const g = railyardConsole.state.grid, m = g.loads.map(l => Math.max(...l)), top = Math.max(...m);
           return m.map((v, k) => v === top ? k : -1).filter(k => k >= 0);""")
    clickable = [k for k in hottest if link_point(k) is not None]
    check(clickable, f"one of the busiest links {hottest} can be clicked")
    click_link(clickable[0])
    wait(lambda: "predicted load" in text("panel") and str(max_load) in text("panel"), "the hottest link's panel")
    shot("hotspot")

    errors = console_errors()
    check(not errors, "operator page: no console errors" + (f": {errors}" if errors else ""))
finally:
    driver.quit()
print(f"console browser test: {time.monotonic() - T0:.1f} s", file=sys.stderr)
