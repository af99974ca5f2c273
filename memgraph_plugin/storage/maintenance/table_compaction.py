"""Compaction of the LanceDB tables: small fragments merged, `chat_id` indices brought up to date,
table versions older than the retention deleted (run by the maintenance process).

A background pass compacts only the tables that need it (`Compactor.needs`): LanceDB's
`optimize()` rewrites every fragment under 1M rows that sits next to another one, so compacting
`snap_nodes` after a 200-row delta snapshot rewrote the chat's whole 100k-row snapshot fragment
(tens of MB a pass, while other chats' writes competed for the disk and the CPU). A table is
compacted once it holds `SMALL_FRAGMENTS` small fragments (reads open each fragment; appends add
one each) or `VERSIONS` table versions were made since this handle last compacted it (its old
versions are deleted only by `optimize()`): the large rewrites come every several snapshots, not
every pass, and fragments and versions stay bounded. Both thresholds grow with the table's size
past `SCALE_BYTES` (up to `MAX_SCALE` times): a rewrite of S bytes then comes once per ~S/8 MB of
small appends, so the bytes rewritten per append stay bounded as a table grows (a 100k-node chat's
384-d vectors are 150 MB). The journal (`commits`), which hosts append to while a pass runs, is
compacted by `journal_compaction.py` instead (only its new fragments; its commits under a lock).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from memgraph_plugin.storage.database.tables import COMMITS
from memgraph_plugin.storage.journal.journal_compaction import JournalGate, compact_journal
from memgraph_plugin.storage.maintenance.maintenance import retry_conflicts

log = logging.getLogger(__name__)

#: a table is compacted once it has this many small fragments (LanceDB's `num_small_fragments`)
SMALL_FRAGMENTS = 8
#: ... or this many versions were committed since this handle compacted it
VERSIONS = 16
#: both thresholds are multiplied by the table's bytes / this (at least 1, at most `MAX_SCALE`)
SCALE_BYTES = 64 << 20
MAX_SCALE = 8


class Compactor:
    """Compacts tables, making each one's `chat_id` index once."""

    def __init__(
        self,
        retention_seconds: float,
        *,
        small_fragments: int = SMALL_FRAGMENTS,
        versions: int = VERSIONS,
        scale_bytes: int = SCALE_BYTES,
        journal_gate: JournalGate | None = None,
    ) -> None:
        self.retention = timedelta(seconds=retention_seconds)
        #: with a gate, the journal is compacted by `journal_compaction.py` (only its new
        #: fragments, committed under the gate), not by `optimize()`
        self.journal_gate = journal_gate
        self.small_fragments = small_fragments
        self.versions = versions
        self.scale_bytes = scale_bytes
        self._indexed: set[str] = set()  # tables known to have their chat_id index
        self._compacted_at: dict[str, int] = {}  # table -> its version after our compaction
        #: names of the tables the last `compact` call compacted (tests, the bench)
        self.last_compacted: list[str] = []

    def compact(self, tables: Iterable[Any], *, force: bool = False) -> list[str]:
        """Compact the tables that need it (every one with `force`); returns their names.

        A commit conflict with another process's compaction or delete is retried with
        backoff (logged at debug level), then left to the next run."""
        done: list[str] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for table in tables:
                self.ensure_chat_index(table)
                if not force and not self.needs(table):
                    continue
                if table.name == COMMITS and self.journal_gate is not None:
                    retry_conflicts(
                        lambda table=table, gate=self.journal_gate: compact_journal(
                            table, gate, self.retention, force=force
                        ),
                        "compacting the journal",
                    )
                else:
                    retry_conflicts(
                        lambda table=table: table.optimize(cleanup_older_than=self.retention),
                        f"compacting table {table.name!r}",
                    )
                self._compacted_at[table.name] = int(table.version)
                done.append(table.name)
        self.last_compacted = done
        return done

    def needs(self, table: Any) -> bool:
        """Whether `table` holds `small_fragments` small fragments, or `versions` versions were
        made since this handle compacted it (a table first seen counts from its version now),
        each threshold times the table's size scale."""
        version = int(table.version)
        since = self._compacted_at.setdefault(table.name, version)
        stats = table.stats()
        scale = min(MAX_SCALE, max(1, int(stats.get("total_bytes", 0)) // self.scale_bytes))
        if version - since >= self.versions * scale:
            return True
        small = int(stats["fragment_stats"].get("num_small_fragments", 0))
        return small >= self.small_fragments * scale

    def ensure_chat_index(self, table: Any) -> None:
        """A BTREE index on `chat_id`: every query filters by chat, and without it each one scans
        the whole table (~25 ms per write at 300k journal rows, ~5 ms with it). Rows added after
        it are searched unindexed until the next `optimize()` folds them in."""
        if table.name in self._indexed:
            return
        try:
            if not any("chat_id" in list(ix.columns) for ix in table.list_indices()):
                if table.count_rows() == 0:
                    return  # nothing to train on yet
                from lancedb.index import BTree  # on first use (connect.warm_up)

                table.create_index("chat_id", config=BTree(), replace=False)
            self._indexed.add(table.name)
        except Exception as exc:  # e.g. another process created it at the same moment
            log.info("chat_id index on %s not created now: %s", table.name, exc)
