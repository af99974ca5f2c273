// Calls to the memgraph server's JSON API (docs/http-api.md) from the SillyTavern page: the
// browser sends SillyTavern's origin, which the server must list in `http_cors_origins`; writes
// carry the token in `X-Memgraph-Token`. A server that cannot be reached is said once (a toast)
// until a call succeeds again; the chat goes on without memory meanwhile.

export class MemoryClient {
    /** @param {() => {url: string, token: string}} settings the extension's current settings */
    constructor(settings) {
        this.settings = settings;
        this.down = false;
    }

    /** The server's base URL without a trailing slash or `/v1`. */
    get base() {
        return normalUrl(this.settings().url);
    }

    /**
     * A JSON call: `path` under the server (`/api/chats/...`); resolves to the parsed answer, or
     * throws an Error with `status` (0: the server could not be reached) and the server's message.
     */
    async fetchJson(path, options = {}) {
        const headers = { ...(options.headers ?? {}) };
        const token = this.settings().token;
        if (token) {
            headers['X-Memgraph-Token'] = token;
        }
        let body = options.body;
        if (body !== undefined && typeof body !== 'string') {
            body = JSON.stringify(body);
        }
        if (body !== undefined) {
            headers['Content-Type'] = 'application/json';
        }
        let response;
        try {
            response = await fetch(this.base + path, { ...options, headers, body });
        } catch (error) {
            this.#unreachable(error);
            const failure = new Error(`memgraph server unreachable at ${this.base}: ${error}`);
            failure.status = 0;
            throw failure;
        }
        const answer = await response.json().catch(() => ({}));
        if (!response.ok) {
            const failure = new Error(`${path}: ${response.status} ${answer.error ?? ''}`.trim());
            failure.status = response.status;
            failure.answer = answer;
            if (response.status === 401 || response.status === 403) {
                this.#unreachable(failure);
            }
            throw failure;
        }
        this.down = false;
        return answer;
    }

    #unreachable(error) {
        if (this.down) {
            return;
        }
        this.down = true;
        console.warn('[memgraph] memory unavailable:', error);
        const why = error?.status === 401 ? 'the token is wrong'
            : error?.status === 403 ? `this page's origin is not in http_cors_origins`
                : `no answer from ${this.base}`;
        toastr.warning(`The chat goes on without memory (${why}).`, 'Memgraph memory');
    }
}

/** `http://host:port/v1/` -> `http://host:port`, so a Chat Completion URL compares with ours. */
export function normalUrl(url) {
    return String(url ?? '').trim().replace(/\/+$/, '').replace(/\/v1$/, '').toLowerCase();
}
