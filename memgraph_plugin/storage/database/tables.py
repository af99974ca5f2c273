"""pyarrow schemas of the LanceDB tables and race-safe opening."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from memgraph_plugin.storage.database.table_reads import Database

if TYPE_CHECKING:  # imported when a database is opened (`connect.py`), not with this module
    import lancedb

COMMITS = "commits"
CHECKPOINTS = "checkpoints"
DEFAULT_DIM = 384

COMMITS_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("version", pa.int64(), nullable=False),
        pa.field("writer", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("applied", pa.int64(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("created_at", pa.float64(), nullable=False),
        pa.field("payload", pa.large_string(), nullable=False),
        pa.field("vec_profile", pa.string()),
        pa.field("vec_ids", pa.list_(pa.string())),
        pa.field("vectors", pa.large_binary()),
    ]
)

CHECKPOINTS_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("version", pa.int64(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("created_at", pa.float64(), nullable=False),
        pa.field("node_count", pa.int64(), nullable=False),
        pa.field("data", pa.large_string(), nullable=False),
        pa.field("vec_profile", pa.string()),
        pa.field("vec_dim", pa.int32()),
    ]
)


SNAPSHOTS = "snapshots"
SNAP_NODES = "snap_nodes"
SNAP_EDGES = "snap_edges"

#: One row per columnar snapshot of a chat, written after its node and edge rows (so a row here
#: means the snapshot is whole). `chain`: the snapshot versions whose rows make it up, oldest
#: first (a full snapshot is its own chain; a delta holds the rows changed since the previous).
SNAPSHOTS_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("version", pa.int64(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("created_at", pa.float64(), nullable=False),
        pa.field("node_count", pa.int64(), nullable=False),  # rows of the chain's full snapshot
        pa.field("edge_count", pa.int64(), nullable=False),
        pa.field("delta_rows", pa.int64(), nullable=False),  # rows of the chain's deltas
        pa.field("node_seq", pa.int64(), nullable=False),
        pa.field("seq_counter", pa.int64(), nullable=False),
        pa.field("chain", pa.list_(pa.int64()), nullable=False),
        pa.field("vec_profile", pa.string()),
        pa.field("vec_dim", pa.int32()),
    ]
)

#: A chat's nodes, one column per record field. `snap` is the snapshot whose rows these are,
#: `pos` their order in it (scan order is not kept by compaction);
#: `removed` marks a node deleted since the previous snapshot of the chain; `moved` a node
#: removed and put again (it goes to the end, as a replay would put it). `raw` holds a node
#: dict that is not in the usual shape, as JSON (the other columns are then best effort).
SNAP_NODES_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("snap", pa.int64(), nullable=False),
        pa.field("pos", pa.int64(), nullable=False),
        pa.field("id", pa.string(), nullable=False),
        pa.field("removed", pa.bool_(), nullable=False),
        pa.field("moved", pa.bool_(), nullable=False),
        pa.field("type", pa.string()),
        pa.field("level", pa.string()),
        pa.field("title", pa.string()),
        pa.field("fields", pa.large_string()),
        pa.field("parent_id", pa.string()),
        pa.field("children_ids", pa.list_(pa.string())),
        pa.field("seq_to", pa.int64()),
        pa.field("semantic_depth", pa.int64()),
        pa.field("semantic_rollup", pa.bool_()),
        pa.field("archived", pa.bool_()),
        pa.field("superseded_by", pa.string()),
        pa.field("raw", pa.large_string()),
    ]
)

#: A chat's edges (`src`, `type`, `dst` as stored: the `(from, type, to)` key).
SNAP_EDGES_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("snap", pa.int64(), nullable=False),
        pa.field("pos", pa.int64(), nullable=False),
        pa.field("src", pa.string(), nullable=False),
        pa.field("type", pa.string(), nullable=False),
        pa.field("dst", pa.string(), nullable=False),
        pa.field("removed", pa.bool_(), nullable=False),
        pa.field("moved", pa.bool_(), nullable=False),
        pa.field("seq_to", pa.int64()),
        pa.field("raw", pa.large_string()),
    ]
)


SNAP_KEYWORDS = "snap_keywords"

#: The keyword index's data of a snapshot row set, one row per row set (`keyword_rows.py`):
#: the tokenizer/schema fingerprint, the row set's new vocabulary (sorted, newline-separated, ids
#: from `first_tid`), and per node row (`pos` order) its token count, ids and frequencies.
SNAP_KEYWORDS_SCHEMA = pa.schema(
    [
        pa.field("chat_id", pa.string(), nullable=False),
        pa.field("snap", pa.int64(), nullable=False),
        pa.field("fingerprint", pa.string(), nullable=False),
        pa.field("first_tid", pa.int64(), nullable=False),
        pa.field("terms", pa.large_string(), nullable=False),
        pa.field("counts", pa.large_binary(), nullable=False),
        pa.field("tids", pa.large_binary(), nullable=False),
        pa.field("tfs", pa.large_binary(), nullable=False),
    ]
)


def nodes_table_name(dim: int) -> str:
    """Materialised nodes with their vectors; one table per vector dimension."""
    return "nodes" if dim == DEFAULT_DIM else f"nodes_d{dim}"


def table_names(db: lancedb.DBConnection) -> list[str]:
    """Every table of a database, page by page (`list_tables`; LanceDB deprecated
    `table_names`)."""
    names: list[str] = []
    token: str | None = None
    while True:
        page = db.list_tables(page_token=token)
        names.extend(page.tables)
        token = page.page_token
        if not token or not page.tables:
            return names


def vector_table_dims(db: lancedb.DBConnection) -> list[int]:
    """The dimensions of the vector tables in a database (written by any process)."""
    names = table_names(db)
    dims = [
        DEFAULT_DIM if n == "nodes" else int(n[len("nodes_d") :])
        for n in names
        if n == "nodes" or (n.startswith("nodes_d") and n[len("nodes_d") :].isdigit())
    ]
    return sorted(dims)


def nodes_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chat_id", pa.string(), nullable=False),
            pa.field("ckpt_version", pa.int64(), nullable=False),
            pa.field("id", pa.string(), nullable=False),
            pa.field("type", pa.string(), nullable=False),
            pa.field("title", pa.string()),
            pa.field("archived", pa.bool_(), nullable=False),
            pa.field("profile", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=False),
        ]
    )


#: New tables get V2 manifest paths (constant-time latest-version lookup) and stable row ids:
#: a row id is assigned when its append commits, in commit order, and survives compaction, so
#: "the smallest row id" is "the first committed" (scan order is not: compaction reorders rows).
TABLE_OPTIONS = {
    "new_table_enable_v2_manifest_paths": "true",
    "new_table_enable_stable_row_ids": "true",
}


#: `TABLE_OPTIONS` as pylance's `write_dataset` takes them (a table made without LanceDB)
PYLANCE_TABLE_OPTIONS = {"enable_v2_manifest_paths": True, "enable_stable_row_ids": True}


def open_or_create(db: lancedb.DBConnection, name: str, schema: pa.Schema) -> lancedb.table.Table:
    """Open `name`, creating it empty when missing; tolerates another process creating it too.
    A `table_reads.Database` in a local folder opens or makes it through pylance (no LanceDB
    import); LanceDB does it otherwise."""
    if isinstance(db, Database):
        table = db.open_or_make(name, schema, **PYLANCE_TABLE_OPTIONS)
        if table is not None:
            return table
    last: Exception | None = None
    for attempt in range(8):
        try:
            return db.open_table(name)
        except (ValueError, FileNotFoundError, RuntimeError) as exc:  # missing table
            last = exc
        try:
            created = db.create_table(
                name,
                schema=schema,
                exist_ok=True,
                storage_options=TABLE_OPTIONS,
            )
        except Exception as exc:  # a concurrent creator won (lancedb#1615): open theirs
            last = exc
            time.sleep(0.02 * (attempt + 1))
            continue
        if not isinstance(db, Database):
            return created
        try:  # opened again through pylance, as every later open is (`table_reads.TableHandle`)
            return db.open_table(name)
        except (ValueError, FileNotFoundError, RuntimeError):
            return created
    raise RuntimeError(f"cannot open or create LanceDB table {name!r}: {last}")


def table_stats(tables: list[tuple[str, Any]]) -> dict[str, Any]:
    """Rows, fragments and versions of each named LanceDB table."""
    out: dict[str, Any] = {}
    for name, table in tables:
        stats = table.stats()
        out[name] = {
            "rows": stats["num_rows"],
            "fragments": stats["fragment_stats"]["num_fragments"],
            "versions": len(table.list_versions()),
        }
    return out
