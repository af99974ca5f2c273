"""Columnar, incremental snapshots of chats: the `snapshots`, `snap_nodes` and `snap_edges` tables
plus the vector rows in `nodes` / `nodes_d<dim>`.

A snapshot at version V is a *chain* of row sets: a full one, then deltas (the rows changed
since the previous snapshot, `removed`/`moved` flags as in `columns.py`). A row set has its own
id (`snap` / `ckpt_version` in the vector table: milliseconds since the epoch << 20 plus random
bits), so two processes snapshotting the same version never mix rows. Its head row in
`snapshots` is written last, so a head row means every row of its chain is there; rows of an
unfinished snapshot (a crash) are never read, and a prune deletes them once they are older than
`ORPHAN_GRACE_SECONDS` (an unfinished one may belong to a writer still at work). A loader checks
the head still exists after reading its rows (a prune deletes heads before rows). Vector rows
follow the same chain: a delta holds the changed nodes' vectors, and a row with an empty
`profile` stands for a node removed or changed without a vector of the snapshot's profile
(`vector_rows.py`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.database.escape import where_eq, where_in
from memgraph_plugin.storage.database.tables import (
    SNAP_EDGES,
    SNAP_EDGES_SCHEMA,
    SNAP_KEYWORDS,
    SNAP_KEYWORDS_SCHEMA,
    SNAP_NODES,
    SNAP_NODES_SCHEMA,
    SNAPSHOTS,
    SNAPSHOTS_SCHEMA,
    nodes_schema,
    open_or_create,
)
from memgraph_plugin.storage.format.graph_columns import merge
from memgraph_plugin.storage.format.keyword_rows import KW_TF, KW_TID, KeywordRows

_HEAD_COLUMNS = [f.name for f in SNAPSHOTS_SCHEMA if f.name != "chat_id"]
ORPHAN_GRACE_SECONDS = 600.0


def new_rowset_id(now: float | None = None) -> int:
    """A fresh row set id, growing with time (ms << 20) and unique across processes."""
    ms = int((time.time() if now is None else now) * 1000)
    return (ms << 20) | random.getrandbits(20)


#: rows per batch of a scan: LanceDB's default (1,024) makes a million-row read a thousand
#: round trips through its event loop, ~20x slower than a few large batches
SCAN_BATCH = 1 << 20


def read_all(query: Any) -> pa.Table:
    """A LanceDB query's rows as one table, read in large batches."""
    return query.to_batches(batch_size=SCAN_BATCH).read_all()


def in_list(column: str, values: Sequence[int]) -> str:
    """`column IN (1, 2)` of integers (never a spliced string)."""
    return f"{column} IN ({', '.join(str(int(v)) for v in values)})"


class SnapshotTables:
    """Reads and writes the snapshot tables of one database."""

    def __init__(self, db: Any, vector_table: Callable[[int], Any]) -> None:
        self.heads = open_or_create(db, SNAPSHOTS, SNAPSHOTS_SCHEMA)
        self.nodes = open_or_create(db, SNAP_NODES, SNAP_NODES_SCHEMA)
        self.edges = open_or_create(db, SNAP_EDGES, SNAP_EDGES_SCHEMA)
        self.keywords = open_or_create(db, SNAP_KEYWORDS, SNAP_KEYWORDS_SCHEMA)
        self.vector_table = vector_table

    def tables(self) -> list[Any]:
        return [self.heads, self.nodes, self.edges, self.keywords]

    # ------------------------------------------------------------------ reads

    def head_rows(self, chat_id: str, upto: int | None = None) -> list[dict[str, Any]]:
        where = where_eq(chat_id=chat_id)
        if upto is not None:
            where += f" AND version <= {int(upto)}"
        return (
            self.heads.search().where(where).select(_HEAD_COLUMNS).limit(None).to_arrow()
        ).to_pylist()

    def head(self, chat_id: str, upto: int | None = None) -> dict[str, Any] | None:
        """The newest snapshot head of a chat (at or before `upto`); a later head of the same
        version (a reindex) supersedes the earlier one."""
        rows = self.head_rows(chat_id, upto)
        if not rows:
            return None
        return max(rows, key=lambda r: (int(r["version"]), float(r["created_at"])))

    def _chain_rows(
        self, table: Any, chat_id: str, chain: Sequence[int], where: str = ""
    ) -> list[pa.Table]:
        """The row sets of `chain` (their rows matching `where` too, when given), each in its
        written order, oldest first."""
        also = f" AND {where}" if where else ""
        rows = read_all(
            table.search()
            .where(f"{where_eq(chat_id=chat_id)} AND {in_list('snap', chain)}{also}")
            .limit(None)
        )
        snaps = rows["snap"].to_numpy()
        pos = rows["pos"].to_numpy()
        ds, dp = np.diff(snaps), np.diff(pos)
        if not np.all((ds > 0) | ((ds == 0) & (dp > 0))):  # as written, almost always: no copy
            rows = rows.sort_by([("snap", "ascending"), ("pos", "ascending")])
            snaps = rows["snap"].to_numpy()
        out = []
        for snap in chain:
            lo, hi = np.searchsorted(snaps, [snap, snap + 1])
            part = rows.slice(int(lo), int(hi - lo))
            out.append(part.drop_columns(["chat_id", "snap", "pos"]))
        return out

    def still_there(self, chat_id: str, head: dict[str, Any]) -> bool:
        """Whether a head read earlier is still stored (its rows were intact while read)."""
        return any(
            [int(v) for v in r["chain"]] == [int(v) for v in head["chain"]]
            for r in self.head_rows(chat_id, int(head["version"]))
            if int(r["version"]) == int(head["version"])
        )

    def read(self, chat_id: str, head: dict[str, Any]) -> tuple[pa.Table, pa.Table]:
        """The node and edge state tables of a snapshot: its chain merged."""
        nodes, edges, _ = self.read_with_keywords(chat_id, head)
        return nodes.drop_columns([c for c in (KW_TID, KW_TF) if c in nodes.column_names]), edges

    def read_picked(
        self, chat_id: str, head: dict[str, Any], node_ids: Sequence[str], sources: Sequence[str]
    ) -> tuple[pa.Table, pa.Table]:
        """`read` of the rows of nodes `node_ids` and of the edges from `sources` only (what a
        rollback restores: `restored_values.py`): each row set read with that filter, merged."""
        chain = [int(v) for v in head["chain"]]
        out = []
        for table, column, values in ((self.nodes, "id", node_ids), (self.edges, "src", sources)):
            parts = self._chain_rows(table, chat_id, chain, where_in(column, values))
            state = parts[0]
            for delta in parts[1:]:
                state = merge(state, delta)
            out.append(state)
        return out[0], out[1]

    def read_with_keywords(
        self, chat_id: str, head: dict[str, Any]
    ) -> tuple[pa.Table, pa.Table, tuple[str, list[pa.Array]] | None]:
        """`read`, plus the chain's keyword data when it is whole: the node table then has the
        `kw_tid` / `kw_tf` list columns, and the third item is `(fingerprint, vocabulary parts)`
        (None: no keyword data; the node table has no such columns)."""
        chain = [int(v) for v in head["chain"]]
        node_parts = self._chain_rows(self.nodes, chat_id, chain)
        keywords = self.keyword_rows(chat_id, chain)
        vocab = None
        if keywords is not None and all(
            len(k.counts) == p.num_rows for k, p in zip(keywords, node_parts, strict=True)
        ):
            vocab = (keywords[0].fingerprint, [k.terms for k in keywords])
            for i, k in enumerate(keywords):
                tids, tfs = k.lists()
                node_parts[i] = node_parts[i].append_column(KW_TID, tids).append_column(KW_TF, tfs)
        result = []
        for parts in (node_parts, self._chain_rows(self.edges, chat_id, chain)):
            state = parts[0]
            for delta in parts[1:]:
                state = merge(state, delta)
            result.append(state)
        return result[0], result[1], vocab

    def keyword_rows(
        self, chat_id: str, chain: Sequence[int], *, lists: bool = True
    ) -> list[KeywordRows] | None:
        """The keyword rows of a chain's row sets, oldest first; None unless every row set has
        one, all of one fingerprint, their vocabularies' ids following each other. `lists`
        False: without the per-node lists (fingerprint and vocabulary only)."""
        query = self.keywords.search().where(
            f"{where_eq(chat_id=chat_id)} AND {in_list('snap', chain)}"
        )
        if not lists:
            query = query.select(["snap", "fingerprint", "first_tid", "terms"])
        rows = read_all(query.limit(None))
        at = {snap: i for i, snap in enumerate(rows["snap"].to_pylist())}
        if any(int(snap) not in at for snap in chain):
            return None
        out = [KeywordRows.from_row(rows, at[int(snap)]) for snap in chain]
        size = 0
        for k in out:
            if k.fingerprint != out[0].fingerprint or k.first_tid != size:
                return None
            size += len(k.terms)
        return out

    def read_vectors(self, chat_id: str, head: dict[str, Any]) -> VectorBlock | None:
        """The vectors of a snapshot (its profile's rows along the chain, the newest per id)."""
        profile, dim = head.get("vec_profile"), head.get("vec_dim")
        if not profile or not dim:
            return None
        chain = [int(v) for v in head["chain"]]
        table = self.vector_table(int(dim))
        rows = (  # the scan's default batches (pylance's, 8,192 rows), adopted as read
            table.search()
            .where(f"{where_eq(chat_id=chat_id)} AND {in_list('ckpt_version', chain)}")
            .select(["ckpt_version", "id", "profile", "vector"])
            .limit(None)
            .to_arrow()
        )
        if len(chain) > 1:  # the newest row of each id (latest in the chain)
            rank = pc.index_in(rows["ckpt_version"], value_set=pa.array(chain, pa.int64()))
            rows = rows.append_column("rank", rank).sort_by([("rank", "descending")])
            rows = rows.take(pc.index_in(pc.unique(rows["id"]), value_set=rows["id"]))
        ours = pc.equal(rows["profile"], profile)
        if rows.num_rows == 0 or not pc.any(ours).as_py():
            return None
        # the vectors as the record batches hold them (zero-copy views, not joined: `RowBlocks`);
        # rows of other profiles (placeholders) dropped by a numpy mask, not a table filter
        matrix = RowBlocks(
            [
                c.flatten().to_numpy(zero_copy_only=False).reshape(len(c), int(dim))
                for c in rows["vector"].chunks
            ],
            int(dim),
        )
        ids = rows["id"]
        if not pc.all(ours).as_py():
            mask = np.asarray(ours.to_numpy(zero_copy_only=False), dtype=bool)
            matrix, ids = matrix.filter(mask), ids.filter(ours)
        ids = ids.combine_chunks()
        return VectorBlock(profile, tuple(ids.to_pylist()), matrix, id_column=ids)

    # ----------------------------------------------------------------- writes

    def write(
        self,
        chat_id: str,
        rowset: int,
        *,
        nodes: pa.Table,
        edges: pa.Table,
        vectors: tuple[str, int, pa.Table] | None,
        head: dict[str, Any],
        keywords: KeywordRows | None = None,
    ) -> None:
        """Write a snapshot's row sets, then its head row (the commit point)."""
        self.write_rows(
            chat_id,
            rowset,
            nodes=nodes,
            edges=edges,
            vectors=vectors,
            keywords=keywords,
        )
        self.write_head(chat_id, head)

    def write_rows(
        self,
        chat_id: str,
        rowset: int,
        *,
        nodes: pa.Table,
        edges: pa.Table,
        vectors: tuple[str, int, pa.Table] | None,
        keywords: KeywordRows | None = None,
    ) -> None:
        """Write a snapshot's row sets, no head row: nothing reads them until a head row (or a
        journal row pointing at them, `snapshot_refs.py`) names them."""
        for table, rows in ((self.nodes, nodes), (self.edges, edges)):
            if rows.num_rows:
                n = rows.num_rows
                extra = {
                    "chat_id": pa.array([chat_id] * n, pa.string()),
                    "snap": pa.array(np.full(n, rowset, dtype=np.int64)),
                    "pos": pa.array(np.arange(n, dtype=np.int64)),
                }
                cols = {
                    f.name: extra[f.name] if f.name in extra else rows[f.name] for f in table.schema
                }
                table.add(pa.table(cols, schema=table.schema))
        if vectors is not None:
            profile, dim, rows = vectors
            if rows.num_rows:
                schema = nodes_schema(dim)
                self.vector_table(dim).add(rows.select(schema.names).cast(schema))
        if keywords is not None:
            self.keywords.add(
                pa.Table.from_pylist([keywords.to_row(chat_id, rowset)], SNAP_KEYWORDS_SCHEMA)
            )

    def write_head(self, chat_id: str, head: dict[str, Any]) -> None:
        """Write a snapshot's head row, once every row of its chain is written."""
        row = {"chat_id": chat_id, "created_at": time.time(), **head}
        row = {name: row.get(name) for name in SNAPSHOTS_SCHEMA.names}
        self.heads.add(pa.Table.from_pylist([row], schema=SNAPSHOTS_SCHEMA))

    def prune(self, chat_id: str, keep: int, pinned: set[int] | None = None) -> int | None:
        """Keep the newest `keep` snapshots of a chat and the rows their chains need, and the
        row sets in `pinned` (journal rows point at them: `snapshot_refs.py`); delete the rest
        (and the rows of unfinished snapshots). Returns the oldest kept version."""
        heads = self.head_rows(chat_id)
        if not heads:
            return None
        versions = sorted({int(r["version"]) for r in heads})
        kept = versions[-keep:]
        if len(versions) > len(kept):
            self.heads.delete(f"{where_eq(chat_id=chat_id)} AND version < {kept[0]}")
        needed = sorted(
            {int(v) for r in heads if int(r["version"]) in kept for v in r["chain"]}
            | (pinned or set())
        )
        dropped = {int(v) for r in heads for v in r["chain"]} - set(needed)
        orphan_before = new_rowset_id(time.time() - ORPHAN_GRACE_SECONDS) & ~0xFFFFF
        snap_tables = (self.nodes, self.edges, self.keywords)
        for table, column in [(t, "snap") for t in snap_tables] + [
            (self.vector_table(dim), "ckpt_version")
            for dim in {int(r["vec_dim"]) for r in heads if r.get("vec_dim")}
        ]:
            gone = f"{in_list(column, sorted(dropped))} OR " if dropped else ""
            table.delete(
                f"{where_eq(chat_id=chat_id)} AND NOT ({in_list(column, needed)})"
                f" AND ({gone}{column} < {orphan_before})"
            )
        return kept[0]
