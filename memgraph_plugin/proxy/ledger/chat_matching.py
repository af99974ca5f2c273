"""Finding the stored chat a request without a chat id belongs to, by the messages it shares.

A front end that sends no id (SillyTavern) sends the conversation's newest messages. They are
one stored chat's messages, except:

- a trimmed window starts inside the chat (a run of its messages, not its opening);
- a regenerate, a swipe or a "continue" leaves the chat's last answer out; an edited last
  question (or a deleted last exchange and a new question) differs in its last message;
- an edit or deletion of one message inside the window differs there and joins the chat again
  after it.

`fit` says whether, and how well, a request's messages fit one stored chat (the same comparison
as the reconciliation, `reconcile.plan`, so a chat the request is given to is changed only at
its end or where the request says). A chat another conversation only shares an opening with
does not fit: past the shared opening the request and the chat part for good.

`MessageIndex` finds the few chats worth comparing without looking at every chat: the digests of
consecutive message pairs of each chat's newest `INDEX_TAIL` messages, mapped to the chats that
hold them. A request looks up at most `LOOKUPS` of its pairs (its first and its newest ones)
and compares at most `MAX_CANDIDATES` chats. Memory: at most `INDEX_TAIL` pair keys (16 bytes
each) per indexed chat; a pair held by more than `MAX_PER_KEY` chats ("Hi." / "Hello!") tells
chats apart no better than none and is not used for lookups.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from host.chats.jsonl import split_lines

from .reconcile import Ledger, plan

#: Newest messages of each chat whose pairs are indexed: a request's newest messages are its
#: chat's newest (give or take the answer being regenerated), so a short tail finds it.
INDEX_TAIL = 64
#: Bytes read from the end of a chat file to index a chat this process has not loaded.
TAIL_BYTES = 256 * 1024
#: Pairs of a request looked up (the first one and the newest ones).
LOOKUPS = 4
#: Chats compared with a request at most.
MAX_CANDIDATES = 8
#: A pair held by more chats than this is too common to look chats up by.
MAX_PER_KEY = 32
#: Stored messages a request may leave out or replace at the chat's end and still be that chat
#: (a regenerated answer; an edited last question and its answer).
END_SLACK = 2
#: Characters of a long message that go into its digest (its start and its end, and its length).
DIGEST_CHARS = 2048

#: How a request's chat was found (the ``X-Memgraph-Chat-Match`` response header).
CONTINUED = "continued"  # the request continues a stored chat, or repeats its end
EDITED = "edited"  # a regenerate or an edit at the chat's end, or inside the window
NEW = "new"  # no stored chat shares the request's messages: a new chat
AMBIGUOUS = "ambiguous"  # stored chats fit equally well: the most recently active one is used

_KIND_RANK = {CONTINUED: 1, EDITED: 0}


def message_key(role: str, text: str) -> bytes:
    """A 16-byte digest of one message (role and stripped text; a long text by its start, its
    end and its length, so the cost per message is bounded)."""
    if len(text) > 2 * DIGEST_CHARS:
        text = f"{text[:DIGEST_CHARS]}\x00{len(text)}\x00{text[-DIGEST_CHARS:]}"
    raw = f"{role}\x00{text}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=16).digest()


def pair_keys(roles: Sequence[str], texts: Sequence[str], start: int = 0) -> list[bytes]:
    """The keys of the pairs (message i-1, message i) for i from max(1, start) on."""
    first = max(0, start - 1)
    keys = [message_key(r, t) for r, t in zip(roles[first:], texts[first:], strict=True)]
    return [keys[i - 1] + keys[i] for i in range(1, len(keys))]


def _run(roles: list[str], texts: list[str], ledger: Ledger, at: int) -> int:
    """How many sent messages match the stored ones from stored position `at` on."""
    n = max(0, min(len(texts), len(ledger) - at))
    if texts[:n] == ledger.texts[at : at + n] and roles[:n] == ledger.roles[at : at + n]:
        return n
    for i in range(n):
        if texts[i] != ledger.texts[at + i] or roles[i] != ledger.roles[at + i]:
            return i
    return n


@attrs.frozen
class Fit:
    """How a request fits one stored chat: `kind` (`CONTINUED` or `EDITED`) and how many sent
    messages are the chat's (`shared`)."""

    kind: str
    shared: int

    def rank(self) -> tuple[int, int]:
        return (self.shared, _KIND_RANK[self.kind])


def fit(roles: list[str], texts: list[str], ledger: Ledger) -> Fit | None:
    """Whether the sent messages are the stored chat's (`ledger`), and how; None when not.

    - continued: the sent messages match the chat from where they start to its end (and may go
      on past it);
    - edited at the end: they part from the chat within its last `END_SLACK` messages;
    - edited inside: they part from it at one message (edited, deleted or inserted) and after it
      match the chat again to within `END_SLACK` of its end.
    Anything else (the chat goes on past where the request parts from it: a conversation that
    only shares the chat's opening) does not fit."""
    stored = len(ledger)
    if not stored or not texts:
        return None
    found = plan(roles, texts, ledger)
    shared = found.add_from
    if found.forget_from is None:
        return Fit(CONTINUED, shared) if shared else None
    apart = found.forget_from
    if shared and stored - apart <= END_SLACK:
        return Fit(EDITED, shared)
    for sent_skip, stored_skip in ((1, 1), (0, 1), (1, 0)):  # edited, deleted, inserted
        at = apart + stored_skip
        rest = shared + sent_skip
        if at >= stored or rest >= len(texts):
            continue
        again = _run(roles[rest:], texts[rest:], ledger, at)
        if again and at + again >= stored - END_SLACK:
            return Fit(EDITED, shared + again)
    return None


@attrs.frozen
class Choice:
    """The chat a request was matched to (None: no stored chat fits), and `match` (the header's
    value: `CONTINUED`, `EDITED`, `AMBIGUOUS` or `NEW`)."""

    chat_id: str | None
    match: str


def choose(fits: Iterable[tuple[str, Fit]], prefer: Callable[[str], tuple[int, float]]) -> Choice:
    """The best of the chats that fit: most shared messages, then continued before edited; a tie
    goes to `prefer` (same system prompt, then the most recent activity) and is `AMBIGUOUS`."""
    ranked = sorted(fits, key=lambda item: item[1].rank(), reverse=True)
    if not ranked:
        return Choice(None, NEW)
    best_rank = ranked[0][1].rank()
    tied = [chat for chat, f in ranked if f.rank() == best_rank]
    if len(tied) == 1:
        return Choice(ranked[0][0], ranked[0][1].kind)
    return Choice(max(tied, key=prefer), AMBIGUOUS)


class MessageIndex:
    """Pair digests of each indexed chat's newest messages -> the chats holding them."""

    def __init__(self, tail: int = INDEX_TAIL) -> None:
        self.tail = tail
        self._chats: dict[bytes, set[str]] = {}
        self._keys: dict[str, list[bytes]] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, chat_id: object) -> bool:
        return chat_id in self._keys

    def put(self, chat_id: str, roles: Sequence[str], texts: Sequence[str]) -> None:
        """Index the chat's newest `tail` messages (replacing what it had)."""
        self.drop(chat_id)
        keys = pair_keys(roles, texts, max(0, len(texts) - self.tail))
        self._keys[chat_id] = keys
        for key in keys:
            self._chats.setdefault(key, set()).add(chat_id)

    def drop(self, chat_id: str) -> None:
        for key in self._keys.pop(chat_id, ()):
            holders = self._chats.get(key)
            if holders is not None:
                holders.discard(chat_id)
                if not holders:
                    del self._chats[key]

    def candidates(
        self,
        roles: Sequence[str],
        texts: Sequence[str],
        within: Callable[[str], bool] = lambda chat_id: True,
    ) -> list[str]:
        """The chats (at most `MAX_CANDIDATES`, each one `within` takes: the request's
        namespace's) holding the most of the request's looked-up pairs: its first pair and its
        `LOOKUPS - 1` newest ones."""
        n = len(texts)
        if n < 2:
            return []
        ends = {1, *range(max(1, n - LOOKUPS + 1), n)}  # pair (end - 1, end)
        hits: dict[str, int] = {}
        for end in sorted(ends):
            key = message_key(roles[end - 1], texts[end - 1]) + message_key(roles[end], texts[end])
            holders = self._chats.get(key, ())
            if len(holders) > MAX_PER_KEY:
                continue
            for chat_id in holders:
                if within(chat_id):
                    hits[chat_id] = hits.get(chat_id, 0) + 1
        ranked = sorted(hits, key=lambda c: hits[c], reverse=True)
        return ranked[:MAX_CANDIDATES]


def read_tail(path: Path, limit: int = TAIL_BYTES) -> tuple[list[str], list[str]]:
    """The roles and stripped texts of the user/assistant messages in the last `limit` bytes of
    a chat file (whole lines only; the header and a torn line are skipped): what indexing a
    chat this process has not loaded needs, without reading a long chat whole."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return [], []
    if size > limit:
        data = data[data.find(b"\n") + 1 :]  # the first line is likely cut
    roles: list[str] = []
    texts: list[str] = []
    for line in split_lines(data.decode("utf-8", "replace")):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or row.get("role") not in ("user", "assistant"):
            continue
        text = row.get("text")
        if isinstance(text, str):
            roles.append(row["role"])
            texts.append(text.strip())
    return roles, texts
