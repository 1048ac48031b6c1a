// console.js: the railyard web console. Reads /api/v1 with the bearer token
// typed in (kept in this tab's sessionStorage only), draws the fabric with
// grid.js, follows events live, and drains/undrains with the dry-run impact
// shown first (operator token; a viewer token gets a read-only page).
"use strict";

(() => {
  const POLL_MS = 1000;  // events and the fabric summary; a link down shows within ~1 s
  const MAX_EVENTS = 200;
  const $ = (id) => document.getElementById(id);
  const state = {
    token: sessionStorage.getItem("railyard-token") || "",
    role: null,
    summary: null,
    summaryKey: "",
    grid: null,
    gridMode: "state",
    hosts: null,       // GET /hosts, fetched on first use, dropped when the fabric changes
    drains: [],
    lastEvent: 0,
    events: [],
    endpoints: new Set(),
    measured: null,
    selection: null,
    streaming: false,     // the event stream is open
    eventsPending: false, // the stream brought events since the last tick
  };

  // ---- HTTP -------------------------------------------------------------
  async function api(method, path, body) {
    const headers = { Accept: "application/json" };
    if (state.token) headers.Authorization = "Bearer " + state.token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let doc = null;
    try { doc = text ? JSON.parse(text) : null; } catch (e) { doc = { text }; }
    return { status: r.status, ok: r.ok, doc };
  }
  const get = (path) => api("GET", path);

  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "onclick") e.addEventListener("click", v);
      else if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  const fmtTime = (t) => new Date(t * 1000).toLocaleTimeString();
  const operator = () => state.role === "operator";

  // ---- sign in, capabilities --------------------------------------------
  async function signIn() {
    if (!state.token) {
      $("role").textContent = "not signed in";
      return false;
    }
    const r = await get("/api/v1/whoami");
    if (!r.ok) {
      $("role").textContent = r.status === 401 ? "token not valid" : "error " + r.status;
      $("role").className = "badge bad";
      return false;
    }
    state.role = r.doc.role;
    $("role").textContent = `${r.doc.name} (${r.doc.role}${operator() ? "" : ", read-only"})`;
    $("role").className = "badge " + (operator() ? "ok" : "warn");
    // What this railyardd offers: telemetry endpoints are feature-detected
    // from the endpoint list (never probed: a 404 would be a console error).
    const idx = await get("/api/v1");
    if (idx.ok) for (const e of idx.doc.endpoints) state.endpoints.add(e.method + " " + e.path);
    $("mode").querySelector('option[value="measured"]').disabled = !state.endpoints.has("GET /api/v1/hotspots");
    return true;
  }

  // ---- the fabric ---------------------------------------------------------
  async function refreshSummary() {
    const [h, f, d] = await Promise.all([get("/api/v1/health"), get("/api/v1/fabric"), get("/api/v1/drains")]);
    $("health").textContent = h.doc && h.doc.status ? `${h.doc.status} (${h.doc.source})` : "unreachable";
    $("health").className = "badge " + (h.ok ? "ok" : "bad");
    if (!f.ok) return false;
    const s = f.doc;
    state.summary = s;
    state.drains = d.ok ? d.doc.drains : [];
    $("n-hosts").textContent = s.hosts;
    $("n-cas").textContent = s.cas;
    $("n-rails").textContent = s.rails;
    $("n-switches").textContent = s.switches;
    $("n-levels").textContent = "(" + Object.entries(s.switches_per_level).map(([l, n]) => `level ${l}: ${n}`).join(", ") + ")";
    $("n-links-up").textContent = s.links.up;
    $("n-links-down").textContent = s.links.down;
    $("n-links-drained").textContent = s.links.drained;
    $("n-drains").textContent = s.drains;
    $("n-unreachable").textContent = s.routing.unreachable_pairs;
    $("version").textContent = s.version;
    const key = JSON.stringify([s.version, s.links, s.drains]);
    const changed = key !== state.summaryKey;
    state.summaryKey = key;
    return changed;
  }

  async function refreshGrid() {
    const loads = state.gridMode === "predicted";
    const r = await get("/api/v1/grid" + (loads ? "?loads=predicted" : ""));
    if (!r.ok) return;
    state.grid = r.doc;
    view.setDoc(r.doc);
    await applyMode();
    renderBadLinks();
    renderLegend();
    if (state.selection) showSelection(state.selection);
  }

  async function applyMode() {
    if (state.gridMode === "measured") {
      const r = await get("/api/v1/hotspots");
      state.measured = r.ok ? measuredFrom(r.doc) : null;
    }
    view.setMode(state.gridMode, state.measured);
  }

  // /api/v1/hotspots (the telemetry helper's): a list of links with a rate.
  // Read leniently: the list under "hotspots" or "links", each item's link
  // name under "link" or "key", its rate the first known rate field.
  function measuredFrom(doc) {
    const list = Array.isArray(doc) ? doc : doc.hotspots || doc.links || [];
    const values = new Map();
    let max = 0;
    for (const h of list) {
      const key = h.link || h.key;
      const v = [h.xmit_wait_per_second, h.xmit_wait_rate, h.port_xmit_wait_per_s, h.xmit_wait_per_s, h.rate, h.value]
        .find((x) => typeof x === "number");
      if (!key || v === undefined) continue;
      values.set(key, v);
      max = Math.max(max, v);
    }
    return { values, max };
  }

  function renderLegend() {
    const g = state.grid;
    const sw = (colour, text) => {
      const swatch = el("span", { class: "sw" });
      swatch.style.background = colour;  // CSSOM: the CSP allows no inline style attribute
      return [swatch, text];
    };
    const items = [];
    if (state.gridMode === "state") {
      items.push(...sw(RailyardGrid.COLOURS.up, "up"), ...sw(RailyardGrid.COLOURS.drained, "drained"),
                 ...sw(RailyardGrid.COLOURS.down, "down"));
    } else {
      const [lo, hi] = state.gridMode === "predicted" ? RailyardGrid.loadRange(g) : [0, state.measured ? state.measured.max : 0];
      const unit = state.gridMode === "predicted" ? "all-to-all flows" : "PortXmitWait/s";
      if (hi > lo) {
        items.push(...sw(RailyardGrid.heat(0), String(lo)), ...sw(RailyardGrid.heat(0.5), String(Math.round((lo + hi) / 2))),
                   ...sw(RailyardGrid.heat(1), `${hi} ${unit}`));
      } else {
        items.push(...sw(RailyardGrid.heat(0.5), `all ${hi} ${unit}`));
      }
      items.push(...sw(RailyardGrid.COLOURS.drained, "drained"), ...sw(RailyardGrid.COLOURS.downUnderLoad, "down"));
    }
    $("legend").replaceChildren(`${g.links.length} switch links drawn, ${g.switches.length} switches; links:`, ...items,
                                " — a red switch has CA links down, an orange one drained CA links");
    $("legend").dataset.links = g.links.length;
  }

  function linkEnds(k) {
    const [a, ap, b, bp] = state.grid.links[k];
    return `${state.grid.switches[a].name}[${ap}] ↔ ${state.grid.switches[b].name}[${bp}]`;
  }

  function renderBadLinks() {
    const g = state.grid;
    const rows = [];
    g.links.forEach((lk, k) => {
      if (lk[4] === RailyardGrid.STATE_UP) return;
      const word = lk[4] === RailyardGrid.STATE_DOWN ? "down" : "drained";
      rows.push(el("tr", { class: word, "data-key": g.keys ? g.keys[k] : "" },
                   el("td", {}, el("a", { onclick: () => select({ kind: "link", index: k }) }, g.keys ? g.keys[k] : k)),
                   el("td", {}, linkEnds(k)), el("td", {}, word)));
    });
    g.switches.forEach((s, i) => {
      if (!s.cas_down && !s.cas_drained) return;
      rows.push(el("tr", { class: s.cas_down ? "down" : "drained" },
                   el("td", {}, el("a", { onclick: () => select({ kind: "switch", index: i }) }, s.name)),
                   el("td", {}, "CA links"),
                   el("td", {}, `${s.cas_down} down, ${s.cas_drained} drained of ${s.cas}`)));
    });
    $("bad-links").tBodies[0].replaceChildren(...rows);
  }

  // ---- events, live ----------------------------------------------------------
  function eventDetail(e) {
    const d = e.data;
    if (d && typeof d === "object") {
      return Object.entries(d).filter(([k]) => k !== "type" && k !== "seq")
        .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ").slice(0, 200);
    }
    return String(d).slice(0, 200);
  }

  function renderEvents() {
    const rows = state.events.slice(-MAX_EVENTS).reverse().map((e) =>
      el("tr", { "data-id": e.id, class: /down/.test(e.type) ? "down" : "" }, el("td", {}, e.id), el("td", {}, fmtTime(e.time)),
         el("td", {}, e.source), el("td", {}, e.type), el("td", {}, eventDetail(e))));
    $("events").tBodies[0].replaceChildren(...rows);
  }

  // The live log: GET /api/v1/events/stream (server-sent events, read with
  // fetch so the token goes in a header; EventSource cannot send one). While
  // it runs, polling leaves events to it; when it ends the page polls and
  // reconnects after 2 s.
  async function streamEvents() {
    if (!state.endpoints.has("GET /api/v1/events/stream")) return;
    try {
      const r = await fetch(`/api/v1/events/stream?since=${state.lastEvent}`,
                            { headers: { Authorization: "Bearer " + state.token, Accept: "text/event-stream" } });
      if (r.ok) {
        state.streaming = true;
        $("live").textContent = "live (stream)";
        const reader = r.body.getReader(), decoder = new TextDecoder();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let end;
          while ((end = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, end);
            buf = buf.slice(end + 2);
            const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
            if (data) onStreamEvent(JSON.parse(data));
          }
        }
      }
    } catch (e) {
      // fall back to polling below
    }
    state.streaming = false;
    $("live").textContent = "live (polling)";
    setTimeout(streamEvents, 2000);
  }

  function onStreamEvent(e) {
    if (e.id <= state.lastEvent) return;
    state.events.push(e);
    state.events = state.events.slice(-MAX_EVENTS);
    state.lastEvent = e.id;
    renderEvents();
    state.eventsPending = true;
    tick();
  }

  async function pollEvents() {
    if (state.streaming) {
      const pending = state.eventsPending;
      state.eventsPending = false;
      return pending;
    }
    if (state.lastEvent === 0) {
      const head = await get("/api/v1/events?limit=1");
      if (!head.ok) return false;
      state.lastEvent = Math.max(0, head.doc.last_id - 50);
    }
    const r = await get(`/api/v1/events?since=${state.lastEvent}&limit=1000`);
    if (!r.ok) return false;
    if (!r.doc.events.length) return false;
    state.events.push(...r.doc.events);
    state.events = state.events.slice(-MAX_EVENTS);
    state.lastEvent = r.doc.events[r.doc.events.length - 1].id;
    renderEvents();
    return true;
  }

  let polling = false;
  async function tick() {
    if (polling || !state.role) return;
    polling = true;
    try {
      const [newEvents, changed] = await Promise.all([pollEvents(), refreshSummary()]);
      if (changed || newEvents) {
        state.hosts = null;
        await refreshGrid();
      } else if (state.gridMode === "measured") {
        await applyMode();
      }
      $("live").className = "badge ok";
    } catch (e) {
      $("live").className = "badge bad";
    } finally {
      polling = false;
    }
  }

  // ---- panels ----------------------------------------------------------------
  function select(sel) {
    state.selection = sel;
    view.selected = sel.kind === "host" ? null : sel;
    view.draw();
    showSelection(sel);
  }

  function showSelection(sel) {
    if (sel.kind === "switch") showSwitch(sel.index);
    else if (sel.kind === "link") showLink(sel.index);
    else if (sel.kind === "host") showHost(sel.name);
  }

  function table(rows) {
    return el("table", {}, ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))));
  }

  async function hosts() {
    if (!state.hosts) {
      const r = await get("/api/v1/hosts");
      state.hosts = r.ok ? r.doc.hosts : [];
    }
    return state.hosts;
  }

  async function showSwitch(i) {
    const s = state.grid.switches[i];
    const panel = $("panel");
    const links = [];
    state.grid.links.forEach((lk, k) => {
      if (lk[0] !== i && lk[2] !== i) return;
      const word = ["up", "down", "drained"][lk[4]];
      links.push(el("tr", { class: word }, el("td", {}, el("a", { onclick: () => select({ kind: "link", index: k }) }, linkEnds(k))),
                    el("td", {}, word)));
    });
    const drain = state.drains.find((d) => d.target === "switch" && d.key === s.guid);
    panel.replaceChildren(
      el("h3", {}, s.name),
      table([["GUID", s.guid], ["LID", s.lid], ["level", s.level], ["rail", s.rail < 0 ? "-" : s.rail],
             ["CA links", `${s.cas} (${s.cas_down} down, ${s.cas_drained} drained)`],
             ["switch links", links.length], ["drained", drain ? `yes (drain ${drain.id}: ${drain.reason})` : "no"]]),
      drainActions({ target: "switch", node: s.guid, label: `switch ${s.name}` }, drain),
      el("h3", {}, "Switch links"), el("table", {}, ...links));
    if (s.cas > 0) {
      const list = el("div", {}, "hosts: loading…");
      panel.append(el("h3", {}, "Hosts on this leaf"), list);
      const hs = (await hosts()).filter((h) => h.cas.some((c) => c.leaf_guid === s.guid));
      list.replaceChildren(...hs.map((h) => el("span", {}, el("a", { onclick: () => select({ kind: "host", name: h.host }) }, h.host), " ")));
    }
  }

  async function showLink(k) {
    const g = state.grid;
    const [a, ap, b, bp, st] = g.links[k];
    const key = g.keys ? g.keys[k] : "";
    const word = ["up", "down", "drained"][st];
    const drains = state.drains.filter((d) => d.key === key || d.key === `${g.switches[a].guid}[${ap}]` ||
                                              d.key === `${g.switches[b].guid}[${bp}]` ||
                                              (d.target === "switch" && (d.key === g.switches[a].guid || d.key === g.switches[b].guid)));
    const rows = [["link", key], ["ends", linkEnds(k)], ["state", word]];
    if (g.loads) rows.push(["predicted load", `${g.loads[k][0]} / ${g.loads[k][1]} all-to-all flows (a→b / b→a)`]);
    if (state.measured && state.measured.values.has(key)) rows.push(["PortXmitWait rate", state.measured.values.get(key)]);
    const panel = $("panel");
    panel.replaceChildren(el("h3", {}, "Link " + linkEnds(k)), table(rows),
      drainActions({ target: "link", node: g.switches[a].guid, port: ap, label: `link ${linkEnds(k)}` },
                   drains.find((d) => d.target === "link" || d.target === "port")));
    if (drains.length) {
      panel.append(el("h3", {}, "Drains"),
                   table(drains.map((d) => [`#${d.id} ${d.target}`, `${d.reason} (by ${d.created_by}, ${fmtTime(d.created_at)})`])));
    }
    const counters = el("div", { class: "hint" }, "no telemetry for this link (this railyardd has no counters endpoint)");
    panel.append(el("h3", {}, "Counters"), counters);
    if (state.endpoints.has("GET /api/v1/links/{link}/counters") && key) {
      const r = await get(`/api/v1/links/${encodeURIComponent(key)}/counters`);
      counters.replaceChildren(r.ok ? el("pre", {}, JSON.stringify(r.doc, null, 1).slice(0, 4000)) : `no counters (${r.status})`);
    }
    const evs = state.events.filter((e) => JSON.stringify(e.data).includes(key) ||
                                           JSON.stringify(e.data).includes(g.switches[a].name + "[" + ap + "]"));
    panel.append(el("h3", {}, "Events"), evs.length ? table(evs.slice(-20).reverse().map((e) => [`${e.id} ${fmtTime(e.time)}`, `${e.type} ${eventDetail(e)}`]))
                                                   : el("p", { class: "hint" }, "none among the recent events"));
  }

  async function showHost(name) {
    const h = (await hosts()).find((x) => x.host === name);
    const panel = $("panel");
    if (!h) {
      panel.replaceChildren(el("p", { class: "error" }, `no host ${name}`));
      return;
    }
    panel.replaceChildren(
      el("h3", {}, "Host " + h.host),
      table([["rails", h.rails], ["healthy rails", h.rails_healthy]]),
      el("table", { id: "host-cas" }, el("tr", {}, el("th", {}, "rail"), el("th", {}, "CA"), el("th", {}, "leaf"), el("th", {}, "uplinks"),
                                         el("th", {}, "health")),
         ...h.cas.map((c) => {
           const leaf = state.grid.switches.findIndex((s) => s.guid === c.leaf_guid);
           return el("tr", {}, el("td", {}, c.rail), el("td", {}, `${c.name} (LID ${c.lid})`),
                     el("td", {}, leaf >= 0 ? el("a", { onclick: () => select({ kind: "switch", index: leaf }) }, `${c.leaf}[${c.leaf_port}]`) : "-"),
                     el("td", {}, c.leaf_uplinks ? `${c.leaf_uplinks.healthy}/${c.leaf_uplinks.total}` : "-"),
                     el("td", { class: "health-" + c.health }, c.health));
         })));
  }

  // Drain (or undrain) with the dry run's impact first, then a confirmation.
  function drainActions(target, drain) {
    const box = el("div", { class: "actions" });
    if (!operator()) {
      box.append(el("span", { class: "hint" }, "read-only: draining needs an operator token"));
      return box;
    }
    const out = el("div");
    if (drain) {
      const btn = el("button", { id: "undrain-dry-run" }, `Undrain #${drain.id}…`);
      btn.addEventListener("click", async () => {
        const r = await api("DELETE", `/api/v1/drains/${drain.id}?dry_run=true`);
        out.replaceChildren(impactView(r, `Undrain ${target.label}`, async () => {
          const done = await api("DELETE", `/api/v1/drains/${drain.id}`);
          return done;
        }));
      });
      box.append(btn, out);
      return box;
    }
    const reason = el("input", { id: "drain-reason", placeholder: "reason (required)", size: 24 });
    const btn = el("button", { id: "drain-dry-run" }, "Drain… (dry run first)");
    btn.addEventListener("click", async () => {
      if (!reason.value.trim()) {
        out.replaceChildren(el("p", { class: "error" }, "say why (the reason is recorded)"));
        return;
      }
      const body = { target: target.target, node: target.node, reason: reason.value.trim() };
      if (target.port !== undefined) body.port = target.port;
      const r = await api("POST", "/api/v1/drains?dry_run=true", body);
      out.replaceChildren(impactView(r, `Drain ${target.label}`, () => api("POST", "/api/v1/drains", body)));
    });
    box.append(reason, " ", btn, out);
    return box;
  }

  function impactView(r, what, confirm) {
    const wrap = el("div", { class: "impact", id: "impact" });
    const i = r.doc && (r.doc.impact || (r.doc.error && r.doc.error.impact));
    if (i) {
      wrap.append(el("b", {}, `${what}: impact`), table([
        ["CA pairs cut", i.pairs_cut], ["pairs rerouted", i.pairs_rerouted], ["LFT entries changed", i.lft_entries_changed],
        ["LFT blocks changed", i.lft_blocks_changed], ["switches touched", i.switches_touched],
        ["routing time", `${Number(i.route_ms).toFixed(1)} ms`]]));
    }
    if (!r.ok) {
      wrap.append(el("p", { class: "error" }, `refused (${r.status}): ${r.doc && r.doc.error ? r.doc.error.message : ""}`));
      return wrap;
    }
    const go = el("button", { id: "drain-confirm" }, `Confirm: ${what.toLowerCase()}`);
    go.addEventListener("click", async () => {
      go.disabled = true;
      const done = await confirm();
      // Outside the panel: the panel is redrawn with the fabric's new state.
      const rr = done.doc && done.doc.reroute ? `, reroute ${done.doc.reroute.id} ${done.doc.reroute.status}` : "";
      $("notice").replaceChildren(done.ok ? el("span", { class: "ok", id: "drain-done" }, `${what}: done (${done.status}${rr})`)
        : el("span", { class: "error" }, `${what}: failed (${done.status}): ${done.doc && done.doc.error ? done.doc.error.message : ""}`));
      await tick();
    });
    wrap.append(go);
    return wrap;
  }

  // ---- search -------------------------------------------------------------------
  async function search(text) {
    const q = text.trim();
    if (!q || !state.grid) return;
    const s = state.grid.switches.findIndex((x) => x.name === q || x.guid === q);
    if (s >= 0) return select({ kind: "switch", index: s });
    const hs = await hosts();
    const h = hs.find((x) => x.host === q) || hs.find((x) => x.cas.some((c) => c.name === q || c.guid === q));
    if (h) return select({ kind: "host", name: h.host });
    $("panel").replaceChildren(el("p", { class: "error" }, `nothing called ${q}`));
  }

  // ---- start ------------------------------------------------------------------
  const view = new RailyardGrid.View($("grid"), { onSelect: (kind, index) => select({ kind, index }) });
  window.railyardConsole = { state, view, tick };  // for the browser test and the curious

  $("signin").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("railyard-token", state.token);
    $("token").value = "";
    await start();
  });
  $("mode").addEventListener("change", async () => {
    state.gridMode = $("mode").value;
    await refreshGrid();
  });
  $("search").addEventListener("change", () => search($("search").value));

  async function start() {
    if (!(await signIn())) return;
    state.summaryKey = "";
    await tick();
    if (!state.streaming) streamEvents();
  }
  // A token in the address (#token=...) signs in at once (bookmarks, tests);
  // it is moved to sessionStorage and removed from the address.
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    state.token = decodeURIComponent(m[1]);
    sessionStorage.setItem("railyard-token", state.token);
    history.replaceState(null, "", location.pathname);
  }
  start();
  setInterval(tick, POLL_MS);
})();
