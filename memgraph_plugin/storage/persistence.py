"""The one persistence interface (`Persistence`) and the value types that cross it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.engine.keyword.keyword_columns import KeywordColumns


@attrs.frozen
class ChangeRecord:
    """One committed batch as stored in the journal (JSON-ready node dicts in the contract's shape).

    `node_seq` and `seq_counter` are the chat's counters *after* the change.
    Edges are `{"from", "to", "type"[, "seqTo"]}`; removed edges are `(from, type, to)` keys.
    """

    nodes: tuple[Mapping[str, Any], ...] = ()
    nodes_removed: tuple[str, ...] = ()
    edges_added: tuple[Mapping[str, Any], ...] = ()
    edges_removed: tuple[tuple[str, str, str], ...] = ()
    node_seq: int = 0
    seq_counter: int = 0
    applied: int = 0
    kind: str = "write"
    vectors: VectorBlock | None = attrs.field(default=None, eq=False)
    note: str = ""  # provenance said in `history` (a fork: "forked from SRC at seq N")
    #: the full snapshot this change's resulting state is stored in (an import, a fork): the
    #: journal then stores a small row pointing at it, not the change (`snapshot_refs.py`)
    snapshot: SnapshotRef | None = attrs.field(default=None, eq=False)


@attrs.frozen
class SnapshotRef:
    """A journal row's pointer to a full snapshot written at its version: the snapshot's head
    (the `snapshots` row it gets: chain, counts, vector profile) and the change's sizes
    (nodes put, nodes removed, edges added, edges removed) and the ids of the nodes it put or
    removed, for `history`."""

    head: Mapping[str, Any]
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    node_ids: tuple[str, ...] = ()


@attrs.frozen
class CommitRecord:
    """What the journal says about one commit of a chat (a row of `history`)."""

    chat_id: str
    version: int
    seq: int
    applied: int
    kind: str
    created_at: float
    nodes_changed: int = 0
    edges_changed: int = 0
    node_ids: tuple[str, ...] = ()  # nodes put or removed
    edges_added: int = 0
    edges_removed: int = 0
    note: str = ""  # the change's provenance note ("" for most commits)


@attrs.frozen(eq=False)
class ChatState:
    """A chat as loaded: its graph at `version`, as columns and/or as the contract's JSON dict.

    `data` has `nodes` (id -> node dict), `edges` (list), `nodeSeq`, `seqCounter`; a state loaded
    from storage holds the node and edge state tables (`nodes`, `edges`, see `columns.py`) and
    builds `data` from them on first use. `version` is 0 for a chat that has never been written.
    `changed_since_checkpoint` holds the ids of nodes put or removed by journal rows after
    `checkpoint_version` (their vectors are not in the snapshot's vector rows, or only in an
    older form); `chain` is that snapshot's chain of row sets.
    """

    chat_id: str
    version: int
    _data: dict[str, Any] | None = attrs.field(default=None, repr=False)
    checkpoint_version: int = 0
    seq: int = 0
    changed_since_checkpoint: frozenset[str] = frozenset()
    nodes: Any = attrs.field(default=None, repr=False)  # pyarrow node state table
    edges: Any = attrs.field(default=None, repr=False)  # pyarrow edge state table
    node_seq: int = 0
    seq_counter: int = 0
    chain: tuple[int, ...] = ()
    keywords: KeywordColumns | None = attrs.field(default=None, repr=False)

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            from memgraph_plugin.storage.format.graph_columns import edge_dicts, node_dicts

            data = {
                "nodes": node_dicts(self.nodes),
                "edges": edge_dicts(self.edges),
                "nodeSeq": self.node_seq,
                "seqCounter": self.seq_counter,
            }
            object.__setattr__(self, "_data", data)
            return data
        return self._data

    def tables(self) -> tuple[Any, Any]:
        """The node and edge state tables (built from `data` when the state has none)."""
        if self.nodes is None or self.edges is None:
            from memgraph_plugin.storage.format.graph_columns import state_tables

            return state_tables(self._data or {})
        return self.nodes, self.edges

    @property
    def counters(self) -> tuple[int, int]:
        """`(nodeSeq, seqCounter)`."""
        if self._data is not None:
            return int(self._data.get("nodeSeq", 0) or 0), int(self._data.get("seqCounter", 0) or 0)
        return self.node_seq, self.seq_counter


@runtime_checkable
class Persistence(Protocol):
    """Where chats live. Every method is safe to call from several processes at once.

    `commit` is atomic (the whole change or none of it survives a crash) and returns only once the
    change is durable; it raises `ConflictError` when `base_version` is not the chat's latest.
    `commit_many` is the same for several consecutive versions at once (all or none).
    """

    async def load(self, chat_id: str) -> ChatState: ...

    async def load_vectors(
        self, chat_id: str, state: ChatState, *, profile: str | None = None
    ) -> VectorBlock | None: ...

    async def latest_version(self, chat_id: str) -> int: ...

    async def has_changed(self, chat_id: str, since_version: int) -> bool: ...

    async def commit(
        self, chat_id: str, change: ChangeRecord, *, base_version: int
    ) -> CommitRecord: ...

    async def commit_many(
        self, chat_id: str, changes: list[ChangeRecord], *, base_version: int
    ) -> list[CommitRecord]: ...

    async def history(
        self, chat_id: str, *, limit: int | None = None
    ) -> tuple[CommitRecord, ...]: ...

    async def state_at(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> ChatState: ...

    async def checkpoint(
        self, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None: ...

    async def chats(self) -> tuple[str, ...]: ...

    async def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
