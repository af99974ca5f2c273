"""Frozen results of the write API and the batch pipeline (and `CommitInfo` for `memgraph_commit`).

Every class is a frozen `attrs` value; `memgraph_plugin.engine.model.converter` turns each into
JSON-ready data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = [
    "BatchResult",
    "CommitInfo",
    "CompactResult",
    "CreateResult",
    "DeleteLinksResult",
    "DeleteResult",
    "EditResult",
    "Rejection",
    "RejectionError",
    "UpsertLinksResult",
]


def _frozen_mapping(value: Mapping[str, str] | None) -> Mapping[str, str]:
    from types import MappingProxyType

    return MappingProxyType(dict(value or {}))


@attrs.frozen
class CreateResult:
    """`create_node`: the new (or merged-into latest-only) node's id, and the ref echoed back."""

    id: str
    ref: str | None = None


@attrs.frozen
class EditResult:
    """`edit_node`: `ok` when the node was found and patched; `changed` when something differed."""

    ok: bool
    changed: bool = False
    rejected: tuple[Rejection, ...] = ()  # why the op was refused, when it was


@attrs.frozen
class DeleteResult:
    """`delete_node`: `ok` when an active node was archived."""

    ok: bool
    rejected: tuple[Rejection, ...] = ()  # why the op was refused, when it was


@attrs.frozen
class UpsertLinksResult:
    """`upsert_links`: edges actually added (a duplicate adds 0, a new bidirectional link 2)."""

    applied: int
    rejected: tuple[Rejection, ...] = ()  # why the op was refused, when it was


@attrs.frozen
class DeleteLinksResult:
    """`delete_links`: edges that disappeared from the store."""

    removed: int
    rejected: tuple[Rejection, ...] = ()  # why the op was refused, when it was


@attrs.frozen
class CompactResult:
    """`compact_nodes`: the id of the rollup node made over the children."""

    rollup_node_id: str


@attrs.frozen
class RejectionError:
    """Why an op was rejected: a code (``VALIDATION_SKIP``, ``BAD_REF``, ...) and what was wrong."""

    code: str
    message: str


@attrs.frozen
class Rejection:
    """One rejected op (as the caller gave it) and its error. Unpacks as ``op, error``."""

    op: Any
    error: RejectionError

    def __iter__(self):  # ``for op, error in result.rejected``
        return iter((self.op, self.error))


@attrs.frozen
class BatchResult:
    """What a batch did.

    `applied`: the applied ops, as given, in batch order; `rejected`: `Rejection` entries.
    `node_ids`: per applied op, the node it created / merged into / edited / archived (links:
    the source). `refs`: batch ref -> node id. `changed`: whether the store changed at all.
    `added` / `removed`: edges added / removed; `version`: the chat's version afterwards (with
    storage, the journal version `history` lists and `rollback --to` takes; in memory, the store
    version); `seq`: the chat's message seq counter afterwards (what history records).
    """

    applied: tuple[Any, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    node_ids: tuple[str | None, ...] = ()
    refs: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_mapping)
    changed: bool = False
    added: int = 0
    removed: int = 0
    version: int = 0
    seq: int = 0


@attrs.frozen
class CommitInfo:
    """What `memgraph_commit(chat_id, commit)` receives about one persisted write.

    `version` increases with every commit of the chat; `applied` counts the applied ops;
    `kind` is ``"batch"``, the primitive's name, ``"rollback"`` or ``"import"``; `node_ids` are
    the nodes the write touched.
    """

    version: int
    applied: int
    chat_id: str
    kind: str = "batch"
    seq: int = 0
    node_ids: tuple[str, ...] = ()
    edges_added: int = 0
    edges_removed: int = 0
    persisted: bool = False
