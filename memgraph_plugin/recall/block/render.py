"""Render the injected memory as the prompt text the next turn receives.

Recalled nodes first (most relevant first; a type's table placed by its best node), then the
pinned (always-inject) nodes of the current scene, nearest the conversation. One markdown table
per node type; cells are escaped so that a ``|`` or a line break in a field never breaks the
table, and clipped to ``max_cell`` characters when given.

A type's table has its schema columns, and for the types off the timeline (people, places,
threads: what a person corrects) every other field a row holds too (a note a person added in the
explorer or the panel reaches the model); in those extra cells a value the row already shows in
a schema column is left out (a sheet's raw fact lists, shown in its traits and identity).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

PINNED_HEADING = "## Pinned memory"
RECALLED_HEADING = "## Recalled memory"
EMPTY_TEXT = ""


class _NodeLike(Protocol):
    id: str
    type: str
    title: str
    fields: Mapping[str, Any]


class _SpecLike(Protocol):
    type: str
    table_name: str
    table_columns: Sequence[str]


def escape_cell(value: Any, max_cell: int | None = None) -> str:
    """One table cell: lists joined with ``, ``, pipes escaped, line breaks turned into ``<br>``;
    longer than ``max_cell``: cut, ending in ``…``."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, set, frozenset)):
        text = ", ".join(escape_cell(v) for v in value)
    elif isinstance(value, Mapping):
        text = "; ".join(f"{k}: {escape_cell(v)}" for k, v in value.items())
    else:
        text = str(value)
        text = text.replace("\\", "\\\\").replace("|", "\\|")
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>").strip()
    if max_cell is not None and len(text) > max_cell:
        text = text[: max(0, max_cell - 1)].rstrip("\\") + "…"
    return text


def _on_timeline(spec: Any) -> bool:
    """A rolled-up or episodic type (events): its rows show the schema's columns only."""
    return (
        getattr(spec, "compression_mode", "none") == "hierarchical"
        or getattr(spec, "level", "semantic") == "episodic"
    )


def _schema_columns(type_name: str, specs: Mapping[str, _SpecLike]) -> tuple[str, ...]:
    spec = specs.get(type_name)
    return tuple(spec.table_columns) if spec is not None else ()


def _columns_for(
    type_name: str, specs: Mapping[str, _SpecLike], nodes: Sequence[_NodeLike]
) -> list[str]:
    """The schema's columns, then (a type off the timeline, or one the schema has no columns
    for) every other field the nodes hold, in first-seen order."""
    spec = specs.get(type_name)
    columns = list(_schema_columns(type_name, specs))
    if columns and _on_timeline(spec):
        return columns
    seen: dict[str, None] = dict.fromkeys(columns)
    for node in nodes:
        for key in node.fields:
            seen.setdefault(str(key), None)
    return list(seen)


def _cell(node: _NodeLike, column: str) -> Any:
    if column == "title":
        return node.fields.get("title") or node.title
    return node.fields.get(column)


def _unshown(value: Any, shown: str) -> Any:
    """`value` without what `shown` (the row's schema cells, lower case) already says."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return [v for v in value if escape_cell(v).casefold() not in shown]
    return None if escape_cell(value).casefold() in shown else value


def _value(node: _NodeLike, column: str, schema_columns: Sequence[str]) -> Any:
    """A cell's value; an extra field's leaves out what the row's schema cells show."""
    value = _cell(node, column)
    if not schema_columns or column in schema_columns or value is None:
        return value
    shown = " | ".join(
        escape_cell(_cell(node, c)) for c in ("title", *schema_columns)
    ).casefold()
    return _unshown(value, shown)


def render_table(
    type_name: str,
    nodes: Sequence[_NodeLike],
    specs: Mapping[str, _SpecLike],
    *,
    why: Mapping[str, str] | None = None,
    max_cell: int | None = None,
) -> str:
    """A ``### table`` heading and a markdown table for nodes of one type."""
    base = _schema_columns(type_name, specs)
    columns = [  # a column empty in every row only costs prompt space
        c
        for c in _columns_for(type_name, specs, nodes)
        if c == "title" or any(escape_cell(_value(n, c, base)) for n in nodes)
    ]
    spec = specs.get(type_name)
    name = spec.table_name if spec is not None and spec.table_name else type_name
    header = ["id", *columns]
    if "title" not in columns:
        header.insert(1, "title")
    if why is not None:
        header.append("why")
    lines = [f"### {escape_cell(name)}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(" --- " for _ in header) + "|")
    for node in nodes:
        cells = row_cells(node, columns, why, max_cell, schema_columns=base)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def row_cells(
    node: _NodeLike,
    columns: Sequence[str],
    why: Mapping[str, str] | None = None,
    max_cell: int | None = None,
    *,
    schema_columns: Sequence[str] = (),
) -> list[str]:
    """The cells of one node's row: id, title, the columns (and ``why`` when given); a column
    outside `schema_columns` (an extra field) leaves out what the schema's cells show."""
    cells = [escape_cell(node.id)]
    if "title" not in columns:
        cells.append(escape_cell(node.title, max_cell))
    cells.extend(escape_cell(_value(node, c, schema_columns), max_cell) for c in columns)
    if why is not None:
        cells.append(escape_cell(why.get(node.id, "")))
    return cells


def node_columns(node: _NodeLike, specs: Iterable[_SpecLike]) -> list[str]:
    """The columns a table holding the node has for it: the schema's, and the extra fields
    this node shows."""
    by_type = {s.type: s for s in specs}
    base = _schema_columns(node.type, by_type)
    return [
        c
        for c in _columns_for(node.type, by_type, [node])
        if c in base or escape_cell(_value(node, c, base))
    ]


def item_text(node: _NodeLike, specs: Iterable[_SpecLike], max_cell: int | None = None) -> str:
    """One injected item as the prompt shows it: its row's cells joined by spaces."""
    by_type = {s.type: s for s in specs}
    columns = _columns_for(node.type, by_type, [node])
    base = _schema_columns(node.type, by_type)
    return " ".join(row_cells(node, columns, None, max_cell, schema_columns=base))


def content_text(node: _NodeLike, specs: Iterable[_SpecLike], max_cell: int | None = None) -> str:
    """What one item's row says: its cells but the id, joined by spaces (two nodes whose rows
    say the same have the same content text)."""
    by_type = {s.type: s for s in specs}
    columns = _columns_for(node.type, by_type, [node])
    return " ".join(row_cells(node, columns, None, max_cell)[1:])


def _group(
    nodes: Iterable[_NodeLike], order: Sequence[str] | None
) -> list[tuple[str, list[_NodeLike]]]:
    """Nodes by type; types in `order` (None: the order their first node comes in)."""
    groups: dict[str, list[_NodeLike]] = {}
    for node in nodes:
        groups.setdefault(node.type, []).append(node)
    if order is None:
        return list(groups.items())
    rank = {t: i for i, t in enumerate(order)}
    return sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def render_injection(
    pinned: Sequence[_NodeLike],
    recalled: Sequence[_NodeLike],
    specs: Iterable[_SpecLike],
    *,
    why: Mapping[str, str] | None = None,
    max_cell: int | None = None,
) -> str:
    """The prompt block: recalled tables (most relevant first; ``why`` adds a provenance
    column), then pinned tables (schema order). Nodes keep the order they were given in; a
    recalled type's table comes where its first node does. Empty input gives "".
    """
    spec_list = list(specs)
    by_type = {s.type: s for s in spec_list}
    order = [s.type for s in spec_list]
    blocks: list[str] = []
    for heading, nodes, provenance, type_order in (
        (RECALLED_HEADING, recalled, why, None),
        (PINNED_HEADING, pinned, None, order),
    ):
        if not nodes:
            continue
        tables = [
            render_table(t, group, by_type, why=provenance, max_cell=max_cell)
            for t, group in _group(nodes, type_order)
        ]
        blocks.append(heading + "\n\n" + "\n\n".join(tables))
    return "\n\n".join(blocks) + ("\n" if blocks else EMPTY_TEXT)
