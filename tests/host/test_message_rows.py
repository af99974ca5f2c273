"""A chat file's messages are kept as columns when read (`host.chats.message_rows`): each
`Message` is made on its first read, so a long chat's first turn makes the few it reads, and
the chat behaves as the list of messages did (seq, index, appends, cuts, views)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from host import Host
from host.chats.message_rows import MessageRows, message_rows


def make_host(tmp_path: Path) -> Host:
    return Host(data_dir=tmp_path, entry_points=False)


def _written(tmp_path: Path, count: int) -> None:
    chat = make_host(tmp_path).chat("long")
    with chat.batched_writes():
        for i in range(count):
            role = "assistant" if i % 3 == 2 else "user"
            chat.add_message(role, f"line {i}", name="Mira" if i % 5 else "", time=f"t{i}")


def _made(rows: Any) -> int:
    return sum(m is not None for m in rows._made)


def test_a_read_chat_makes_only_the_messages_read(tmp_path: Path) -> None:
    _written(tmp_path, 500)
    chat = make_host(tmp_path).chat("long")
    chat.read_ahead()
    rows = chat._messages
    assert isinstance(rows, MessageRows) and len(rows) == 500 and _made(rows) == 0
    newest = chat.newest("user")
    assert newest is not None and newest.index == 499 and newest.text == "line 499"
    view = chat.view()
    assert view[-1].index == 499 and view[-1].role == "user"
    assert _made(rows) == 1  # the newest message, made once
    assert view[-1] is view[-1]  # made once, then kept
    assert newest.seq == 166 and newest.name == "Mira" and newest.time == "t499"


def test_it_reads_as_the_line_by_line_list_does(tmp_path: Path) -> None:
    _written(tmp_path, 300)
    chat = make_host(tmp_path).chat("long")
    messages = chat.messages
    assert [m.index for m in messages] == list(range(300))
    assert [m.seq for m in messages] == [(i + 1) // 3 for i in range(300)]
    assert [m.name for m in messages[:6]] == ["", "Mira", "Mira", "Mira", "Mira", ""]
    rows = chat._messages
    assert rows == list(messages) and list(reversed(rows)) == list(messages)[::-1]
    assert rows[10:13] == list(messages[10:13]) and rows[-1] is messages[-1]
    with pytest.raises(IndexError):
        rows[300]


def test_appends_and_cuts_after_a_read(tmp_path: Path) -> None:
    _written(tmp_path, 30)
    chat = make_host(tmp_path).chat("long")
    added = chat.add_message("assistant", "a reply")
    assert (added.index, added.seq) == (30, 11)
    assert chat.view()[-1] is added and len(chat) == 31
    assert chat.truncate(9) == 21 and len(chat) == 10
    again = make_host(tmp_path).chat("long")  # the file holds what the chat holds
    assert [m.text for m in again.messages] == [f"line {i}" for i in range(10)]
    assert again.add_message("user", "next").index == 10


@pytest.mark.parametrize(
    "rows",
    [
        [{"role": "user", "text": "a"}, ["role", "user"]],
        [{"role": "tool", "text": "a"}],
        [{"role": ["user"], "text": "a"}],
        [{"role": "user", "text": 3}],
        [{"role": "user"}],
        [{"role": "user", "text": "a", "name": None}],
        [{"role": "user", "text": "a", "time": 5}],
    ],
)
def test_anything_but_plain_messages_is_left_to_the_line_by_line_read(rows: list[Any]) -> None:
    assert message_rows(rows) is None


def test_empty_and_plain_rows() -> None:
    assert message_rows([]) == []
    rows = message_rows([{"role": "user", "text": "a"}, {"role": "assistant", "text": "b"}])
    assert rows is not None
    assert [(m.seq, m.role, m.text, m.index, m.name, m.time) for m in rows] == [
        (0, "user", "a", 0, "", ""),
        (1, "assistant", "b", 1, "", ""),
    ]
