"""``memgraph-host check``: read every fragment of every table and say what is damaged and which
chats it touches (SQLite's ``PRAGMA integrity_check``, for our LanceDB tables).

A fragment is damaged when one of its data files is missing, cut short or does not decode. A
damaged row cannot be read, so whose it was is inferred from what survives:

- ``commits`` (the journal): a chat whose versions have a gap lost the commits in the gap; when
  its newest snapshot is at or past the gap, its state is whole (the snapshot holds it) and only
  history rows are gone; otherwise the changes of the lost commits are gone from its state (the
  later commits are kept by repair where they still apply). A journal that starts past version 1
  lost its first rows, unless ``storage_history_seconds`` pruned them (then, under a snapshot,
  it cannot tell). A chat's newest row leaves no gap: it is counted, not placed.
- the snapshot tables (``snapshots``, ``snap_*``, the vector tables ``nodes*``): derived data;
  every chat with a snapshot is listed, since a snapshot's rows may have been in the lost file.

`repair` (``storage/integrity/repair.py``) acts on this report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import lance

from memgraph_plugin.storage.database.tables import COMMITS, SNAPSHOTS
from memgraph_plugin.storage.failures import clean_cause


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
    def lost_state_versions(self) -> tuple[int, ...]:
        """The missing versions past the newest snapshot: their changes are gone from the state
        (the snapshot holds the changes of the ones at or before it)."""
        return tuple(v for v in self.missing_versions if v > self.snapshot_version)

    @property
    def state_whole(self) -> bool:
        """The snapshot covers every missing version: only history rows were lost."""
        return bool(self.missing_versions) and not self.lost_state_versions

    @property
    def intact_version(self) -> int:
        """The newest version whose state is whole: the one before the first lost change (repair
        keeps the commits after it that still apply, `journal_gaps.py`)."""
        lost = self.lost_state_versions
        return min(lost) - 1 if lost else self.newest_version

    def describe(self) -> str:
        missing = ranges(self.missing_versions)
        if self.state_whole:
            return (
                f"chat {self.chat_id!r}: history rows of version(s) {missing} lost; its state is "
                f"whole (snapshot at version {self.snapshot_version})"
            )
        return (
            f"chat {self.chat_id!r}: commit(s) {missing} lost; intact up to version "
            f"{self.intact_version} (newest readable {self.newest_version}); repair keeps the "
            "later commits that still apply"
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
    #: (chat, first readable version, snapshot version): a journal that starts past version 1
    #: under a snapshot, when `storage_history_seconds` may have pruned its oldest rows (lost
    #: or pruned: cannot tell; the state is whole either way)
    unheaded: tuple[tuple[str, int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.unreadable_tables

    def affected_chats(self) -> tuple[str, ...]:
        chats = {c.chat_id for c in self.chats} | set(self.snapshot_chats)
        return tuple(sorted(chats | {chat for chat, _first, _snap in self.unheaded}))

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
        out.extend(self.unheaded_lines())
        if self.snapshot_chats:
            out.append(
                "snapshots that may have lost rows (rebuilt from the journal by repair): "
                + ", ".join(repr(c) for c in self.snapshot_chats)
            )
        unplaced = self.unplaced_commit_rows()
        if unplaced:
            out.append(
                f"{unplaced} lost commit row(s) are in no chat's gap: "
                + newest_commit_loss(bool(self.unheaded))
            )
        return out

    def unheaded_lines(self) -> list[str]:
        return [
            f"chat {chat!r}: no journal rows before version {first} (lost here, or pruned by "
            f"storage_history_seconds); its state is whole (snapshot at version {snapshot})"
            for chat, first, snapshot in self.unheaded
        ]

    def unplaced_commit_rows(self) -> int:
        """Lost journal rows that no chat's gap accounts for: a chat's newest commit (nothing
        after it shows the gap), or rows before a journal's first readable one (`unheaded`)."""
        lost_commits = sum(f.rows for f in self.damaged if f.table == COMMITS)
        explained = sum(len(c.missing_versions) for c in self.chats)
        return max(0, lost_commits - explained)


def newest_commit_loss(maybe_unheaded: bool) -> str:
    """What a lost journal row that is in no gap was."""
    said = "each was a chat's newest commit (that chat is back at its previous commit)"
    if maybe_unheaded:
        said += ", or one of the rows before a first readable version listed above"
    return said


def ranges(values: Iterable[int]) -> str:
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


def _journal_damage(
    commits: Any, snapshots: Mapping[str, int], *, history_pruned: bool = False
) -> list[ChatDamage]:
    """Each chat's missing versions. With `history_pruned` (``storage_history_seconds`` set),
    of the rows before a journal's first readable one only those past its newest snapshot are
    counted missing (the others may have been pruned: `unheaded_journals`); without, every one
    was lost."""
    versions = _versions(commits)
    out = []
    for chat, present in sorted(versions.items()):
        low, high = min(present), max(present)
        snapshot = snapshots.get(chat, 0)
        # a snapshot newer than the newest readable row (an import writes one at its version):
        # the rows between were lost, the state is whole
        top = max(high, snapshot)
        missing = tuple(v for v in range(low, top + 1) if v not in present)
        if low > 1 and not history_pruned:
            missing = tuple(range(1, low)) + missing
        elif low > 1 and snapshot < low - 1:  # pruning removes only rows a snapshot covers
            missing = tuple(range(snapshot + 1, low)) + missing
        if missing:
            out.append(ChatDamage(chat, missing, snapshot, top))
    return out


def unheaded_journals(commits: Any, snapshots: Mapping[str, int]) -> list[tuple[str, int, int]]:
    """(chat, first readable version, snapshot version) of each journal that starts past
    version 1 under a snapshot: those rows were lost or pruned."""
    out = []
    for chat, present in sorted(_versions(commits).items()):
        low, snapshot = min(present), snapshots.get(chat, 0)
        if 1 < low <= snapshot + 1:
            out.append((chat, low, snapshot))
    return out


def _versions(commits: Any) -> dict[str, set[int]]:
    versions: dict[str, set[int]] = {}
    ids = commits.column("chat_id").to_pylist()
    for chat, version in zip(ids, commits.column("version").to_pylist(), strict=True):
        versions.setdefault(chat, set()).add(int(version))
    return versions


def snapshot_versions(snapshots: Any) -> dict[str, int]:
    newest: dict[str, int] = {}
    ids = snapshots.column("chat_id").to_pylist()
    for chat, version in zip(ids, snapshots.column("version").to_pylist(), strict=True):
        newest[chat] = max(newest.get(chat, 0), int(version))
    return newest


def check_database(
    uri: str,
    table_names: Iterable[str],
    options: Mapping[str, str] | None = None,
    *,
    history_pruned: bool = False,
) -> IntegrityReport:
    """Read every fragment of every table of the database at `uri`; `history_pruned`: whether
    ``storage_history_seconds`` may have pruned the journal's oldest rows (`_journal_damage`)."""
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
    unheaded: list[tuple[str, int, int]] = []
    if COMMITS in datasets and COMMITS in by_table:
        rows = intact_rows(datasets[COMMITS], by_table[COMMITS], ["chat_id", "version"])
        chats = _journal_damage(rows, heads, history_pruned=history_pruned)
        if history_pruned:
            unheaded = unheaded_journals(rows, heads)
    snapshot_side = [t for t in by_table if t != COMMITS]
    snapshot_chats = tuple(sorted(heads)) if snapshot_side else ()
    return IntegrityReport(
        uri,
        names,
        tuple(damaged),
        tuple(chats),
        snapshot_chats,
        tuple(unreadable),
        tuple(unheaded),
    )
