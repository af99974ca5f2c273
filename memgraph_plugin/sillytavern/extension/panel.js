// The memory panel inside SillyTavern (docs/sillytavern.md): this chat's people, places, events
// and threads; search; edit a field, pin, archive, merge; undo; why each item was recalled for
// the last generation; a link to the explorer. Every call goes through `api.fetchJson` to the
// memgraph server's routes (docs/explorer.md, docs/http-api.md); each change is one `edit`
// commit there, so the next recall's block shows it and undo takes it back.
//
// `mountPanel(api)`: `api.serverUrl`, `api.token`, `api.chatId()` (the chat's memory id or
// null; a promise is fine), `api.fetchJson(path, options)` (throws an Error with `status`, 0
// when the server cannot be reached), `api.onGenerated(callback)` (after each generation: the
// recall's JSON, or `{mode, chat, query, recall}` whose `recall` is null in proxy mode; then the
// panel asks the server for the chat's last recall).

const GROUPS = [
    ['character_sheet', 'People'],
    ['location_state', 'Places'],
    ['event', 'Events'],
    ['thread', 'Threads'],
];
const EVENTS_SHOWN = 40; // the newest events listed; search reaches the others
const DOWN = 'The memory server is not reachable';

/** An element: `tag.class`, attributes (`text` sets its text, `on*` a listener), children. */
function el(spec, attrs = {}, ...children) {
    const [tag, ...classes] = spec.split('.');
    const node = document.createElement(tag);
    if (classes.length) {
        node.className = classes.join(' ');
    }
    for (const [key, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) {
            continue;
        }
        if (key === 'text') {
            node.textContent = String(value);
        } else if (key.startsWith('on')) {
            node.addEventListener(key.slice(2), value);
        } else {
            node.setAttribute(key, value === true ? '' : String(value));
        }
    }
    node.append(...children.filter(c => c !== null && c !== undefined));
    return node;
}

/** A label that keeps one line: cut with an ellipsis by CSS, the whole text on hover. */
function clipped(spec, text) {
    return el(`${spec}.mgp-clip`, { text, title: text });
}

function path(chat, ...parts) {
    return `/api/chats/${encodeURIComponent(chat)}${parts.map(p => '/' + p).join('')}`;
}

/** A field's text form back to its stored shape: a list stays a list (`a, b`). */
function fieldValue(text, stored) {
    if (Array.isArray(stored)) {
        return text.split(',').map(s => s.trim()).filter(Boolean);
    }
    if (typeof stored === 'number' && text.trim() !== '' && !Number.isNaN(Number(text))) {
        return Number(text);
    }
    return text;
}

function loadStyles() {
    if (document.getElementById('memgraph-panel-css')) {
        return;
    }
    const link = el('link', {
        id: 'memgraph-panel-css', rel: 'stylesheet', href: new URL('./panel.css', import.meta.url),
    });
    document.head.append(link);
}

class MemoryPanel {
    constructor(api) {
        this.api = api;
        this.chat = null;
        this.selected = null; // the node whose detail is open
        this.lastRecall = null;
        this.nodes = [];
        this.root = el('section.mgp-panel', {
            id: 'memgraph-panel', role: 'dialog', 'aria-label': 'Memory panel', hidden: true,
        });
        this.build();
        document.body.append(this.root);
    }

    build() {
        this.chatLabel = clipped('span.mgp-chat', '');
        this.explorer = el('a.mgp-explorer', {
            text: 'explorer', target: '_blank', rel: 'noopener', title: 'Open in the explorer',
        });
        const close = el('button.mgp-close', {
            type: 'button', text: '×', title: 'Close', 'aria-label': 'Close', onclick: () => this.close(),
        });
        const refresh = el('button.mgp-refresh', {
            type: 'button', text: '↻', title: 'Refresh', 'aria-label': 'Refresh',
            onclick: () => this.refresh(),
        });
        this.status = el('p.mgp-status', { role: 'status', 'aria-live': 'polite' });
        this.message = el('p.mgp-message', { 'aria-live': 'polite' });
        this.search = el('input.mgp-search', {
            type: 'search', placeholder: 'search people, places, events', 'aria-label': 'search memory',
        });
        this.search.addEventListener('input', () => this.onSearch());
        this.lists = el('div.mgp-lists');
        this.detail = el('div.mgp-detail', { hidden: true });
        this.why = el('ol.mgp-why');
        this.whyQuery = clipped('p.mgp-why-query', '');
        this.edits = el('ol.mgp-edits');
        this.body = el('div.mgp-body', {},
            this.search, this.message, this.detail, this.lists,
            el('details.mgp-section', { open: true },
                el('summary', { text: 'Why recalled (last generation)' }), this.whyQuery, this.why),
            el('details.mgp-section', {},
                el('summary', { text: 'Recent edits' }), this.edits));
        this.root.append(
            el('header.mgp-header', {}, el('b', { text: 'Memory' }), this.chatLabel,
                this.explorer, refresh, close),
            this.status, this.body);
    }

    // ------------------------------------------------------------ open, close, refresh

    toggle() {
        return this.root.hidden ? this.open() : this.close();
    }

    async open() {
        this.root.hidden = false;
        await this.refresh();
    }

    close() {
        this.root.hidden = true;
    }

    /** Run `work`; a server that cannot be reached shows one message, nothing else. */
    async guarded(work) {
        try {
            const result = await work();
            this.setDown(false);
            return result;
        } catch (error) {
            if (error?.status === 0) {
                this.setDown(true);
            } else {
                this.say(error?.answer?.error ?? error?.message ?? String(error), true);
            }
            return undefined;
        }
    }

    setDown(down) {
        this.root.classList.toggle('mgp-down', down);
        this.body.hidden = down;
        this.status.textContent = down
            ? `${DOWN} (${this.api.serverUrl}): the chat goes on without memory.`
            : '';
    }

    say(text, error = false) {
        this.message.textContent = text ?? '';
        this.message.classList.toggle('mgp-error', error);
    }

    async refresh() {
        this.chat = (await this.api.chatId()) ?? null;
        const chat = this.chat ?? '';
        this.chatLabel.textContent = chat || 'no chat';
        this.chatLabel.title = chat;
        const link = new URL(this.api.serverUrl.replace(/\/+$/, '') + '/');
        if (this.chat) {
            link.searchParams.set('chat', this.chat);
        }
        if (this.api.token) {
            link.hash = `token=${encodeURIComponent(this.api.token)}`;
        }
        this.explorer.href = link.href;
        if (!this.chat) {
            this.lists.replaceChildren(el('p.mgp-empty', { text: 'Open a chat to see its memory.' }));
            return;
        }
        await this.guarded(async () => {
            await this.loadGraph();
            await this.loadEdits();
            if (this.selected) {
                await this.showNode(this.selected);
            }
            this.renderWhy();
        });
    }

    // ------------------------------------------------------------ lists and search

    async loadGraph() {
        let graph;
        try {
            graph = await this.api.fetchJson(path(this.chat, 'graph'));
        } catch (error) {
            if (error?.status !== 404) {
                throw error;
            }
            this.nodes = [];
            this.lists.replaceChildren(el('p.mgp-empty', { text: 'No memory for this chat yet.' }));
            return;
        }
        this.nodes = graph.nodes.filter(n => !n.archived);
        if (this.search.value.trim()) {
            await this.onSearch();
        } else {
            this.renderLists(this.nodes);
        }
    }

    renderLists(nodes, { searching = false } = {}) {
        const known = new Set(GROUPS.map(([type]) => type));
        const groups = [...GROUPS];
        for (const node of nodes) {
            if (!known.has(node.type)) {
                known.add(node.type);
                groups.push([node.type, node.type]);
            }
        }
        const sections = [];
        for (const [type, label] of groups) {
            let members = nodes.filter(n => n.type === type && !n.rollup);
            if (!members.length) {
                continue;
            }
            if (type === 'event' && !searching) {
                members = members.sort((a, b) => (b.seq ?? 0) - (a.seq ?? 0)).slice(0, EVENTS_SHOWN);
            }
            sections.push(el('section.mgp-group', { 'data-type': type },
                el('h4', { text: `${label} (${members.length})` }),
                el('ul', {}, ...members.map(n => this.item(n)))));
        }
        if (!sections.length) {
            sections.push(el('p.mgp-empty', { text: searching ? 'Nothing found.' : 'No memory for this chat yet.' }));
        }
        this.lists.replaceChildren(...sections);
    }

    item(node) {
        const row = el('li.mgp-item', { 'data-node': node.id, 'data-type': node.type },
            el('button.mgp-open', { type: 'button', onclick: () => this.showNode(node.id) },
                clipped('span.mgp-title', node.title), clipped('span.mgp-id', node.id)));
        if (node.pinned) {
            row.append(el('span.mgp-pin', { text: 'pinned', title: 'injected in every recall' }));
        }
        return row;
    }

    async onSearch() {
        const query = this.search.value.trim();
        if (!query) {
            this.renderLists(this.nodes);
            return;
        }
        await this.guarded(async () => {
            const found = await this.api.fetchJson(`${path(this.chat, 'search')}?q=${encodeURIComponent(query)}`);
            if (this.search.value.trim() === query) { // a newer query may have answered first
                this.renderLists(found.results, { searching: true });
            }
        });
    }

    // ------------------------------------------------------------ one node

    async showNode(nodeId) {
        await this.guarded(async () => {
            let node;
            try {
                node = await this.api.fetchJson(path(this.chat, 'nodes', encodeURIComponent(nodeId)));
            } catch (error) {
                if (error?.status === 404) {
                    this.closeNode();
                    return;
                }
                throw error;
            }
            this.selected = nodeId;
            this.renderNode(node);
        });
    }

    closeNode() {
        this.selected = null;
        this.detail.hidden = true;
        this.detail.replaceChildren();
    }

    renderNode(node) {
        const inputs = new Map();
        const row = (name, value) => {
            const input = el('input', { type: 'text', 'data-field': name, 'aria-label': name });
            input.value = value;
            inputs.set(name, input);
            return el('label.mgp-field', {}, clipped('span.mgp-name', name), input);
        };
        const title = row('title', node.title);
        // a stored `title` field is the node's title: one row for it
        const fields = Object.keys(node.fields).filter(name => name !== 'title')
            .map(name => row(name, node.fields[name]));
        const newName = el('input.mgp-new-name', { type: 'text', placeholder: 'new field', 'aria-label': 'new field name' });
        const newValue = el('input.mgp-new-value', { type: 'text', placeholder: 'value', 'aria-label': 'new field value' });
        const save = () => this.save(node, inputs, newName.value.trim(), newValue.value);
        const others = this.nodes.filter(n => n.type === node.type && n.id !== node.id);
        const absorb = el('select.mgp-merge-pick', { 'aria-label': 'merge which node into this one' },
            el('option', { value: '', text: 'merge another into this…' }),
            ...others.map(n => el('option', { value: n.id, text: n.title, title: `${n.title} (${n.id})` })));
        const merge = el('button.mgp-merge', {
            type: 'button', text: 'merge', onclick: () => absorb.value && this.merge(node, absorb.value),
        });
        const actions = el('div.mgp-actions', {},
            el('button.mgp-save', { type: 'button', text: 'save', onclick: save }),
            node.pinned
                ? el('button.mgp-unpin', { type: 'button', text: 'unpin', onclick: () => this.pin(node, false) })
                : el('button.mgp-pin-button', { type: 'button', text: 'pin', title: 'inject in every recall', onclick: () => this.pin(node, true) }),
            el('button.mgp-archive', { type: 'button', text: 'archive', title: 'forget this node', onclick: () => this.archive(node) }),
            others.length ? absorb : null, others.length ? merge : null);
        this.detail.replaceChildren(
            el('div.mgp-detail-head', {},
                clipped('h3.mgp-detail-title', node.title),
                el('button.mgp-detail-close', { type: 'button', text: '×', title: 'Close', 'aria-label': 'Close node', onclick: () => this.closeNode() })),
            clipped('p.mgp-detail-id', `${node.type} ${node.id}`),
            el('form.mgp-form', { onsubmit: event => { event.preventDefault(); save(); } },
                title, ...fields, el('div.mgp-field.mgp-new', {}, newName, newValue),
                el('button', { type: 'submit', hidden: true })),
            actions);
        this.detail.hidden = false;
        this.detail.dataset.node = node.id;
        this.detail.scrollIntoView({ block: 'nearest' });
    }

    async change(run, done) {
        const answer = await this.guarded(run);
        if (answer !== undefined) {
            this.say(done);
            await this.refresh();
        }
    }

    save(node, inputs, newName, newValue) {
        const body = {};
        const title = inputs.get('title').value.trim();
        if (title !== node.title) {
            body.title = title;
        }
        const fields = {};
        const clear = [];
        for (const [name, text] of Object.entries(node.fields)) {
            if (name === 'title') {
                continue; // the title row above
            }
            const now = inputs.get(name).value;
            if (now === text) {
                continue;
            }
            if (now.trim() === '') {
                clear.push(name);
            } else {
                fields[name] = fieldValue(now, node.values?.[name]);
            }
        }
        if (newName && newValue.trim()) {
            fields[newName] = newValue;
        }
        if (Object.keys(fields).length) {
            body.fields = fields;
        }
        if (clear.length) {
            body.clear = clear;
        }
        if (!Object.keys(body).length) {
            this.say('Nothing changed.');
            return Promise.resolve();
        }
        return this.change(
            () => this.api.fetchJson(path(this.chat, 'nodes', encodeURIComponent(node.id), 'edit'), { method: 'POST', body }),
            `Saved ${node.title}.`);
    }

    pin(node, pinned) {
        return this.change(
            () => this.api.fetchJson(path(this.chat, 'nodes', encodeURIComponent(node.id), 'pin'), { method: pinned ? 'POST' : 'DELETE', body: {} }),
            pinned ? `Pinned ${node.title}: every recall injects it.` : `Unpinned ${node.title}.`);
    }

    async archive(node) {
        await this.change(
            () => this.api.fetchJson(path(this.chat, 'nodes', encodeURIComponent(node.id), 'archive'), { method: 'POST', body: {} }),
            `Archived ${node.title}.`);
        if (this.selected === node.id) {
            this.closeNode();
        }
    }

    merge(node, absorb) {
        return this.change(
            () => this.api.fetchJson(path(this.chat, 'nodes', encodeURIComponent(node.id), 'merge'), { method: 'POST', body: { absorb } }),
            `Merged into ${node.title}.`);
    }

    // ------------------------------------------------------------ edits and undo

    async loadEdits() {
        const answer = await this.api.fetchJson(path(this.chat, 'edits'));
        const titles = new Map(this.nodes.map(n => [n.id, n.title]));
        const rows = answer.edits.map(edit => {
            const names = edit.nodes.map(id => titles.get(id) ?? id).join(', ');
            const row = el('li.mgp-edit', { 'data-kind': edit.kind, 'data-version': edit.version },
                el('span.mgp-edit-kind', { text: `${edit.kind} v${edit.version}` }),
                clipped('span.mgp-edit-nodes', names || '-'));
            if (edit.kind === 'edit') {
                row.append(el('button.mgp-undo', { type: 'button', text: 'undo', onclick: () => this.undo(edit.version) }));
            }
            return row;
        });
        this.edits.replaceChildren(...(rows.length ? rows : [el('li.mgp-empty', { text: 'No edits yet.' })]));
    }

    undo(version) {
        return this.change(
            () => this.api.fetchJson(path(this.chat, 'undo'), { method: 'POST', body: { version } }),
            `Undid edit v${version}.`);
    }

    // ------------------------------------------------------------ why recalled

    /** After a generation: the recall's JSON (direct mode), or the server's last one. */
    async generated(event) {
        const recall = event && 'items' in event ? event : event?.recall;
        if (recall) {
            this.lastRecall = recall;
        } else {
            const chat = event?.chat ?? (await this.api.chatId());
            if (!chat) {
                return;
            }
            const last = await this.guarded(() => this.api.fetchJson(path(chat, 'recalls', 'last')));
            if (last === undefined) {
                return;
            }
            this.lastRecall = last.available ? last : null;
        }
        this.renderWhy();
    }

    renderWhy() {
        const recall = this.lastRecall;
        if (!recall) {
            this.whyQuery.textContent = 'No generation with memory yet.';
            this.whyQuery.title = '';
            this.why.replaceChildren();
            return;
        }
        const query = `for: ${recall.query ?? ''}`;
        this.whyQuery.textContent = query;
        this.whyQuery.title = query;
        this.why.replaceChildren(...recall.items.map(item => el('li.mgp-why-item', { 'data-node': item.id },
            el('button.mgp-open', { type: 'button', onclick: () => this.showNode(item.id) },
                clipped('span.mgp-title', item.title ?? item.id),
                clipped('span.mgp-why-text', item.why ?? '')))));
        if (!recall.items.length) {
            this.why.append(el('li.mgp-empty', { text: 'Nothing was injected.' }));
        }
    }
}

function launcher(panel) {
    const menu = document.getElementById('extensionsMenu');
    if (menu) { // SillyTavern's extensions (wand) menu
        const item = el('div.list-group-item.flex-container.flexGap5', {
            id: 'memgraph-panel-open', title: 'Memory panel', onclick: () => panel.toggle(),
        }, el('div.fa-solid.fa-brain.extensionsMenuExtensionButton'), el('span', { text: 'Memory' }));
        menu.append(item);
        return item;
    }
    const button = el('button.mgp-launcher', {
        id: 'memgraph-panel-open', type: 'button', text: 'Memory', onclick: () => panel.toggle(),
    });
    document.body.append(button);
    return button;
}

/** Mount the panel (closed) and its opener; answers the panel (tests drive it). */
export function mountPanel(api) {
    loadStyles();
    const panel = new MemoryPanel(api);
    launcher(panel);
    api.onGenerated(event => panel.generated(event));
    return panel;
}
