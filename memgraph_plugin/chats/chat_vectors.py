"""The vector side of the loaded chats: embedding what a commit changed, the live index (built
or adopted on first search), vector search with the ANN path for very large chats, reindex.

`ChatVectors` is a mixin of `PersistedChats`, which holds the loaded chats and the storage.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.chats import background_embedding
from memgraph_plugin.chats.loaded_chat import UNSNAPSHOTTED, LoadedChat
from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.embedding.profile import EmbeddingProfile
from memgraph_plugin.engine.model.schema import is_diagnostic_type
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.persistence import ChatState, VectorBlock
from memgraph_plugin.storage.vectors.vector_ann import LanceAnn, hybrid_search
from memgraph_plugin.storage.vectors.vectors import same_ids

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

__all__ = ["ChatVectors", "Progress"]


class ChatVectors:
    """Embeddings and vector search of loaded chats (a mixin of `PersistedChats`)."""

    _chats: dict[str, LoadedChat]
    _ann: LanceAnn | None
    _ann_build: asyncio.Future[bool] | None
    ann_threshold: int
    #: LanceDB's index check started by an open (`_check_ann_soon`), for the search that needs it
    _ann_probe: tuple[LanceAnn, concurrent.futures.Future[bool]] | None = None
    #: the host's data folder: background work on a chat is noted under it for `status`
    #: (`pending_work.py`); the factory sets it (None: not noted)
    pending_dir: Any = None
    last_search_mode: str
    storage: LanceStorage
    embedder: NodeEmbedder | None
    profile: EmbeddingProfile | None

    async def open(self, chat_id: str) -> LoadedChat:
        raise NotImplementedError

    def _load_index(
        self, storage: LanceStorage, chat: LoadedChat, state: ChatState, block: VectorBlock | None
    ) -> None:
        """The chat's vector index from its stored vectors `block` (`load_with_vectors_sync`);
        nodes without one are noted in `unembedded` (embedded by the first search)."""
        assert self.embedder is not None
        index = self.embedder.new_index()
        nodes = chat.store
        if block is not None and block.dim == index.dim:  # every id is a node of `state`
            loaded = nodes.column_ids()  # the store's ids: those of `state.nodes`, in order
            at = block.state_rows  # each vector's node row in `state.nodes`, when known
            if (
                loaded is not None
                and state.nodes is not None
                and (same_ids(block, state.nodes["id"]))
            ):  # one vector per node row, in row order: no lookups
                ids, pos = loaded
                names, type_of_row, archived = _types_and_flags_in_order(state, nodes)
            elif loaded is not None and state.nodes is not None and at is not None:
                # the node rows' arrays taken in the vectors' order
                ids, pos = np.asarray(loaded[0], dtype=object)[at].tolist(), None
                names, type_of_row, archived = _types_and_flags_in_order(state, nodes)
                type_of_row, archived = type_of_row[at], archived[at]
            else:
                ids, pos = list(block.ids), None
                names, type_of_row, archived = _types_and_flags(state, block.ids, nodes)
            diagnostic = np.asarray([is_diagnostic_type(t) for t in names], dtype=bool)
            searchable = ~archived & ~diagnostic[type_of_row] if len(names) else archived
            index = VectorIndex.from_arrays(
                index.profile, ids, block.rows, names, type_of_row, searchable, pos=pos
            )
        if not len(index):  # no stored vectors: every node waits for the first search
            chat.unembedded = list(nodes.node_ids())
        elif len(index) != len(nodes):
            chat.unembedded = [nid for nid in nodes.node_ids() if nid not in index]
        chat.index = index

    def _check_ann_soon(self, state: ChatState) -> None:
        """Past the ANN threshold, start LanceDB's index check for a chat being loaded, on a
        thread of its own, as soon as its rows are read: it imports LanceDB (~0.8 s of
        Python), which then runs beside the store's build instead of in the first search. The
        first search takes its answer (`_ann_ready`)."""
        rows = state.nodes.num_rows if state.nodes is not None else len(state.data["nodes"])
        if self.embedder is None or rows < self.ann_threshold or state.checkpoint_version <= 0:
            return
        ann = self._ann_for(int(self.embedder.profile.dim), state.chat_id)
        probe: concurrent.futures.Future[bool] = concurrent.futures.Future()

        def check() -> None:
            try:
                probe.set_result(ann.ready())
            except BaseException as exc:  # the search asks again and sees the error
                probe.set_exception(exc)

        self._ann_probe = (ann, probe)
        threading.Thread(target=check, name="ann index check", daemon=True).start()

    async def _ann_ready(self, ann: LanceAnn) -> bool:
        """Whether `ann`'s index is ready: the open's check when one ran for it (taken once),
        else asked now."""
        started, self._ann_probe = self._ann_probe, None
        if started is not None and started[0] is ann:
            with contextlib.suppress(Exception):
                return await asyncio.wrap_future(started[1])
        return await asyncio.to_thread(ann.ready)

    def _embed_changed(self, chat: LoadedChat, nodes: Any) -> VectorBlock | None:
        """Vectors of the changed nodes; a failing profile is logged by name and the write goes
        on without them (the live index is dropped, so the next search re-embeds)."""
        if self.embedder is None:
            return None
        try:
            return self.embedder(nodes)
        except Exception:
            log.exception(
                "embedding profile %r failed; chat %r commits without vectors",
                self.embedder.name,
                chat.chat_id,
            )
            chat.index = None
            return None

    # --------------------------------------------------------------- vectors

    async def ensure_index(self, chat: LoadedChat, progress: Progress | None = None) -> VectorIndex:
        """Build the chat's vector index: stored vectors of this profile, the rest embedded.

        Built under the chat's commit lock: a write landing meanwhile waits, then puts its
        vectors into the new index (loaded before it, the index would keep the old ones).
        """
        assert self.embedder is not None
        if chat.index is not None and not chat.unembedded:
            return chat.index
        many = len(chat.unembedded) > background_embedding.BACKGROUND_NODES
        if chat.index is not None and many and progress is None:
            background_embedding.start(self, chat)  # the search answers from what is there
            return chat.index
        async with chat.lock:
            if chat.index is not None and chat.unembedded:  # nodes stored without a vector
                missing = [n for n in map(chat.store.node, chat.unembedded) if n is not None]
                chat.unembedded = []
                await self._embed_into(chat.index, missing, progress, total=len(missing))
                chat.dirty.update(dict.fromkeys((n.id for n in missing), UNSNAPSHOTTED))
            if chat.index is not None:  # built at load, or by another search meanwhile
                return chat.index
            state = ChatState(chat.chat_id, chat.version, {"nodes": {}}, chat.checkpoint_version)
            nodes = list(chat.store.iter_nodes())
            state.data["nodes"] = {n.id: None for n in nodes}
            block = await self.storage.load_vectors(chat.chat_id, state, profile=self.embedder.name)
            index = self.embedder.new_index()
            have = set(block.ids) if block is not None else set()
            if block is not None and block.dim == index.dim:
                self.embedder.apply(index, nodes, block)
            else:
                have = set()
            missing = [n for n in nodes if n.id not in have]
            if len(missing) > 1000 and len(missing) * 2 > len(nodes):
                # stored with another profile (or none): embedded now, kept at the next snapshot
                log.warning(
                    "chat %r: embedding %d of %d nodes with profile %r (no stored vectors of it; "
                    "`memgraph-host reindex %s` does this ahead of time)",
                    chat.chat_id,
                    len(missing),
                    len(nodes),
                    self.embedder.name,
                    chat.chat_id,
                )
            if progress is None and len(missing) > background_embedding.BACKGROUND_NODES:
                chat.unembedded = [n.id for n in missing]  # embedded off the turn path
                chat.index = index
                background_embedding.start(self, chat)
                return index
            await self._embed_into(index, missing, progress, total=len(nodes), done=len(have))
            # not among the snapshot's vector rows
            chat.dirty.update(dict.fromkeys((n.id for n in missing), UNSNAPSHOTTED))
            chat.index = index
            return index

    async def _embed_into(
        self,
        index: VectorIndex,
        nodes: list[Any],
        progress: Progress | None,
        *,
        total: int,
        done: int = 0,
        chunk: int = 512,
    ) -> None:
        assert self.embedder is not None
        if progress is not None:
            progress(done, total)
        for start in range(0, len(nodes), chunk):
            part = nodes[start : start + chunk]
            self.embedder.apply(index, part, self.embedder(part))
            done += len(part)
            if progress is not None:
                progress(done, total)
            await asyncio.sleep(0)

    async def vector_search(
        self, chat_id: str, *, query: str, types: Collection[str] | None, k: int
    ) -> list[tuple[str, float]]:
        """(node id, cosine) pairs, best first."""
        assert self.embedder is not None
        chat = self._chats.get(chat_id) or await self.open(chat_id)
        index = await self.ensure_index(chat)
        self._used(chat)  # its vectors count from now on
        chat.snapshot_seen(self.storage.checkpointed_version(chat_id))
        q = self.embedder.embed_query(query)
        if len(index) >= self.ann_threshold and chat.checkpoint_version > 0:
            ann = self._ann_for(index.dim, chat_id)
            if ann is not None and await self._ann_ready(ann):
                self.last_search_mode = "ann"
                return await asyncio.to_thread(
                    hybrid_search,
                    index,
                    ann,
                    chat_id=chat_id,
                    ckpt_version=self.storage.snapshot_chain(chat_id, chat.checkpoint_version),
                    profile=self.embedder.name,
                    dirty=set(chat.dirty),
                    query=q,
                    k=k,
                    types=types,
                )
            if ann is not None:
                self._build_ann(ann)
        self.last_search_mode = "exact"
        return index.search(q, k=k, types=types)

    def _build_ann(self, ann: LanceAnn) -> None:
        """Build LanceDB's vector index in the background (minutes at 100k+ rows); searches
        stay exact meanwhile instead of waiting for it."""
        if self._ann_build is not None and not self._ann_build.done():
            return
        self._ann_build = asyncio.ensure_future(asyncio.to_thread(ann.ensure_index))
        self._ann_build.add_done_callback(_log_build_failure)

    async def ann_built(self) -> bool:
        """Wait for a background vector-index build (if one runs); whether the index is ready."""
        if self._ann_build is not None:
            try:
                await asyncio.shield(self._ann_build)
            except Exception:  # logged by _log_build_failure
                return False
        return self._ann is not None and await asyncio.to_thread(self._ann.ready)

    def _ann_for(self, dim: int, chat_id: str) -> LanceAnn | None:
        """The ANN over the vector table holding the chat's nodes (its shard's)."""
        table = self.storage.shard_for(chat_id)._nodes_table(dim)
        if self._ann is None or self._ann.dim != dim or self._ann.table is not table:
            self._ann = LanceAnn(table, dim, threshold=self.ann_threshold)
        return self._ann

    async def reindex(self, chat_id: str, progress: Progress | None = None) -> int:
        """Re-embed every node of a chat with the current profile and checkpoint the vectors.

        The snapshot is the chat as stored (the cached store may already hold a session's change
        that is still waiting to commit, and may never commit).
        """
        assert self.embedder is not None
        chat = await self.open(chat_id)
        async with chat.lock:
            state = await self.storage.load(chat_id)
            nodes = list(state.data["nodes"].values())
            index = self.embedder.new_index()
            await self._embed_into(index, nodes, progress, total=len(nodes))
            ids, matrix = index.items()
            await self.storage.checkpoint(
                chat_id, state, VectorBlock(self.embedder.name, ids, matrix)
            )
            if state.version == chat.version and self._chats.get(chat_id) is chat:
                chat.index = index  # a change still waiting to commit adds its vectors next
                chat.checkpoint_version = state.version
                chat.dirty.clear()
                chat.unembedded = []
            else:
                self.forget(chat_id)  # another writer moved on: reload next time
            return len(nodes)


def _types_and_flags_in_order(
    state: ChatState, store: Any
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """`_types_and_flags` of every row of the state's node columns, in row order (the store
    was loaded from its columns; the few rows held as raw JSON, a pinned node, read from the
    store's records, which the open made: `engine/load/raw_rows.py`)."""
    types = state.nodes["type"]
    flags = np.array(state.nodes["archived"].to_numpy(zero_copy_only=False), dtype=bool)
    raw = state.nodes["raw"]
    if raw.null_count < len(raw):
        rows = np.flatnonzero(np.asarray(raw.is_valid().to_numpy(), dtype=bool))
        type_list = types.to_pylist()
        at_rows = pc.take(state.nodes["id"], rows).to_pylist()
        for row, nid in zip(rows.tolist(), at_rows, strict=True):
            node = store.node(nid)
            type_list[row] = node.type if node is not None else ""
            flags[row] = node is None or node.archived
        types = pa.array(type_list, type=pa.string())
    encoded = pc.dictionary_encode(types)
    encoded = encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded
    names = encoded.dictionary.to_pylist()
    type_of_row = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return names, type_of_row, flags


def _types_and_flags(
    state: ChatState, ids: tuple[str, ...], store: Any
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """`(type names, type of each id as an index into them, archived flag of each id)`, from
    the state's columns (vectorised); from the store for nodes held as raw JSON, or for all of
    them when the state has no columns."""
    if state.nodes is None:
        recs = [store.node(i) for i in ids]
        names = sorted({n.type for n in recs})
        at = {t: k for k, t in enumerate(names)}
        return (
            names,
            np.asarray([at[n.type] for n in recs], dtype=np.int64),
            np.asarray([n.archived for n in recs], dtype=bool),
        )
    rows = pc.index_in(pa.array(ids, pa.string()), value_set=state.nodes["id"])
    types = state.nodes["type"].take(rows)
    archived = state.nodes["archived"].take(rows)
    raw = [i for i, t in enumerate(types.to_pylist()) if t is None] if types.null_count else []
    if raw:  # raw rows: their records know
        fixed_t, fixed_a = types.to_pylist(), archived.to_pylist()
        for i in raw:
            rec = store.node(ids[i])
            fixed_t[i], fixed_a[i] = rec.type, rec.archived
        types, archived = pa.array(fixed_t, pa.string()), pa.array(fixed_a, pa.bool_())
    encoded = (
        pc.dictionary_encode(types).combine_chunks()
        if hasattr(types, "chunks")
        else (pc.dictionary_encode(types))
    )
    names = encoded.dictionary.to_pylist()
    type_of_row = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    flags = np.asarray(archived.to_numpy(zero_copy_only=False), dtype=bool)
    return names, type_of_row, flags


def _log_build_failure(task: asyncio.Future[bool]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("building the LanceDB vector index failed", exc_info=task.exception())
