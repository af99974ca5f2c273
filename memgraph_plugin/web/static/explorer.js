// The memgraph explorer page: a cytoscape.js graph of one chat, search, type filter, node detail,
// and live redraws from the server's event stream. State lives in `explorer` (tests read it).
// How the graph is laid out, styled and labelled: explorer-layout.js (`explorerLayout`).
"use strict";

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
  "#9c755f", "#ff9da7", "#bab0ac"];
const INTERNAL = new Set(["contains", "semantic_contains"]);

const explorer = {
  cy: null, chat: null, version: 0, colours: {}, hidden: new Set(), events: null, selected: null,
  types: {},
};
const drawing = window.explorerLayout;
window.explorer = explorer;

const $ = (id) => document.getElementById(id);

// A server with keys (docs/namespaces.md) needs one on every /api call: the page takes it from
// the `#key=` fragment of its address (a fragment never reaches a server or a log), keeps it in
// sessionStorage, takes it out of the address bar and sends it in the X-Memgraph-Key header.
const KEY_STORE = "memgraph-key";
(function takeFragmentKey() {
  const found = /(?:^#|&)key=([^&]*)/.exec(location.hash);
  if (!found) return;
  sessionStorage.setItem(KEY_STORE, decodeURIComponent(found[1]));
  const url = new URL(location.href);
  url.hash = location.hash.slice(1).split("&").filter((p) => !p.startsWith("key=")).join("&");
  history.replaceState(null, "", url);
})();
const keyHeaders = () => {
  const key = sessionStorage.getItem(KEY_STORE);
  return key ? { "X-Memgraph-Key": key } : {};
};
window.explorerKeyHeaders = keyHeaders; // explorer-edit.js sends the key too

const api = (path) => fetch(path, { headers: keyHeaders() }).then(async (r) => {
  const body = await r.json();
  if (r.ok) return body;
  // a refused key comes in OpenAI's error shape ({"error": {"message": ...}})
  const said = (body.error && body.error.message) || body.error || r.statusText;
  throw new Error(r.status === 401 ? `${said} (open the page as ${location.pathname}#key=KEY)`
    : said);
});
const chatPath = (chat) => `/api/chats/${encodeURIComponent(chat)}`;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") node.addEventListener("click", v); else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

// A chat id may be up to 1,024 characters: the chat list shows a long one with an ellipsis in
// its middle (ids that share a long opening still differ at their end) and the whole id on hover.
const SHOWN_ID = 48;
function shortId(id) {
  if (id.length <= SHOWN_ID) return id;
  const tail = Math.floor(SHOWN_ID / 3);
  return `${id.slice(0, SHOWN_ID - tail - 1)}…${id.slice(-tail)}`;
}

function colour(type) {
  // the server's colours (memgraph_plugin/type_colours.py, graph.html's too); else a palette
  if (explorer.types[type]) return explorer.types[type].colour;
  if (!(type in explorer.colours)) {
    explorer.colours[type] = PALETTE[Object.keys(explorer.colours).length % PALETTE.length];
  }
  return explorer.colours[type];
}

function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, 2500);
}

function elements(graph) {
  const nodes = graph.nodes.map((n) => ({
    group: "nodes",
    data: { id: n.id, label: drawing.shortTitle(n.title, n.type, n.rollup),
      short: drawing.shortTitle(n.title, n.type, n.rollup), title: n.title, type: n.type,
      rollup: n.rollup, depth: n.depth, seq: n.seq, colour: colour(n.type) },
    classes: n.rollup ? "rollup" : "",
  }));
  const edges = graph.edges.map((e) => ({
    group: "edges",
    data: { id: `${e.source}|${e.type}|${e.target}`, source: e.source, target: e.target,
      type: e.type },
    classes: INTERNAL.has(e.type) ? "internal" : "relation",
  }));
  return nodes.concat(edges);
}

function makeGraph() {
  explorer.cy = cytoscape({
    container: $("graph"),
    wheelSensitivity: 0.3,
    minZoom: 0.05,
    maxZoom: 4,
    style: drawing.style(),
  });
  // the page around the graph changes its box (the type filter wraps, a detail opens): tell
  // cytoscape, or it draws and hit-tests in the old box and clicks land beside the nodes
  new ResizeObserver(() => explorer.cy.resize()).observe($("graph"));
  explorer.cy.on("tap", "node", (evt) => {
    drawing.toggle(explorer.cy, evt.target.id()); // a rollup collapses / expands
    showNode(evt.target.id());
  });
  explorer.relabel = drawing.watch(explorer.cy);
}

function renderFilter() {
  const box = $("type-filter");
  box.replaceChildren("show: ");
  const counts = {};
  explorer.cy.nodes().forEach((n) => { counts[n.data("type")] = (counts[n.data("type")] || 0) + 1; });
  for (const type of Object.keys(counts).sort()) {
    const input = el("input", { type: "checkbox", "data-type": type });
    input.checked = !explorer.hidden.has(type);
    input.addEventListener("change", () => {
      if (input.checked) explorer.hidden.delete(type); else explorer.hidden.add(type);
      applyFilter();
    });
    const swatch = el("i");
    swatch.style.background = colour(type);
    box.append(el("label", {}, input, swatch, `${type} (${counts[type]})`));
  }
}

function applyFilter() {
  explorer.cy.nodes().forEach((n) => {
    n.toggleClass("filtered", explorer.hidden.has(n.data("type")));
  });
  drawing.fitLabels(explorer.cy);
}

function setStatus(graph) {
  const shown = graph.nodes.length;
  const more = graph.total_nodes > shown ? ` (showing ${shown}; search finds the rest)` : "";
  const status = $("status");
  status.textContent = `version ${graph.version} · ${graph.total_nodes} nodes${more} · ` +
    `${graph.total_edges} edges · live`;
  status.dataset.version = graph.version;
  status.dataset.nodes = graph.total_nodes;
}

async function loadGraph(include = []) {
  const query = include.length ? `?include=${include.map(encodeURIComponent).join(",")}` : "";
  const graph = await api(`${chatPath(explorer.chat)}/graph${query}`);
  explorer.types = graph.types || {};
  drawing.setTypes(explorer.types);
  const cy = explorer.cy;
  const fresh = cy.nodes().length === 0;
  const wanted = elements(graph);
  const ids = new Set(wanted.map((e) => e.data.id));
  const before = cy.nodes().length;
  cy.batch(() => {
    cy.elements().filter((e) => !ids.has(e.id())).remove();
    for (const item of wanted) {
      const existing = cy.getElementById(item.data.id);
      if (existing.nonempty()) existing.data(item.data);
      else {
        if (item.group === "nodes" && !fresh) {
          const anchor = wanted.find((e) => e.group === "edges" && (e.data.source === item.data.id
            || e.data.target === item.data.id));
          const other = anchor && cy.getElementById(anchor.data.source === item.data.id
            ? anchor.data.target : anchor.data.source);
          if (other && other.nonempty()) {
            const p = other.position();
            item.position = { x: p.x + 40 * (Math.random() - 0.5), y: p.y + 40 };
          }
        }
        cy.add(item);
      }
    }
  });
  drawing.arrange(cy, { fit: fresh, fresh });
  explorer.version = graph.version;
  setStatus(graph);
  renderFilter();
  applyFilter();
  document.dispatchEvent(new CustomEvent("explorer:graph", { detail: graph })); // explorer-edit.js
  return { graph, added: cy.nodes().length - before };
}

function row(key, value) {
  return el("tr", {}, el("td", {}, key), el("td", {}, value == null ? "" : String(value)));
}

function nodeLink(id, text) {
  return el("a", { "data-node": id, onclick: () => focusNode(id) }, text);
}

async function showNode(id) {
  explorer.selected = id;
  const detail = await api(`${chatPath(explorer.chat)}/nodes/${encodeURIComponent(id)}`);
  const box = $("detail");
  const fields = el("table", { class: "fields" });
  fields.append(row("id", detail.id), row("type", detail.type), row("level", detail.level));
  if (detail.seq != null) fields.append(row("message seq", detail.seq));
  if (detail.parent) fields.append(el("tr", {}, el("td", {}, "parent"),
    el("td", {}, nodeLink(detail.parent, detail.parent))));
  for (const [k, v] of Object.entries(detail.fields)) fields.append(row(k, v));
  const edges = el("ul", { class: "edges" });
  for (const e of detail.edges) {
    const arrow = e.direction === "out" ? `→ ${e.type} →` : `← ${e.type} ←`;
    edges.append(el("li", {}, `${arrow} `, nodeLink(e.other, e.other_title)));
  }
  const history = el("ul", { class: "history" });
  for (const h of detail.history) {
    const when = new Date(h.created_at * 1000).toLocaleString();
    history.append(el("li", {}, `version ${h.version} · seq ${h.seq} · ${h.kind} · ${when}`));
  }
  const recalls = el("ul", { class: "recalls" });
  for (const r of detail.recalls) {
    recalls.append(el("li", {}, `seq ${r.seq}: “${r.query}” — ${r.why}`));
  }
  box.replaceChildren(
    el("h2", { class: "detail-title" }, detail.title),
    el("span", { class: "detail-type" }, `${detail.type}${detail.rollup ? " rollup" : ""}`),
    fields,
    el("h3", {}, `edges (${detail.edges.length})`), edges,
    el("h3", {}, `history (${detail.history.length})`), history,
    el("h3", {}, `chosen by recall (${detail.recalls.length})`), recalls,
  );
  box.dataset.node = detail.id;
  document.dispatchEvent(new CustomEvent("explorer:node", { detail })); // explorer-edit.js
  const node = explorer.cy.getElementById(id);
  explorer.cy.nodes().unselect();
  if (node.nonempty()) node.select();
}

/** Show a node: drawn (added if it was not), unfolded, unfiltered, highlighted, and centred. */
async function focusNode(id) {
  const cy = explorer.cy;
  if (cy.getElementById(id).empty()) await loadGraph([id]);
  const node = cy.getElementById(id);
  if (node.nonempty()) {
    drawing.reveal(cy, id);
    explorer.hidden.delete(node.data("type"));
    applyFilter();
    renderFilter();
    cy.nodes(".hit").removeClass("hit");
    node.addClass("hit");
    const zoom = Math.max(cy.zoom(), 1.2);
    const p = node.position();
    cy.stop(true, true);
    cy.animate({ zoom, pan: { x: cy.width() / 2 - p.x * zoom, y: cy.height() / 2 - p.y * zoom } },
      { duration: 200, complete: () => drawing.fitLabels(cy) });
  }
  await showNode(id);
}

async function search(text) {
  const list = $("search-results");
  explorer.cy.nodes().removeClass("match hit");
  if (!text.trim()) { list.hidden = true; drawing.fitLabels(explorer.cy); return; }
  const { results } = await api(`${chatPath(explorer.chat)}/search?q=${encodeURIComponent(text)}`);
  list.replaceChildren(...results.map((r) => {
    explorer.cy.getElementById(r.id).addClass("match");
    return el("li", { tabindex: "0", "data-node": r.id, onclick: () => {
      list.hidden = true;
      focusNode(r.id);
    } }, r.title, el("span", { class: "type" }, r.type));
  }));
  if (!results.length) list.append(el("li", { class: "none" }, "no match"));
  list.hidden = false;
  drawing.fitLabels(explorer.cy);
}

/** The server's `commit` events of `path`: an EventSource, or with a key (EventSource sends no
 * header) the same stream read through fetch. `close()` ends it. */
function commitEvents(path, onCommit) {
  const headers = keyHeaders();
  if (!headers["X-Memgraph-Key"]) {
    const source = new EventSource(path);
    source.addEventListener("commit", (evt) => onCommit(JSON.parse(evt.data)));
    return source;
  }
  const stop = new AbortController();
  (async () => {
    const response = await fetch(path, { headers, signal: stop.signal });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block);
        const data = /^data: (.*)$/m.exec(block);
        if (name && data && name[1] === "commit") onCommit(JSON.parse(data[1]));
      }
    }
  })().catch(() => {});
  return { close: () => stop.abort() };
}

function listen() {
  if (explorer.events) explorer.events.close();
  const source = commitEvents(`${chatPath(explorer.chat)}/events`, async ({ version }) => {
    if (version === explorer.version) return;
    const { added } = await loadGraph(explorer.selected ? [explorer.selected] : []);
    // the graph loaded is the newest (a later commit may already be in it): name its version
    toast(`commit: version ${explorer.version}${added > 0 ? `, ${added} new nodes` : ""}`);
    if (explorer.selected) showNode(explorer.selected).catch(() => {});
  });
  explorer.events = source;
}

async function openChat(chat) {
  $("graph-error").hidden = true;
  explorer.chat = chat;
  explorer.selected = null;
  explorer.cy.elements().remove();
  $("detail").replaceChildren(el("p", { class: "hint" }, "Click a node to see its details."));
  await loadGraph();
  listen();
  $("chat-select").title = chat;
  const url = new URL(location.href);
  url.searchParams.set("chat", chat);
  history.replaceState(null, "", url);
}

async function start() {
  makeGraph();
  // the status line is cut to the header's room: its whole text on hover
  const status = $("status");
  new MutationObserver(() => { status.title = status.textContent; })
    .observe(status, { childList: true, characterData: true, subtree: true });
  const { chats } = await api("/api/chats");
  const select = $("chat-select");
  select.replaceChildren(...chats.map((c) => el("option", { value: c.id, title: c.id },
    shortId(c.id))));
  select.addEventListener("change", () => openChat(select.value));
  let timer = null;
  $("search").addEventListener("input", (evt) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(evt.target.value), 150);
  });
  $("search").addEventListener("keydown", (evt) => {
    if (evt.key === "Enter") { clearTimeout(timer); search(evt.target.value); }
  });
  const wanted = new URL(location.href).searchParams.get("chat");
  if (wanted !== null && !chats.some((c) => c.id === wanted)) {
    // never another chat in its place: say so, and let the list pick one
    select.prepend(el("option", { value: "", disabled: "" }, "choose a chat"));
    select.value = "";
    showError(`unknown chat “${wanted}”: this data dir has no commits for it ` +
      `(${chats.length} other chat${chats.length === 1 ? "" : "s"} in the list)`);
    document.body.dataset.ready = "1";
    return;
  }
  const first = chats[0] && (chats.find((c) => c.id === wanted) || chats[0]);
  if (!first) {
    $("status").textContent = "no chats in this data dir yet";
    return;
  }
  select.value = first.id;
  await openChat(first.id);
  document.body.dataset.ready = "1";
}

/** An error the page cannot go on from, shown over the graph and in the status line. */
function showError(text) {
  $("status").textContent = `error: ${text}`;
  const box = $("graph-error");
  box.textContent = text;
  box.hidden = false;
}

start().catch((err) => showError(err.message));
