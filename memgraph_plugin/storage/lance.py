"""`LanceStorage`: the LanceDB implementation of `Persistence`.

Layout (one database per host, every chat in the same tables):

- `commits`: the append-only journal, one row per committed batch (one LanceDB append, so a batch
  is all-or-nothing). A row holds the change as JSON plus the changed nodes' vectors.
- `snapshots`, `snap_nodes`, `snap_edges`: columnar, incremental snapshots (`snapshots.py`).
- `nodes` (`nodes_d<dim>` for other dimensions): the snapshots' node vectors (a fixed-size
  float32 `vector` column), along the same chains.

Loading = the newest snapshot's columns + the journal rows after it, merged as columns
(`columns.py`). Snapshots, compaction and cleanup run in `maintenance.py`, never in a commit.
Two writers of one chat are detected optimistically: a commit appends version `base + 1`; the
row committed first (the smallest stable row id; scan order is not commit order once compaction
has run) wins, a loser deletes its row and raises `ConflictError`. The append's own table
version says whether anything but this handle's appends to other chats landed since the chat was
last seen at `base`; only then is the version read back to find the winner (`_uncontested`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import BTree

from host.chat_ids import chat_id_problem
from memgraph_plugin.engine.gc_pause import gc_paused
from memgraph_plugin.storage.codec import (
    change_from_payload,
    change_payload,
    diff_states,
    empty_state,
)
from memgraph_plugin.storage.columns import DeltaBuilder, empty_edges, empty_nodes, merge
from memgraph_plugin.storage.connect import connect_database
from memgraph_plugin.storage.errors import ConflictError, StorageError
from memgraph_plugin.storage.escape import sql_literal, where_eq
from memgraph_plugin.storage.maintenance import Maintenance, retry_conflicts
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState, CommitRecord, VectorBlock
from memgraph_plugin.storage.settings import StorageSettings
from memgraph_plugin.storage.snapshots import SnapshotTables, new_rowset_id, vector_rows
from memgraph_plugin.storage.tables import (
    COMMITS,
    COMMITS_SCHEMA,
    SNAP_EDGES,
    SNAP_NODES,
    SNAPSHOTS,
    nodes_schema,
    nodes_table_name,
    open_or_create,
    vector_table_dims,
)

log = logging.getLogger(__name__)

Embedder = Callable[[list[dict[str, Any]]], VectorBlock | None]
"""Embeds node dicts (for rollback/import commits made by the storage layer itself)."""


def _check_chat_id(chat_id: str) -> str:
    problem = chat_id_problem(chat_id)  # the one chat id rule (host.chat_ids)
    if problem is not None:
        raise StorageError(problem, code="BAD_ARGS")
    return chat_id


def _vectors_to_columns(
    block: VectorBlock | None,
) -> tuple[str | None, list[str] | None, bytes | None]:
    if block is None or not block.ids:
        return None, None, None
    matrix = np.ascontiguousarray(block.matrix, dtype=np.float32)
    if matrix.shape[0] != len(block.ids):
        raise StorageError("vector block: one row per id expected", code="BAD_ARGS")
    return block.profile, list(block.ids), matrix.tobytes()


def _vectors_from_columns(profile: Any, ids: Any, blob: Any) -> VectorBlock | None:
    if not profile or not ids or blob is None:
        return None
    matrix = np.frombuffer(blob, dtype=np.float32)
    return VectorBlock(profile=profile, ids=tuple(ids), matrix=matrix.reshape(len(ids), -1))


#: Own appends remembered for `_uncontested` (a longer gap is checked by reading back).
_OWN_COMMITS_KEPT = 4096

_ENTRY_COLUMNS = [
    *("seq", "applied", "kind", "created_at", "payload"),
    *("vec_profile", "vec_ids", "vectors"),
]


def _record(chat_id: str, version: int, row: dict[str, Any], change: ChangeRecord) -> CommitRecord:
    """A history row: journal columns `seq, applied, kind, created_at` plus the change's size."""
    return CommitRecord(
        chat_id=chat_id,
        version=version,
        seq=int(row["seq"]),
        applied=int(row["applied"]),
        kind=str(row["kind"]),
        created_at=float(row["created_at"]),
        nodes_changed=len(change.nodes) + len(change.nodes_removed),
        edges_changed=len(change.edges_added) + len(change.edges_removed),
        node_ids=(*(str(n["id"]) for n in change.nodes), *change.nodes_removed),
        edges_added=len(change.edges_added),
        edges_removed=len(change.edges_removed),
    )


class _Entry:
    """A journal row after de-duplication."""

    __slots__ = ("version", "seq", "applied", "kind", "created_at", "payload", "vectors")

    def __init__(self, row: dict[str, Any]) -> None:
        self.version = int(row["version"])
        self.seq = int(row["seq"])
        self.applied = int(row["applied"])
        self.kind = str(row["kind"])
        self.created_at = float(row["created_at"])
        self.payload = row.get("payload")
        self.vectors = _vectors_from_columns(
            row.get("vec_profile"), row.get("vec_ids"), row.get("vectors")
        )

    def change(self) -> ChangeRecord:
        return change_from_payload(self.payload, applied=self.applied, kind=self.kind)


class LanceStorage:
    """Chats in one LanceDB database. Sync methods do the work; async twins run them off-loop."""

    def __init__(
        self,
        settings: StorageSettings | str,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        if isinstance(settings, str):
            settings = StorageSettings(uri=settings)
        self.settings = settings
        self.embedder = embedder
        self._db = connect_database(settings)
        self._commits = open_or_create(self._db, COMMITS, COMMITS_SCHEMA)
        self._nodes: dict[int, Any] = {}
        self._snaps = SnapshotTables(self._db, self._nodes_table)
        self._lock = threading.RLock()
        self._commits_since_optimize = 0
        self.maintenance = Maintenance(self)
        self._seen: dict[str, tuple[int, int]] = {}  # chat -> (commits table version, version)
        self._own: dict[int, str] = {}  # commits table version -> chat, of this handle's appends
        self._last_checkpoint: dict[str, int] = {}  # chat -> newest checkpoint version known
        self._chat_indexed: set[str] = set()  # tables known to have their chat_id index
        self._chains: dict[tuple[str, int], tuple[int, ...]] = {}  # (chat, snapshot) -> chain

    # ------------------------------------------------------------------ reads

    def _rows(self, table: Any, where: str, columns: list[str]) -> list[dict[str, Any]]:
        return table.search().where(where).select(columns).limit(None).to_arrow().to_pylist()

    def _first_per_version(self, where: str, columns: list[str]) -> dict[int, dict[str, Any]]:
        """Journal rows matching `where`, the first committed row of each version only.

        Stable row ids grow in commit order and survive compaction: the smallest wins.
        """
        rows = (
            self._commits.search()
            .where(where)
            .select(["version", *columns])
            .with_row_id(True)
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        first: dict[int, dict[str, Any]] = {}
        for row in rows:
            v = int(row["version"])
            if v not in first or row["_rowid"] < first[v]["_rowid"]:
                first[v] = row
        return first

    def _journal(self, chat_id: str, after: int, upto: int | None = None) -> list[_Entry]:
        """Journal rows of a chat with `after < version <= upto`, first row per version wins."""
        where = f"{where_eq(chat_id=chat_id)} AND version > {int(after)}"
        if upto is not None:
            where += f" AND version <= {int(upto)}"
        first = self._first_per_version(where, _ENTRY_COLUMNS)
        entries = [_Entry(first[v]) for v in sorted(first)]
        expected = after + 1
        for entry in entries:
            if entry.version != expected:
                raise StorageError(
                    f"journal of chat {chat_id!r} has a gap: version {expected} is missing "
                    f"(found {entry.version}); history before it was pruned?"
                )
            expected += 1
        return entries

    def latest_version_sync(self, chat_id: str) -> int:
        _check_chat_id(chat_id)
        table_version = self._commits.version
        rows = self._rows(self._commits, where_eq(chat_id=chat_id), ["version"])
        latest = max((int(r["version"]) for r in rows), default=0)
        self._seen[chat_id] = (table_version, latest)
        return latest

    def has_changed_sync(self, chat_id: str, since_version: int) -> bool:
        """Cheap freshness check: compares the journal table's version first (no scan); table
        versions that are this handle's own appends to other chats do not count."""
        _check_chat_id(chat_id)
        table_version = self._commits.version
        seen = self._seen.get(chat_id)
        if (
            seen is not None
            and seen[1] == since_version
            and self._only_own_appends(chat_id, seen[0], table_version + 1)
        ):
            return False
        rows = self._rows(
            self._commits,
            f"{where_eq(chat_id=chat_id)} AND version > {int(since_version)}",
            ["version"],
        )
        if rows:
            return True
        self._seen[chat_id] = (table_version, since_version)
        return False

    def load_sync(self, chat_id: str, *, upto: int | None = None) -> ChatState:
        """The chat at its latest version (or `upto`): the newest snapshot's columns with the
        journal rows after it merged in."""
        _check_chat_id(chat_id)
        table_version = self._commits.version
        for _attempt in range(5):
            head = self._snaps.head(chat_id, upto)
            if head is None:
                break
            nodes, edges = self._snaps.read(chat_id, head)
            if self._snaps.still_there(chat_id, head):
                break  # else pruned by another process while read: read the newer one
        base_version = int(head["version"]) if head is not None else 0
        entries = self._journal(chat_id, base_version, upto)
        with gc_paused():  # decoding builds a few acyclic objects per changed node and edge
            if head is not None:
                node_seq, seq_counter = int(head["node_seq"]), int(head["seq_counter"])
                seq = int(head["seq"])
            else:
                nodes, edges, node_seq, seq_counter, seq = empty_nodes(), empty_edges(), 0, 0, 0
            delta = DeltaBuilder()
            for entry in entries:
                delta.apply(entry.change())
                seq = entry.seq
            if entries:
                dn, de = delta.tables()
                nodes, edges = merge(nodes, dn), merge(edges, de)
                node_seq, seq_counter = int(delta.node_seq or 0), int(delta.seq_counter or 0)
        version = entries[-1].version if entries else base_version
        if upto is not None and version < upto:
            self._missing_version(chat_id, upto)
        if upto is None:
            self._seen[chat_id] = (table_version, version)
            self.note_checkpoint(chat_id, base_version)
        return ChatState(
            chat_id=chat_id,
            version=version,
            checkpoint_version=base_version,
            seq=seq,
            changed_since_checkpoint=frozenset(delta.nodes),
            nodes=nodes,
            edges=edges,
            node_seq=node_seq,
            seq_counter=seq_counter,
            chain=tuple(int(v) for v in head["chain"]) if head is not None else (),
        )

    def _missing_version(self, chat_id: str, version: int) -> None:
        """Raise the clear error for a version that cannot be rebuilt: never written, or pruned."""
        kept = [int(r["version"]) for r in self._rows(
            self._commits, where_eq(chat_id=chat_id), ["version"]
        )]
        latest = max(kept, default=0)
        if version > latest:
            raise StorageError(f"chat {chat_id!r} has no version {version} (latest is {latest})")
        raise StorageError(
            f"chat {chat_id!r}: version {version} was pruned (history is kept from version "
            f"{min(kept)}; storage_history_seconds)"
        )

    def note_checkpoint(self, chat_id: str, version: int) -> None:
        """Remember the newest checkpoint of a chat seen on disk or written by this process
        (0 too: "none" is known, so `_after_commit` does not look for one again)."""
        self._last_checkpoint[chat_id] = max(version, self._last_checkpoint.get(chat_id, 0))

    def snapshot_chain(self, chat_id: str, version: int) -> tuple[int, ...]:
        """The row set ids of the chat's snapshot at `version` (`(-1,)`: no such snapshot)."""
        key = (chat_id, int(version))
        chain = self._chains.get(key)
        if chain is None:
            head = self._snaps.head(chat_id, upto=version)
            if head is None or int(head["version"]) != version:
                return (-1,)
            chain = self._chains[key] = tuple(int(v) for v in head["chain"])
        return chain

    def checkpointed_version(self, chat_id: str) -> int:
        """The newest checkpoint of `chat_id` this handle wrote or loaded (0: none known)."""
        return self._last_checkpoint.get(chat_id, 0)

    def checkpoint_known(self, chat_id: str) -> bool:
        """Whether this handle knows the chat's newest checkpoint (or that it has none)."""
        return chat_id in self._last_checkpoint

    def load_vectors_sync(
        self, chat_id: str, state: ChatState, *, profile: str | None = None
    ) -> VectorBlock | None:
        """Vectors of the nodes of `state` made by `profile`: checkpoint rows, then journal rows.

        With `profile=None`, the profile of the newest stored vectors. A node changed after its
        last vector of that profile (by a writer with another or no profile) has none: vectors
        of two profiles are never mixed, and a vector never outlives its node's text. Nodes
        without one are left out (the caller embeds them).
        """
        _check_chat_id(chat_id)
        head = self._snaps.head(chat_id, state.version)
        ckpt_version = int(head["version"]) if head is not None else 0
        ckpt_profile = head.get("vec_profile") if head is not None and head.get("vec_dim") else None
        entries = self._journal(chat_id, ckpt_version, state.version)
        if profile is None:
            newest = [e.vectors.profile for e in entries if e.vectors is not None]
            profile = newest[-1] if newest else ckpt_profile
            if profile is None:
                return None
        stored = None
        if head is not None and ckpt_profile == profile:
            stored = self._snaps.read_vectors(chat_id, head)
        later: dict[str, tuple[np.ndarray, int] | None] = {}  # journal: id -> (matrix, row)
        for entry in entries:
            block = entry.vectors
            rows: dict[str, int] = {}
            if block is not None and block.profile == profile:
                if stored is not None and stored.dim != block.dim:
                    return None  # one profile, two dimensions: nothing to trust
                rows = {nid: r for r, nid in enumerate(block.ids)}
            for n in entry.change().nodes:  # changed without a vector of this profile: none
                nid = str(n["id"])
                r = rows.get(nid)
                later[nid] = None if r is None or block is None else (block.matrix, r)
        live_ids = _node_id_array(state)
        ids: list[str] = []
        parts: list[np.ndarray] = []
        if stored is not None:  # vectorised: no Python work per stored row
            sids = pa.array(stored.ids, pa.string())
            keep = pc.and_(
                pc.is_in(sids, value_set=live_ids),
                pc.invert(pc.is_in(sids, value_set=pa.array(list(later), pa.string()))),
            ).to_numpy(zero_copy_only=False)
            keep = np.asarray(keep, dtype=bool)
            ids.extend(pc.filter(sids, pa.array(keep)).to_pylist())
            parts.append(stored.matrix[keep] if not keep.all() else stored.matrix)
        fresh = [nid for nid, v in later.items() if v is not None]
        if fresh:
            alive = pc.is_in(pa.array(fresh, pa.string()), value_set=live_ids).to_pylist()
            fresh = [nid for nid, ok in zip(fresh, alive, strict=True) if ok]
            if fresh:
                picked = [later[nid] for nid in fresh]
                parts.append(np.stack([p[0][p[1]] for p in picked if p is not None]))
                ids.extend(fresh)
        if not ids:
            return None
        matrix = parts[0] if len(parts) == 1 else np.vstack(parts)
        return VectorBlock(profile=profile, ids=tuple(ids), matrix=matrix)

    def history_sync(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        _check_chat_id(chat_id)
        first = self._first_per_version(
            where_eq(chat_id=chat_id), ["seq", "applied", "kind", "created_at", "payload"]
        )
        out = [
            _record(chat_id, v, first[v], change_from_payload(first[v]["payload"]))
            for v in sorted(first)
        ]
        if limit is not None:
            out = out[-limit:] if limit > 0 else []
        return tuple(out)

    def version_for_seq_sync(self, chat_id: str, seq: int) -> int:
        """The newest version whose message seq is <= `seq` (0: before the first commit).

        A seq older than a pruned journal's first kept row is an error, never "before the first
        commit" (which would empty the chat).
        """
        history = self.history_sync(chat_id)
        best = 0
        for rec in history:
            if rec.seq <= seq:
                best = rec.version
        if best == 0 and history and history[0].version > 1:
            raise StorageError(
                f"chat {chat_id!r}: the state after message seq {seq} was pruned (history is "
                f"kept from version {history[0].version}; storage_history_seconds)"
            )
        return best

    def state_at_sync(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> ChatState:
        if (version is None) == (seq is None):
            raise StorageError("give exactly one of version= or seq=", code="BAD_ARGS")
        if seq is not None:
            version = self.version_for_seq_sync(chat_id, int(seq))
        assert version is not None
        if version < 0:
            raise StorageError(f"version must be >= 0, got {version}", code="BAD_ARGS")
        if version == 0:
            return ChatState(chat_id=chat_id, version=0, data=empty_state())
        return self.load_sync(chat_id, upto=version)

    def chats_sync(self) -> tuple[str, ...]:
        rows = self._commits.search().select(["chat_id"]).limit(None).to_arrow()
        return tuple(sorted(set(rows.column("chat_id").to_pylist())))

    # ----------------------------------------------------------------- writes

    def commit_sync(
        self,
        chat_id: str,
        change: ChangeRecord,
        *,
        base_version: int,
    ) -> CommitRecord:
        """Append one journal row (atomic, durable on return) for version `base_version + 1`."""
        _check_chat_id(chat_id)
        version = int(base_version) + 1
        writer = uuid.uuid4().hex
        created = time.time()
        profile, vec_ids, blob = _vectors_to_columns(change.vectors)
        fields = {
            "seq": int(change.seq_counter),
            "applied": int(change.applied),
            "kind": change.kind,
            "created_at": created,
        }
        row = pa.table(
            {
                "chat_id": [chat_id],
                "version": [version],
                "writer": [writer],
                **{name: [value] for name, value in fields.items()},
                "payload": [change_payload(change)],
                "vec_profile": [profile],
                "vec_ids": [vec_ids],
                "vectors": [blob],
            },
            schema=COMMITS_SCHEMA,
        )
        with self._lock:
            seen = self._seen.get(chat_id)
            table_version = getattr(self._commits.add(row), "version", None)
            if not self._uncontested(chat_id, base_version, seen, table_version):
                winner = self._first_per_version(
                    f"{where_eq(chat_id=chat_id)} AND version = {version}", ["writer"]
                ).get(version)
                if winner is None or winner["writer"] != writer:
                    self._commits.delete(
                        f"{where_eq(chat_id=chat_id)} AND writer = {sql_literal(writer)}"
                    )
                    latest = self.latest_version_sync(chat_id)
                    raise ConflictError(chat_id, base_version, latest)
            self._note_own_commit(chat_id, table_version, version)
            self._commits_since_optimize += 1
        self.maintenance.note_commit(chat_id, version)  # snapshots, compaction: in the background
        return _record(chat_id, version, fields, change)

    def _uncontested(
        self, chat_id: str, base: int, seen: tuple[int, int] | None, table_version: int | None
    ) -> bool:
        """Whether the append that made commits table version `table_version` is certainly the
        first row of version `base + 1` of the chat, without reading it back.

        True when this handle knew the chat at `base` as of table version `seen[0]` and every
        table version since then, up to the append, is an append of this handle to another chat:
        no other writer committed in between, so no row of `base + 1` can precede ours.
        Otherwise (another writer's commit, a compaction, a delete in between) the caller reads
        the version back.
        """
        if seen is None or table_version is None or seen[1] != base:
            return False
        return self._only_own_appends(chat_id, seen[0], table_version)

    def _only_own_appends(self, chat_id: str, after: int, before: int) -> bool:
        """Whether every commits table version strictly between `after` and `before` is an
        append of this handle to a chat other than `chat_id` (so none touched `chat_id`)."""
        gap = range(after + 1, before)
        if len(gap) > len(self._own):
            return False
        return all(self._own.get(v, chat_id) != chat_id for v in gap)

    def _note_own_commit(self, chat_id: str, table_version: int | None, version: int) -> None:
        """Remember that table version `table_version` is this handle's winning append."""
        if table_version is None:  # no version reported: the next commit reads back
            self._seen.pop(chat_id, None)
            return
        self._seen[chat_id] = (table_version, version)
        self._own[table_version] = chat_id
        while len(self._own) > _OWN_COMMITS_KEPT:
            del self._own[next(iter(self._own))]

    def snapshot_due(self, chat_id: str, version: int) -> bool:
        """Whether the chat's journal since its newest snapshot reached `checkpoint_every`."""
        if chat_id not in self._last_checkpoint:
            head = self._snaps.head(chat_id)
            self.note_checkpoint(chat_id, int(head["version"]) if head is not None else 0)
        return version - self.checkpointed_version(chat_id) >= self.settings.checkpoint_every

    def snapshot_sync(self, chat_id: str) -> int | None:
        """Snapshot a chat at its latest version, from storage alone (the newest snapshot plus
        the journal after it; no loaded store is read): a delta of the rows changed since that
        snapshot, or a full one when the chain is long or the delta large. Returns the version
        snapshotted (None: nothing new). Then older snapshots are pruned."""
        _check_chat_id(chat_id)
        head = self._snaps.head(chat_id)
        base = int(head["version"]) if head is not None else 0
        entries = self._journal(chat_id, base)
        if not entries:
            self.note_checkpoint(chat_id, base)
            return None
        delta = DeltaBuilder()
        for entry in entries:
            delta.apply(entry.change())
        profile = next((e.vectors.profile for e in reversed(entries) if e.vectors), None)
        profile = profile or (head.get("vec_profile") if head is not None else None)
        chain = [int(v) for v in head["chain"]] if head is not None else []
        full_rows = int(head["node_count"]) + int(head["edge_count"]) if head is not None else 0
        delta_rows = (int(head["delta_rows"]) if head is not None else 0) + len(delta)
        if (
            head is None
            or len(chain) >= self.settings.snapshot_chain
            or 2 * delta_rows > max(full_rows, 1000)
            or (profile is not None and head.get("vec_profile") != profile)
        ):
            state = self.load_sync(chat_id, upto=entries[-1].version)
            vectors = self.load_vectors_sync(chat_id, state, profile=profile) if profile else None
            self.checkpoint_sync(chat_id, state, vectors)
            return state.version
        version = entries[-1].version
        rowset = new_rowset_id()
        nodes, edges = delta.tables()
        vectors = None
        if profile is not None:
            dim = int(head["vec_dim"])
            vectors = (profile, dim, self._delta_vectors(chat_id, rowset, dim, profile, entries,
                                                         delta, nodes))
        node_seq, seq_counter = int(delta.node_seq or 0), int(delta.seq_counter or 0)
        self._snaps.write(
            chat_id,
            rowset,
            nodes=nodes,
            edges=edges,
            vectors=vectors,
            head={
                "version": version,
                "seq": entries[-1].seq,
                "node_count": int(head["node_count"]),
                "edge_count": int(head["edge_count"]),
                "delta_rows": delta_rows,
                "node_seq": node_seq,
                "seq_counter": seq_counter,
                "chain": [*chain, rowset],
                "vec_profile": profile,
                "vec_dim": int(head["vec_dim"]) if profile is not None else None,
            },
        )
        self._after_snapshot(chat_id, version)
        return version

    def _delta_vectors(
        self,
        chat_id: str,
        rowset: int,
        dim: int,
        profile: str,
        entries: list[_Entry],
        delta: DeltaBuilder,
        nodes: pa.Table,
    ) -> pa.Table:
        """Vector rows for the nodes a delta touches: each one's vector from its last journal
        change when that carried one of `profile`, else a placeholder (no vector)."""
        last: dict[str, np.ndarray | None] = {}
        for entry in entries:
            block = entry.vectors
            rows = (
                {nid: i for i, nid in enumerate(block.ids)}
                if block is not None and block.profile == profile and block.dim == dim
                else {}
            )
            for node in entry.change().nodes:
                nid = str(node["id"])
                i = rows.get(nid)
                last[nid] = None if i is None or block is None else block.matrix[i]
        ids = list(delta.nodes)
        matrix = np.full((len(ids), dim), np.nan, dtype=np.float32)
        for row, nid in enumerate(ids):
            vec = last.get(nid)
            if vec is not None and delta.nodes[nid][0] is not None:
                matrix[row] = vec
        return vector_rows(chat_id, rowset, dim, profile, ids, matrix, nodes)

    def _after_snapshot(self, chat_id: str, version: int) -> None:
        self.note_checkpoint(chat_id, version)
        oldest = retry_conflicts(
            lambda: self._snaps.prune(chat_id, self.settings.keep_checkpoints),
            f"pruning snapshots of chat {chat_id!r}",
        )
        if self.settings.history_seconds is not None and oldest is not None:
            cutoff = time.time() - self.settings.history_seconds
            # the oldest kept snapshot's own row stays: history starts there, never empty
            retry_conflicts(
                lambda: self._commits.delete(
                    f"{where_eq(chat_id=chat_id)} AND version < {oldest}"
                    f" AND created_at < {cutoff!r}"
                ),
                f"pruning the journal of chat {chat_id!r}",
            )

    def checkpoint_sync(
        self, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None:
        """Write a full snapshot of `state` (and its vectors); then prune older snapshots.

        Crash-safe ordering: node, edge and vector rows first (tagged with the version), the
        head row last; a loader only ever reads rows of a head that exists.
        """
        _check_chat_id(chat_id)
        nodes, edges = state.tables()
        node_seq, seq_counter = state.counters
        dim = vectors.dim if vectors is not None and vectors.ids else 0
        rowset = new_rowset_id()
        rows = None
        if dim and vectors is not None:
            present = pc.is_in(pa.array(vectors.ids, pa.string()), value_set=nodes["id"])
            keep = np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
            ids = [nid for nid, ok in zip(vectors.ids, keep, strict=True) if ok]
            matrix = vectors.matrix[keep] if not keep.all() else vectors.matrix
            table = vector_rows(chat_id, rowset, dim, vectors.profile, ids, matrix, nodes)
            rows = (vectors.profile, dim, table)
        self._snaps.write(
            chat_id,
            rowset,
            nodes=nodes,
            edges=edges,
            vectors=rows,
            head={
                "version": state.version,
                "seq": state.seq,
                "node_count": nodes.num_rows,
                "edge_count": edges.num_rows,
                "delta_rows": 0,
                "node_seq": node_seq,
                "seq_counter": seq_counter,
                "chain": [rowset],
                "vec_profile": vectors.profile if rows is not None and vectors else None,
                "vec_dim": dim or None,
            },
        )
        self._after_snapshot(chat_id, state.version)

    def _nodes_table(self, dim: int) -> Any:
        table = self._nodes.get(dim)
        if table is None:
            table = open_or_create(self._db, nodes_table_name(dim), nodes_schema(dim))
            self._nodes[dim] = table
        return table

    def maintain_sync(self, *, optimize: bool = True) -> None:
        """Run a maintenance pass now, on this thread: the snapshots due, then compaction."""
        self.maintenance.run_now(optimize=optimize)

    def optimize_sync(self) -> None:
        """Compact small fragments, bring the `chat_id` indices up to date, and delete table
        versions older than the retention. A commit conflict with another process's compaction
        or delete is retried with backoff (logged at debug level), then left to the next run."""
        retention = timedelta(seconds=self.settings.retention_seconds)
        vectors = [self._nodes_table(dim) for dim in vector_table_dims(self._db)]
        tables = [self._commits, *self._snaps.tables(), *vectors]
        self._commits_since_optimize = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for table in tables:
                self._ensure_chat_index(table)
                retry_conflicts(
                    lambda table=table: table.optimize(cleanup_older_than=retention),
                    f"compacting table {table.name!r}",
                )

    def _ensure_chat_index(self, table: Any) -> None:
        """A BTREE index on `chat_id`: every query filters by chat, and without it each one scans
        the whole table (~25 ms per write at 300k journal rows, ~5 ms with it). Rows added after
        it are searched unindexed until the next `optimize()` folds them in."""
        if table.name in self._chat_indexed:
            return
        try:
            if not any("chat_id" in list(ix.columns) for ix in table.list_indices()):
                if table.count_rows() == 0:
                    return  # nothing to train on yet
                table.create_index("chat_id", config=BTree(), replace=False)
            self._chat_indexed.add(table.name)
        except Exception as exc:  # e.g. another process created it at the same moment
            log.info("chat_id index on %s not created now: %s", table.name, exc)

    def rollback_sync(
        self,
        chat_id: str,
        *,
        version: int | None = None,
        seq: int | None = None,
        base_version: int | None = None,
    ) -> CommitRecord:
        """Make a new commit whose state equals the chat's state at `version` (or after `seq`).

        Without `base_version` (the CLI), another writer's commit landing meanwhile is not the
        caller's business: the rollback is recomputed on the new state, a few times at most."""
        target = self.state_at_sync(chat_id, version=version, seq=seq)

        def attempt() -> CommitRecord:
            current = self.load_sync(chat_id)
            if base_version is not None and base_version != current.version:
                raise ConflictError(chat_id, base_version, current.version)
            change = diff_states(current.data, target.data, kind="rollback")
            return self._commit_replacement(chat_id, change, current.version)

        return attempt() if base_version is not None else _retry_conflict(attempt, chat_id)

    def import_sync(self, chat_id: str, data: dict[str, Any]) -> CommitRecord:
        """Replace a chat's graph by `data` (a store dict in the original shape) as one commit;
        recomputed on the new state when another writer committed meanwhile (a few times)."""

        def attempt() -> CommitRecord:
            current = self.load_sync(chat_id)
            change = diff_states(current.data, data, kind="import")
            return self._commit_replacement(chat_id, change, current.version)

        return _retry_conflict(attempt, chat_id)

    def _commit_replacement(self, chat_id: str, change: ChangeRecord, base: int) -> CommitRecord:
        """Commit a rollback/import change with its nodes' vectors (without, if embedding fails:
        those nodes are re-embedded by the next search)."""
        if self.embedder is not None and change.nodes:
            try:
                change = _with_vectors(change, self.embedder([dict(n) for n in change.nodes]))
            except Exception:
                log.exception("embedding failed; chat %r commits without vectors", chat_id)
        return self.commit_sync(chat_id, change, base_version=base)

    def stats_sync(self) -> dict[str, Any]:
        """Rows, fragments and versions of every table (vector tables other processes made
        included)."""
        out: dict[str, Any] = {}
        snaps = self._snaps
        for dim in vector_table_dims(self._db):
            self._nodes_table(dim)
        for name, table in [
            (COMMITS, self._commits),
            (SNAPSHOTS, snaps.heads),
            (SNAP_NODES, snaps.nodes),
            (SNAP_EDGES, snaps.edges),
        ] + [(nodes_table_name(d), t) for d, t in self._nodes.items()]:
            stats = table.stats()
            out[name] = {
                "rows": stats["num_rows"],
                "fragments": stats["fragment_stats"]["num_fragments"],
                "versions": len(table.list_versions()),
            }
        return out

    def close(self) -> None:
        """Stop the maintenance thread (a pass under way finishes first)."""
        self.maintenance.stop()
        self._nodes.clear()

    # ----------------------------------------------------------- async twins

    async def load(self, chat_id: str) -> ChatState:
        return await asyncio.to_thread(self.load_sync, chat_id)

    async def load_vectors(
        self, chat_id: str, state: ChatState, *, profile: str | None = None
    ) -> VectorBlock | None:
        return await asyncio.to_thread(self.load_vectors_sync, chat_id, state, profile=profile)

    async def latest_version(self, chat_id: str) -> int:
        return await asyncio.to_thread(self.latest_version_sync, chat_id)

    async def has_changed(self, chat_id: str, since_version: int) -> bool:
        return self.has_changed_sync(chat_id, since_version)

    async def commit(
        self,
        chat_id: str,
        change: ChangeRecord,
        *,
        base_version: int,
    ) -> CommitRecord:
        return await asyncio.to_thread(self.commit_sync, chat_id, change, base_version=base_version)

    async def history(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        return await asyncio.to_thread(self.history_sync, chat_id, limit=limit)

    async def state_at(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> ChatState:
        return await asyncio.to_thread(self.state_at_sync, chat_id, version=version, seq=seq)

    async def rollback(
        self,
        chat_id: str,
        *,
        version: int | None = None,
        seq: int | None = None,
        base_version: int | None = None,
    ) -> CommitRecord:
        return await asyncio.to_thread(
            self.rollback_sync, chat_id, version=version, seq=seq, base_version=base_version
        )

    async def import_dict(self, chat_id: str, data: dict[str, Any]) -> CommitRecord:
        return await asyncio.to_thread(self.import_sync, chat_id, data)

    async def checkpoint(
        self, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None:
        await asyncio.to_thread(self.checkpoint_sync, chat_id, state, vectors)

    async def optimize(self) -> None:
        await asyncio.to_thread(self.optimize_sync)

    async def chats(self) -> tuple[str, ...]:
        return await asyncio.to_thread(self.chats_sync)

    async def stats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats_sync)


def _retry_conflict(
    fn: Callable[[], CommitRecord], chat_id: str, attempts: int = 5
) -> CommitRecord:
    """`fn()`, again after a short backoff while another writer of the chat gets in first."""
    for attempt in range(attempts):
        try:
            return fn()
        except ConflictError:
            if attempt == attempts - 1:
                raise
            log.info("chat %r: another writer committed first; retrying", chat_id)
            time.sleep(0.02 * 2**attempt)
    raise AssertionError("unreachable")


def _node_id_array(state: ChatState) -> pa.Array:
    if state.nodes is not None:
        return state.nodes["id"].combine_chunks()
    return pa.array(list(state.data["nodes"]), pa.string())


def _with_vectors(change: ChangeRecord, block: VectorBlock | None) -> ChangeRecord:
    import attrs

    return attrs.evolve(change, vectors=block)
