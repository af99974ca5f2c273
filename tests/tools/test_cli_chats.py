"""An unknown chat id is an error; listings are rich tables or --json."""

from __future__ import annotations

import json

import pytest

from host.cli.cli import main

from .test_cli import STORE


def _cli(capsys, data, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--data-dir", str(data)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unknown_chat_is_an_error_for_history_export_trace(tmp_path, capsys) -> None:
    data = tmp_path / "d"
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    assert _cli(capsys, data, "import", "known", str(store))[0] == 0
    for command in ("history", "export", "trace", "status"):
        code, out, err = _cli(capsys, data, command, "nobody")
        assert code == 1, command
        assert out == ""
        assert err.strip() == (
            f"memgraph-host {command}: error: unknown chat 'nobody' (known chats: known)"
        ), command
    code, out, _err = _cli(capsys, data, "history", "known")
    assert code == 0
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "VERSION", "SEQ", "KIND", "APPLIED", "NODES", "EDGES", "CREATED", "NOTE"
    ]
    assert row.split()[0] == "1" and row.split()[2] == "import"
    code, out, _err = _cli(capsys, data, "history", "known", "--json")
    assert code == 0 and json.loads(out.splitlines()[0])["kind"] == "import"


@pytest.mark.slow
def test_reindex_progress_is_a_rich_bar(tmp_path, capsys) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "memgraph-host.toml").write_text('embedding_profile = "hashing"\n')
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    assert _cli(capsys, data, "import", "c", str(store))[0] == 0
    code, out, err = _cli(capsys, data, "reindex", "c")
    assert code == 0 and "2 nodes embedded" in out
    assert "reindex c" in err and "2/2" in err and "#" not in err  # rich's bar, not the old one


def test_engine_errors_are_one_line(tmp_path, capsys) -> None:
    data = tmp_path / "d"
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    assert _cli(capsys, data, "import", "c", str(store))[0] == 0
    code, _out, err = _cli(capsys, data, "rollback", "c", "--to", "42")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "no version 42" in err
    assert "Traceback" not in err
