// The explorer's edit controls (issue 29): edit a node's title and fields, pin, archive and
// restore, merge a duplicate, add and remove edges, and a list of recent edits with an undo each.
// Every write goes to the server's write routes with the edit token in the X-Memgraph-Token
// header (never a cookie). The token comes from the `#token=` fragment `serve` prints (kept in
// sessionStorage, taken out of the address bar) or the token field; on a server with keys, the
// page's key (explorer.js) goes along in X-Memgraph-Key. A read-only server has no
// write routes: then this script adds nothing. explorer.js tells it what it showed through the
// `explorer:node` and `explorer:graph` events; state lives in `explorerEdit` (tests read it).
"use strict";

(() => {
  const TOKEN_KEY = "memgraph-edit-token";
  const HEADER = "X-Memgraph-Token";
  const INTERNAL_EDGES = new Set(["contains", "semantic_contains"]);
  const edit = { writable: false, detail: null, recent: [] };
  window.explorerEdit = edit;

  const $ = (id) => document.getElementById(id);
  const chatPath = () => `/api/chats/${encodeURIComponent(explorer.chat)}`;
  const nodePath = (id) => `${chatPath()}/nodes/${encodeURIComponent(id)}`;

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "onclick") node.addEventListener("click", v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const child of children) node.append(child);
    return node;
  }

  // ---------------------------------------------------------------- the token

  (function takeFragmentToken() {
    const found = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (!found) return;
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(found[1]));
    const url = new URL(location.href);
    url.hash = "";
    history.replaceState(null, "", url);
  })();

  const token = () => sessionStorage.getItem(TOKEN_KEY) || "";
  const keyHeaders = () => (window.explorerKeyHeaders ? window.explorerKeyHeaders() : {});

  class WriteError extends Error {
    constructor(status, body) {
      super(body.error || `HTTP ${status}`);
      this.status = status;
      this.field = body.field || null;
    }
  }

  async function write(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: { "content-type": "application/json", [HEADER]: token(), ...keyHeaders() },
      body: JSON.stringify(body || {}),
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new WriteError(response.status, answer);
    return answer;
  }

  function say(text, isError = false) {
    const line = $("edit-message");
    if (line) {
      line.textContent = text;
      line.classList.toggle("error", isError);
    }
    if (isError && text) $("edit-token-box").classList.toggle("wanted", !token());
  }

  function failed(err) {
    if (err.status === 401) {
      say(`${err.message}: paste the token \`serve\` printed into the token field`, true);
      $("edit-token").focus();
    } else {
      say(err.message, true);
    }
  }

  // ---------------------------------------------------------------- refresh after a write

  async function refresh(result) {
    const id = explorer.selected;
    await loadGraph(id ? [id] : []);
    if (id) await showNode(id);
    await loadRecent();
    if (result && result.changed === false) say("nothing changed");
    else say(result && result.version ? `saved: version ${result.version}` : "saved");
  }

  async function run(method, path, body) {
    say("…");
    try {
      const result = await write(method, path, body);
      await refresh(result);
      return result;
    } catch (err) {
      failed(err);
      return null;
    }
  }

  // ---------------------------------------------------------------- the node panel

  function text(value) {
    if (Array.isArray(value)) return value.map(String).join(", ");
    if (value !== null && typeof value === "object") return JSON.stringify(value);
    return value == null ? "" : String(value);
  }

  function parsed(raw, was) {
    if (Array.isArray(was)) return raw.split(",").map((s) => s.trim()).filter(Boolean);
    if (typeof was === "number" && raw.trim() !== "" && !Number.isNaN(Number(raw))) {
      return Number(raw);
    }
    if (typeof was === "boolean" && (raw === "true" || raw === "false")) return raw === "true";
    return raw;
  }

  function fieldRow(name, value, label = name) {
    return el("label", { class: "edit-field" },
      el("span", { class: "edit-name" }, label),
      el("input", { "data-field": name, value: value, "aria-label": label }),
      el("span", { class: "edit-error", "data-error-for": name }));
  }

  function clearErrors(form) {
    form.querySelectorAll(".edit-error").forEach((s) => { s.textContent = ""; });
    form.querySelectorAll(".invalid").forEach((i) => i.classList.remove("invalid"));
  }

  async function save(evt, detail) {
    evt.preventDefault();
    const form = evt.target;
    clearErrors(form);
    const body = {};
    const title = form.querySelector("[data-field='title']").value;
    if (title !== detail.title) body.title = title;
    const fields = {};
    const clear = [];
    for (const [name, was] of Object.entries(detail.values || {})) {
      const input = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
      if (!input || input.value === text(was)) continue;
      if (input.value.trim() === "") clear.push(name);
      else fields[name] = parsed(input.value, was);
    }
    const newName = $("edit-new-name").value.trim();
    if (newName) fields[newName] = $("edit-new-value").value;
    if (Object.keys(fields).length) body.fields = fields;
    if (clear.length) body.clear = clear;
    if (!Object.keys(body).length) { say("nothing to save"); return; }
    say("…");
    try {
      const result = await write("POST", `${nodePath(detail.id)}/edit`, body);
      await refresh(result);
    } catch (err) {
      const where = err.field === newName && newName ? "__new" : err.field;
      const slot = where && form.querySelector(`[data-error-for="${CSS.escape(where)}"]`);
      if (slot && err.status === 422) {
        slot.textContent = err.message;
        const input = form.querySelector(`[data-field="${CSS.escape(where)}"]`);
        if (input) input.classList.add("invalid");
        say("not saved: see the field", true);
      } else {
        failed(err);
      }
    }
  }

  function otherNodes(detail, sameType) {
    return explorer.cy.nodes()
      .filter((n) => n.id() !== detail.id && (!sameType || n.data("type") === detail.type))
      .map((n) => ({ id: n.id(), title: n.data("title"), type: n.data("type") }))
      .sort((a, b) => a.title.localeCompare(b.title));
  }

  function nodeSelect(id, nodes, showType) {
    return el("select", { id, "aria-label": id },
      ...nodes.map((n) => el("option", { value: n.id },
        showType ? `${n.title} (${n.type})` : n.title)));
  }

  function editForm(detail) {
    const form = el("form", { id: "edit-form", novalidate: "" },
      fieldRow("title", detail.title));
    for (const [name, value] of Object.entries(detail.values || {})) {
      form.append(fieldRow(name, text(value)));
    }
    form.append(el("div", { class: "edit-field edit-new" },
      el("input", { id: "edit-new-name", placeholder: "new field", "aria-label": "new field" }),
      el("input", { id: "edit-new-value", "data-field": "__new", placeholder: "value",
        "aria-label": "new field value" }),
      el("span", { class: "edit-error", "data-error-for": "__new" })));
    form.append(el("button", { type: "submit", id: "edit-save" }, "save"));
    form.addEventListener("submit", (evt) => save(evt, detail));
    return form;
  }

  function edgeList(detail) {
    const list = el("ul", { class: "edit-edges" });
    for (const e of detail.edges) {
      if (INTERNAL_EDGES.has(e.type)) continue;
      const [source, target] = e.direction === "out" ? [detail.id, e.other] : [e.other, detail.id];
      const arrow = e.direction === "out" ? `→ ${e.type} →` : `← ${e.type} ←`;
      list.append(el("li", { "data-edge": `${source}|${e.type}|${target}` },
        `${arrow} ${e.other_title} `,
        el("button", { class: "edge-remove", title: "remove this edge", onclick: () =>
          run("DELETE", `${chatPath()}/edges`, { source, target, relation: e.type }) }, "remove")));
    }
    return list;
  }

  function panel(detail) {
    const box = el("section", { id: "edit-panel", "data-node": detail.id });
    box.append(el("h3", {}, "edit"));
    const status = detail.archived ? "archived (forgotten): recall leaves it out"
      : detail.pinned ? "pinned: every recall injects it" : "";
    if (status) box.append(el("p", { class: "edit-status" }, status));
    if (detail.archived) {
      box.append(el("button", { id: "edit-restore", onclick: () =>
        run("POST", `${nodePath(detail.id)}/restore`) }, "restore"));
      box.append(el("p", { id: "edit-message", role: "status" }));
      return box;
    }
    box.append(editForm(detail));
    box.append(el("div", { class: "edit-actions" },
      el("button", { id: "edit-pin", onclick: () =>
        run(detail.pinned ? "DELETE" : "POST", `${nodePath(detail.id)}/pin`) },
        detail.pinned ? "unpin" : "pin (always inject)"),
      el("button", { id: "edit-archive", onclick: () =>
        run("POST", `${nodePath(detail.id)}/archive`) }, "archive (forget)")));
    const twins = otherNodes(detail, true);
    if (twins.length) {
      const pick = nodeSelect("merge-with", twins, false);
      box.append(el("div", { class: "edit-row" }, "merge ", pick,
        el("button", { id: "merge-button", onclick: () =>
          run("POST", `${nodePath(detail.id)}/merge`, { absorb: pick.value }) },
          "into this")));
    }
    box.append(el("h4", {}, "edges"), edgeList(detail));
    const targets = otherNodes(detail, false);
    if (targets.length) {
      const target = nodeSelect("edge-target", targets, true);
      const relation = el("input", { id: "edge-relation", placeholder: "relation",
        "aria-label": "relation" });
      box.append(el("div", { class: "edit-row" }, "this → ", relation, " → ", target,
        el("button", { id: "edge-add", onclick: () => run("POST", `${chatPath()}/edges`,
          { source: detail.id, target: target.value, relation: relation.value.trim() }) },
        "add edge")));
    }
    box.append(el("p", { id: "edit-message", role: "status" }));
    return box;
  }

  // ---------------------------------------------------------------- recent edits

  function titleOf(id) {
    const node = explorer.cy.getElementById(id);
    return node.nonempty() ? node.data("title") : id;
  }

  async function loadRecent() {
    if (!explorer.chat) return;
    const response = await fetch(`${chatPath()}/edits`, { headers: keyHeaders() });
    if (!response.ok) return;
    edit.recent = (await response.json()).edits;
    const list = $("edit-log-list");
    list.replaceChildren(...edit.recent.map((e) => {
      const when = new Date(e.at * 1000).toLocaleTimeString();
      const nodes = e.nodes.slice(0, 4).map((id) => el("a", { "data-node": id, onclick: () =>
        focusNode(id) }, titleOf(id)));
      const item = el("li", { "data-version": e.version, "data-kind": e.kind },
        `version ${e.version} · ${e.kind} · ${when} `);
      nodes.forEach((a, i) => item.append(i ? ", " : "", a));
      if (e.kind === "edit") {
        item.append(" ", el("button", { class: "undo", onclick: () =>
          run("POST", `${chatPath()}/undo`, { version: e.version }) }, "undo"));
      }
      return item;
    }));
    if (!edit.recent.length) list.append(el("li", { class: "none" }, "no edits yet"));
    $("edit-log-count").textContent = String(edit.recent.filter((e) => e.kind === "edit").length);
  }

  // ---------------------------------------------------------------- start

  function header() {
    const field = el("input", { id: "edit-token", type: "password", placeholder: "edit token",
      "aria-label": "edit token", autocomplete: "off", value: token() });
    field.addEventListener("change", () => sessionStorage.setItem(TOKEN_KEY, field.value.trim()));
    const log = el("details", { id: "edit-log" },
      el("summary", {}, "recent edits (", el("span", { id: "edit-log-count" }, "0"), ")"),
      el("ol", { id: "edit-log-list" }));
    const box = el("span", { id: "edit-token-box" }, field);
    $("status").before(box, log);
  }

  async function start() {
    const response = await fetch("/api/edit-access", { headers: keyHeaders() });
    const access = response.ok ? await response.json() : {};
    if (!access.writable) { // read-only: no edit controls at all
      document.body.dataset.editReady = "0";
      return;
    }
    edit.writable = true;
    document.body.classList.add("writable");
    header();
    document.addEventListener("explorer:node", (evt) => {
      edit.detail = evt.detail;
      const old = $("edit-panel");
      if (old) old.remove();
      $("detail").append(panel(evt.detail));
    });
    document.addEventListener("explorer:graph", () => { loadRecent().catch(() => {}); });
    await loadRecent();
    document.body.dataset.editReady = "1";
  }

  start().catch((err) => { console.error("edit controls:", err); });
})();
