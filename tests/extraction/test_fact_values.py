"""Clean facts on character sheets: a hobby is an activity, not a state or a
thought in progress; a like is a thing, not a clause; every message stating a fact is linked to
the sheet as evidence, also when the sheet held that fact already (real host, real LanceDB)."""

from __future__ import annotations

from pathlib import Path

from memgraph_plugin.extraction.fact_values import activity_of, hobby_value, like_value
from memgraph_plugin.extraction.facts import person_facts
from tests.story_hosts import started_pipeline


def test_a_hobby_is_an_activity_cut_before_its_time_place_and_company() -> None:
    assert hobby_value("playing acoustic guitar about five years") == "playing acoustic guitar"
    assert hobby_value("running farther to de-stress") == "running farther"
    assert hobby_value("painting together") == "painting"
    assert hobby_value("volunteering at a homeless shelter") == "volunteering"
    assert hobby_value("pottery class") == "pottery class"
    for state in (
        "transitioning three years ago",
        "looking into counseling",
        "caring",
        "feeling kinda low",
        "thinking about how education",
    ):
        assert hobby_value(state) == "", state
    assert hobby_value("it") == "" and hobby_value("both classical") == ""
    assert activity_of("swimming with the kids") == "swimming"
    assert activity_of("looking around") is None and activity_of("pottery") is None


def test_a_like_is_a_thing_not_a_clause() -> None:
    assert like_value("card games") == "card games"
    for clause in (
        "how you use it to tell",
        "it and",
        "to just take a look at",
        "is awesome",
        "seeing you happy",
    ):
        assert like_value(clause) == "", clause


def test_statements_of_states_make_no_hobbies_and_liked_activities_are_hobbies() -> None:
    said = (
        "I've been transitioning three years ago. I've been looking into counseling and mental "
        "health as a career. I love how you use it to tell stories."
    )
    assert person_facts(said, "Caroline", []) == {}
    facts = person_facts(
        "I have taken up knitting. I just signed up for a pottery class yesterday. I play the "
        "clarinet. We love painting together lately. I've been playing guitar for five years.",
        "Ann",
        [],
    )
    assert facts == {
        "Ann": {
            "hobbies": ["knitting", "pottery class", "clarinet", "painting", "playing guitar"],
            "likes": ["painting together"],
        }
    }


async def test_each_message_stating_a_fact_is_evidence_even_when_the_sheet_held_it(
    tmp_path: Path,
) -> None:
    async with started_pipeline(tmp_path) as pipeline:
        said = [
            ("Nora", "I went swimming with my brother this morning."),
            ("Ivo", "Nice! I spent the day on paperwork."),
            ("Nora", "We went swimming again at the lake, the water was cold."),
            ("Ivo", "Brave of you."),
            ("Nora", "I've been looking into a new job lately."),
        ]
        for number, (name, text) in enumerate(said):
            add = pipeline.add_user_message if number % 2 == 0 else pipeline.add_assistant_message
            await add("c", text, name=name)
        session = await pipeline.open_session("c")
        store = session.store
        sheets = {n.title: n for n in store.newest_in_pool("character_sheet", 10)}
        nora = sheets["Nora"]
        assert list(nora.fields["hobbies"]) == ["swimming"]  # once, though said twice
        evidence = {
            store.node(k[2]).fields["summary"]
            for k in store.out_edges(nora.id)
            if k[1] == "evidence"
        }
        # both swimming messages are evidence; the job search states no hobby
        assert evidence == {said[0][1], said[2][1]}
