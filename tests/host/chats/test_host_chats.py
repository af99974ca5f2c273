"""Chats, chat contexts and settings: seq numbering, JSONL persistence, safe file names."""

from __future__ import annotations

from pathlib import Path

import pytest

from host import ChatContext, Host, Message, SettingsError
from host.chats.chat_files import chat_file_name


def make_host(tmp_path: Path, **kwargs: object) -> Host:
    return Host(data_dir=tmp_path / "data", entry_points=False, builtins=False, **kwargs)  # type: ignore[arg-type]


def test_messages_get_seq_and_index(tmp_path: Path) -> None:
    chat = make_host(tmp_path).chat("c1")
    assert chat.add_message("system", "be brief") == Message(0, "system", "be brief", 0)
    assert chat.add_message("user", "hi") == Message(0, "user", "hi", 1)
    assert chat.add_message("assistant", "hello") == Message(1, "assistant", "hello", 2)
    assert chat.add_message("user", "more") == Message(1, "user", "more", 3)
    assert chat.add_message("assistant", "sure") == Message(2, "assistant", "sure", 4)
    assert [m.seq for m in chat.messages] == [0, 0, 1, 1, 2]


def test_chats_persist_and_reload_lazily(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.chat("c1").add_message("user", "héllo ✓")
    host.chat("c1").add_message("assistant", "line\nbreak")
    again = make_host(tmp_path)
    messages = again.chat("c1").messages
    assert [(m.role, m.text, m.seq) for m in messages] == [
        ("user", "héllo ✓", 0),
        ("assistant", "line\nbreak", 1),
    ]
    assert again.chat_ids() == ["c1"]


def test_batched_writes_reach_the_file_together_and_lose_nothing(tmp_path: Path) -> None:
    chat = make_host(tmp_path).chat("c1")
    with chat.batched_writes():
        chat.add_message("user", "one")
        chat.add_message("assistant", "two")
        assert [m.text for m in chat.messages] == ["one", "two"]  # in the chat at once
        assert not chat.path.exists()  # on disk when the block ends
        with chat.batched_writes():  # nested: the outer block writes
            chat.add_message("user", "three")
        assert not chat.path.exists()
    assert [m.text for m in make_host(tmp_path).chat("c1").messages] == ["one", "two", "three"]
    with pytest.raises(RuntimeError), chat.batched_writes():
        chat.add_message("assistant", "four")
        chat.truncate(1)  # the file first holds what was added, then loses what is cut
        chat.add_message("user", "five")
        raise RuntimeError("the ingest broke")
    again = make_host(tmp_path).chat("c1").messages
    assert [(m.text, m.index) for m in again] == [("one", 0), ("two", 1), ("five", 2)]


def test_truncate_for_regenerate(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    chat = host.chat("c1")
    for role, text in [("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d")]:
        chat.add_message(role, text)  # type: ignore[arg-type]
    assert chat.truncate(1) == 2
    assert chat.add_message("user", "c2") == Message(1, "user", "c2", 2)
    assert [m.text for m in make_host(tmp_path).chat("c1").messages] == ["a", "b", "c2"]
    assert chat.truncate(5) == 0
    assert chat.truncate(-1) == 3 and chat.messages == ()
    with pytest.raises(ValueError, match="after_index"):
        chat.truncate(-2)


def test_any_chat_id_gets_a_safe_distinct_file_name(tmp_path: Path) -> None:
    ids = ["../../etc/passwd", "a/b", "A/B", "a b", "", "con", "x" * 300, "日本語", "a_b", "a?b"]
    ids.remove("")
    names = {chat_file_name(chat_id) for chat_id in ids}
    assert len(names) == len(ids)
    for name in names:
        assert "/" not in name and "\\" not in name and not name.startswith(".")
        assert len(name) < 80
    host = make_host(tmp_path)
    for chat_id in ids:
        host.chat(chat_id).add_message("user", chat_id)
    files = list((tmp_path / "data" / "chats").iterdir())
    assert len(files) == len(ids)
    assert sorted(make_host(tmp_path).chat_ids()) == sorted(ids)
    assert [m.text for m in make_host(tmp_path).chat("a/b").messages] == ["a/b"]


def test_bad_input_is_named_and_loses_nothing(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    chat = host.chat("c1")
    chat.add_message("user", "kept")
    with pytest.raises(ValueError, match="'robot'"):
        chat.add_message("robot", "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        chat.add_message("user", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat id"):
        host.chat("")
    assert [m.text for m in make_host(tmp_path).chat("c1").messages] == ["kept"]


def test_a_line_cut_short_by_a_crash_is_ignored(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.chat("c1").add_message("user", "whole")
    path = host.chat("c1").path
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"role": "assistant", "te')
    assert [m.text for m in make_host(tmp_path).chat("c1").messages] == ["whole"]


def test_get_context(tmp_path: Path) -> None:
    host = make_host(tmp_path, settings={"embedding_profile": "hashing"})
    host.chat("c1").add_message("user", "hi")
    ctx = host.get_context("c1")
    assert isinstance(ctx, ChatContext)
    assert ctx.chat_id == "c1" and ctx.host is host
    assert [m.text for m in ctx.messages] == ["hi"]
    assert ctx.data_dir == (tmp_path / "data").resolve()
    assert ctx.storage_uri == str((tmp_path / "data" / "lancedb").resolve())
    assert ctx.settings["embedding_profile"] == "hashing"
    empty = host.get_context(None)
    assert empty.chat_id is None and empty.messages == ()
    with pytest.raises(AttributeError):
        ctx.chat_id = "other"  # type: ignore[misc]


def test_a_context_is_a_snapshot_made_without_copying_the_chat(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    chat = host.chat("c1")
    for n in range(3):
        chat.add_message("user", f"q{n}")
        chat.add_message("assistant", f"a{n}")
    assert chat.messages is chat.messages  # one tuple until the chat changes
    kept = chat.messages
    ctx = host.get_context("c1")  # taken before the changes below; read after them
    chat.add_message("user", "later")
    assert chat.messages is not kept and len(chat.messages) == 7
    assert [m.text for m in ctx.messages] == ["q0", "a0", "q1", "a1", "q2", "a2"]
    cut = host.get_context("c1")
    chat.truncate(1)  # regenerate: the chat loses messages; an earlier context does not
    chat.add_message("assistant", "other")
    assert [m.text for m in cut.messages][-1] == "later" and len(cut.messages) == 7
    assert [m.text for m in host.get_context("c1").messages] == ["q0", "a0", "other"]
    assert chat.newest().text == "other" and chat.newest("user").text == "q0"
    view = chat.view()  # read in place, never changed by later writes
    chat.add_message("user", "after the view")
    assert len(view) == 3 and view[-1].text == "other" and view[1:] == tuple(chat.messages[1:3])
    chat.truncate(0)
    assert [m.text for m in view] == ["q0", "a0", "other"]
    with pytest.raises(IndexError):
        view[3]
    assert host.get_context("c1") == host.get_context("c1")  # equality compares the messages
    assert cut != host.get_context("c1")


def test_a_context_of_an_unread_chat_reads_its_file_later_as_it_was(tmp_path: Path) -> None:
    """A context taken before the chat's file is read (a fresh host) costs no read; its first
    read gives the messages the file held, whatever changed the chat in between."""
    first = make_host(tmp_path)
    for n in range(3):
        first.chat("c1").add_message("user", f"q{n}")
        first.chat("c1").add_message("assistant", f"a{n}")
    host = make_host(tmp_path)  # a restart: nothing read yet
    chat = host.chat("c1")
    ctx = host.get_context("c1")
    assert chat._messages is None  # taking the context read nothing
    chat.truncate(1)  # reads the file, then cuts the chat
    chat.add_message("assistant", "other")
    assert [m.text for m in ctx.messages] == ["q0", "a0", "q1", "a1", "q2", "a2"]
    again = make_host(tmp_path)
    ctx = again.get_context("c1")
    again.chat("c1").add_message("user", "later")
    assert [m.text for m in ctx.messages] == ["q0", "a0", "other"]
    untouched = make_host(tmp_path).get_context("c1")
    assert [m.text for m in untouched.messages] == ["q0", "a0", "other", "later"]


def test_settings_merge_file_and_explicit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "memgraph-host.toml").write_text(
        'embedding_profile = "hashing"\nstorage_uri = "/somewhere/else"\nmine = 3\n'
    )
    host = make_host(tmp_path, settings={"storage_uri": "/explicit"})
    assert host.settings["embedding_profile"] == "hashing"
    assert host.settings["mine"] == 3
    assert host.settings["storage_uri"] == "/explicit"
    assert host.get_context("c").storage_uri == "/explicit"
    assert make_host(tmp_path / "fresh").settings["embedding_profile"] == "wordllama"
    with pytest.raises(TypeError):
        host.settings["mine"] = 4  # type: ignore[index]


def test_malformed_settings_file_names_the_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "memgraph-host.toml").write_text("embedding_profile = \n")
    with pytest.raises(SettingsError, match="memgraph-host.toml"):
        make_host(tmp_path)
