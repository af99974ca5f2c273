"""The name index of a store opened from columns, built from its title and fields columns: the
index the first lookup after an open builds (`Store.name_index`), without making a `Node` for
each named node or parsing their fields one by one (every latest-only node of a long chat: a
character sheet, a place, a thread, is named).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ..index.name_index import NameIndex, primary_key_values
from ..model.schema import Schema
from .column_loader import LoadedColumns, parse_all

__all__ = ["names_from_columns"]


def names_from_columns(loaded: LoadedColumns, schema: Schema) -> NameIndex:
    """The name index of the loaded rows (what `NameIndex(schema, nodes)` gives for them). Once
    the node map dropped its columns (every record made), from the records."""
    index = NameIndex(schema)
    rows, specs = loaded.named_rows(schema)
    nodes = loaded.nodes
    ids = loaded.id_objs[rows].tolist()
    titles, texts = nodes.loaded_column("title"), nodes.loaded_column("fields")
    if titles is None or texts is None:
        index.note_all((nid, nodes.get(nid)) for nid in ids)
        return index
    take = pa.array(rows, type=pa.int64())
    codes = loaded.type_codes()[rows].tolist()
    titles_of = titles.take(take).to_pylist()
    fields_of = parse_all(texts.take(take).to_pylist())
    empty: dict[str, Any] = {}

    def rows_of() -> Iterator[tuple[str, str, frozenset[str]]]:
        for nid, code, title, fields in zip(ids, codes, titles_of, fields_of, strict=True):
            spec = specs[code]
            assert spec is not None
            yield nid, spec.type, primary_key_values(spec, title or "", fields or empty)

    index.add_many(rows_of())
    return index
