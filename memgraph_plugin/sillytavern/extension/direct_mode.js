// Direct mode: SillyTavern talks to its model itself, so the extension keeps the memory chat in
// step with SillyTavern's message list through the JSON API and injects the recall block itself.
//
// The message list is mapped as SillyTavern sends it: every message that is not a hidden system
// message, in order, the user's as "user", the others as "assistant". Whatever changed (a message
// sent or received, an edit or a delete at index i, a swipe, a regenerate) is found by comparing
// that list with what the server holds: from the first difference on, the server forgets
// (`forget {"from": i}`, one rollback commit) and the rest is added again.

import { chatIdentity } from './chat_identity.js';

export const PROMPT_KEY = 'memgraph_memory';
// The block may fill at most this share of SillyTavern's context size (counted at 3.5 characters
// a token): a block that does not fit with SillyTavern's own prompts makes it drop the history.
const BLOCK_SHARE = 0.5;
const CHARS_PER_TOKEN = 3.5;

/** The block cut at a line end to `limit` characters (0: no limit). */
export function fitted(block, limit) {
    if (!limit || block.length <= limit) {
        return block;
    }
    const cut = block.lastIndexOf('\n', limit);
    return block.slice(0, cut > 0 ? cut : limit);
}
export const MEMORY_HEADING =
    'Long-term memory of this conversation (notes for you, not part of the dialogue):\n';

/** The messages of a SillyTavern chat array as the memory chat holds them. */
export function chatMessages(chat) {
    const rows = [];
    for (const message of chat ?? []) {
        if (message?.is_system || typeof message?.mes !== 'string') {
            continue;
        }
        const text = message.mes.trim();
        if (!text) {
            continue;
        }
        rows.push({ role: message.is_user ? 'user' : 'assistant', text, name: message.name ?? '' });
    }
    return rows;
}

function equal(a, b) {
    return a.role === b.role && a.text === b.text;
}

function sameRows(a, b) {
    return a.length === b.length && a.every((row, i) => equal(row, b[i]));
}

/** Whether `wanted` is `held` with the message at `at` edited or deleted, or cut from `at` on. */
function isOneChange(held, wanted, at) {
    if (at === held.length) {
        return wanted.length === at; // nothing changed
    }
    return wanted.length === at
        || sameRows(held.slice(at + 1), wanted.slice(at + 1))
        || sameRows(held.slice(at + 1), wanted.slice(at));
}

export class DirectMemory {
    /** @param {import('./memory_client.js').MemoryClient} client */
    constructor(client) {
        this.client = client;
        this.mirror = new Map(); // chat id -> the messages the server holds (role, text)
        this.queue = Promise.resolve();
        this.pending = 0; // jobs queued and not yet ended
        // proxy mode: an edit or delete met the server's copy mid-turn (the answer being stored);
        // it is applied again once SillyTavern has the answer (`retryChange`)
        this.changeLeft = false;
    }

    /** Run `job` after every job queued before it (one chat's calls never overlap). */
    enqueue(job) {
        this.pending++;
        const run = this.queue.then(job).finally(() => { this.pending--; });
        this.queue = run.catch(() => undefined);
        return run;
    }

    /**
     * Bring the server's copy of the current chat in step with `chat` (default: the whole chat).
     * `oneChange`: the server's copy is written by the proxy as well (proxy mode), so it is read
     * afresh, and only one edited or deleted message (or a cut end) is applied: a list that
     * differs otherwise is the proxy's business (its history rule) and is left alone, unless
     * SillyTavern has not shown the answer the server already holds: then `retryChange()` applies
     * it once the answer is received.
     */
    sync(chat = undefined, { oneChange = false } = {}) {
        return this.enqueue(async () => {
            const identity = await chatIdentity();
            if (!identity) {
                return;
            }
            if (oneChange) {
                this.mirror.delete(identity.id);
                this.changeLeft = false;
            }
            try {
                // read after the server's copy: its read waits for an answer still being stored
                const wanted = () => chatMessages(chat ?? SillyTavern.getContext().chat);
                await this.#sync(identity, wanted, oneChange);
            } catch (error) {
                this.mirror.delete(identity.id); // read again from the server next time
                console.warn('[memgraph] sync failed:', error);
            }
        });
    }

    async #held(identity) {
        const id = encodeURIComponent(identity.id);
        let held = this.mirror.get(identity.id);
        if (held) {
            return held;
        }
        // a chat the server does not know yet is a 404 (reads never create chats): no messages
        const history = await this.client.fetchJson(`/api/chats/${id}/history?limit=1000000`)
            .catch(error => {
                if (error.status !== 404) {
                    throw error;
                }
                return { total: 0, messages: [] };
            });
        if (history.total === 0 && identity.forkFrom) {
            const fork = { method: 'POST', body: { from: identity.forkFrom } };
            await this.client.fetchJson(`/api/chats/${id}/fork`, fork).catch(error => {
                if (error.status !== 409) {  // 409: forked already
                    throw error;
                }
            });
        }
        held = history.messages.map(m => ({ role: m.role, text: m.text.trim() }));
        this.mirror.set(identity.id, held);
        return held;
    }

    /** Proxy mode, after an answer was received: the edit or delete left aside, applied now. */
    retryChange() {
        if (this.changeLeft) {
            this.sync(undefined, { oneChange: true });
        }
    }

    async #sync(identity, wantedOf, oneChange = false) {
        const id = encodeURIComponent(identity.id);
        let held = await this.#held(identity);
        const wanted = wantedOf();
        let same = 0;
        while (same < held.length && same < wanted.length && equal(held[same], wanted[same])) {
            same++;
        }
        if (oneChange && !isOneChange(held, wanted, same)) {
            this.mirror.delete(identity.id);
            // the server holds more than SillyTavern shows: an answer on its way to the page
            this.changeLeft = held.length > wanted.length;
            return;
        }
        if (same < held.length) {
            await this.client.fetchJson(`/api/chats/${id}/forget`, { method: 'POST', body: { from: same } });
            held = held.slice(0, same);
            this.mirror.set(identity.id, held);
        }
        const added = wanted.slice(same);
        if (added.length) {
            await this.client.fetchJson(`/api/chats/${id}/messages`, { method: 'POST', body: { messages: added } });
            this.mirror.set(identity.id, held.concat(added.map(m => ({ role: m.role, text: m.text }))));
        }
    }

    /**
     * Recall for the last user message of `chat` (after the chat is in step) and put the block into
     * the prompt; the JSON API's answer, or null when nothing was recalled.
     */
    recall(chat, contextSize = 0) {
        return this.enqueue(async () => {
            const context = SillyTavern.getContext();
            context.setExtensionPrompt(PROMPT_KEY, '', 0, 0);
            const identity = await chatIdentity();
            const question = [...chatMessages(chat)].reverse().find(m => m.role === 'user');
            if (!identity || !question) {
                return null;
            }
            try {
                const wanted = chatMessages(chat);
                await this.#sync(identity, () => wanted);
                const id = encodeURIComponent(identity.id);
                // context_tokens: the server recalls for SillyTavern's window (what it drops)
                const body = { query: question.text };
                if (contextSize > 0) {
                    body.context_tokens = Math.floor(contextSize);
                }
                const answer = await this.client.fetchJson(`/api/chats/${id}/recall`, {
                    method: 'POST', body,
                });
                const limit = Math.floor(contextSize * BLOCK_SHARE * CHARS_PER_TOKEN);
                const block = fitted(answer.block ?? '', limit).trim();
                if (block) {
                    // in the prompt, as a system message of its own (extension_prompt_types.IN_PROMPT)
                    context.setExtensionPrompt(PROMPT_KEY, MEMORY_HEADING + block, 0, 0);
                }
                return { ...answer, chat: identity.id, query: question.text };
            } catch (error) {
                this.mirror.delete(identity.id);
                console.warn('[memgraph] recall failed:', error);
                return null;
            }
        });
    }
}
