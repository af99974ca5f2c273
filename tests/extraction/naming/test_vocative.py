"""A person a message only speaks to ("Thanks, Nora!") is not what the message is about: the
offline extractor leaves them out of the event's title and links no ``mentions`` edge to them,
so a question naming Nora reaches her own messages, not every reply said to her. On a real host
with LanceDB through the built-in offline extractor."""

from __future__ import annotations

from pathlib import Path

from memgraph_plugin.extraction import extract_message_ops
from memgraph_plugin.extraction.naming.vocative import addressed, only_addressed
from memgraph_plugin.recall.ranking.signals import entity_events
from tests.recall.spoken_chat import spoken_chat


def test_a_name_spoken_to_is_told_from_a_name_spoken_of() -> None:
    assert addressed("Thanks, Melanie!", "Melanie")
    assert addressed("Hey Mel, how was the trip?", "Mel")
    assert addressed("Wow, Melanie, that looks amazing.", "Melanie")
    assert addressed("Thank you Jon! See you.", "Jon")
    assert addressed("That was fun. Bye, Jon", "Jon")
    # spoken of: after a verb or preposition, possessive, or once of two uses
    assert not addressed("I went hiking with Melanie.", "Melanie")
    assert not addressed("Melanie's painting is great.", "Melanie")
    assert not addressed("I told Jon, he laughed.", "Jon")
    assert not addressed("Thanks, Jon! I met Jon's sister.", "Jon")
    assert not addressed("Thanks, Jon!", "Gina")  # not written at all
    assert not addressed("Jonathan came by.", "Jon")  # a word, never a part of one
    assert only_addressed("Thanks, Mel! You're the best.", ["Melanie", "Mel"])
    assert not only_addressed("Thanks, Mel! Melanie's cake was great.", ["Melanie", "Mel"])
    assert not only_addressed("No names here.", ["Melanie", "Mel"])


def _links(ops: list[dict], relation: str) -> list[dict]:
    return [
        link
        for op in ops
        if op["op"] == "link_upsert"
        for link in op["links"]
        if link["relation"] == relation
    ]


def test_a_long_message_is_read_around_each_name_only() -> None:
    """Each use is judged from a short window on either side: deep in a long message the answer
    is the same as at its start (and the cost grows with the text, not with its square)."""
    filler = "We walked along the quay and talked about the tides. " * 4000
    assert addressed(filler + "Thanks, Melanie!", "Melanie")
    assert addressed(filler + "Thank you Melanie.", "Melanie")
    assert not addressed(filler + "I went with Melanie.", "Melanie")
    many = " ".join(f"Thanks, Mel! ({i})" for i in range(20_000))
    assert addressed(many, "Mel")
    assert not addressed(many + " Mel's cake.", "Mel")


def test_the_title_and_links_leave_out_whom_the_message_is_said_to() -> None:
    said_to = extract_message_ops(
        "Thanks, Melanie! I painted a sunset at the beach.", speaker="Caroline"
    )
    title = said_to[0]["title"]
    assert title.startswith("Caroline") and "Melanie" not in title
    assert _links(said_to, "mentions") == []
    said_of = extract_message_ops(
        "I painted a sunset with Melanie at the beach.", speaker="Caroline"
    )
    assert "Melanie" in said_of[0]["title"]
    assert len(_links(said_of, "mentions")) == 1


async def test_a_persons_events_are_their_own_and_those_about_them(tmp_path: Path) -> None:
    lines = [
        ("Nora", "I painted a lake at sunrise last weekend."),
        ("Ben", "Wow, Nora, that painting of the lake sounds lovely!"),
        ("Nora", "Thanks, Ben! Painting calms me down."),
        ("Ben", "I saw Nora at the gallery with her new painting."),
    ]
    host, pipeline = await spoken_chat(tmp_path, "studio", lines)
    try:
        session = await pipeline.open_session("studio")
        store = session.store
        nora = next(v for v in store.newest_in_pool("character_sheet", 10) if v.title == "Nora")
        reached = entity_events(session, [nora.id], ["painting", "lake"], 10)
        texts = {store.node(h.id).fields["summary"] for h in reached}
        assert texts == {
            "I painted a lake at sunrise last weekend.",
            "Thanks, Ben! Painting calms me down.",
            "I saw Nora at the gallery with her new painting.",  # about her: still reached
        }
    finally:
        await host.stop()
