"""Rows of a node state table stored as raw JSON (a node the columns cannot hold: a pinned node,
a floor range, values of other types) decoded one by one, and the table's columns patched with
their values, so that a chat with such rows opens on the columnar path like any other
(`column_loader.load_node_columns`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.json_records import node_from_dict, node_to_dict
from ..model.models import Node

__all__ = ["patch_raw_rows"]

_PATCHED = {  # state column -> the key of `node_to_dict` holding its value
    "type": "type",
    "level": "level",
    "title": "title",
    "parent_id": "parentId",
    "children_ids": "childrenIds",
    "seq_to": "seqTo",
    "semantic_depth": "semanticDepth",
    "semantic_rollup": "semanticRollup",
    "archived": "archived",
    "superseded_by": "supersededBy",
}


def _flat(column: Any) -> Any:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def patch_raw_rows(nodes: pa.Table, raw_rows: np.ndarray) -> tuple[pa.Table, list[Node]]:
    """`nodes` with the columns of rows `raw_rows` set from their raw JSON, and those rows'
    decoded `Node`s (in `raw_rows` order: the records the node map starts with)."""
    ids = pc.take(nodes["id"], pa.array(raw_rows)).to_pylist()
    texts = pc.take(nodes["raw"], pa.array(raw_rows)).to_pylist()
    decoded = [node_from_dict(json.loads(t), key=nid) for nid, t in zip(ids, texts, strict=True)]
    shapes = [node_to_dict(node) for node in decoded]
    n = nodes.num_rows
    at = np.arange(n, dtype=np.int64)
    at[raw_rows] = n + np.arange(len(raw_rows), dtype=np.int64)
    where = pa.array(at)
    columns = {}
    for name in nodes.column_names:
        values: list[Any] | None = None
        if name in _PATCHED:
            values = [shape.get(_PATCHED[name]) for shape in shapes]
        elif name == "fields":
            values = [json.dumps(s["fields"], ensure_ascii=False, separators=(",", ":"))
                      for s in shapes]  # fmt: skip
        if values is None:
            columns[name] = nodes[name]
            continue
        column = _flat(nodes[name])
        patch = pa.array(values, type=column.type)
        columns[name] = pa.concat_arrays([column, patch]).take(where)
    return pa.table(columns, schema=nodes.schema), decoded
