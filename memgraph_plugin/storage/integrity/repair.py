"""``memgraph-host repair``: bring every chat back to its newest intact state after
``memgraph-host check`` (`storage/integrity/integrity.py`) found damaged files, and say exactly
what was lost.

1. Each table drops its damaged fragments in one new table version (a Lance ``Delete`` of those
   fragments): every other row stays, and the table reads again.
2. The journal: a chat whose commits have a gap its newest snapshot does not cover gets an
   empty commit (kind ``repair``) at each lost version, and keeps every later commit whose
   change still applies to what the kept commits give; from the first one that needs a node or
   edge that is not there on, the commits are removed (`journal_gaps.py`). Each is listed.
   A chat's lost newest commit leaves no gap: the chat is at the commit before it.
3. The snapshots: when a snapshot table lost rows, the snapshot heads of the chats whose journal
   is whole from version 1 are removed (such a chat loads by replaying its journal, and the next
   maintenance pass writes a new snapshot): nothing of theirs is lost. A chat whose older journal
   was pruned keeps its snapshot; the report says it could not be rebuilt.
4. An import's (or fork's) graph lives only in the snapshot rows its journal row points at
   (`snapshot_refs.py`): when those rows lost some, the chat goes back to the version before
   that import (the import and the commits after it are removed, and listed).

Run it with no host writing to the database (the CLI's own storage handle).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import lance
import lancedb

from memgraph_plugin.storage.database.escape import where_eq
from memgraph_plugin.storage.database.tables import (
    COMMITS,
    SNAP_EDGES,
    SNAP_NODES,
    SNAPSHOTS,
)
from memgraph_plugin.storage.database.tables import table_names as tables_of
from memgraph_plugin.storage.integrity.integrity import (
    IntegrityReport,
    check_database,
    newest_commit_loss,
    open_dataset,
    table_uri,
)
from memgraph_plugin.storage.integrity.journal_gaps import close_gap
from memgraph_plugin.storage.journal.snapshot_refs import REF_PREFIX, parsed_ref
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.settings import StorageSettings


@attrs.frozen
class RepairReport:
    """What `repair_database` did and what was lost."""

    before: IntegrityReport
    lines: tuple[str, ...]
    after: IntegrityReport


def _drop_fragments(uri: str, name: str, ids: list[int], options: Mapping[str, str]) -> int:
    dataset = open_dataset(uri, name, options)
    operation = lance.LanceOperation.Delete([], ids, "false")
    lance.LanceDataset.commit(
        table_uri(uri, name),
        operation,
        read_version=dataset.version,
        storage_options=dict(options) or None,
    )
    return len(ids)


def _journal_versions(db: Any) -> dict[str, set[int]]:
    if COMMITS not in tables_of(db):
        return {}
    rows = db.open_table(COMMITS).to_lance().to_table(columns=["chat_id", "version"])
    versions: dict[str, set[int]] = {}
    for chat, version in zip(
        rows.column("chat_id").to_pylist(), rows.column("version").to_pylist(), strict=True
    ):
        versions.setdefault(chat, set()).add(int(version))
    return versions


def repair_database(
    uri: str,
    table_names: Iterable[str],
    options: Mapping[str, str] | None = None,
    *,
    history_pruned: bool = False,
) -> RepairReport:
    """Repair the database at `uri` (see the module docstring); the report lists each loss.
    `history_pruned`: as `check_database` takes it."""
    options = dict(options or {})
    names = list(table_names)
    before = check_database(uri, names, options, history_pruned=history_pruned)
    lines: list[str] = []
    if before.ok:
        return RepairReport(before, ("nothing to repair: every fragment is readable",), before)
    for table, why in before.unreadable_tables:
        lines.append(f"table {table!r} cannot be opened ({why}): not repaired")
    by_table: dict[str, list[int]] = {}
    rows_lost: dict[str, int] = {}
    for frag in before.damaged:
        by_table.setdefault(frag.table, []).append(frag.fragment_id)
        rows_lost[frag.table] = rows_lost.get(frag.table, 0) + frag.rows
    for table, ids in sorted(by_table.items()):
        _drop_fragments(uri, table, ids, options)
        lines.append(
            f"table {table!r}: {len(ids)} damaged fragment(s) dropped, {rows_lost[table]} row(s) "
            "lost"
        )
    db = lancedb.connect(uri, storage_options=options or None)
    gaps = [chat for chat in before.chats if not chat.state_whole]
    lines.extend(chat.describe() for chat in before.chats if chat.state_whole)
    lines.extend(before.unheaded_lines())
    if gaps:
        storage = LanceStorage(StorageSettings(uri=uri, storage_options=options))
        try:
            lines.extend(close_gap(storage, db, chat).describe() for chat in gaps)
        finally:
            storage.close()
    if {SNAP_NODES, SNAP_EDGES} & set(by_table):
        lines.extend(_cut_damaged_imports(db))
    if before.snapshot_chats and SNAPSHOTS in tables_of(db):
        journal = _journal_versions(db)
        heads = db.open_table(SNAPSHOTS)
        for chat in before.snapshot_chats:
            versions = journal.get(chat, set())
            whole = bool(versions) and versions == set(range(1, max(versions) + 1))
            if whole:
                heads.delete(where_eq(chat_id=chat))
                lines.append(
                    f"chat {chat!r}: snapshot removed; it loads from its whole journal (version "
                    f"{max(versions)}), nothing lost"
                )
            else:
                lines.append(
                    f"chat {chat!r}: its journal is not whole from version 1, so its snapshot is "
                    "kept; rows of it may be lost (check the chat's export)"
                )
    unplaced = before.unplaced_commit_rows()
    if unplaced:
        lines.append(
            f"{unplaced} lost commit row(s) are in no chat's gap: "
            + newest_commit_loss(bool(before.unheaded))
        )
    after = check_database(uri, names, options, history_pruned=history_pruned)
    return RepairReport(before, tuple(lines), after)


def _cut_damaged_imports(db: Any) -> list[str]:
    """Step 4: each chat whose journal row points at a full row set that lost node or edge
    rows (fewer than the row says it holds) goes back to the version before the oldest such
    row."""
    commits = db.open_table(COMMITS)
    pointing = (
        commits.search()
        .where(f"payload LIKE '{REF_PREFIX}%'")
        .select(["chat_id", "version", "payload"])
        .limit(None)
        .to_arrow()
        .to_pylist()
    )
    cut: dict[str, int] = {}
    for row in sorted(pointing, key=lambda r: int(r["version"])):
        chat, version, ref = row["chat_id"], int(row["version"]), parsed_ref(row["payload"])
        if ref is None or chat in cut or not ref.head.get("chain"):
            continue
        snap = int(ref.head["chain"][0])
        where = f"{where_eq(chat_id=chat)} AND snap = {snap}"
        for table, count in ((SNAP_NODES, "node_count"), (SNAP_EDGES, "edge_count")):
            if db.open_table(table).count_rows(where) < int(ref.head.get(count) or 0):
                cut[chat] = version
                break
    lines = []
    for chat, version in sorted(cut.items()):
        later = f"{where_eq(chat_id=chat)} AND version >= {version}"
        versions = commits.search().where(later).select(["version"]).limit(None).to_arrow()
        removed = len(set(versions["version"].to_pylist()))
        commits.delete(later)
        if SNAPSHOTS in tables_of(db):  # snapshots of those versions: of a state now gone
            db.open_table(SNAPSHOTS).delete(later)
        lines.append(
            f"chat {chat!r}: the snapshot rows of its import at version {version} were damaged: "
            f"back to version {version - 1}; lost {removed} commit(s) from version {version} on"
        )
    return lines
