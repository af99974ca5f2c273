"""``memgraph-host check``: read every fragment of every table and say what is damaged and which
chats it touches (SQLite's ``PRAGMA integrity_check``, for our LanceDB tables).

A fragment is damaged when one of its data files is missing, cut short or does not decode. A
damaged row cannot be read, so whose it was is inferred from what survives:

- ``commits`` (the journal): a chat whose versions have a gap lost the commits in the gap; when
  its newest snapshot is at or past the gap, its state is whole (the snapshot holds it) and only
  history rows are gone; otherwise the commits after the gap cannot be replayed either.
- the snapshot tables (``snapshots``, ``snap_*``, the vector tables ``nodes*``): derived data;
  every chat with a snapshot is listed, since a snapshot's rows may have been in the lost file.

`repair` (``storage/integrity/repair.py``) acts on this report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import lance

from memgraph_plugin.storage.failures import clean_cause
from memgraph_plugin.storage.tables import COMMITS, SNAPSHOTS


@attrs.frozen
class DamagedFragment:
    """One unreadable fragment of one table."""

    table: str
    fragment_id: int
    files: tuple[str, ...]
    rows: int
    error: str


@attrs.frozen
class ChatDamage:
    """What one chat lost in the journal (versions missing from its history)."""

    chat_id: str
    missing_versions: tuple[int, ...]
    snapshot_version: int  # its newest snapshot (0: none)
    newest_version: int  # its newest readable commit

    @property
    def state_whole(self) -> bool:
        """The snapshot covers every missing version: only history rows were lost."""
        return bool(self.missing_versions) and max(self.missing_versions) <= self.snapshot_version

    @property
    def intact_version(self) -> int:
        """The newest version the chat can be brought back to."""
        if self.state_whole or not self.missing_versions:
            return self.newest_version
        return min(self.missing_versions) - 1

    def describe(self) -> str:
        missing = _ranges(self.missing_versions)
        if self.state_whole:
            return (
                f"chat {self.chat_id!r}: history rows of version(s) {missing} lost; its state is "
                f"whole (snapshot at version {self.snapshot_version})"
            )
        return (
            f"chat {self.chat_id!r}: commit(s) {missing} lost; intact up to version "
            f"{self.intact_version} (newest readable {self.newest_version})"
        )


@attrs.frozen
class IntegrityReport:
    """Every table checked, the damaged fragments, and the chats they touch."""

    uri: str
    tables: tuple[str, ...]
    damaged: tuple[DamagedFragment, ...]
    chats: tuple[ChatDamage, ...]  # journal damage per chat
    snapshot_chats: tuple[str, ...]  # chats whose snapshots may have lost rows
    unreadable_tables: tuple[tuple[str, str], ...] = ()  # (table, why): no manifest

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.unreadable_tables

    def affected_chats(self) -> tuple[str, ...]:
        return tuple(sorted({c.chat_id for c in self.chats} | set(self.snapshot_chats)))

    def lines(self) -> list[str]:
        if self.ok:
            return [f"ok: {len(self.tables)} table(s) checked, every fragment readable"]
        out = []
        for table, why in self.unreadable_tables:
            out.append(f"table {table!r}: cannot be opened: {why}")
        for frag in self.damaged:
            files = ", ".join(frag.files)
            out.append(
                f"table {frag.table!r} fragment {frag.fragment_id} ({frag.rows} row(s)) "
                f"damaged: {files}: {frag.error}"
            )
        out.extend(chat.describe() for chat in self.chats)
        if self.snapshot_chats:
            out.append(
                "snapshots that may have lost rows (rebuilt from the journal by repair): "
                + ", ".join(repr(c) for c in self.snapshot_chats)
            )
        lost_commits = sum(f.rows for f in self.damaged if f.table == COMMITS)
        explained = sum(len(c.missing_versions) for c in self.chats)
        if lost_commits > explained:
            out.append(
                f"{lost_commits - explained} lost commit row(s) were some chat's newest: that "
                "chat goes back to its previous commit"
            )
        return out


def _ranges(values: Iterable[int]) -> str:
    items = sorted(values)
    parts: list[str] = []
    start = prev = None
    for v in items:
        if start is None:
            start = prev = v
        elif v == prev + 1:  # type: ignore[operator]
            prev = v
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def table_uri(uri: str, name: str) -> str:
    return f"{uri.rstrip('/')}/{name}.lance"


def open_dataset(uri: str, name: str, options: Mapping[str, str] | None = None) -> Any:
    return lance.dataset(table_uri(uri, name), storage_options=dict(options or {}) or None)


def damaged_fragments(name: str, dataset: Any) -> list[DamagedFragment]:
    """The fragments of `dataset` whose data files cannot be read whole."""
    damaged = []
    for fragment in dataset.get_fragments():
        meta = fragment.metadata
        files = tuple(f"{name}.lance/data/{f.path}" for f in meta.files)
        try:
            fragment.to_table()
        except Exception as exc:  # noqa: BLE001 - any failure to read is damage to report
            text = " ".join(str(exc).split())
            damaged.append(
                DamagedFragment(name, fragment.fragment_id, files, meta.physical_rows, _short(text))
            )
    return damaged


def _short(text: str) -> str:
    return clean_cause(text)[:300]


def intact_rows(dataset: Any, damaged: Iterable[DamagedFragment], columns: list[str]) -> Any:
    """The rows of the readable fragments (a pyarrow table of `columns`)."""
    skip = {f.fragment_id for f in damaged}
    keep = [f for f in dataset.get_fragments() if f.fragment_id not in skip]
    return dataset.scanner(columns=columns, fragments=keep).to_table()


def _journal_damage(commits: Any, snapshots: Mapping[str, int]) -> list[ChatDamage]:
    versions: dict[str, list[int]] = {}
    ids = commits.column("chat_id").to_pylist()
    for chat, version in zip(ids, commits.column("version").to_pylist(), strict=True):
        versions.setdefault(chat, []).append(int(version))
    out = []
    for chat, seen in sorted(versions.items()):
        present = set(seen)
        low, high = min(present), max(present)
        # a snapshot newer than the newest readable row (an import writes one at its version):
        # the rows between were lost, the state is whole
        top = max(high, snapshots.get(chat, 0))
        missing = tuple(v for v in range(low, top + 1) if v not in present)
        if low > 1 and snapshots.get(chat, 0) < low - 1:  # the oldest rows were pruned? no
            missing = tuple(range(snapshots.get(chat, 0) + 1, low)) + missing
        if missing:
            out.append(ChatDamage(chat, missing, snapshots.get(chat, 0), top))
    return out


def snapshot_versions(snapshots: Any) -> dict[str, int]:
    newest: dict[str, int] = {}
    ids = snapshots.column("chat_id").to_pylist()
    for chat, version in zip(ids, snapshots.column("version").to_pylist(), strict=True):
        newest[chat] = max(newest.get(chat, 0), int(version))
    return newest


def check_database(
    uri: str, table_names: Iterable[str], options: Mapping[str, str] | None = None
) -> IntegrityReport:
    """Read every fragment of every table of the database at `uri`."""
    names = tuple(sorted(table_names))
    damaged: list[DamagedFragment] = []
    unreadable: list[tuple[str, str]] = []
    datasets: dict[str, Any] = {}
    for name in names:
        try:
            datasets[name] = open_dataset(uri, name, options)
        except Exception as exc:  # noqa: BLE001 - reported
            unreadable.append((name, _short(" ".join(str(exc).split()))))
            continue
        damaged.extend(damaged_fragments(name, datasets[name]))
    by_table: dict[str, list[DamagedFragment]] = {}
    for frag in damaged:
        by_table.setdefault(frag.table, []).append(frag)
    heads: dict[str, int] = {}
    if SNAPSHOTS in datasets:
        heads = snapshot_versions(
            intact_rows(datasets[SNAPSHOTS], by_table.get(SNAPSHOTS, ()), ["chat_id", "version"])
        )
    chats: list[ChatDamage] = []
    if COMMITS in datasets and COMMITS in by_table:
        rows = intact_rows(datasets[COMMITS], by_table[COMMITS], ["chat_id", "version"])
        chats = _journal_damage(rows, heads)
    snapshot_side = [t for t in by_table if t != COMMITS]
    snapshot_chats = tuple(sorted(heads)) if snapshot_side else ()
    return IntegrityReport(
        uri, names, tuple(damaged), tuple(chats), snapshot_chats, tuple(unreadable)
    )
