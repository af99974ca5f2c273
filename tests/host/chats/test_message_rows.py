"""A chat file's messages are kept as columns when read (`host.chats.message_rows`): each
`Message` is made on its first read, so a long chat's first turn makes the few it reads, and
the chat behaves as the list of messages did (seq, index, appends, cuts, views)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host import Host
from host.chats.message_rows import MessageRows, message_columns, message_rows


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


# -- a long chat file parsed by pyarrow (`message_columns`) ---------------------------------------

HEADER = '{"chat_id": "c", "format": 1}\n'


def _by_line(data: bytes) -> list[Any]:
    """What the line-by-line read gives for a file's bytes (raises on a bad line)."""
    from host.chats import chat_files as chats

    out: list[Any] = []
    for line in data.decode("utf-8").split("\n")[1:]:
        if line:
            out.append(chats._next_message(out, *chats._parse_line(line)))
    return out


def _file(messages: list[tuple[str, str, str, str]]) -> bytes:
    from host.chats import chat_files as chats
    from host.chats.context import Message

    lines = [chats._line(Message(0, r, t, i, n, w)) for i, (r, t, n, w) in enumerate(messages)]
    return (HEADER + "".join(lines)).encode("utf-8")


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "system"]), texts, texts, texts),
        max_size=30,
    )
)
def test_the_pyarrow_read_gives_what_the_line_by_line_read_gives(
    messages: list[tuple[str, str, str, str]],
) -> None:
    data = _file(messages)
    read = message_columns(data)
    if read is None:  # a text the reader may refuse (or read otherwise): the others decide
        return
    assert list(read) == _by_line(data)
    assert [(m.role, m.text, m.name, m.time) for m in read] == messages


def test_the_pyarrow_read_takes_the_usual_files() -> None:
    plain = _file([("user", "hi", "", ""), ("assistant", 'say "ok" \u2028 ë 😀', "Mira", "t1")])
    some_named = _file(
        [("user", "a", "Ann", ""), ("assistant", "b", "", "t2"), ("user", "c", "", "")]
    )
    for data in (plain, some_named, plain.replace(b"\n", b"\r\n"), plain[:-1], HEADER.encode()):
        read = message_columns(data)
        assert read is not None
        assert list(read) == _by_line(data.replace(b"\r\n", b"\n"))
    read = message_columns(some_named)
    assert read is not None and [(m.name, m.time, m.seq) for m in read] == [
        ("Ann", "", 0),
        ("", "t2", 1),
        ("", "", 1),
    ]


@pytest.mark.parametrize(
    "lines",
    [
        ['{"role": "user", "text": "a"}', "", '{"role": "user", "text": "b"}'],  # a blank line
        ['{"role": "user", "text": "a"}{"role": "user", "text": "b"}', "", "{}"],  # glued
        ['{"role": "user", "text": "a"}', '{"role": "user", "te'],  # torn
        ['{"role": "user", "text": "a",\r"name": "x"}'],  # a lone carriage return
        ['{"role": "user", "text": 5}'],
        ['{"role": "tool", "text": "a"}'],
        ['{"role": "user"}'],
        ['{"role": "user", "text": "a", "name": null}', '{"role": "user", "text": "b"}'],
        ['{"role": "user", "text": "a", "text": "b"}'],  # a key twice
        ['{"role": "user", "text": "a\\ud800"}'],  # a lone surrogate
        ['{"role": "user", "text": "a", "time": {"at": 1}}'],
        ['  {"role": "user", "text": "a"}'],
    ],
)
def test_the_pyarrow_read_leaves_anything_unusual_to_the_others(lines: list[str]) -> None:
    assert message_columns((HEADER + "\n".join(lines) + "\n").encode()) is None
    assert message_columns(b"\xef\xbb\xbf" + _file([("user", "a", "", "")])) is None  # a BOM
    assert message_columns(_file([("user", "a", "", "")]).replace(b'a"', b'\xff"')) is None


def test_a_long_chat_file_is_read_by_pyarrow_and_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from host.chats import chat_files as chats

    _written(tmp_path, 200)
    before = list(make_host(tmp_path).chat("long").messages)  # (below the size: orjson)
    calls: list[Any] = []

    def spy(data: bytes) -> Any:
        calls.append(message_columns(data))
        return calls[-1]

    monkeypatch.setattr(chats, "COLUMNS_FROM", 1)
    monkeypatch.setattr(chats, "message_columns", spy)
    chat = make_host(tmp_path).chat("long")
    assert list(chat.messages) == before and isinstance(calls[0], MessageRows)
    added = chat.add_message("assistant", "next")
    assert added.index == 200 and added.seq == before[-1].seq + 1
    path = chat.path
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # written on Windows
    assert list(make_host(tmp_path).chat("long").messages) == [*before, added]
    assert calls[-1] is not None
    with path.open("a", encoding="utf-8") as handle:  # a torn last line: set aside as before
        handle.write('{"role": "user", "te')
    assert list(make_host(tmp_path).chat("long").messages) == [*before, added]
    assert calls[-1] is None and path.with_name(path.name + ".torn").exists()


def test_a_cut_shares_the_columns_and_leaves_the_read_rows_as_they_were(tmp_path: Path) -> None:
    _written(tmp_path, 40)
    chat = make_host(tmp_path).chat("long")
    chat.read_ahead()
    rows = chat._messages
    view = chat.view()
    assert chat.truncate(29) == 10  # a regenerate's cut
    cut = chat._messages
    assert isinstance(cut, MessageRows) and cut is not rows and _made(cut) == 0
    assert len(cut) == 30 and len(rows) == 40 and len(view) == 40  # earlier readers unchanged
    added = chat.add_message("assistant", "again")
    assert (added.index, len(rows), cut[-1]) == (30, 40, added)
    assert [m.text for m in cut[:30]] == [f"line {i}" for i in range(30)]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_cut_truncates_the_file_in_place(tmp_path: Path, newline: str) -> None:
    """The cut lines go by one truncate of the file (no rewrite of every line); the file reads
    back as the chat is, and takes appends after."""
    _written(tmp_path, 50)
    path = make_host(tmp_path).chat("long").path
    path.write_bytes(path.read_bytes().replace(b"\n", newline.encode()))
    end = newline.encode()
    header_and_kept = end.join(path.read_bytes().split(end)[:31]) + end
    chat = make_host(tmp_path).chat("long")
    inode = path.stat().st_ino
    assert chat.truncate(29) == 20
    assert path.stat().st_ino == inode  # the same file: cut in place, not replaced
    assert path.read_bytes() == header_and_kept
    chat.add_message("user", "after the cut")
    again = make_host(tmp_path).chat("long")
    assert [m.text for m in again.messages] == [*(f"line {i}" for i in range(30)), "after the cut"]


def test_a_file_that_is_not_one_line_a_message_is_rewritten(tmp_path: Path) -> None:
    _written(tmp_path, 12)
    path = make_host(tmp_path).chat("long").path
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join([*lines[:5], "", *lines[5:]]), encoding="utf-8")  # a blank line
    chat = make_host(tmp_path).chat("long")
    assert chat.truncate(7) == 4
    assert "\n\n" not in path.read_text(encoding="utf-8")  # rewritten whole, as before
    assert [m.text for m in make_host(tmp_path).chat("long").messages] == [
        f"line {i}" for i in range(8)
    ]
