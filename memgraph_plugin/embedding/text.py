"""What text of a node is embedded: its title and its type's embedding columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memgraph_plugin.engine.model.schema import is_diagnostic_type


def embedding_columns_of(schema: Any) -> dict[str, tuple[str, ...]]:
    """type -> embedding columns, from a `Schema` (or anything with `.types` of specs)."""
    out: dict[str, tuple[str, ...]] = {}
    types = getattr(schema, "types", None) or ()
    if isinstance(types, Mapping):
        types = types.values()
    for spec in types:
        name = getattr(spec, "type", None) or getattr(spec, "id", None)
        cols = getattr(spec, "embedding_columns", None) or getattr(spec, "table_columns", ())
        if name:
            out[str(name)] = tuple(str(c) for c in cols)
    return out


def _flatten(value: Any) -> Iterable[str]:
    if value is None:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _flatten(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _flatten(v)
    else:
        yield str(value)


def node_text(node: Any, columns: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """Title plus the node type's embedding columns (every field when the type has none)."""
    if isinstance(node, Mapping):
        title, ntype, fields = node.get("title") or "", node.get("type", ""), node.get("fields")
    else:
        title, ntype, fields = node.title or "", node.type, node.fields
    fields = fields or {}
    cols = (columns or {}).get(str(ntype))
    parts = [str(title)]
    keys = cols if cols else tuple(fields)
    for key in keys:
        if key == "title":
            continue
        value = fields.get(key)
        if isinstance(value, str):  # the usual field: no generator
            parts.append(value)
        else:
            parts.extend(_flatten(value))
    return "\n".join([p for p in parts if p])


_MISSING = object()


def is_searchable(node: Any) -> bool:
    """Vector search skips archived and diagnostic (`recall`, `recall_*`) nodes."""
    archived = getattr(node, "archived", _MISSING)  # engine records: attribute access (fast path)
    if archived is _MISSING:
        archived, ntype = bool(node.get("archived")), str(node.get("type", ""))
    else:
        ntype = node.type
    return not archived and not is_diagnostic_type(ntype)


def node_type(node: Any) -> str:
    ntype = getattr(node, "type", _MISSING)
    return str(node.get("type", "")) if ntype is _MISSING else ntype


def node_id(node: Any) -> str:
    nid = getattr(node, "id", _MISSING)
    return str(node["id"]) if nid is _MISSING else nid
