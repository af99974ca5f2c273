"""Prompt rendering: one table per type, pinned and recalled apart, cells escaped."""

from types import MappingProxyType

import attrs

from memgraph_plugin.recall.block.render import (
    PINNED_HEADING,
    RECALLED_HEADING,
    escape_cell,
    render_injection,
)


@attrs.frozen
class N:
    id: str
    type: str
    title: str
    fields: MappingProxyType


@attrs.frozen
class Spec:
    type: str
    table_name: str
    table_columns: tuple


SPECS = [
    Spec("event", "event_table", ("summary",)),
    Spec("character_sheet", "character_table", ("title", "aliases", "traits")),
]


def node(id, type, heading, **fields):
    return N(id, type, heading, MappingProxyType(fields))


def test_escape_cell():
    assert escape_cell("a|b\nc") == "a\\|b<br>c"
    assert escape_cell(("x", "y|z")) == "x, y\\|z"
    assert escape_cell(None) == ""


def test_pinned_and_recalled_blocks_apart_one_table_per_type():
    pinned = [node("n_1", "event", "Summary 1", summary="The ledger | was stolen\nat dusk")]
    recalled = [
        node("n_2", "character_sheet", "Mara", title="Mara", aliases=("玛拉", "Captain")),
        node("n_3", "event", "Summary 2", summary="A deal"),
    ]
    text = render_injection(pinned, recalled, SPECS, why={"n_2": "seed 0.50"})
    # recalled first (most relevant first), the pinned current scene after it
    recalled_part, pinned_part = text.split(PINNED_HEADING)
    assert recalled_part.startswith(RECALLED_HEADING)
    assert "### event_table" in pinned_part and "character_table" not in pinned_part
    assert "The ledger \\| was stolen<br>at dusk" in pinned_part
    # recalled: a type's table comes where its best node does (Mara first), provenance column
    assert recalled_part.index("### character_table") < recalled_part.index("### event_table")
    assert "| n_2 | Mara | 玛拉, Captain | seed 0.50 |" in recalled_part
    assert "traits" not in recalled_part  # empty in every row: left out
    # every table row has the same number of unescaped pipes as its header
    for table in text.split("### ")[1:]:
        rows = [r for r in table.splitlines() if r.startswith("|")]
        widths = {r.replace("\\|", "").count("|") for r in rows}
        assert len(widths) == 1, table


def test_cells_are_clipped_to_max_cell():
    long = node("n_4", "event", "Summary 4", summary="word " * 100)
    text = render_injection([], [long], SPECS, max_cell=40)
    row = next(r for r in text.splitlines() if r.startswith("| n_4"))
    assert "…" in row and len(row) < 80


def test_empty_injection_renders_nothing():
    assert render_injection([], [], SPECS) == ""
    only_recalled = render_injection([], [node("n_9", "other", "X", colour="red")], SPECS)
    assert PINNED_HEADING not in only_recalled
    assert "| id | title | colour |" in only_recalled


@attrs.frozen
class TimelineSpec(Spec):
    compression_mode: str = "hierarchical"


def test_a_person_or_place_shows_its_other_fields_an_event_its_columns_only():
    specs = [
        TimelineSpec("event", "event_table", ("summary",)),
        Spec("character_sheet", "character_table", ("title", "aliases", "traits")),
    ]
    mira = node(
        "n_1", "character_sheet", "Mira", title="Mira", traits=["likes fishing", "brave"],
        likes=["fishing", "chess"], note="afraid of deep water",
    )  # fmt: skip
    told = node("n_2", "event", "Summary 2", summary="Mira sails", speaker="Mira", message=4)
    text = render_injection([], [mira, told], specs)
    # an added note is a column of its own; a raw fact list shows only what traits do not
    assert "| id | title | traits | likes | note |" in text
    assert "| n_1 | Mira | likes fishing, brave | chess | afraid of deep water |" in text
    # an event's bookkeeping fields stay out of the prompt
    assert "| n_2 | Summary 2 | Mira sails |" in text
    assert "speaker" not in text and "| 4 |" not in text
    # clipped to the item budget like every cell
    clipped = render_injection([], [mira], specs, max_cell=8)
    assert "| afraid … |" in clipped
