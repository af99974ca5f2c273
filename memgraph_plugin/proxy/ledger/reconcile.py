"""Reconciling the history a front end sends with the chat the host stores.

Front ends send the whole visible history with every request. The rule (``docs/proxy.md``):

- the sent user/assistant messages are matched against the stored chat, anchored where the
  first sent message sits in the chat (a front end that drops old messages out of a full context
  window sends only a tail: that is not a deletion);
- where the overlap stops matching (an edited or deleted message, a regenerated answer, a swipe),
  the chat forgets from that stored message on, and the sent messages from there are added;
- sent messages after the end of the stored chat are added;
- a request none of whose first messages is in the chat (a client that sends only its newest
  message) adds its messages: it never empties the chat.

Per request this costs the comparisons of the sent texts with the stored ones (list equality, in
C); the chat's texts are kept per chat (`Ledger`), built once from the chat file, and a lookup
of a message to its positions is built only when a tail needs anchoring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

#: How many stored positions of an anchor message are tried (repeated short messages: "ok").
MAX_ANCHORS = 32
#: How many sent messages are tried as the anchor when the first ones match nothing (an edited
#: first message of a trimmed window).
ANCHOR_TRIES = 3


@attrs.frozen
class Plan:
    """What to do with a chat: forget stored messages from `forget_from` (None: nothing), then
    add the sent messages from `add_from` on. `offset`: the stored index of sent message 0."""

    offset: int
    forget_from: int | None
    add_from: int


class Ledger:
    """The roles and stripped texts of one chat's messages, in step with the chat file."""

    def __init__(self, messages: Sequence[Any]) -> None:
        kept = [m for m in messages if m.role in ("user", "assistant")]
        self.roles: list[str] = [m.role for m in kept]
        self.texts: list[str] = [m.text.strip() for m in kept]
        self.indices: list[int] = [m.index for m in kept]  # each one's index in the chat
        self._where: dict[str, list[int]] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def append(self, role: str, text: str, index: int) -> None:
        self.roles.append(role)
        self.texts.append(text)
        self.indices.append(index)
        if self._where is not None:
            self._where.setdefault(text, []).append(len(self.texts) - 1)

    def truncate(self, index: int) -> None:
        """Forget the messages from `index` on."""
        del self.roles[index:], self.texts[index:], self.indices[index:]
        self._where = None  # rebuilt on the next anchoring

    def positions(self, text: str) -> list[int]:
        if self._where is None:
            where: dict[str, list[int]] = {}
            for i, t in enumerate(self.texts):
                where.setdefault(t, []).append(i)
            self._where = where
        return self._where.get(text, [])


def _common(roles: list[str], texts: list[str], ledger: Ledger, offset: int) -> int:
    """How many sent messages match the stored ones from `offset` on."""
    n = min(len(texts), len(ledger) - offset)
    if n <= 0:
        return 0
    if (
        texts[:n] == ledger.texts[offset : offset + n]
        and roles[:n] == ledger.roles[offset : offset + n]
    ):
        return n
    stored_t, stored_r = ledger.texts, ledger.roles
    for i in range(n):
        if texts[i] != stored_t[offset + i] or roles[i] != stored_r[offset + i]:
            return i
    return n


def _anchor(roles: list[str], texts: list[str], ledger: Ledger) -> int | None:
    """The stored index of sent message 0 when the sent list is a tail, else None."""
    stored = len(ledger)
    best: tuple[int, int] | None = None  # (reaches the end?, overlap), offset
    best_offset = None
    for tried in range(min(ANCHOR_TRIES, len(texts))):
        for pos in ledger.positions(texts[tried])[-MAX_ANCHORS:]:
            offset = pos - tried
            if offset < 0 or ledger.roles[pos] != roles[tried]:
                continue
            overlap = _common(roles[tried:], texts[tried:], ledger, pos)
            key = (int(pos + overlap >= stored), overlap)
            if best is None or key > best:
                best, best_offset = key, offset
        if best is not None:
            return best_offset
    return None


def plan(roles: list[str], texts: list[str], ledger: Ledger) -> Plan:
    """How to bring the stored chat in line with the sent messages (see the module rule)."""
    stored = len(ledger)
    offset = 0
    if stored and texts and (texts[0] != ledger.texts[0] or roles[0] != ledger.roles[0]):
        found = _anchor(roles, texts, ledger)
        if found is None:  # nothing sent is in the chat: new messages, never a wiped chat
            return Plan(stored, None, 0)
        offset = found
    common = _common(roles, texts, ledger, offset)
    if offset + common >= stored:
        return Plan(offset, None, common)
    return Plan(offset, offset + common, common)
