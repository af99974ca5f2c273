"""Writing snapshots (checkpoints) of chats from storage alone, and pruning what they replace.

A snapshot is built from the newest one plus the journal after it (no loaded store is read): a
delta of the rows changed since, or a full one when the chain is long, the delta large, the
vector profile changed or the keyword fingerprint did (`snapshots.py` has the tables and the
crash-safe write order). With `keyword_schema` set, each row set also gets the keyword index's
token lists of its nodes (`keyword_rows.py`): a delta tokenizes its changed nodes, a full one
reuses the lists it loaded and tokenizes only nodes without them. After a snapshot, older ones
are pruned, and with `storage_history_seconds` so is the journal before the oldest kept one.
This runs in the maintenance process (`maintenance.py`), never in a commit.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any

from memgraph_plugin.engine.keyword.keyword_text import keyword_fingerprint
from memgraph_plugin.engine.load.store_import import PlainStore
from memgraph_plugin.engine.model.schema import Schema, load_schema
from memgraph_plugin.storage.format import keyword_rows
from memgraph_plugin.storage.format.graph_columns import DeltaBuilder, empty_edges, empty_nodes
from memgraph_plugin.storage.journal.journal import Journal
from memgraph_plugin.storage.journal.snapshot_refs import pinned_rowsets, rebased
from memgraph_plugin.storage.maintenance.maintenance import retry_conflicts
from memgraph_plugin.storage.persistence import ChatState, VectorBlock
from memgraph_plugin.storage.settings import StorageSettings
from memgraph_plugin.storage.snapshots.snapshots import SnapshotTables, new_rowset_id
from memgraph_plugin.storage.vectors.vectors import delta_vector_rows, snapshot_vector_rows

Loader = Callable[[str, int], ChatState]
"""The chat's state at a version (for a full snapshot)."""
VectorLoader = Callable[[str, ChatState, str], VectorBlock | None]
"""The vectors of a state made by a profile (for a full snapshot)."""


def _alongside(fn: Callable[..., Any], *args: Any, name: str = "snapshot-vectors") -> Future[Any]:
    """`fn(*args)` on a new daemon thread (no pool: nothing to go stale in a forked child)."""
    done: Future[Any] = Future()

    def run() -> None:
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # handed to the caller's `result()`
            done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return done


def _write_state_rows(
    snaps: SnapshotTables, chat_id: str, rowset: int, nodes: Any, edges: Any
) -> None:
    """Write a snapshot's node and edge rows only (`SnapshotTables.write_rows`)."""
    snaps.write_rows(chat_id, rowset, nodes=nodes, edges=edges, vectors=None)


def _write_vector_rows(
    snaps: SnapshotTables,
    chat_id: str,
    rowset: int,
    vectors: VectorBlock,
    nodes: Any,
) -> tuple[str, int, Any]:
    """Make and write a full snapshot's vector rows (`snapshot_vector_rows`); returns their
    (profile, dim, rows)."""
    rows = snapshot_vector_rows(chat_id, rowset, vectors, nodes)
    snaps.write_rows(chat_id, rowset, vectors=rows, **_NO_STATE_ROWS)
    return rows


#: `SnapshotTables.write_rows` arguments of a call that writes no node or edge rows
_NO_STATE_ROWS: dict[str, Any] = {"nodes": empty_nodes(), "edges": empty_edges()}


class Checkpoints:
    """The snapshots of one database, and the newest one of each chat this handle knows."""

    def __init__(
        self,
        settings: StorageSettings,
        journal: Journal,
        snaps: SnapshotTables,
        load: Loader,
        load_vectors: VectorLoader,
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.snaps = snaps
        self._load = load
        self._load_vectors = load_vectors
        self._last: dict[str, int] = {}  # chat -> newest checkpoint version known
        self._chains: dict[tuple[str, int], tuple[int, ...]] = {}  # (chat, snapshot) -> chain
        self._spec: tuple[str, tuple[Schema, str]] | None = None  # keyword_schema, parsed

    # ------------------------------------------------------------------ what is known

    def note(self, chat_id: str, version: int) -> None:
        """Remember the newest checkpoint of a chat seen on disk or written by this process
        (0 too: "none" is known, so the maintenance does not look for one again)."""
        self._last[chat_id] = max(version, self._last.get(chat_id, 0))

    def version(self, chat_id: str) -> int:
        """The newest checkpoint of `chat_id` this handle wrote or loaded (0: none known)."""
        return self._last.get(chat_id, 0)

    def known(self, chat_id: str) -> bool:
        """Whether this handle knows the chat's newest checkpoint (or that it has none)."""
        return chat_id in self._last

    def chain(self, chat_id: str, version: int) -> tuple[int, ...]:
        """The row set ids of the chat's snapshot at `version` (`(-1,)`: no such snapshot)."""
        key = (chat_id, int(version))
        chain = self._chains.get(key)
        if chain is None:
            head = self.snaps.head(chat_id, upto=version)
            if head is None or int(head["version"]) != version:
                return (-1,)
            chain = self._chains[key] = tuple(int(v) for v in head["chain"])
        return chain

    def due(self, chat_id: str, version: int) -> bool:
        """Whether the chat's journal since its newest snapshot reached `checkpoint_every`."""
        if chat_id not in self._last:
            head = self.snaps.head(chat_id)
            self.note(chat_id, int(head["version"]) if head is not None else 0)
        return version - self.version(chat_id) >= self.settings.checkpoint_every

    # ------------------------------------------------------------------ writing

    def snapshot(self, chat_id: str) -> int | None:
        """Snapshot a chat at its latest version: a delta or a full one (see the module doc).
        Returns the version snapshotted (None: nothing new)."""
        head = self.snaps.head(chat_id)
        base = int(head["version"]) if head is not None else 0
        stored, entries = rebased(head, self.journal.entries(chat_id, base))
        if stored is not head:  # an import's snapshot whose head row is missing (a crash)
            head = stored
            self.snaps.write_head(chat_id, head)
            self._after(chat_id, int(head["version"]))
            if not entries:
                return int(head["version"])
        if not entries:
            self.note(chat_id, base)
            return None
        delta = DeltaBuilder()
        for entry in entries:
            delta.apply(entry.change())
        profile = next((e.vectors.profile for e in reversed(entries) if e.vectors), None)
        profile = profile or (head.get("vec_profile") if head is not None else None)
        chain = [int(v) for v in head["chain"]] if head is not None else []
        spec = self._keyword_spec()
        known = (
            self.snaps.keyword_rows(chat_id, chain, lists=False)
            if spec is not None and chain
            else None
        )
        full_rows = int(head["node_count"]) + int(head["edge_count"]) if head is not None else 0
        delta_rows = (int(head["delta_rows"]) if head is not None else 0) + len(delta)
        if (
            head is None
            or len(chain) >= self.settings.snapshot_chain
            or 2 * delta_rows > max(full_rows, 1000)
            or (profile is not None and head.get("vec_profile") != profile)
            or (spec is not None and (known is None or known[0].fingerprint != spec[1]))
        ):
            state = self._load(chat_id, entries[-1].version)
            vectors = self._load_vectors(chat_id, state, profile) if profile else None
            self.write_full(chat_id, state, vectors)
            return state.version
        version = entries[-1].version
        rowset = new_rowset_id()
        nodes, edges = delta.tables()
        vectors = None
        if profile is not None:
            dim = int(head["vec_dim"])
            rows = delta_vector_rows(chat_id, rowset, dim, profile, entries, delta, nodes)
            vectors = (profile, dim, rows)
        node_seq, seq_counter = int(delta.node_seq or 0), int(delta.seq_counter or 0)
        keywords = None
        if spec is not None and known is not None:
            keywords = keyword_rows.delta_rows(
                keyword_rows.node_tokens(nodes, spec[0]), spec[1], [k.terms for k in known]
            )
        self.snaps.write(
            chat_id,
            rowset,
            nodes=nodes,
            edges=edges,
            vectors=vectors,
            keywords=keywords,
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
        self._after(chat_id, version)
        return version

    def write_full(
        self, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None:
        """Write a full snapshot of `state` (and its vectors); then prune older snapshots.

        Crash-safe ordering: node, edge and vector rows first (tagged with the row set), the
        head row last; a loader only ever reads rows of a head that exists.
        """
        self.finish(chat_id, self.write_full_rows(chat_id, state, vectors))

    def write_full_rows(
        self,
        chat_id: str,
        state: ChatState,
        vectors: VectorBlock | Callable[[], VectorBlock | None] | None = None,
    ) -> dict[str, Any]:
        """Write the row sets of a full snapshot of `state` (and its vectors), no head row;
        the head row they need (`finish` writes it; an import's journal row points at them
        first: `snapshot_refs.py`)."""
        nodes, edges = state.tables()
        node_seq, seq_counter = state.counters
        rowset = new_rowset_id()
        rows = None
        # three parts written side by side, each as soon as it is made (a crash or a failure
        # before the head or journal row leaves orphans only): the node and edge rows at once
        # (LanceDB writes them on its own threads, without the GIL) while the vectors are made
        # (an import embeds its nodes here: `vectors` callable) and then the keyword rows; the
        # vector rows on a thread of their own (numpy, LanceDB)
        state_work = _alongside(
            _write_state_rows, self.snaps, chat_id, rowset, nodes, edges, name="snapshot-rows"
        )
        vector_work: Future[Any] | None = None
        try:
            if callable(vectors):
                vectors = vectors()
            if vectors is not None and vectors.ids and vectors.dim:
                vector_work = _alongside(
                    _write_vector_rows,
                    self.snaps,
                    chat_id,
                    rowset,
                    vectors,
                    nodes,
                )
            spec = self._keyword_spec()
            if spec is not None:
                keywords = keyword_rows.full_rows(
                    nodes, state.keywords, spec[0], spec[1], _plain_fields(state)
                )
                self.snaps.write_rows(
                    chat_id, rowset, vectors=None, keywords=keywords, **_NO_STATE_ROWS
                )
        finally:  # both threads done before anything is raised (none writes on after it)
            wait([state_work] if vector_work is None else [state_work, vector_work])
        if vector_work is not None:
            rows = vector_work.result()
        state_work.result()
        return {
            "version": state.version,
            "seq": state.seq,
            "node_count": nodes.num_rows,
            "edge_count": edges.num_rows,
            "delta_rows": 0,
            "node_seq": node_seq,
            "seq_counter": seq_counter,
            "chain": [rowset],
            "vec_profile": rows[0] if rows is not None else None,
            "vec_dim": rows[1] if rows is not None else None,
        }

    def finish(self, chat_id: str, head: dict[str, Any]) -> None:
        """Write the head row of a snapshot whose rows are written; then prune older ones."""
        self.snaps.write_head(chat_id, head)
        self._after(chat_id, int(head["version"]))

    def _keyword_spec(self) -> tuple[Schema, str] | None:
        """The schema the keyword index reads nodes by, and its fingerprint (None: snapshots
        carry no keyword data)."""
        text = self.settings.keyword_schema
        if text is None:
            return None
        if self._spec is None or self._spec[0] != text:
            schema = load_schema(json.loads(text))
            self._spec = (text, (schema, keyword_fingerprint(schema)))
        return self._spec[1]

    def _after(self, chat_id: str, version: int) -> None:
        self.note(chat_id, version)
        oldest = retry_conflicts(
            lambda: self.snaps.prune(
                chat_id, self.settings.keep_checkpoints, pinned_rowsets(self.journal, chat_id)
            ),
            f"pruning snapshots of chat {chat_id!r}",
        )
        if self.settings.history_seconds is not None and oldest is not None:
            cutoff = time.time() - self.settings.history_seconds
            # the oldest kept snapshot's own row stays: history starts there, never empty
            retry_conflicts(
                lambda: self.journal.prune(chat_id, oldest, cutoff),
                f"pruning the journal of chat {chat_id!r}",
            )


def _plain_fields(state: ChatState) -> list[Any] | None:
    """The fields of the state's nodes in its state table's row order, when its tables are
    built from an import's plain store (from its nodes, in order: `graph_columns`); else None
    (the keyword rows parse them from the table). The import's check pulled them out already
    (`PlainStore.node_columns`, as `graph_columns` takes them): taken as they are."""
    data = state.data if state.nodes is None else None
    if isinstance(data, PlainStore) and data.plain:
        nodes = data["nodes"]
        given = data.node_columns
        if given is not None and len(given["fields"]) == len(nodes):
            return list(given["fields"])
        return [node["fields"] for node in nodes.values()]
    return None
