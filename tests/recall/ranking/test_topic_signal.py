"""The topic signal: a question naming a person reaches that person's messages by word meaning
(WordLlama word vectors, the best word of each message per question word), though they share
no word with the question; units with a hand-made word embedding, and a real host with LanceDB,
the built-in extraction and the shipped WordLlama weights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from host import Host
from memgraph_plugin.embedding.wordllama import WordLlamaUnavailable
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.recall.ranking import topic_signal
from memgraph_plugin.recall.ranking.topic_signal import WordTable, message_words, topic_words
from memgraph_plugin.turn import pipeline_for

CHAT = "c1"

# a word embedding of four axes: sport, water, food, and everything else
AXES = {"kickboxing": (0.8, 0.0, 0.0, 0.6), "sport": (1.0, 0.0, 0.0, 0.0)}
AXES |= {"lake": (0.0, 1.0, 0.0, 0.0), "swim": (0.3, 0.9, 0.0, 0.3), "bread": (0, 0, 1.0, 0)}


class CountingEmbed:
    """Unit vectors from `AXES` (other words: the fourth axis); counts the words it embeds."""

    def __init__(self) -> None:
        self.words: list[str] = []

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        self.words.extend(words)
        rows = np.array([AXES.get(w, (0.0, 0.0, 0.0, 1.0)) for w in words], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_topic_words_leave_out_the_person_and_the_asking_words() -> None:
    john = Node(id="n1", type="character_sheet", title="John", fields={"aliases": ["Johnny"]})
    assert topic_words("What martial arts has John done?", [john]) == ["martial", "arts"]
    assert topic_words("What kind of books does Johnny's sister read?", [john]) == [
        "books",
        "sister",
        "read",
    ]
    assert topic_words("What has John done?", [john]) == []  # nothing left to match


def test_a_message_scores_by_its_best_word_not_its_average() -> None:
    table = WordTable(CountingEmbed(), 4)
    long_hit = "After work my cousins and neighbours came over and we did kickboxing together"
    scores = table.scores(
        ["sport"], [("a", long_hit), ("b", "The lake was calm"), ("c", "Fresh bread")]
    )
    # "kickboxing" alone decides the long message: its cosine with "sport", 0.8
    assert scores[0] == pytest.approx(0.8, abs=1e-6)
    assert scores[1] == pytest.approx(0.0, abs=1e-6)
    # averaged over the question's words: each word's best match in the message
    two = table.scores(["sport", "lake"], [("d", "swim in the lake"), ("a", long_hit)])
    assert two[0] == pytest.approx((0.3 / np.linalg.norm((0.3, 0.9, 0, 0.3)) + 1.0) / 2, 1e-5)
    assert two[0] > two[1]


def test_words_are_embedded_once_and_a_changed_message_is_read_again() -> None:
    embed = CountingEmbed()
    table = WordTable(embed, 4)
    table.scores(["sport"], [("a", "kickboxing classes")])
    table.scores(["sport"], [("a", "kickboxing classes")])
    assert sorted(embed.words) == ["classes", "kickboxing", "sport"]  # each word once
    again = table.scores(["sport"], [("a", "fresh bread")])  # same id, other text
    assert again[0] == pytest.approx(0.0, abs=1e-6)
    assert "bread" in embed.words


def test_a_full_table_starts_afresh_and_scores_stay_right(monkeypatch) -> None:
    monkeypatch.setattr(topic_signal, "TABLE_WORDS", 4)
    table = WordTable(CountingEmbed(), 4)
    table.scores(["bread"], [("x", "calm lake water")])  # four words: full
    table.scores(["sport"], [("y", "calm seas")])  # five: past the bound
    generation = table.generation
    # more words than the table's bound in one call: served whole, the table grows past it
    scores = table.scores(["sport"], [("a", "kickboxing classes"), ("b", "lake water")])
    assert table.generation == generation + 1
    assert scores[0] == pytest.approx(0.8, abs=1e-6)
    assert scores[1] == pytest.approx(0.0, abs=1e-6)
    assert len(table.rows([])) == 0 and table.matrix.shape[1] == 4


def test_message_words_are_distinct_content_words() -> None:
    assert message_words("I'm doing kickboxing, kickboxing and more Kickboxing!") == ["kickboxing"]


JOHN = [
    "Work was long today, the printer broke twice.",
    "I'm doing kickboxing and it's giving me so much energy.",
    "We had pasta for dinner with the whole family.",
    "The campaign meeting ran late again.",
    "My car needs new tires before winter.",
]
MARIA = [
    "Sounds like a long day, John!",
    "That's great, I want to try it too.",
    "Yum, I love pasta.",
    "Hang in there.",
    "Good luck with the car.",
]


async def _chat(host: Host) -> object:
    pipeline = pipeline_for(host)
    for john, maria in zip(JOHN, MARIA, strict=True):
        await pipeline.add_user_message(CHAT, john, name="John")
        await pipeline.add_assistant_message(CHAT, maria, name="Maria")
    await pipeline.add_user_message(CHAT, "What martial arts has John done?", name="Maria")
    return await pipeline.recall(CHAT)


async def test_a_named_persons_message_is_found_by_meaning(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        recall = await _chat(host)
        by_topic = [
            n.fields.get("summary")
            for n in recall.recalled
            if "topic #1" in (recall.why[n.id].detail or "")
        ]
        assert by_topic == [JOHN[1]]  # kickboxing, though no word is shared
        said = [n.fields.get("summary") for n in recall.recalled]
        assert said[0] == JOHN[1]
    finally:
        await host.stop()


async def test_no_topic_list_without_word_vectors_of_meaning(tmp_path: Path) -> None:
    host = Host(
        data_dir=tmp_path / "data", entry_points=False, settings={"embedding_profile": "hashing"}
    )
    await host.start()
    try:
        recall = await _chat(host)
        assert not any("topic" in (recall.why[n.id].detail or "") for n in recall.recalled)
    finally:
        await host.stop()


async def test_missing_word_vectors_leave_recall_without_the_topic_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(words: Sequence[str]) -> np.ndarray:
        raise WordLlamaUnavailable("the installed wordllama package lacks its weights")

    monkeypatch.setattr(topic_signal, "_tables", {"wordllama": WordTable(missing, 256)})
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        recall = await _chat(host)
        assert recall.recalled  # the other signals answer
        assert not any("topic" in (recall.why[n.id].detail or "") for n in recall.recalled)
    finally:
        await host.stop()


async def test_a_question_naming_two_people_takes_each_ones_best_in_turn(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        # the sports early: the newest events are pinned (the scene), not recalled
        john = ["Played basketball all afternoon.", "Went rock climbing with my brother.", *JOHN]
        maria = ["Went swimming in the lake this morning.", "Nice, have fun!", *MARIA]
        for his, hers in zip(john, maria, strict=True):
            await pipeline.add_user_message(CHAT, his, name="John")
            await pipeline.add_assistant_message(CHAT, hers, name="Maria")
        await pipeline.add_user_message(CHAT, "What sports have John and Maria both done?")
        recall = await pipeline.recall(CHAT)
        by_rank: dict[int, str] = {}
        for node in recall.recalled:
            detail = recall.why[node.id].detail or ""
            for rank in range(1, 6):
                if f"topic #{rank}," in f"{detail},":
                    by_rank[rank] = node.fields.get("speaker")
        # John's best, then Maria's best, then John's second...: never one person's first two
        assert by_rank.get(1) and by_rank.get(2)
        assert by_rank[1] != by_rank[2]
        assert {by_rank[1], by_rank[2]} == {"John", "Maria"}
        ranks = sorted(by_rank)
        assert all(by_rank[r] != by_rank[r + 1] for r in ranks if r + 1 in by_rank)
    finally:
        await host.stop()
