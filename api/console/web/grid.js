// grid.js: lays out and draws the fabric picture (the JSON of api/console/grid.h)
// on a canvas: rails x leaves at the bottom, spines and cores above, one line
// per switch-switch link. Shared by the console (console.js) and the report of
// `railyard verify --html`. Plain JS, no library: a canvas keeps a 16,384-CA
// fabric (~1,000 switches, ~30,000 links) to one DOM node.
"use strict";

const RailyardGrid = (() => {
  const STATE_UP = 0, STATE_DOWN = 1, STATE_DRAINED = 2;
  const COLOURS = {
    up: "rgba(60, 140, 90, 0.55)",
    down: "rgb(220, 30, 30)",
    downUnderLoad: "rgb(20, 20, 20)",
    drained: "rgb(240, 150, 0)",
    node: "rgb(70, 90, 120)",
    nodeDown: "rgb(220, 30, 30)",
    nodeDrained: "rgb(240, 150, 0)",
    text: "rgb(40, 40, 40)",
    selected: "rgb(30, 100, 230)",
  };
  const LEVEL_NAMES = ["leaves", "spines", "cores"];

  // "node012" < "node100": numbers compared as numbers.
  function naturalCompare(a, b) {
    const ax = a.match(/(\d+|\D+)/g) || [], bx = b.match(/(\d+|\D+)/g) || [];
    for (let i = 0; i < Math.min(ax.length, bx.length); i++) {
      const x = ax[i], y = bx[i];
      if (x === y) continue;
      const nx = /^\d/.test(x), ny = /^\d/.test(y);
      if (nx && ny) return Number(x) - Number(y) || x.length - y.length;
      return x < y ? -1 : 1;
    }
    return ax.length - bx.length;
  }

  // Blue (idle) -> yellow -> red (the busiest link).
  function heat(t) {
    t = Math.max(0, Math.min(1, t));
    const stops = [[40, 90, 200], [240, 200, 40], [215, 25, 25]];
    const seg = t < 0.5 ? 0 : 1, u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    const a = stops[seg], b = stops[seg + 1];
    const c = a.map((v, i) => Math.round(v + (b[i] - v) * u));
    return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  }

  // Positions: x per switch (leaves grouped by rail, upper levels ordered by
  // the mean x of the switches below them), y per level.
  function layout(doc, width) {
    const sws = doc.switches;
    const levels = new Map();
    sws.forEach((s, i) => {
      const l = s.level < 0 ? -1 : s.level;
      if (!levels.has(l)) levels.set(l, []);
      levels.get(l).push(i);
    });
    const maxLevel = Math.max(0, ...[...levels.keys()]);
    const leaves = levels.get(0) || [];
    const railsOf = new Map();
    for (const i of leaves) {
      const r = sws[i].rail;
      if (!railsOf.has(r)) railsOf.set(r, []);
      railsOf.get(r).push(i);
    }
    const rails = [...railsOf.keys()].sort((a, b) => (a < 0) - (b < 0) || a - b);
    const gap = 2;
    const slots = leaves.length + gap * Math.max(0, rails.length - 1);
    const margin = 70;
    const slot = Math.max(6, (width - 2 * margin) / Math.max(1, slots));
    const w = Math.max(width, Math.ceil(slot * slots + 2 * margin));
    const x = new Float64Array(sws.length);
    const railBlocks = [];
    let pos = 0;
    for (const r of rails) {
      const members = railsOf.get(r).sort((a, b) => naturalCompare(sws[a].name, sws[b].name));
      const x0 = margin + pos * slot;
      for (const i of members) x[i] = margin + (pos++ + 0.5) * slot;
      railBlocks.push({ rail: r, x0, x1: margin + pos * slot, leaves: members.length });
      pos += gap;
    }
    const nbrs = sws.map(() => []);
    for (const [a, , b] of doc.links) {
      nbrs[a].push(b);
      nbrs[b].push(a);
    }
    const rowH = 110;
    const height = 60 + rowH * (maxLevel + (levels.has(-1) ? 1 : 0)) + 70;
    const y = new Float64Array(sws.length);
    const yOf = (l) => height - 50 - rowH * (l < 0 ? maxLevel + 1 : l);
    for (const i of leaves) y[i] = yOf(0);
    const upper = [...levels.keys()].filter((l) => l !== 0).sort((a, b) => (a < 0) - (b < 0) || a - b);
    for (const l of upper) {
      const members = levels.get(l);
      const bary = new Map();
      for (const i of members) {
        const below = nbrs[i].filter((j) => sws[j].level >= 0 && sws[j].level < sws[i].level);
        bary.set(i, below.length ? below.reduce((s, j) => s + x[j], 0) / below.length : w / 2);
      }
      members.sort((a, b) => bary.get(a) - bary.get(b) || naturalCompare(sws[a].name, sws[b].name));
      const step = (w - 2 * margin) / members.length;
      members.forEach((i, k) => {
        x[i] = margin + (k + 0.5) * step;
        y[i] = yOf(l);
      });
    }
    const nodeW = Math.max(3, Math.min(28, slot * 0.8));
    return { x, y, width: w, height, railBlocks, levels, maxLevel, nodeW, nodeH: 10, yOf };
  }

  // The least and the most predicted load over the switch links in use (up,
  // not drained), cached on the document.
  function loadRange(doc) {
    if (!doc.loadRange) {
      let lo = Infinity, hi = 0;
      (doc.loads || []).forEach(([ab, ba], k) => {
        if (doc.links[k][4] !== STATE_UP) return;
        lo = Math.min(lo, Math.max(ab, ba));
        hi = Math.max(hi, Math.max(ab, ba));
      });
      doc.loadRange = [lo === Infinity ? 0 : lo, hi];
    }
    return doc.loadRange;
  }

  // The colour of link k: its state, or in load mode its load.
  function linkColour(doc, k, mode, measured) {
    const st = doc.links[k][4];
    // Under a load colouring red means hot: a down link is black there.
    if (st === STATE_DOWN) return mode === "state" ? COLOURS.down : COLOURS.downUnderLoad;
    if (st === STATE_DRAINED) return COLOURS.drained;
    // Load colours span the least to the most loaded link: a balanced fabric
    // is one colour, a hot spot stands out.
    if (mode === "predicted" && doc.loads) {
      const [lo, hi] = loadRange(doc);
      return heat(hi > lo ? (Math.max(...doc.loads[k]) - lo) / (hi - lo) : 0.5);
    }
    if (mode === "measured" && measured) {
      const v = measured.values.get(doc.keys ? doc.keys[k] : "") || 0;
      return heat(measured.max ? v / measured.max : 0);
    }
    return COLOURS.up;
  }

  class View {
    // canvas: the element; options.onSelect(kind, index) on a click.
    constructor(canvas, options = {}) {
      this.canvas = canvas;
      this.onSelect = options.onSelect || (() => {});
      this.mode = "state";
      this.measured = null;
      this.selected = null;
      canvas.addEventListener("click", (ev) => {
        const r = canvas.getBoundingClientRect();
        const hit = this.hit(ev.clientX - r.left, ev.clientY - r.top);
        this.selected = hit;
        this.draw();
        if (hit) this.onSelect(hit.kind, hit.index);
      });
    }

    setDoc(doc) {
      this.doc = doc;
      const width = this.canvas.parentElement ? this.canvas.parentElement.clientWidth || 1200 : 1200;
      this.lay = layout(doc, width);
      this.draw();
    }

    setMode(mode, measured) {
      this.mode = mode;
      this.measured = measured || null;
      this.draw();
    }

    // Canvas coordinates of a link's midpoint (for tests and highlights).
    linkMidpoint(k) {
      const [a, , b] = this.doc.links[k];
      return { x: (this.lay.x[a] + this.lay.x[b]) / 2, y: (this.lay.y[a] + this.lay.y[b]) / 2 };
    }
    nodeCentre(i) { return { x: this.lay.x[i], y: this.lay.y[i] }; }
    linkIndex(key) { return this.doc.keys ? this.doc.keys.indexOf(key) : -1; }

    hit(px, py) {
      const { x, y, nodeW, nodeH } = this.lay;
      for (let i = 0; i < this.doc.switches.length; i++) {
        if (Math.abs(px - x[i]) <= nodeW / 2 + 1 && Math.abs(py - y[i]) <= nodeH / 2 + 1) return { kind: "switch", index: i };
      }
      let best = -1, bestD = 5;
      this.doc.links.forEach(([a, , b], k) => {
        const x1 = x[a], y1 = y[a], x2 = x[b], y2 = y[b];
        const dx = x2 - x1, dy = y2 - y1, len2 = dx * dx + dy * dy || 1;
        const t = Math.max(0, Math.min(1, ((px - x1) * dx + (py - y1) * dy) / len2));
        const d = Math.hypot(px - (x1 + t * dx), py - (y1 + t * dy));
        if (d < bestD) { bestD = d; best = k; }
      });
      return best >= 0 ? { kind: "link", index: best } : null;
    }

    draw() {
      const doc = this.doc, L = this.lay;
      if (!doc) return;
      const c = this.canvas;
      if (c.width !== L.width || c.height !== L.height) {
        c.width = L.width;
        c.height = L.height;
      }
      const g = c.getContext("2d");
      g.fillStyle = "#fff";
      g.fillRect(0, 0, c.width, c.height);
      g.font = "11px sans-serif";
      g.fillStyle = COLOURS.text;
      for (const l of L.levels.keys()) {
        const name = l < 0 ? "unranked" : LEVEL_NAMES[l] || `level ${l}`;
        g.fillText(`${name} (${L.levels.get(l).length})`, 4, L.yOf(l) + 4);
      }
      for (const b of L.railBlocks) {
        g.fillText(b.rail < 0 ? "no rail" : `rail ${b.rail}`, b.x0, L.height - 12);
        g.fillRect(b.x0, L.height - 30, b.x1 - b.x0, 1);
      }
      // Links: healthy first, drained above, down on top; a thin line per link.
      const order = [[], [], []];
      doc.links.forEach((lk, k) => order[lk[4] === STATE_DOWN ? 2 : lk[4] === STATE_DRAINED ? 1 : 0].push(k));
      const many = doc.links.length > 4000;
      for (let pass = 0; pass < 3; pass++) {
        g.lineWidth = pass === 0 ? (many ? 0.5 : 1) : 2.5;
        for (const k of order[pass]) {
          const [a, , b] = doc.links[k];
          g.strokeStyle = linkColour(doc, k, this.mode, this.measured);
          g.beginPath();
          g.moveTo(L.x[a], L.y[a]);
          g.lineTo(L.x[b], L.y[b]);
          g.stroke();
        }
      }
      if (this.selected && this.selected.kind === "link") {
        const [a, , b] = doc.links[this.selected.index];
        g.strokeStyle = COLOURS.selected;
        g.lineWidth = 4;
        g.globalAlpha = 0.5;
        g.beginPath();
        g.moveTo(L.x[a], L.y[a]);
        g.lineTo(L.x[b], L.y[b]);
        g.stroke();
        g.globalAlpha = 1;
      }
      // Switches: a leaf with CA links down is red, drained orange.
      doc.switches.forEach((s, i) => {
        g.fillStyle = s.cas_down ? COLOURS.nodeDown : s.cas_drained ? COLOURS.nodeDrained : COLOURS.node;
        g.fillRect(L.x[i] - L.nodeW / 2, L.y[i] - L.nodeH / 2, L.nodeW, L.nodeH);
      });
      if (this.selected && this.selected.kind === "switch") {
        const i = this.selected.index;
        g.strokeStyle = COLOURS.selected;
        g.lineWidth = 2;
        g.strokeRect(L.x[i] - L.nodeW / 2 - 2, L.y[i] - L.nodeH / 2 - 2, L.nodeW + 4, L.nodeH + 4);
      }
    }
  }

  return { View, layout, heat, loadRange, naturalCompare, linkColour, STATE_UP, STATE_DOWN, STATE_DRAINED, COLOURS };
})();

if (typeof window !== "undefined") window.RailyardGrid = RailyardGrid;
