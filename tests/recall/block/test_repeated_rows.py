"""A row that says what a row already in the block says is left out, and its room goes to the
next-ranked item (`injection_budget.fit`, `repeated_rows.RowRepeats`)."""

from __future__ import annotations

from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.recall.block.injection_budget import fit
from memgraph_plugin.recall.block.repeated_rows import RowRepeats, normalised

SPECS = DEFAULT_SCHEMA.types


def _event(nid: str, summary: str, title: str = "") -> Node:
    return Node(id=nid, type="event", title=title or summary[:20], fields={"summary": summary})


def _ids(nodes: tuple[Node, ...]) -> list[str]:
    return [n.id for n in nodes]


def test_identical_and_near_identical_rows_collapse_and_free_their_room() -> None:
    canned = [
        _event("n_1", "I am not sure.", "Bot: not sure"),
        _event("n_2", "I'm not sure!", "Bot: not sure"),
        _event("n_3", "I am NOT sure...", "Bot: not sure"),
    ]
    facts = [_event("n_4", "My sister Maria lives in Lisbon.")]
    row = len("| n_9 | My sister Maria live | My sister Maria lives in Lisbon. |")
    budget = 2 * row + 160  # room for the table and two rows only
    fitted = fit([], [*canned, *facts], SPECS, budget=budget, max_cell=200)
    assert _ids(fitted.recalled) == ["n_1", "n_4"]  # the fact takes the repeats' room
    assert fitted.collapsed == ("n_2", "n_3")
    assert fitted.prompt.lower().count("not sure") == 2  # one row: its title and its summary


def test_a_recalled_row_repeating_the_pinned_scene_is_left_out() -> None:
    pinned = [_event("n_7", "I am not sure.", "Bot: not sure")]
    fitted = fit(pinned, [_event("n_1", "I am not sure", "Bot: not sure")], SPECS, budget=6000,
                 max_cell=200)  # fmt: skip
    assert _ids(fitted.pinned) == ["n_7"] and fitted.recalled == ()
    assert fitted.collapsed == ("n_1",)


def test_rows_with_other_numbers_or_of_other_types_stay() -> None:
    repeats = RowRepeats(SPECS, 200)
    repeats.keep(_event("n_1", "Maria moved to Lisbon in 2019.", "Maria moved"))
    assert not repeats.repeats(_event("n_2", "Maria moved to Lisbon in 2021.", "Maria moved"))
    assert repeats.repeats(_event("n_3", "Maria moved to Lisbon in 2019!", "Maria moved"))
    assert not repeats.repeats(_event("n_4", "Maria moved to Porto in 2019.", "Maria moved"))
    person = Node(id="n_5", type="character_sheet", title="Maria moved", fields={})
    assert not repeats.repeats(person)
    assert normalised("  I'm NOT   sure!! ") == "i m not sure"
