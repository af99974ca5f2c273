"""Chat ids are checked in one place (`host.chats.chat_ids`), with the same clear error at every
entry point: the host's context, the memory-graph API, storage and the CLI."""

from __future__ import annotations

import pytest

from host import Host
from host.chats.chat_ids import ChatIdError, chat_id_problem, check_chat_id
from host.chats.context import ChatContext
from host.cli.cli import main
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.storage import LanceStorage

BAD = ["", "\ud800", "a\x00b", "line\nbreak", "tab\there", "x" * 2000, 5, None]
#: Ids that would look like another one, or like nothing, in a list or the explorer.
SPOOFS = [
    "\u202eevil", "chat\u2066x\u2069", "\u200b", "ad\u200bmin", "\ufeffchat", "a\u200db",
    "   ", "\u3000", "\u3164", "\u0301", "\u2028",
]


@pytest.mark.parametrize("bad", BAD)
def test_check_chat_id_refuses_with_a_clear_message(bad):
    with pytest.raises(ChatIdError) as info:
        check_chat_id(bad)
    assert str(info.value).startswith("chat id ")


@pytest.mark.parametrize("good", ["c", "x' OR '1'='1", "艾琳 chat", "a/b\\c", "émoji 🎲", " a "])
def test_ordinary_and_odd_but_printable_ids_pass(good):
    assert check_chat_id(good) == good


@pytest.mark.parametrize("spoof", SPOOFS)
def test_format_characters_and_invisible_ids_are_refused(spoof):
    with pytest.raises(ChatIdError) as info:
        check_chat_id(spoof)
    message = str(info.value)
    assert message.startswith("chat id has ")
    assert "format character U+" in message or "no visible character" in message


def test_an_error_shows_a_long_id_cut_short():
    with pytest.raises(ChatIdError) as info:
        check_chat_id("x" * 1000 + "\u202e")
    assert len(str(info.value)) < 200 and "xxx..." in str(info.value)


@pytest.mark.parametrize("bad", ["", "\ud800", "a\x00b", "\u202eevil", "\u200b"])
async def test_every_entry_point_gives_the_same_error(tmp_path, bad):
    host = Host(data_dir=tmp_path / "d", entry_points=False)
    await host.start()
    expected = str(pytest.raises(ChatIdError, check_chat_id, bad).value)
    with pytest.raises(ChatIdError) as info:
        host.get_context(bad)
    assert str(info.value) == expected
    api = host.registry.get("memory-graph")
    ctx = ChatContext(bad, (), host, host.data_dir, host.settings, "")
    calls = [api.history(bad), api.rollback(bad, version=0)]
    if bad:  # a context whose chat id is "" has no chat target: open_session gives None
        calls.append(api.open_session(ctx))
    else:
        assert await api.open_session(ctx) is None
    for call in calls:
        with pytest.raises(MemoryGraphError) as info:
            await call
        assert info.value.code == "BAD_ARGS" and expected in info.value.message
    storage = LanceStorage(str(tmp_path / "db"), chat_id_rule=chat_id_problem)
    with pytest.raises(MemoryGraphError) as info:
        storage.history_sync(bad)
    assert info.value.code == "BAD_ARGS" and expected in info.value.message
    await host.stop()


@pytest.mark.parametrize(("bad", "said"), [
    ("a\x01b", "control character U+0001"), ("\u202eevil", "format character U+202E"),
    ("\u200b", "format character U+200B"), ("\u3164", "no visible character"),
])  # fmt: skip
def test_cli_reports_a_bad_chat_id_in_one_line(tmp_path, capsys, bad, said):
    status = main(["--data-dir", str(tmp_path / "d"), "history", bad])
    err = capsys.readouterr().err
    assert status == 1  # a user error (docs/cli.md)
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
