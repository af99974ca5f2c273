"""A chat's word counts are kept in a file under the host's data folder (`vocabulary_file.py`): a
restarted host reads them and counts only the messages after them; a file that does not match
the chat (cut, rewritten, damaged) is counted again from the messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host.chats.context import Message
from memgraph_plugin.extraction import vocabulary
from memgraph_plugin.extraction.vocabulary import SAVE_EVERY, ChatWords, words_for
from memgraph_plugin.extraction.vocabulary_file import words_path


class _Host:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir


def _messages(n: int, *, tail: str = "") -> list[Message]:
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"we went home to play chess {i}, then Mira said Web was down"
        out.append(
            Message(seq=(i + 1) // 2, role=role, text=text + (tail if i == n - 1 else ""), index=i)
        )  # type: ignore[arg-type]
    return out


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages `word_cases` was called for."""
    calls = [0]
    real = vocabulary.word_cases

    def counting(text: str) -> Any:
        calls[0] += 1
        return real(text)

    monkeypatch.setattr(vocabulary, "word_cases", counting)
    return calls


def _same(a: ChatWords, b: ChatWords) -> bool:
    return (a.lower, a.capital, a.fed) == (b.lower, b.capital, b.fed)


def test_a_restarted_host_reads_the_counts_and_counts_only_what_follows(
    tmp_path: Path, counted: list[int]
) -> None:
    messages = _messages(SAVE_EVERY + 40)
    first = words_for(_Host(tmp_path), "c").feed_until(messages, SAVE_EVERY + 20)
    assert words_path(tmp_path, "c").is_file() and first.saved == SAVE_EVERY + 20
    counted[0] = 0
    again = words_for(_Host(tmp_path), "c").feed_until(messages, SAVE_EVERY + 40)  # a new host
    assert counted[0] == 20  # the 20 messages after the file's
    assert _same(again, ChatWords().feed_until(messages, SAVE_EVERY + 40))
    assert again.ordinary("chess") and not again.ordinary("mira")


def test_a_chat_cut_or_rewritten_under_the_file_is_counted_again(
    tmp_path: Path, counted: list[int]
) -> None:
    messages = _messages(SAVE_EVERY + 10)
    words_for(_Host(tmp_path), "c").feed_until(messages, SAVE_EVERY + 10)
    rewritten = _messages(SAVE_EVERY + 10, tail=" Chess Chess Chess")  # its last message changed
    counted[0] = 0
    words = words_for(_Host(tmp_path), "c").feed_until(rewritten, SAVE_EVERY + 10)
    assert counted[0] == SAVE_EVERY + 10
    assert _same(words, ChatWords().feed_until(rewritten, SAVE_EVERY + 10))
    shorter = messages[:30]  # fewer messages than the file covers
    counted[0] = 0
    words = ChatWords(words_path(tmp_path, "c")).feed_until(shorter, 30)
    assert counted[0] == 30 and _same(words, ChatWords().feed_until(shorter, 30))


def test_a_damaged_file_is_counted_again(tmp_path: Path, counted: list[int]) -> None:
    messages = _messages(SAVE_EVERY + 5)
    words_for(_Host(tmp_path), "c").feed_until(messages, SAVE_EVERY + 5)
    path = words_path(tmp_path, "c")
    for damage in ("{not json", '{"format": 1, "fed": 3, "last": [], "lower": 5}', ""):
        path.write_text(damage, encoding="utf-8")
        counted[0] = 0
        words = ChatWords(path).feed_until(messages, SAVE_EVERY + 5)
        assert counted[0] == SAVE_EVERY + 5
        assert _same(words, ChatWords().feed_until(messages, SAVE_EVERY + 5))
