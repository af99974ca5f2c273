"""Render the injected memory as the prompt text the next turn receives.

One markdown table per node type, pinned (always-inject) and recalled nodes in separate blocks.
Cells are escaped so that a ``|`` or a line break in a field never breaks the table.
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


def escape_cell(value: Any) -> str:
    """One table cell: lists joined with ``, ``, pipes escaped, line breaks turned into ``<br>``."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, set, frozenset)):
        text = ", ".join(escape_cell(v) for v in value)
        return text
    if isinstance(value, Mapping):
        text = "; ".join(f"{k}: {escape_cell(v)}" for k, v in value.items())
        return text
    text = str(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")
    return text.strip()


def _columns_for(
    type_name: str, specs: Mapping[str, _SpecLike], nodes: Sequence[_NodeLike]
) -> list[str]:
    spec = specs.get(type_name)
    columns = list(spec.table_columns) if spec is not None else []
    if not columns:  # unknown type: every field seen, in first-seen order
        seen: dict[str, None] = {}
        for node in nodes:
            for key in node.fields:
                seen.setdefault(str(key), None)
        columns = list(seen)
    return columns


def _cell(node: _NodeLike, column: str) -> Any:
    if column == "title":
        return node.fields.get("title") or node.title
    return node.fields.get(column)


def render_table(
    type_name: str,
    nodes: Sequence[_NodeLike],
    specs: Mapping[str, _SpecLike],
    *,
    why: Mapping[str, str] | None = None,
) -> str:
    """A ``### table`` heading and a markdown table for nodes of one type."""
    columns = [  # a column empty in every row only costs prompt space
        c
        for c in _columns_for(type_name, specs, nodes)
        if c == "title" or any(escape_cell(_cell(n, c)) for n in nodes)
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
        cells = [escape_cell(node.id)]
        if "title" not in columns:
            cells.append(escape_cell(node.title))
        cells.extend(escape_cell(_cell(node, c)) for c in columns)
        if why is not None:
            cells.append(escape_cell(why.get(node.id, "")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _group(nodes: Iterable[_NodeLike], order: Sequence[str]) -> list[tuple[str, list[_NodeLike]]]:
    groups: dict[str, list[_NodeLike]] = {}
    for node in nodes:
        groups.setdefault(node.type, []).append(node)
    rank = {t: i for i, t in enumerate(order)}
    return sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def render_injection(
    pinned: Sequence[_NodeLike],
    recalled: Sequence[_NodeLike],
    specs: Iterable[_SpecLike],
    *,
    why: Mapping[str, str] | None = None,
) -> str:
    """The prompt block: pinned tables, then recalled tables (``why`` adds a provenance column).

    Types appear in schema order; nodes keep the order they were given in. Empty input gives "".
    """
    spec_list = list(specs)
    by_type = {s.type: s for s in spec_list}
    order = [s.type for s in spec_list]
    blocks: list[str] = []
    for heading, nodes, provenance in (
        (PINNED_HEADING, pinned, None),
        (RECALLED_HEADING, recalled, why),
    ):
        if not nodes:
            continue
        tables = [
            render_table(t, group, by_type, why=provenance) for t, group in _group(nodes, order)
        ]
        blocks.append(heading + "\n\n" + "\n\n".join(tables))
    return "\n\n".join(blocks) + ("\n" if blocks else EMPTY_TEXT)
