// Which memory chat a SillyTavern chat is: a stable ASCII id kept in the chat's metadata
// (`chat_metadata.memgraph`), with the SillyTavern chat file it was made for. SillyTavern copies a
// chat's metadata into a branch or a copy; there the file differs, so the copy gets a new id and
// remembers the id it came from (`fork_from`): its memory starts as a fork of its parent's.

const KEY = 'memgraph';

/** A new id: "st-" and 20 random hex digits (ASCII, as HTTP headers need). */
function newId() {
    const bytes = new Uint8Array(10);
    crypto.getRandomValues(bytes);
    return 'st-' + Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The current chat's memory identity, made (and saved in the chat's metadata) when the chat has
 * none or has its parent's. Null when no chat is open.
 * @returns {Promise<{id: string, forkFrom: string|null}|null>}
 */
export async function chatIdentity() {
    const context = SillyTavern.getContext();
    const file = context.getCurrentChatId();
    if (!file) {
        return null;
    }
    const metadata = context.chatMetadata;
    const entry = metadata[KEY];
    if (entry && typeof entry.id === 'string' && entry.file === file) {
        return { id: entry.id, forkFrom: entry.fork_from ?? null };
    }
    const parent = entry && typeof entry.id === 'string' ? entry.id : null;
    metadata[KEY] = { id: newId(), file: file, fork_from: parent };
    await context.saveMetadata();
    return { id: metadata[KEY].id, forkFrom: parent };
}
