"""Node state tables of plain events built as columns (fast, for large stored chats)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from memgraph_plugin.storage.format.graph_columns import NODE_SCHEMA


def event_table(
    ids: list[str], titles: list[str], fields: list[str], seq_to: np.ndarray
) -> pa.Table:
    """One semantic event per id: its title, its fields (JSON text) and its ``seq_to``; no
    parents, children or rollups."""
    n = len(ids)
    return pa.table(
        {
            "id": ids,
            "removed": np.zeros(n, dtype=bool),
            "moved": np.zeros(n, dtype=bool),
            "type": ["event"] * n,
            "level": ["semantic"] * n,
            "title": titles,
            "fields": fields,
            "parent_id": [""] * n,
            "children_ids": pa.array([[]] * n, pa.list_(pa.string())),
            "seq_to": seq_to,
            "semantic_depth": np.zeros(n, dtype=np.int64),
            "semantic_rollup": np.zeros(n, dtype=bool),
            "archived": np.zeros(n, dtype=bool),
            "superseded_by": pa.nulls(n, pa.string()),
            "raw": pa.nulls(n, pa.large_string()),
        },
        schema=NODE_SCHEMA,
    )
