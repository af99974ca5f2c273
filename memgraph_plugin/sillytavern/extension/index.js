// Memgraph memory for SillyTavern: long-term memory from a memgraph-host server
// (docs/sillytavern.md).
//
// Every SillyTavern chat gets a stable memory chat id (chat_identity.js). Two modes:
// - proxy: the Chat Completion source is "Custom" and its URL is the memgraph server. The proxy
//   remembers and injects; the extension only adds `X-Memgraph-Chat` (and, for a branch's first
//   requests, `X-Memgraph-Fork-From`) to each request's custom headers, and injects nothing.
// - direct: any other API. The extension keeps the memory chat in step on SillyTavern's message
//   events and injects the recall block before each generation (direct_mode.js).
// "auto" picks proxy when the Chat Completion source points at the server, direct otherwise, so
// the memory goes in exactly once per generation.
//
// The memory panel is a module of its own, `panel.js`, loaded when present: its
// `mountPanel(api)` gets the `api` object built below (`serverUrl`, `token`, `mode()`,
// `chatId()`, `fetchJson(path, options)`, `onGenerated(callback)`: the callback receives
// `{mode, chat, query, recall}` after each generation, `recall` being the JSON API's recall
// answer in direct mode and null in proxy mode).

import { oai_settings } from '../../../openai.js';
import { chatIdentity } from './chat_identity.js';
import { DirectMemory, PROMPT_KEY } from './direct_mode.js';
import { MemoryClient, normalUrl } from './memory_client.js';

const NAME = 'memgraph-memory';
const DEFAULTS = { url: 'http://127.0.0.1:8765', token: '', mode: 'auto' };

function settings() {
    const all = SillyTavern.getContext().extensionSettings;
    all[NAME] = { ...DEFAULTS, ...(all[NAME] ?? {}) };
    return all[NAME];
}

const client = new MemoryClient(settings);
const direct = new DirectMemory(client);
const generatedListeners = [];
let lastQuery = null;
let lastRecall = null; // direct mode: the JSON API's answer for the last generation

/** "proxy" or "direct": the chosen mode, or for "auto" where Chat Completion requests go. */
export function currentMode() {
    const chosen = settings().mode;
    if (chosen === 'proxy' || chosen === 'direct') {
        return chosen;
    }
    const context = SillyTavern.getContext();
    const viaServer = context.mainApi === 'openai'
        && oai_settings.chat_completion_source === 'custom'
        && normalUrl(oai_settings.custom_url) === client.base;
    return viaServer ? 'proxy' : 'direct';
}

/** YAML lines for the custom headers: ours replace any earlier X-Memgraph-* lines. */
function withChatHeaders(yaml, identity) {
    const kept = String(yaml ?? '').split('\n')
        .filter(line => line.trim() && !/^\s*"?x-memgraph-(chat|fork-from)"?\s*:/i.test(line));
    kept.push(`X-Memgraph-Chat: ${JSON.stringify(identity.id)}`);
    if (identity.forkFrom) {
        kept.push(`X-Memgraph-Fork-From: ${JSON.stringify(identity.forkFrom)}`);
    }
    return kept.join('\n');
}

async function onChatCompletionSettingsReady(data) {
    if (currentMode() !== 'proxy' || data?.chat_completion_source !== 'custom') {
        return;
    }
    const identity = await chatIdentity();
    if (identity) {
        data.custom_include_headers = withChatHeaders(data.custom_include_headers, identity);
    }
}

// The manifest's generate_interceptor: SillyTavern awaits it before each prompt is built.
globalThis.memgraphMemoryInterceptor = async function (chat, contextSize) {
    const context = SillyTavern.getContext();
    if (currentMode() === 'proxy') {
        context.setExtensionPrompt(PROMPT_KEY, '', 0, 0); // the proxy injects
        const question = [...chat].reverse().find(m => m.is_user && !m.is_system);
        lastQuery = question?.mes ?? null;
        return;
    }
    const recall = await direct.recall(chat, Number(contextSize) || 0);
    lastQuery = recall?.query ?? null;
    lastRecall = recall;
    if (recall) {
        notifyGenerated({ mode: 'direct', chat: recall.chat, query: recall.query, recall });
    }
};

function notifyGenerated(event) {
    for (const listener of generatedListeners) {
        try {
            listener(event);
        } catch (error) {
            console.warn('[memgraph] panel listener failed:', error);
        }
    }
}

function syncIfDirect() {
    if (currentMode() === 'direct') {
        direct.sync(); // queued, not awaited: SillyTavern goes on at once
    }
}

// An edit or a delete: in proxy mode too, since the message may be outside the window the next
// request carries (the proxy would never see the change).
function syncChange() {
    if (currentMode() === 'direct') {
        direct.sync();
    } else {
        direct.sync(undefined, { oneChange: true });
    }
}

function onSwiped(messageIndex) {
    const chat = SillyTavern.getContext().chat;
    const message = chat[messageIndex];
    // a swipe to a new answer is generated next: the interceptor syncs without it
    if (message && Array.isArray(message.swipes) && Number(message.swipe_id) >= message.swipes.length) {
        return;
    }
    syncIfDirect();
}

async function onReceived() {
    syncIfDirect();
    if (currentMode() === 'proxy') {
        direct.retryChange();
        const identity = await chatIdentity();
        notifyGenerated({ mode: 'proxy', chat: identity?.id ?? null, query: lastQuery, recall: null });
    }
}

function settingsHtml() {
    return `
    <div class="memgraph-settings">
      <div class="inline-drawer">
        <div class="inline-drawer-toggle inline-drawer-header">
          <b>Memgraph memory</b>
          <div class="inline-drawer-icon fa-solid fa-circle-chevron-down down"></div>
        </div>
        <div class="inline-drawer-content">
          <label for="memgraph_url">Server URL</label>
          <input id="memgraph_url" class="text_pole" type="text" placeholder="${DEFAULTS.url}">
          <label for="memgraph_token">Token (X-Memgraph-Token: serve_token, or the one serve prints)</label>
          <input id="memgraph_token" class="text_pole" type="password" autocomplete="off">
          <label for="memgraph_mode">Mode</label>
          <select id="memgraph_mode" class="text_pole">
            <option value="auto">auto (proxy when Chat Completion goes through the server)</option>
            <option value="proxy">proxy (the server is the Chat Completion endpoint)</option>
            <option value="direct">direct (the extension keeps and injects memory)</option>
          </select>
          <div id="memgraph_status" class="memgraph-status"></div>
        </div>
      </div>
    </div>`;
}

function showStatus() {
    const mode = currentMode();
    $('#memgraph_status').text(`Mode in use: ${mode}.`);
}

function mountSettings() {
    const own = settings();
    $('#extensions_settings2').append(settingsHtml());
    const save = SillyTavern.getContext().saveSettingsDebounced;
    $('#memgraph_url').val(own.url).on('input', function () {
        settings().url = String($(this).val()).trim() || DEFAULTS.url;
        save();
        showStatus();
    });
    $('#memgraph_token').val(own.token).on('input', function () {
        settings().token = String($(this).val()).trim();
        save();
    });
    $('#memgraph_mode').val(own.mode).on('change', function () {
        settings().mode = String($(this).val());
        save();
        showStatus();
    });
    showStatus();
}

async function mountPanelIfPresent() {
    let panel;
    try {
        panel = await import('./panel.js');
    } catch {
        return; // no panel module installed
    }
    if (typeof panel.mountPanel !== 'function') {
        return;
    }
    const api = {
        get serverUrl() { return client.base; },
        get token() { return settings().token; },
        mode: currentMode,
        chatId: async () => (await chatIdentity())?.id ?? null,
        fetchJson: (path, options) => client.fetchJson(path, options),
        onGenerated: listener => generatedListeners.push(listener),
    };
    try {
        await panel.mountPanel(api);
    } catch (error) {
        console.warn('[memgraph] the memory panel failed to mount:', error);
    }
}

// for tests and the browser console: the mode in use, a promise of the queued calls' end, how
// many calls are queued, and in direct mode the recall made for the last generation (null in
// proxy mode)
globalThis.memgraphMemory = {
    mode: currentMode, idle: () => direct.queue, pending: () => direct.pending,
    lastRecall: () => lastRecall,
};

jQuery(async () => {
    const { eventSource, eventTypes } = SillyTavern.getContext();
    mountSettings();
    eventSource.on(eventTypes.CHAT_COMPLETION_SETTINGS_READY, onChatCompletionSettingsReady);
    eventSource.on(eventTypes.MESSAGE_SENT, syncIfDirect);
    eventSource.on(eventTypes.MESSAGE_RECEIVED, onReceived);
    eventSource.on(eventTypes.MESSAGE_EDITED, syncChange);
    eventSource.on(eventTypes.MESSAGE_DELETED, syncChange);
    eventSource.on(eventTypes.MESSAGE_SWIPED, onSwiped);
    eventSource.on(eventTypes.CHAT_CHANGED, () => {
        showStatus();
        direct.enqueue(chatIdentity); // a new chat, branch or copy gets its id now
        syncIfDirect();
    });
    await mountPanelIfPresent();
});
