"""The place signal: a question asking where a named person went reaches that person's messages
that name a place (typed by the offline extractor), though they share no word with the
question; a real host with LanceDB and the built-in extraction."""

from __future__ import annotations

from pathlib import Path

from memgraph_plugin.recall.ranking.place_signal import asks_for_places
from tests.story_hosts import started_pipeline

CHAT = "c1"
JON = [
    "Took a short trip to Rome to clear my head.",
    "The studio floor is finally sanded and sealed.",
    "I practised the new routine for three hours straight.",
    "Just got back from Lisbon, the food was unreal.",
    "My students nailed their spins today.",
    "Money is tight but I keep going with the studio.",
]
GINA = [
    "That sounds great, Jon!",
    "I spent a weekend in Paris looking for fabrics.",
    "Visited a few cities for the store, but mostly I just work.",
    "My online store had its best week yet.",
    "Keep at it, you will get there.",
    "Haha, sounds like a plan.",
]


def test_questions_asking_for_places() -> None:
    assert asks_for_places("Which cities has Jon visited?")
    assert asks_for_places("Where did Caroline move from?")
    assert not asks_for_places("What has Jon been practising?")


async def test_where_a_person_went_is_found_through_the_places_of_their_messages(
    tmp_path: Path,
) -> None:
    async with started_pipeline(tmp_path) as pipeline:
        for jon, gina in zip(JON, GINA, strict=True):
            await pipeline.add_user_message(CHAT, jon, name="Jon")
            await pipeline.add_assistant_message(CHAT, gina, name="Gina")
        await pipeline.add_user_message(CHAT, "Which cities has Jon visited?", name="Gina")
        recall = await pipeline.recall(CHAT)
        said = [n.fields.get("summary") for n in recall.recalled]
        by_places = {
            recall_node.fields.get("summary")
            for recall_node in recall.recalled
            if "places" in (recall.why[recall_node.id].detail or "")
        }
        # Jon's two messages naming a place, first; Gina's Paris is not where Jon went
        assert set(said[:2]) == {JON[0], JON[3]}
        assert by_places == {JON[0], JON[3]}

        await pipeline.add_user_message(CHAT, "What has Jon been practising?", name="Gina")
        recall = await pipeline.recall(CHAT)
        details = [recall.why[n.id].detail or "" for n in recall.recalled]
        assert not any("places" in d for d in details)  # no place asked: no place list
