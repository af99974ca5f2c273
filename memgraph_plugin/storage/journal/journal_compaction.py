"""Compaction of the journal (`commits`): only its new small fragments merged, and a commit that
cannot lose the race against the hosts appending to it.

Why not LanceDB's `optimize()`, as for the other tables: it merges every fragment under 1M rows,
so each compaction of the journal rewrote the whole journal (46 ms, then 360 ms after 1,500
commits in bench/scale.py section 2: the cost grew with the chat's history). And its commit
raced the writers: a host appending to the journal continuously (an import, an agent's burst of
writes) committed again before the compaction could rebase onto the newest version, pass after
pass, until LanceDB gave up after 30 s ("Too many concurrent writers"); fragments then piled up
and every append got slower.

Here (Lance's own compaction API, `pylance`): fragments of `FRAGMENT_ROWS` rows or more are left
alone, so a compaction rewrites only the rows appended since the last one; the rewrite runs with
no lock, and only its commit (5-10 ms) and the index update (10-20 ms, once per `INDEX_ROWS`
appends) hold `JournalGate` exclusively, which every append of this host, and of any other host
on the same folder, holds shared. An append waits at most for one of those. On an object store
there is no gate (no shared file to lock): the commit races as LanceDB's did, and a lost race is
retried by the next pass.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from datetime import timedelta
from typing import IO, Any

from memgraph_plugin.storage.database.connect import local_folder

#: fragments with at least this many rows are never rewritten again
FRAGMENT_ROWS = 1024
#: the `chat_id` index is brought up to date once this many rows are outside it (reads scan them)
INDEX_ROWS = 4096
#: the lock file's name, in the database folder
GATE_NAME = ".journal-gate"


class JournalGate:
    """A lock file in a local database's folder: appends to the journal hold it shared, the
    journal compaction's commits exclusively. On an object store every hold is a no-op."""

    def __init__(self, uri: str) -> None:
        """One gate per user (a journal, a compactor): `flock` locks belong to an open file, so
        two gates of one folder exclude each other even in one process."""
        self.path = local_folder(uri)
        self._file: IO[bytes] | None = None

    def _fd(self) -> int | None:
        if self.path is None:
            return None
        if self._file is None:
            self.path.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path / GATE_NAME, "ab")  # noqa: SIM115 (held open)
        return self._file.fileno()

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """Held around one append (the handle's own lock keeps its appends one at a time, so
        one open file per handle is enough)."""
        with self._held(fcntl.LOCK_SH):
            yield

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held around a compaction's commit: no append of any host on this folder meanwhile."""
        with self._held(fcntl.LOCK_EX):
            yield

    @contextlib.contextmanager
    def _held(self, how: int) -> Iterator[None]:
        fd = self._fd()
        if fd is None:
            yield
            return
        fcntl.flock(fd, how)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (a later hold opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def compact_journal(
    table: Any,
    gate: JournalGate,
    retention: timedelta,
    *,
    small_fragments: int = 2,
    force: bool = False,
) -> bool:
    """Merge the journal's small fragments once `small_fragments` piled up (each append adds
    one; `Compactor.needs` decides when a pass compacts the journal at all), bring its
    `chat_id` index up to date once `INDEX_ROWS` rows are outside it, delete versions older
    than `retention`; with `force`, merge and index whatever there is. True when anything was
    merged or indexed, or with `force`. The rewrite runs unlocked; each commit holds `gate`."""
    from lance.optimize import Compaction, CompactionOptions  # only where compaction runs

    dataset = table.to_lance()
    small = sum(f.metadata.physical_rows < FRAGMENT_ROWS for f in dataset.get_fragments())
    merged = False
    if small >= (2 if force else small_fragments):
        options = CompactionOptions(target_rows_per_fragment=FRAGMENT_ROWS)
        plan = Compaction.plan(dataset, options)
        if plan.num_tasks() > 0:
            rewrites = [task.execute(dataset) for task in plan.tasks]
            with gate.exclusive():
                Compaction.commit(dataset, rewrites)
            merged = True
    indexed = False  # `dataset` is at the compaction's version once it committed
    if _unindexed_rows(dataset) >= (1 if force else INDEX_ROWS):
        with gate.exclusive():
            dataset.optimize.optimize_indices()
        indexed = True
    dataset.cleanup_old_versions(older_than=retention)
    return merged or indexed or force


def _unindexed_rows(dataset: Any) -> int:
    """Rows of the journal outside its `chat_id` index (appended since it was last updated)."""
    indices = dataset.describe_indices()
    if not indices:
        return 0
    return int(dataset.count_rows()) - min(int(ix.num_rows_indexed) for ix in indices)
