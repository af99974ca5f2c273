"""A picture of the memory graph: one self-contained HTML page with an inline SVG.

The SVG is built as an element tree (`xml.etree.ElementTree`), so every attribute and text is
escaped by the XML writer, not by hand. `edge_counts` is the one place that says how many
relation and containment edges there are; the demo's summary and the page both use it.

Layout (deterministic, no JavaScript): one band per non-hierarchical type (characters, places,
threads, ...) on top; below, each hierarchical type as a tree — leaves along the timeline at the
bottom, rollups above them by depth, containment drawn as solid coloured lines. Relation edges
are thin grey curves. Nodes are coloured by type (`type_colours`: the explorer's scheme too);
archived (merged away) nodes are faded.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..type_colours import colours_of

INTERNAL = {"contains", "semantic_contains"}
COL = 46  # horizontal step
ROW = 70  # vertical step
MARGIN = 60
PER_ROW = 28


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _label(node: Any, limit: int = 18) -> str:
    title = node.title or node.id
    if node.semantic_rollup and title.lower().startswith(node.type.lower() + " "):
        title = title[len(node.type) + 1 :]  # "event Summary L1 #4" -> "Summary L1 #4"
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _tooltip(node: Any) -> str:
    lines = [f"{node.id} · {node.type}" + (" (archived)" if node.archived else ""), node.title]
    for key, value in node.fields.items():
        if isinstance(value, (list, tuple)):
            value = ", ".join(map(str, value))
        lines.append(f"{key}: {value}")
    return "\n".join(line for line in lines if line)


def _text(parent: ET.Element, node: Any, x: float, bottom: float, hierarchical: bool) -> None:
    """The label under a node; timeline leaves get a slanted one so neighbours do not overlap."""
    if hierarchical and node.semantic_depth == 0:
        y = bottom + 10
        label = ET.SubElement(
            parent,
            "text",
            {"class": "slant", "x": f"{x:.1f}", "y": f"{y:.1f}",
             "transform": f"rotate(35 {x:.1f} {y:.1f})"},
        )  # fmt: skip
        label.text = _label(node, 24)
        return
    label = ET.SubElement(parent, "text", {"x": f"{x:.1f}", "y": f"{bottom + 12:.1f}"})
    label.text = _label(node)


@attrs.frozen
class EdgeCounts:
    """How many edges of each kind a picture draws (and a summary reports)."""

    relations: int  # relation edges between drawn nodes
    containment: int  # a rollup -> its child of the same type


def edge_counts(nodes: Sequence[Any], edges: Sequence[Any]) -> EdgeCounts:
    """The relation edges between the given nodes and the same-type containment links."""
    ids = {n.id for n in nodes}
    by_id = {n.id: n for n in nodes}
    relations = sum(
        1 for e in edges if e.type not in INTERNAL and e.source in ids and e.target in ids
    )
    containment = sum(
        1
        for n in nodes
        for child in n.children_ids
        if child in by_id and by_id[child].type == n.type
    )
    return EdgeCounts(relations, containment)


def _timeline(nodes: Iterable[Any]) -> list[Any]:
    return sorted(nodes, key=lambda n: (n.seq_to is None, n.seq_to or 0, n.id))


def layout(nodes: Sequence[Any], hierarchical: Iterable[str]) -> dict[str, tuple[float, float]]:
    """x, y per node id: entity bands spread over the width the timeline needs."""
    hier = set(hierarchical)
    pos: dict[str, tuple[float, float]] = {}
    by_type: dict[str, list[Any]] = {}
    for node in nodes:
        by_type.setdefault(node.type, []).append(node)
    leaves_max = max(
        (sum(1 for n in by_type[t] if n.semantic_depth == 0) for t in by_type if t in hier),
        default=0,
    )
    span = max(leaves_max * COL, PER_ROW * COL)
    left = MARGIN + 60
    y = MARGIN + 20
    for type_name in sorted(t for t in by_type if t not in hier):
        members = _timeline(by_type[type_name])
        per_row = min(PER_ROW, len(members))
        step = min(COL * 3, span / max(per_row, 1))
        for i, node in enumerate(members):
            pos[node.id] = (left + (i % PER_ROW) * step, y + (i // PER_ROW) * ROW * 0.8)
        y += ((len(members) - 1) // PER_ROW + 1) * ROW * 0.8 + ROW * 0.6
    for type_name in sorted(t for t in by_type if t in hier):
        members = by_type[type_name]
        top = max((n.semantic_depth for n in members), default=0)
        leaves = _timeline(n for n in members if n.semantic_depth == 0)
        for i, node in enumerate(leaves):
            pos[node.id] = (left + i * COL, y + top * ROW + ROW * 0.5)
        for depth in range(1, top + 1):  # a rollup sits above the middle of its children
            row = _timeline(n for n in members if n.semantic_depth == depth)
            for j, node in enumerate(row):
                xs = [pos[c][0] for c in node.children_ids if c in pos]
                x = sum(xs) / len(xs) if xs else left + j * COL
                pos[node.id] = (x, y + (top - depth) * ROW + ROW * 0.5)
        y += (top + 1) * ROW + ROW * 1.6  # room for the slanted leaf labels
    return pos


def render_svg(
    nodes: Sequence[Any], edges: Sequence[Any], *, hierarchical: Iterable[str]
) -> ET.Element:
    """The ``<svg>`` element of the picture."""
    hier = list(hierarchical)
    hier_set = set(hier)
    pos = layout(nodes, hier)
    colour = colours_of({n.type for n in nodes})
    by_id = {n.id: n for n in nodes}
    width = max((x for x, _ in pos.values()), default=0) + MARGIN * 2 + 140
    height = max((y for _, y in pos.values()), default=0) + MARGIN * 2
    svg = ET.Element(
        "svg",
        {"xmlns": "http://www.w3.org/2000/svg", "width": f"{width:.0f}",
         "height": f"{height:.0f}", "viewBox": f"0 0 {width:.0f} {height:.0f}"},
    )  # fmt: skip
    for edge in edges:  # relations first, under the containment lines and the nodes
        if edge.type in INTERNAL or edge.source not in pos or edge.target not in pos:
            continue
        (x1, y1), (x2, y2) = pos[edge.source], pos[edge.target]
        bend = (y1 + y2) / 2 - 30 - abs(x2 - x1) * 0.08
        path = ET.SubElement(
            svg,
            "path",
            {"class": "rel",
             "d": f"M{x1:.1f},{y1:.1f} Q{(x1 + x2) / 2:.1f},{bend:.1f} {x2:.1f},{y2:.1f}"},
        )  # fmt: skip
        ET.SubElement(path, "title").text = f"{edge.source} -[{edge.type}]-> {edge.target}"
    for node in nodes:
        if node.id not in pos:
            continue
        for child in node.children_ids:
            if child in pos and by_id[child].type == node.type:
                (x1, y1), (x2, y2) = pos[node.id], pos[child]
                ET.SubElement(
                    svg,
                    "line",
                    {"class": "contains", "x1": f"{x1:.1f}", "y1": f"{y1:.1f}",
                     "x2": f"{x2:.1f}", "y2": f"{y2:.1f}", "stroke": colour[node.type]},
                )  # fmt: skip
    for node in nodes:
        if node.id not in pos:
            continue
        x, y = pos[node.id]
        radius = 9 + 3 * node.semantic_depth
        group = ET.SubElement(
            svg,
            "g",
            {"class": "node archived" if node.archived else "node",
             "data-id": node.id, "data-type": node.type},
        )  # fmt: skip
        ET.SubElement(group, "title").text = _tooltip(node)
        if node.semantic_rollup:
            ET.SubElement(
                group,
                "rect",
                {"x": f"{x - radius:.1f}", "y": f"{y - radius:.1f}", "width": str(2 * radius),
                 "height": str(2 * radius), "rx": "4", "fill": colour[node.type]},
            )  # fmt: skip
        else:
            ET.SubElement(
                group,
                "circle",
                {"cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": str(radius), "fill": colour[node.type]},
            )
        _text(group, node, x, y + radius, node.type in hier_set)
    return svg


def render_graph_html(
    nodes: Sequence[Any], edges: Sequence[Any], *, hierarchical: Iterable[str], title: str
) -> str:
    """The page as a string. ``nodes``: NodeViews (archived ones too); ``edges``: EdgeViews."""
    svg = ET.tostring(render_svg(nodes, edges, hierarchical=hierarchical), encoding="unicode")
    types = sorted({n.type for n in nodes})
    colour = colours_of(types)
    legend = "".join(
        f'<span><i style="background:{colour[t]}"></i>{_esc(t)} '
        f"({sum(1 for n in nodes if n.type == t and not n.archived)})</span>"
        for t in types
    )
    active = sum(1 for n in nodes if not n.archived)
    rollups = sum(1 for n in nodes if n.semantic_rollup and not n.archived)
    counts = edge_counts(nodes, edges)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 16px; color: #222; }}
.legend span {{ margin-right: 14px; }} .legend i {{ display: inline-block; width: 12px;
  height: 12px; margin-right: 4px; border-radius: 2px; vertical-align: middle; }}
svg {{ border: 1px solid #ddd; background: #fcfcfc; }}
.rel {{ fill: none; stroke: #999; stroke-opacity: .35; stroke-width: 1; }}
.contains {{ stroke-width: 2.5; stroke-opacity: .8; }}
.node text {{ font-size: 9px; text-anchor: middle; fill: #333; }}
.node text.slant {{ text-anchor: start; }}
.node circle, .node rect {{ stroke: #fff; stroke-width: 1.5; }}
.archived {{ opacity: .3; }} .archived circle {{ stroke: #000; stroke-dasharray: 2 2; }}
</style></head><body>
<h1>{_esc(title)}</h1>
<p>{active} active nodes ({len(nodes) - active} archived), {rollups} rollups,
{counts.relations} relation edges, {counts.containment} containment links. Squares are rollups;
solid lines show which nodes a rollup contains; grey curves are relations. Hover a node for its
fields. For zoom, search and details: <code>memgraph-host serve</code>.</p>
<p class="legend">{legend}</p>
{svg}
</body></html>
"""


def write_graph_html(
    path: str | Path, nodes: Sequence[Any], edges: Sequence[Any], **kw: Any
) -> Path:
    """Write the page (atomically: a half-written picture is never left behind)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(render_graph_html(nodes, edges, **kw), encoding="utf-8")
    tmp.replace(path)
    return path
