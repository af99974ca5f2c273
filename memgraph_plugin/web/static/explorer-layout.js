// How the explorer draws a chat so that it reads (issue 29): events along a timeline ordered by
// seq, rollups above the events they sum up (a click collapses one into a single square, another
// expands it), people, places and threads in bands below, each beside the events it is in, and
// labels only where they fit on screen. A chat without timeline types is laid out by fcose.
// Loaded before explorer.js; its API is `window.explorerLayout`.
"use strict";

(() => {
  const STEP = 64; // timeline: distance between neighbouring events (model units)
  const ROW = 90; // between rollup levels, and from the timeline to the first band
  const SUB_ROW = 40; // between the rows of one band
  const GAP = 96; // least distance between two nodes in one band row (room for a label)
  const SUB_ROWS = 3; // rows a band may use before a node drifts away from its events
  const AUTO_COLLAPSE = 60; // a first drawing with more nodes starts with old rollups collapsed
  const LABEL_PX = 12; // on-screen label size when zoomed out (px)
  const FIT_ZOOM = 1.5; // the most a first drawing is zoomed in to fit the frame
  const FONT = "system-ui, sans-serif";
  const INTERNAL = new Set(["contains", "semantic_contains"]);
  const BAND_ORDER = ["character_sheet", "location_state", "thread"];

  // engine: the layout last run ("timeline", or "fcose" for a chat without timeline types)
  const state = { types: {}, collapsed: new Set(), owner: new Map(), widths: new Map(),
    engine: null };

  const style = () => [
    { selector: "node", style: { "background-color": "data(colour)", label: "",
      "font-family": FONT, "font-size": 10, color: "#222", "text-valign": "bottom",
      "text-margin-y": 2, "text-outline-color": "#fcfcfc", "text-outline-width": 2,
      "min-zoomed-font-size": 0, width: 16, height: 16, "border-width": 1,
      "border-color": "#fff" } },
    { selector: "node.labelled", style: { label: "data(label)" } },
    { selector: "node.rollup", style: { shape: "round-rectangle", width: 22, height: 22 } },
    { selector: "node.rollup.collapsed", style: { width: "data(size)", height: "data(size)",
      "border-width": 4, "border-color": "#333", "border-style": "double" } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#222" } },
    { selector: "node.match", style: { "border-width": 3, "border-color": "#e15759" } },
    { selector: "node.hit", style: { "border-width": 5, "border-color": "#e15759",
      "underlay-color": "#e15759", "underlay-opacity": 0.25, "underlay-padding": 8,
      "underlay-shape": "ellipse", "z-index": 20 } },
    { selector: "edge", style: { width: 1, "line-color": "#aaa", "curve-style": "bezier",
      "target-arrow-shape": "triangle", "target-arrow-color": "#aaa", "arrow-scale": 0.6,
      opacity: 0.5 } },
    { selector: "edge.along", style: { "curve-style": "unbundled-bezier",
      "control-point-distances": -28, "control-point-weights": 0.5 } },
    { selector: "edge.internal", style: { width: 2, "line-color": "#6b8fc7",
      "target-arrow-color": "#6b8fc7", opacity: 0.7 } },
    { selector: "edge.via", style: { display: "none" } },
    { selector: "edge.via.lit", style: { display: "element", "line-style": "dashed",
      "target-arrow-shape": "none", opacity: 0.6 } },
    { selector: ".filtered, .folded", style: { display: "none" } },
  ];

  const onTimeline = (n) => {
    const spec = state.types[n.data("type")];
    return spec ? spec.timeline : n.data("type") === "event";
  };
  const children = (n) => (n.data("rollup")
    ? n.outgoers("edge").filter((e) => INTERNAL.has(e.data("type"))).targets()
    : n.cy().collection());
  const seqKey = (n) => (n.data("seq") == null ? Infinity : n.data("seq"));
  const byTime = (a, b) => seqKey(a) - seqKey(b) || a.data("depth") - b.data("depth")
    || (a.id() < b.id() ? -1 : 1);

  /** The nodes below `root` over containment edges, except those `skip(id)` says. */
  function descendants(root, skip) {
    const found = [];
    const seen = new Set([root.id()]);
    const queue = [root];
    while (queue.length) {
      children(queue.pop()).forEach((child) => {
        if (seen.has(child.id()) || skip(child.id())) return;
        seen.add(child.id());
        found.push(child);
        queue.push(child);
      });
    }
    return found;
  }

  /** Hide what collapsed rollups hold (class `folded`); `state.owner`: folded id -> its rollup. */
  function applyCollapse(cy) {
    state.owner = new Map();
    cy.batch(() => {
      cy.nodes().removeClass("folded collapsed");
      for (const id of state.collapsed) {
        const root = cy.getElementById(id);
        if (root.empty()) state.collapsed.delete(id);
      }
      // outermost first: a rollup inside a collapsed one is folded with its children
      const roots = cy.nodes().filter((n) => state.collapsed.has(n.id()))
        .sort((a, b) => b.data("depth") - a.data("depth"));
      const held = new Map(); // collapsed rollup id -> how many nodes it holds
      roots.forEach((root) => {
        if (state.owner.has(root.id())) return;
        root.addClass("collapsed");
        const folded = descendants(root, (id) => state.owner.has(id));
        for (const child of folded) {
          state.owner.set(child.id(), root.id());
          child.addClass("folded");
        }
        held.set(root.id(), folded.length);
      });
      cy.nodes(".rollup").forEach((n) => { // (a data change restyles: only when it changes)
        const hidden = held.get(n.id()) || 0;
        const label = hidden ? `${n.data("short")} (+${hidden})` : n.data("short");
        if (n.data("label") !== label) n.data("label", label);
        const size = 24 + 4 * Math.log2(1 + hidden); // a bigger square holds more
        if (n.data("size") !== size) n.data("size", size);
      });
      viaEdges(cy);
    });
  }

  /** Edges (class `via`, not the chat's) from a person, place or thread to the collapsed rollups
   * holding events it is linked with, drawn dashed while it is selected (`lit`): which stretches
   * of time it was in. */
  function viaEdges(cy) {
    cy.edges(".via").remove();
    const seen = new Set();
    const add = [];
    cy.edges().forEach((e) => {
      if (INTERNAL.has(e.data("type")) || (onTimeline(e.source()) && onTimeline(e.target()))) {
        return; // events among themselves: their order says enough
      }
      const ends = [e.source().id(), e.target().id()].map((id) => state.owner.get(id) || id);
      if (ends[0] === ends[1] || (ends[0] === e.source().id() && ends[1] === e.target().id())) {
        return;
      }
      const key = ends.slice().sort().join("|");
      if (seen.has(key)) return;
      seen.add(key);
      add.push({ group: "edges", classes: "via",
        data: { id: `via|${key}`, source: ends[0], target: ends[1], type: "via", via: true } });
    });
    cy.add(add);
    lightVia(cy);
  }

  function lightVia(cy) {
    cy.edges(".via.lit").removeClass("lit");
    cy.nodes(":selected").connectedEdges(".via").addClass("lit");
  }

  /** Collapse old rollups (lowest level first, oldest first) until the drawing is small. */
  function autoCollapse(cy) {
    const hidden = new Set(state.owner.keys());
    const total = cy.nodes().length;
    if (total - hidden.size <= AUTO_COLLAPSE) return;
    const rollups = cy.nodes(".rollup").sort((a, b) => a.data("depth") - b.data("depth")
      || byTime(a, b));
    for (const r of rollups) {
      if (total - hidden.size <= AUTO_COLLAPSE) break;
      if (hidden.has(r.id()) || children(r).empty()) continue;
      state.collapsed.add(r.id());
      // a rollup folded before is reached again, its children skipped: each node is seen once
      for (const n of descendants(r, (id) => hidden.has(id) && !state.collapsed.has(id))) {
        hidden.add(n.id());
      }
    }
    applyCollapse(cy);
  }

  function median(xs) {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  /** id -> {x, y}: the timeline, rollups above it, entity bands below (visible nodes only). */
  function timelinePositions(cy, visible) {
    const pos = {};
    const timeline = visible.filter(onTimeline);
    const shownChildren = (n) => children(n).filter((c) => !c.hasClass("folded"));
    const expanded = timeline.filter((n) => n.data("rollup") && !n.hasClass("collapsed")
      && shownChildren(n).nonempty());
    const row = timeline.difference(expanded).sort(byTime);
    row.forEach((n, i) => { pos[n.id()] = { x: i * STEP, y: 0 }; });
    const level = {};
    expanded.sort((a, b) => a.data("depth") - b.data("depth")).forEach((n) => {
      const kids = shownChildren(n).filter((c) => pos[c.id()]);
      const xs = kids.map((c) => pos[c.id()].x);
      level[n.id()] = 1 + Math.max(0, ...kids.map((c) => level[c.id()] || 0));
      pos[n.id()] = { x: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0,
        y: -ROW * level[n.id()] };
    });
    // entities: beside the (shown) timeline nodes they are linked with, one band per type
    const anchorX = (other) => {
      const id = state.owner.get(other.id()) || other.id();
      return pos[id] && onTimeline(cy.getElementById(id)) ? pos[id].x : null;
    };
    const entities = visible.difference(timeline);
    const types = [...new Set(entities.map((n) => n.data("type")))].sort((a, b) => {
      const ia = BAND_ORDER.indexOf(a), ib = BAND_ORDER.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : 1);
    });
    let y = ROW;
    for (const type of types) {
      const members = entities.filter((n) => n.data("type") === type).map((n) => {
        const xs = n.connectedEdges()
          .filter((e) => !INTERNAL.has(e.data("type")) && !e.data("via"))
          .map((e) => anchorX(e.source().id() === n.id() ? e.target() : e.source()))
          .filter((x) => x != null);
        return { n, want: xs.length ? median(xs) : -STEP, degree: n.degree() };
      }).sort((a, b) => a.want - b.want || b.degree - a.degree || (a.n.id() < b.n.id() ? -1 : 1));
      const rows = [];
      for (const m of members) {
        let best = -1, bestX = Infinity;
        rows.forEach((last, r) => {
          const x = Math.max(m.want, last + GAP);
          if (x < bestX) { best = r; bestX = x; }
        });
        if ((best < 0 || bestX - m.want > GAP / 2) && rows.length < SUB_ROWS) {
          rows.push(-Infinity);
          best = rows.length - 1;
          bestX = m.want;
        }
        rows[best] = bestX;
        pos[m.n.id()] = { x: bestX, y: y + best * SUB_ROW };
      }
      y += Math.max(1, rows.length) * SUB_ROW + (ROW - SUB_ROW);
    }
    return pos;
  }

  /** Lay the drawing out; `fit` frames it (a chat just opened), else the view stays. */
  function arrange(cy, { fit = false, fresh = false } = {}) {
    if (fresh) {
      state.collapsed.clear();
      applyCollapse(cy);
      autoCollapse(cy);
    } else {
      applyCollapse(cy);
    }
    const visible = cy.nodes().filter((n) => !n.hasClass("folded"));
    cy.edges().forEach((e) => {
      e.toggleClass("along", !INTERNAL.has(e.data("type")) && onTimeline(e.source())
        && onTimeline(e.target()));
    });
    if (visible.filter(onTimeline).empty() && typeof cytoscapeFcose !== "undefined") {
      state.engine = "fcose";
      visible.union(visible.edgesWith(visible)).layout({ name: "fcose", animate: false,
        randomize: fresh, fit, padding: 50,
        nodeSeparation: 90, idealEdgeLength: () => 80, nodeRepulsion: () => 9000 }).run();
    } else {
      state.engine = "timeline";
      const pos = timelinePositions(cy, visible);
      visible.layout({ name: "preset", positions: (n) => pos[n.id()] || n.position(),
        animate: false, fit, padding: 50 }).run();
    }
    if (fit && cy.zoom() > FIT_ZOOM) { // a small graph is framed, not blown up
      cy.zoom(FIT_ZOOM);
      cy.center(visible);
    }
    fitLabels(cy);
  }

  /** Collapse an expanded rollup or expand a collapsed one; false when `id` is no rollup. */
  function toggle(cy, id) {
    const node = cy.getElementById(id);
    if (node.empty() || !node.data("rollup") || children(node).empty()) return false;
    if (state.collapsed.has(id)) state.collapsed.delete(id); else state.collapsed.add(id);
    arrange(cy);
    return true;
  }

  /** Expand the collapsed rollups that hide `id`, so it can be shown. */
  function reveal(cy, id) {
    let changed = false;
    for (let owner = state.owner.get(id); owner; owner = state.owner.get(owner)) {
      changed = state.collapsed.delete(owner) || changed;
    }
    // an owner inside another collapsed rollup: expand until nothing hides `id`
    for (let guard = 0; guard < 20; guard++) {
      applyCollapse(cy);
      const owner = state.owner.get(id);
      if (!owner) break;
      state.collapsed.delete(owner);
      changed = true;
    }
    if (changed) arrange(cy);
  }

  function textWidth(text, px) {
    let unit = state.widths.get(text);
    if (unit === undefined) {
      const ctx = (textWidth.ctx ||= document.createElement("canvas").getContext("2d"));
      ctx.font = `100px ${FONT}`;
      unit = ctx.measureText(text).width / 100;
      state.widths.set(text, unit);
    }
    return unit * px;
  }

  const overlaps = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

  /** Give labels to as many nodes as fit without overlapping another label or a node, the
   * important ones first: the selected node, search hits, their neighbours, rollups, people and
   * places by degree, then events. Labels keep a readable size on screen when zoomed out. */
  function fitLabels(cy) {
    const zoom = cy.zoom();
    const size = Math.max(10, LABEL_PX / zoom); // model units
    const px = size * zoom;
    const w = cy.width(), h = cy.height();
    const shown = cy.nodes().filter((n) => n.visible());
    const boxes = shown.map((n) => ({ n, box: n.renderedBoundingBox({ includeLabels: false }) }));
    const onScreen = boxes.filter(({ box }) => box.x2 > 0 && box.x1 < w && box.y2 > 0
      && box.y1 < h);
    const focus = cy.nodes(":selected, .hit");
    const near = focus.closedNeighborhood().nodes();
    const rank = (n) => {
      if (n.selected() || n.hasClass("hit")) return 0;
      if (n.hasClass("match")) return 1;
      if (near.has(n)) return 2;
      if (n.data("rollup")) return 3 + (n.hasClass("collapsed") ? 0 : 0.5);
      return onTimeline(n) ? 5 : 4;
    };
    onScreen.sort((a, b) => rank(a.n) - rank(b.n) || b.n.degree() - a.n.degree()
      || b.n.data("depth") - a.n.data("depth") || seqKey(b.n) - seqKey(a.n));
    const taken = [];
    const labelled = new Set();
    for (const { n, box } of onScreen) {
      const text = n.data("label") || "";
      if (!text) continue;
      const pad = 2 + 2 * zoom; // the text's outline, and a little air
      const half = textWidth(text, px) / 2 + pad;
      const cx = (box.x1 + box.x2) / 2;
      const top = box.y2 - 1;
      const label = { x1: cx - half, x2: cx + half, y1: top, y2: top + 2 * zoom + px * 1.3 + pad };
      if (label.x1 < 0 || label.x2 > w || label.y2 > h) continue; // cut by the frame
      if (taken.some((t) => overlaps(t, label))) continue;
      if (onScreen.some((o) => o.n !== n && overlaps(o.box, label))) continue;
      taken.push(label);
      labelled.add(n.id());
    }
    cy.batch(() => { // touch only what changes: a style update costs on every node it touches
      cy.nodes(".labelled").forEach((n) => {
        if (!labelled.has(n.id())) n.removeClass("labelled");
      });
      for (const id of labelled) {
        const n = cy.getElementById(id);
        if (!n.hasClass("labelled")) n.addClass("labelled");
        if (n.scratch("fontSize") !== size) {
          n.scratch("fontSize", size);
          n.style("font-size", size);
        }
      }
    });
  }

  function watch(cy) {
    let frame = 0;
    const later = () => {
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; fitLabels(cy); });
    };
    cy.on("zoom pan resize select unselect", later);
    cy.on("select unselect", "node", () => lightVia(cy));
    return later;
  }

  /** The label a node's title gets: a rollup without its type's name ("event Summary L1 #4"
   * -> "Summary L1 #4"), cut at 28 characters. */
  function shortTitle(title, type, rollup) {
    let text = title;
    if (rollup && text.toLowerCase().startsWith(`${type.toLowerCase()} `)) {
      text = text.slice(type.length + 1);
    }
    return text.length > 28 ? text.slice(0, 27) + "…" : text;
  }

  window.explorerLayout = {
    state, style, arrange, toggle, reveal, fitLabels, watch, shortTitle,
    setTypes: (types) => { state.types = types || {}; },
  };
})();
