"""Entity typing and resolution without a model: place and person cues, titles and
aliases joined, spelling variants joined and look-alike names kept apart, on a hand-written
role-play chat and the demo story, through a real host with LanceDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from host import Host
from memgraph_plugin.engine.index.name_index import MAX_NAMES, merge_names, name_skeleton
from memgraph_plugin.extraction import find_mentions
from memgraph_plugin.extraction.naming.variants import spelling_variant
from memgraph_plugin.turn import pipeline_for

ROLEPLAY = Path(__file__).parents[1] / "roleplay_chat.json"
STORY = Path(__file__).resolve().parents[3] / "sample_plugins" / "story" / "story.json"
CHARACTER, PLACE = "character_sheet", "location_state"


def kinds(text: str, **kwargs) -> dict[str, str]:
    return {m.name: m.kind for m in find_mentions(text, **kwargs)}


def test_place_cues() -> None:
    found = kinds(
        "Below Mount Veyl the road forks. We stop at the Gilded Stag inn, then ride for "
        "Durnholt. The bridge at Miller's Ford is out; word came from Port Calder that the "
        "Salt Archive burned, and smoke rises over Greywater."
    )
    assert found == {
        "Mount Veyl": "place", "Gilded Stag": "place", "Durnholt": "place",
        "Miller's Ford": "place", "Port Calder": "place", "Salt Archive": "place",
        "Greywater": "place",
    }


def test_a_journey_to_a_place_with_when_words_between() -> None:
    assert kinds("Took a short trip last week to Rome to clear my head.") == {"Rome": "place"}
    assert kinds("We went back to Durnholt.") == {"Durnholt": "place"}
    # a journey verb further back, across other words, says nothing about the name
    assert kinds("I went to talk to Anna yesterday.")["Anna"] != "place"
    assert kinds("I said goodbye to Anna last week.")["Anna"] != "place"


def test_person_cues_titles_and_disagreement() -> None:
    found = find_mentions(
        "A messenger of the Duke of Ardent waits. Captain Rourke says nothing, Old Hessa "
        "laughs, and the Fence squints at us from the airship Grey Heron."
    )
    by_name = {m.name: m for m in found}
    assert by_name["Duke of Ardent"].kind == "person"  # the title is the name
    assert (by_name["Rourke"].kind, by_name["Rourke"].aliases) == ("person", ("Captain Rourke",))
    assert (by_name["Hessa"].kind, by_name["Hessa"].aliases) == ("person", ("Old Hessa",))
    assert by_name["Fence"].kind == "entity"  # "the" (not a person) against "squints"
    assert by_name["Grey Heron"].kind == "entity"  # a vessel: neither person nor place
    # no cue at all: a name is a person as before (the extractor's default)
    assert kinds("Yesterday Melanie saw Jon.") == {"Melanie": "", "Jon": ""}
    assert kinds("Melanie met Jon.")["Jon"] == "person"  # met: a person
    # a place preposition against a verb of speech: left open
    assert kinds("They met in Thorne, says the clerk. Inside Thorne says no.")["Thorne"] == (
        "entity"
    )


def test_spelling_variants_and_false_merges() -> None:
    for a, b in [("Muhhamed", "Muhammad"), ("Muhammad", "Mohammed"), ("Jonathan", "Jonathon")]:
        assert spelling_variant(a, b) and spelling_variant(b, a)
    for a, b in [
        ("Mara", "Maria"), ("Caroline", "Carolina"), ("Daniel", "Danielle"),
        ("Melanie", "Melania"), ("Bailey", "Billy"), ("Karen", "Koren"), ("Martin", "Morton"),
        ("Oliver", "Olivia"), ("Stefan", "Stephan"), ("Muhammad", "Muhammad"),
        ("Muhammad Ali", "Mohammed"),
    ]:
        assert not spelling_variant(a, b), (a, b)


async def _graph_of(tmp_path: Path, messages: list[dict]) -> dict[str, dict]:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        for m in messages:
            user = m["role"] == "user"
            add = pipeline.add_user_message if user else pipeline.add_assistant_message
            await add("rp", m["text"], name=m["name"])
        session = await pipeline.open_session("rp")
        nodes = session.store.to_dict()["nodes"].values()
        return {n["title"]: n for n in nodes if n["type"] != "event" and not n.get("archived")}
    finally:
        await host.stop()


async def test_roleplay_chat_types_and_joins_names(tmp_path: Path) -> None:
    messages = json.loads(ROLEPLAY.read_text())["messages"]
    nodes = await _graph_of(tmp_path, messages)
    types = {title: n["type"] for title, n in nodes.items()}
    for place in ("Mount Veyl", "Gilded Stag", "Greywater", "Durnholt", "Miller's Ford",
                  "Port Calder", "Salt Archive", "Qel"):
        assert types.get(place) == PLACE, (place, types.get(place))
    for person in ("Rourke", "Duke of Ardent", "Muhammad", "Hessa", "Wren", "Tomas", "Mira"):
        assert types.get(person) == CHARACTER, (person, types.get(person))
    for wrong in ("Miller", "Ford", "Calder", "Grey Heron", "Captain Rourke", "Aldric Rourke",
                  "Mohammed", "Muhhamed"):
        assert wrong not in nodes, wrong
    assert {"Captain Rourke", "Aldric Rourke"} <= set(nodes["Rourke"]["fields"]["aliases"])
    assert {"Muhhamed", "Mohammed"} <= set(nodes["Muhammad"]["fields"]["aliases"])


async def test_demo_story_places_are_not_characters(tmp_path: Path) -> None:
    turns = json.loads(STORY.read_text())["turns"]
    messages = []
    for turn in turns:
        messages.append({"name": "Ilya", "role": "user", "text": turn["user"]})
        messages.append({"name": "Narrator", "role": "assistant", "text": turn["assistant"]})
    nodes = await _graph_of(tmp_path, messages)
    types = {title: n["type"] for title, n in nodes.items()}
    assert types["Qel"] == PLACE and types["Salt Archive"] == PLACE
    assert types.get("Grey Heron") != CHARACTER and types.get("Heron") != CHARACTER
    assert "Fence" not in types
    assert types["Hollen Drake"] == CHARACTER and types["Mara"] == CHARACTER


@pytest.mark.parametrize("name", ["Mohammed", "Muhhamed"])
async def test_a_variant_opening_a_sentence_is_the_known_person(tmp_path: Path, name) -> None:
    nodes = await _graph_of(tmp_path, [
        {"name": "Tomas", "role": "user", "text": "We should find Muhammad before dark."},
        {"name": "Narrator", "role": "assistant", "text": f"{name} waits by the gate."},
    ])
    assert name in nodes["Muhammad"]["fields"]["aliases"] and name not in nodes


async def test_numbered_names_are_not_one_person(tmp_path: Path) -> None:
    """ "Guard 2" is not "Guard 1" (a numbered name names one of several), and their shared
    word alone joins nothing."""
    nodes = await _graph_of(tmp_path, [
        {"name": "Guard 1", "role": "user", "text": "Guard 1: Halt! Name your business."},
        {"name": "Guard 2", "role": "assistant", "text": "Guard 2: Let them pass, Guard."},
    ])
    assert nodes["Guard 1"]["type"] == CHARACTER and nodes["Guard 2"]["type"] == CHARACTER
    assert "Guard 2" not in (nodes["Guard 1"]["fields"].get("aliases") or ())


def test_a_node_keeps_a_bounded_number_of_names() -> None:
    """A merge past `MAX_NAMES` keeps every name it knew and drops the new ones, so re-indexing
    a node on a write never grows with how often an extractor found a "new" name for it."""
    names: object = ("Rourke",)
    for k in range(3 * MAX_NAMES):
        names = merge_names(names, f"Rourke the {k}th")
    assert len(names) == MAX_NAMES and names[:2] == ("Rourke", "Rourke the 0th")
    assert merge_names(names, "rourke") is names  # nothing new: the same value back
    assert name_skeleton("Room 101") != name_skeleton("Room 102")
    assert name_skeleton("Muhhamed") == name_skeleton("Mohammed") == "mhmd"
