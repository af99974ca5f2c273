"""Chat files survive Unicode line breaks in messages and a line torn by a crash."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from host import Host
from host.chats.jsonl import UNICODE_LINE_BREAKS
from memgraph_plugin.ingest.transcripts import read_transcript
from memgraph_plugin.llm.trace import LlmCall, LlmTraceLog


def make_host(tmp_path: Path) -> Host:
    return Host(data_dir=tmp_path / "data", entry_points=False, builtins=False)


def test_the_breaks_listed_are_every_one_splitlines_knows() -> None:
    breaks = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert breaks - {"\n", "\r"} == set(UNICODE_LINE_BREAKS)


@pytest.mark.parametrize("brk", UNICODE_LINE_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_message_with_a_unicode_line_break_reads_back_after_a_restart(
    tmp_path: Path, brk: str
) -> None:
    chat = make_host(tmp_path).chat("c1")
    chat.add_message("user", f"before{brk}after")
    chat.add_message("assistant", f"x{brk}{brk}y{brk}")
    with chat.batched_writes():
        chat.add_message("user", f"{brk}batched")
    again = make_host(tmp_path).chat("c1").messages
    assert [m.text for m in again] == [f"before{brk}after", f"x{brk}{brk}y{brk}", f"{brk}batched"]
    assert [m.seq for m in again] == [0, 1, 1]


@pytest.mark.parametrize("brk", UNICODE_LINE_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_ingest_reads_a_jsonl_line_holding_a_unicode_line_break(tmp_path: Path, brk: str) -> None:
    path = tmp_path / "t.jsonl"
    rows = [{"role": "user", "text": f"one{brk}two"}, {"role": "assistant", "text": "ok"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    messages = list(read_transcript(path))
    assert [(m.role, m.text, m.where) for m in messages] == [
        ("user", f"one{brk}two", f"{path}:1"),
        ("assistant", "ok", f"{path}:2"),
    ]


def test_llm_trace_lines_holding_a_unicode_line_break_read_back(tmp_path: Path) -> None:
    log = LlmTraceLog(tmp_path)
    for brk in UNICODE_LINE_BREAKS:
        log.append(LlmCall("memgraph_extract", "m", "fallback", error=f"bad{brk}answer"))
    assert [c.error for c in log.read()] == [f"bad{b}answer" for b in UNICODE_LINE_BREAKS]


def _fill(tmp_path: Path, count: int) -> Path:
    chat = make_host(tmp_path).chat("c1")
    for i in range(count):
        chat.add_message("user" if i % 2 == 0 else "assistant", f"message {i}")
    return chat.path


def test_a_torn_last_line_then_an_append_does_not_lock_the_chat_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _fill(tmp_path, 4)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"role": "user", "te')  # the crash cut this write short
    caplog.set_level(logging.WARNING, logger="host.chats.chat_files")
    chat = make_host(tmp_path).chat("c1")
    assert [m.text for m in chat.messages] == [f"message {i}" for i in range(4)]
    assert "set aside" in caplog.text and "1 line(s)" in caplog.text
    torn = path.with_name(path.name + ".torn")
    assert torn.read_text("utf-8") == '{"role": "user", "te\n'
    chat.add_message("user", "after the crash")
    again = make_host(tmp_path).chat("c1").messages
    assert [m.text for m in again][-2:] == ["message 3", "after the crash"]
    assert len(again) == 5


def test_an_append_after_a_torn_line_begins_on_a_new_line(tmp_path: Path) -> None:
    """The torn line is not seen on open (the chat was loaded before the crash's write)."""
    path = _fill(tmp_path, 2)
    chat = make_host(tmp_path).chat("c1")
    assert len(chat.messages) == 2  # loaded now: the torn write happens after
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"role": "assistant", "text": "cut')
    chat.add_message("user", "next")
    with chat.batched_writes():
        chat.add_message("assistant", "batched")
    texts = [m.text for m in make_host(tmp_path).chat("c1").messages]
    assert texts == ["message 0", "message 1", "next", "batched"]
    assert path.with_name(path.name + ".torn").exists()


def test_a_chat_already_locked_out_by_a_glued_line_reads_again(tmp_path: Path) -> None:
    """The state an append left before appends began on a new line: torn text + a whole line."""
    path = _fill(tmp_path, 2)
    glued = '{"role": "user", "te' + json.dumps({"role": "user", "text": "kept"}) + "\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(glued)
        handle.write(json.dumps({"role": "assistant", "text": "after"}) + "\n")
    texts = [m.text for m in make_host(tmp_path).chat("c1").messages]
    assert texts == ["message 0", "message 1", "kept", "after"]
    assert path.with_name(path.name + ".torn").read_text("utf-8") == '{"role": "user", "te\n'


def test_a_malformed_line_in_the_middle_is_still_an_error_naming_it(tmp_path: Path) -> None:
    path = _fill(tmp_path, 2)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("not json\n")
        handle.write(json.dumps({"role": "user", "text": "x"}) + "\n")
    with pytest.raises(ValueError, match=r":4: malformed chat line"):
        _ = make_host(tmp_path).chat("c1").messages


def test_the_one_call_read_gives_what_the_line_by_line_read_gives(tmp_path: Path) -> None:
    """A long chat file is parsed as one JSON array (`_read_whole`); the messages (seq, index,
    name, time) equal the line-by-line read's, and a file with a blank, torn, two-object or
    non-message line is left to the line-by-line read."""
    from host.chats import chat_files as chats

    chat = make_host(tmp_path).chat("long")
    with chat.batched_writes():
        for i in range(300):
            role = "assistant" if i % 3 == 2 else "user"
            chat.add_message(role, f'line {i} \u2028 "q" ë', name="Mira" if i % 5 else "")
    lines = chat.path.read_text(encoding="utf-8").split("\n")[1:-1]
    whole = chats._read_whole(lines)
    assert whole is not None
    by_line: list = []
    for line in lines:
        by_line.append(chats._next_message(by_line, *chats._parse_line(line)))
    assert list(whole) == by_line and [m.index for m in whole] == list(range(300))
    assert chats._read_whole([*lines[:5], "", *lines[5:]]) is None
    assert chats._read_whole([*lines[:5], lines[5][:-9]]) is None  # torn
    assert chats._read_whole([lines[0] + ", " + lines[1], *lines[2:]]) is None  # glued
    assert chats._read_whole([*lines, '{"role": "tool", "text": "x"}']) is None
    assert make_host(tmp_path).chat("long").messages == tuple(whole)
