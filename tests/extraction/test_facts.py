"""Facts about people gathered on their character sheets: statements of likes,
hobbies, job, family, relations, traits and plans become sheet fields with the message linked as
evidence, so "what are X's hobbies" is answered from one node; a real host with LanceDB."""

from __future__ import annotations

import json
from pathlib import Path

from memgraph_plugin.extraction.facts import MAX_VALUES, facts_fields, person_facts
from tests.story_hosts import started_pipeline

ROLEPLAY = Path(__file__).with_name("roleplay_chat.json")
CHAT = "rp"


def test_first_person_statements_of_the_speaker() -> None:
    facts = person_facts(
        "My hobbies are fishing and chess. I work as a cartographer, and my sister Mira lives "
        "in Durnholt. I'm planning to open a map shop. I love card games.",
        "Tomas",
        [],
    )
    assert facts == {"Tomas": {
        "hobbies": ["fishing", "chess"], "identity": ["cartographer"], "family": ["sister Mira"],
        "goal": ["open a map shop"], "likes": ["card games"],
    }}
    assert person_facts(
        "I'm off to go swimming with the kids. We went camping last week.", "Melanie", []
    ) == {"Melanie": {"hobbies": ["swimming", "camping"]}}
    # inside quotes, "I" is someone else speaking: not the message's speaker
    assert person_facts('"I love the sea," Rourke says.', "Narrator", ["Rourke"]) == {}
    assert person_facts("I love the sea.", "", []) == {}  # no speaker: nobody to give it to


def test_third_person_statements_and_a_pronoun_after_a_name() -> None:
    facts = person_facts(
        '"Rourke is a stubborn man," she says. "He hates the sea and he plans to retire in '
        'Port Calder."',
        "Narrator",
        ["Rourke", "Hessa"],
    )
    assert facts == {"Rourke": {
        "traits": ["stubborn man"], "dislikes": ["sea"], "goal": ["retire in Port Calder"],
    }}
    # two people named: "he" could be either, nothing is given to anyone
    assert person_facts("Rourke met Wren. He hates the sea.", "", ["Rourke", "Wren"]) == {}


def test_sheet_fields_show_facts_in_the_table_columns_and_stay_bounded() -> None:
    fields = facts_fields({"hobbies": ["fishing"], "identity": ["cartographer"]}, {})
    assert fields == {"hobbies": ["fishing"], "traits": ["hobby: fishing"],
                      "identity": ["cartographer"]}
    held = {"hobbies": ["fishing"], "traits": ["hobby: fishing"]}
    assert facts_fields({"hobbies": ["fishing"]}, held) == {}  # nothing new
    full = {"likes": [f"thing {i}" for i in range(MAX_VALUES)]}
    assert "likes" not in facts_fields({"likes": ["one more"]}, full)


async def test_sheets_gather_facts_with_evidence_and_answer_a_hobbies_question(
    tmp_path: Path,
) -> None:
    async with started_pipeline(tmp_path) as pipeline:
        for m in json.loads(ROLEPLAY.read_text())["messages"]:
            user = m["role"] == "user"
            add = pipeline.add_user_message if user else pipeline.add_assistant_message
            await add(CHAT, m["text"], name=m["name"])
        session = await pipeline.open_session(CHAT)
        store = session.store
        sheets = {n.title: n for n in store.newest_in_pool("character_sheet", 100)}
        tomas = sheets["Tomas"]
        # "I also enjoy painting": a liked activity is a hobby too
        assert list(tomas.fields["hobbies"]) == ["fishing", "chess", "painting"]
        assert list(tomas.fields["identity"]) == ["cartographer", "family: sister Mira"]
        assert "stubborn man" in sheets["Rourke"].fields["traits"]
        assert list(sheets["Rourke"].fields["goal"]) == ["retire in Port Calder"]
        assert list(sheets["Muhammad"].fields["likes"]) == ["card games", "strong coffee"]
        evidence = [store.node(k[2]) for k in store.out_edges(tomas.id) if k[1] == "evidence"]
        said = {e.fields["summary"] for e in evidence}
        assert "My hobbies are fishing and chess. I also enjoy painting in the evenings." in said

        question = await pipeline.add_user_message(CHAT, "What are Tomas's hobbies?", name="Tomas")
        recall = await pipeline.recall(CHAT)
        first = recall.recalled[0]
        assert first.fields["summary"].startswith("My hobbies are fishing and chess.")
        assert all(n.fields.get("message") != question.index for n in recall.injected)
        assert "What are Tomas's hobbies?" not in recall.prompt
        assert len(recall.prompt) <= 6000
