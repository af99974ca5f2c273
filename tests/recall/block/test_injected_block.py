"""The injected block earns its space: the question is never injected back, titles
say who/when/what instead of repeating the text, rollups are titled by their content, and
near-empty messages rank low and leave the pinned scene; a real host with LanceDB."""

from __future__ import annotations

import re
from pathlib import Path

from host import Host
from memgraph_plugin.extraction.titles import event_title, rollup_facts, rollup_title
from memgraph_plugin.recall.ranking.fusion import is_filler
from tests.recall.spoken_chat import spoken_chat

CHAT = "talk"
LINES = [
    ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Fair point."),
    ("Caroline", "The transgender stories there were so inspiring for my counseling plans."),
    ("Melanie", "I signed up for a pottery class yesterday, it is like therapy for me."),
    ("Caroline", "Thanks!"),
    ("Melanie", "We went camping at the beach with the kids, they loved the dinosaur exhibit."),
    ("Caroline", "Researching adoption agencies has been a dream of mine for years."),
    ("Melanie", "Okay, sure."),
    ("Caroline", "My grandma gave me this necklace in Sweden when I was young."),
    ("Melanie", "I play clarinet and violin to relax after work at the school."),
    ("Caroline", "Yes."),
    ("Melanie", "Running farther helps me de-stress, and painting sunsets too."),
]


async def _chat(tmp_path: Path) -> tuple[Host, object]:
    return await spoken_chat(tmp_path, CHAT, LINES, per_day=4)


def test_titles_say_who_when_and_what() -> None:
    text = "I signed up for a pottery class yesterday. It is like therapy for me."
    title = event_title(text, "Melanie", "2023-05-08T13:56:00", ["Caroline"])
    assert title.startswith("Melanie, 8 May 2023: ") and "Caroline" in title
    assert "pottery" in title and "therapy" in title
    assert not title.endswith(text.split(".")[0])  # not a copy of the first sentence
    facts = rollup_facts(
        [
            type("N", (), {"fields": {"speaker": "Caroline", "time_iso": "2023-05-08T10:00:00"}})(),
            type(
                "N",
                (),
                {
                    "fields": {
                        "speakers": ["Melanie"],
                        "time_span": ["2023-05-09T10:00:00", "2023-05-12T10:00:00"],
                    }
                },
            )(),
        ]
    )
    assert facts == {
        "speakers": ["Caroline", "Melanie"],
        "time_span": ["2023-05-08T10:00:00", "2023-05-12T10:00:00"],
    }
    title = rollup_title(facts, "Caroline: adoption agencies. Melanie: pottery class.")
    assert title.startswith("Caroline, Melanie, 8 May 2023 to 12 May 2023: ")
    assert "adoption" in title and len(title) <= 72


async def test_question_never_comes_back_fillers_rank_low_rollups_titled(tmp_path: Path) -> None:
    host, pipeline = await _chat(tmp_path)
    try:
        question = await pipeline.add_user_message(
            CHAT, "What does Melanie do to destress, pottery or running?", name="Caroline"
        )
        recall = await pipeline.recall(CHAT)
        injected = recall.injected
        assert all(n.fields.get("message") != question.index for n in injected)
        assert "What does Melanie do to destress" not in recall.prompt
        assert "## Pinned memory" in recall.prompt and "user:" not in recall.prompt
        assert all(not is_filler(n) for n in recall.pinned)  # "Yes.", "Okay, sure." left out
        events = [n for n in recall.recalled if n.type == "event" and not n.semantic_rollup]
        fillers = [i for i, n in enumerate(events) if is_filler(n)]
        full = [
            i
            for i, n in enumerate(events)
            if "pottery" in n.fields["summary"] or "Running" in n.fields["summary"]
        ]
        assert full and all(f > max(full) for f in fillers)
        assert len(recall.prompt) <= 6000

        session = await pipeline.open_session(CHAT)
        rollups = [n for n in session.store.newest_in_pool("event", 50) if n.semantic_rollup]
        rollups += [
            session.store.node(n.parent_id)
            for n in session.store.newest_in_pool("event", 50)
            if n.parent_id
        ]
        rollups = [r for r in rollups if r is not None and r.semantic_rollup]
        assert rollups, "the chat is long enough to be compacted"
        for rollup in rollups:
            assert not re.search(r"Summary L\d", rollup.title), rollup.title
            assert rollup.title.startswith(("Caroline", "Melanie")), rollup.title
            assert "2023" in rollup.title
    finally:
        await host.stop()


def test_filler_is_a_message_that_says_next_to_nothing() -> None:
    def node(summary: str, **more) -> object:
        return type(
            "N",
            (),
            {"fields": {"summary": summary, "message": 3}, "semantic_rollup": False, **more},
        )()

    assert is_filler(node("Fair point.")) and is_filler(node("Thanks, Mel!"))
    assert not is_filler(node("who is afraid of a dog?"))  # a question is never filler
    assert not is_filler(node("I signed up for a pottery class yesterday."))
