"""Which fragments of the journal hold a chat's rows: a host that takes a chat another host wrote
reads those fragments only, not every fragment of the table.

On an object store a scan of the journal for one chat's rows reads every data file (each
append is a fragment of its own until compaction merges them, and nothing in a file says which
chats it holds): tens of GETs when a chat moves to another host. The host that held the chat
knows where its rows are: the fragments its load found them in (each row's address names its
fragment) and the fragment each of its own appends made. It leaves them with the chat's lease
(`hosts.chat_lease`) as a `Hint`, with the chat's version; the next holder scans those
fragments and uses them only when every one is still in the table (compaction replaces
fragments: then it scans them all, few after a compaction) and the rows it finds are exactly the
versions after its base up to the hint's version. Anything else falls back to the full scan.

Only for a journal whose chats have one writer each (`single_writer`: hosts holding leases).
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

from memgraph_plugin.storage.journal.journal_parts import group_versions

#: A hint naming more fragments than this is not kept (the full scan is as cheap then).
MAX_FRAGMENTS = 400


@attrs.frozen
class Hint:
    """The fragments holding a chat's journal rows after some version, up to `version`."""

    fragments: frozenset[int]
    version: int

    def text(self) -> str:
        """``<version>:<id>,<id>,...``: how a lease item keeps it."""
        return f"{self.version}:" + ",".join(str(i) for i in sorted(self.fragments))

    @classmethod
    def parse(cls, text: object) -> Hint | None:
        """The hint `text` gives, or None when it is not one."""
        if not isinstance(text, str):
            return None
        version, sep, ids = text.partition(":")
        try:
            fragments = frozenset(int(i) for i in ids.split(",") if i)
            return cls(fragments, int(version)) if sep else None
        except ValueError:
            return None


class FragmentHints:
    """One journal handle's knowledge of its chats' fragments (see the module)."""

    def __init__(self) -> None:
        #: chat -> the fragments holding its rows after its base (complete), as this handle
        #: learnt them from a full or hinted load and its own appends since
        self._known: dict[str, set[int]] = {}
        #: chat -> its version as of that load or append
        self._version: dict[str, int] = {}
        #: chat -> the hint its last holder left, for the next load
        self._given: dict[str, Hint] = {}
        #: held for the dictionaries' changes only, never across a read (the event loop asks)
        self._lock = threading.Lock()

    def received(self, chat_id: str, hint: str | None) -> None:
        """Another host wrote the chat: what this handle knew of it is stale; `hint` (the
        last holder's `text`, None: none) is for the next load."""
        given = Hint.parse(hint)
        with self._lock:
            self._known.pop(chat_id, None)
            self._given.pop(chat_id, None)
            if given is not None:
                self._given[chat_id] = given

    def of(self, chat_id: str) -> str | None:
        """The hint (its `text`) to leave with the chat's lease; None: unknown."""
        with self._lock:
            known = self._known.get(chat_id)
            if known is not None:
                if len(known) > MAX_FRAGMENTS:
                    return None
                return Hint(frozenset(known), self._version[chat_id]).text()
            given = self._given.get(chat_id)  # not loaded while held: the last holder's stands
            return None if given is None else given.text()

    def appended(self, chat_id: str, table: Any, rows: int, version: int) -> None:
        """An append of `rows` rows of the chat, up to its `version`, just committed through
        `table`: its fragment (the table's newest: an append's fragments get ids after every
        other) is the chat's."""
        if chat_id not in self._known:
            return
        newest = getattr(table, "newest_fragment", lambda: None)()
        with self._lock:
            known = self._known.get(chat_id)
            if known is None:
                return
            if newest is None or newest[1] != rows:
                del self._known[chat_id]  # cannot tell: the next hint is none
                return
            known.add(newest[0])
            self._version[chat_id] = version

    def load(
        self, table: Any, chat_id: str, after: int, where: str, columns: list[str]
    ) -> dict[int, dict[str, Any]] | None:
        """The first row per version of the chat's rows `where` selects (versions after
        `after`), learning their fragments: from the hinted fragments when the hint holds, else
        from every fragment. None when `table` cannot say where rows are (no pylance dataset)."""
        latest = getattr(table, "latest", None)
        if latest is None:
            return None
        dataset = latest()
        names = list(dict.fromkeys(["version", "writer", *columns]))
        with self._lock:
            hint = self._given.pop(chat_id, None)
        first: dict[int, dict[str, Any]] | None = None
        if hint is not None:
            fragments = [dataset.get_fragment(i) for i in sorted(hint.fragments)]
            if all(f is not None for f in fragments):
                first, holding = _scan(dataset, where, names, fragments)
                if sorted(first) != list(range(after + 1, hint.version + 1)):
                    first = None
        if first is None:
            first, holding = _scan(dataset, where, names, None)
        with self._lock:
            self._known[chat_id] = holding
            self._version[chat_id] = max(first, default=after)
        return first


def _scan(
    dataset: Any, where: str, names: list[str], fragments: list[Any] | None
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    rows = (
        dataset.scanner(
            columns=names,
            filter=where,
            with_row_id=True,
            with_row_address=True,
            fragments=fragments,
        )
        .to_table()
        .to_pylist()
    )
    holding = {int(row.pop("_rowaddr")) >> 32 for row in rows}
    return group_versions(rows), holding
