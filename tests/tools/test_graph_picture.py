"""The graph picture: self-contained HTML, containment lines, types coloured, text escaped."""

import re
from types import MappingProxyType

import attrs

from memgraph_plugin.tools.graph_picture import render_graph_html, write_graph_html
from memgraph_plugin.type_colours import TYPE_COLOURS, colour_of, colours_of


@attrs.frozen
class N:
    id: str
    type: str
    title: str
    fields: MappingProxyType = MappingProxyType({})
    seq_to: int | None = None
    children_ids: tuple = ()
    semantic_depth: int = 0
    semantic_rollup: bool = False
    archived: bool = False


@attrs.frozen
class E:
    source: str
    target: str
    type: str


def _graph():
    leaves = [N(f"e{i}", "event", f"Event {i}", seq_to=i) for i in range(1, 7)]
    r1 = N(
        "r1",
        "event",
        "Summary L1",
        seq_to=3,
        children_ids=("e1", "e2", "e3"),
        semantic_depth=1,
        semantic_rollup=True,
    )
    people = [
        N(
            "c1",
            "character_sheet",
            "Mara <the | smuggler>",
            MappingProxyType({"aliases": ("玛拉",)}),
        ),
        N("c2", "character_sheet", "Old Mara", archived=True),
        N("l1", "location_state", "Skyharbor"),
    ]
    edges = [E("c1", "e4", "involved_in"), E("e4", "l1", "occurred_at")]
    edges += [E("r1", c, "contains") for c in r1.children_ids]
    return [*leaves, r1, *people], edges


def test_page_is_self_contained_svg_with_containment(tmp_path):
    nodes, edges = _graph()
    path = write_graph_html(
        tmp_path / "out" / "graph.html", nodes, edges, hierarchical=["event"], title="T & T"
    )
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "</svg>" in text
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org", "")
    assert text.count('class="contains"') == 3
    assert text.count('class="rel"') == 2
    assert 'class="node archived"' in text
    assert "Mara &lt;the | smuggler&gt;" in text and "T &amp; T" in text
    fills = dict(
        re.findall(
            r'data-type="([a-z_]+)"><title>[^<]*</title><(?:circle|rect)[^>]*fill="(#[0-9a-f]+)"',
            text,
        )
    )
    assert len(set(fills.values())) == 3  # one colour per type
    assert fills == colours_of(fills)  # the scheme the explorer draws with too
    assert not list(tmp_path.glob("out/*.tmp"))


def test_rollup_sits_above_its_children():
    nodes, edges = _graph()
    text = render_graph_html(nodes, edges, hierarchical=["event"], title="t")

    def y_of(node_id):
        m = re.search(rf'data-id="{node_id}".*?(?:cy|y)="([0-9.]+)"', text, re.S)
        return float(m.group(1))

    assert y_of("r1") < y_of("e1")


def test_a_type_has_one_colour_everywhere():
    """Fixed colours for the default types; any other type a palette colour by its name alone
    (the same in every chat and process: no order of appearance, no per-run hash seed)."""
    assert colour_of("event") == TYPE_COLOURS["event"] == "#4e79a7"
    assert colour_of("faction") == colour_of("faction") == colours_of(["x", "faction"])["faction"]
    assert colour_of("faction") not in TYPE_COLOURS.values()
    assert len({colour_of(f"type{i}") for i in range(40)}) > 3
