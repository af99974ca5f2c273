"""A journal version as read: its winning row and that writer's other rows of the version (the
parts of a large change, `journal_parts.py`), decoded on demand; a row pointing at a snapshot
(`snapshot_refs.py`) says so in `snapshot`."""

from __future__ import annotations

from typing import Any

import numpy as np

from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.journal.change_codec import change_from_payload
from memgraph_plugin.storage.journal.journal_parts import merge_changes, row_parts
from memgraph_plugin.storage.journal.snapshot_refs import parsed_ref
from memgraph_plugin.storage.persistence import ChangeRecord, VectorBlock


def _vectors_from_columns(profile: Any, ids: Any, blob: Any) -> VectorBlock | None:
    if not profile or not ids or blob is None:
        return None
    matrix = np.frombuffer(blob, dtype=np.float32)
    return VectorBlock(profile=profile, ids=tuple(ids), matrix=matrix.reshape(len(ids), -1))


class JournalEntry:
    """A journal version after de-duplication (its rows merged: `journal_parts.py`)."""

    __slots__ = (
        *("version", "seq", "applied", "kind", "created_at", "payload", "vectors", "_more"),
        "snapshot",
    )

    def __init__(self, row: dict[str, Any]) -> None:
        self.version = int(row["version"])
        self.seq = int(row["seq"])
        self.applied = int(row["applied"])
        self.kind = str(row["kind"])
        self.created_at = float(row["created_at"])
        self.payload = row.get("payload")
        self._more = row.get("_parts") or []  # the version's other rows (a large change)
        #: the snapshot this row points at instead of holding its change (`snapshot_refs.py`)
        self.snapshot = parsed_ref(self.payload)
        self.vectors = _vectors_from_columns(
            row.get("vec_profile"), row.get("vec_ids"), row.get("vectors")
        )
        if self._more:
            self.vectors = merge_changes(
                [ChangeRecord(vectors=self.vectors)]
                + [
                    ChangeRecord(
                        vectors=_vectors_from_columns(
                            r.get("vec_profile"), r.get("vec_ids"), r.get("vectors")
                        )
                    )
                    for r in self._more
                ]
            ).vectors

    def change(self) -> ChangeRecord:
        """The version's change. A row pointing at a snapshot has none to replay: readers
        start from its snapshot (`snapshot_refs.rebased`), so asking is a bug."""
        if self.snapshot is not None:
            raise StorageError(
                f"journal version {self.version} points at a snapshot: read it from there"
            )
        first = change_from_payload(self.payload, applied=self.applied, kind=self.kind)
        if not self._more:
            return first
        more = [
            change_from_payload(r.get("payload"), applied=self.applied, kind=self.kind)
            for r in self._more
        ]
        return merge_changes([first, *more])


def _row_change(row: dict[str, Any]) -> ChangeRecord:
    """The change of a version's winning row and its other parts (vectors left out)."""
    return merge_changes([change_from_payload(r["payload"]) for r in row_parts(row)])
