"""The plugin's CLI commands, run through a real started Host as `memgraph-host` runs them."""

from __future__ import annotations

import argparse
import json

import pytest

from host import Host, hookimpl
from tests.hosts import started_host

STORE = {
    "nodes": {
        "n_1": {
            "id": "n_1",
            "type": "event",
            "title": "",
            "fields": {"summary": "harbor"},
            "seqTo": 1,
        },
        "n_2": {
            "id": "n_2",
            "type": "event",
            "title": "",
            "fields": {"summary": "storm"},
            "seqTo": 2,
        },
    },
    "edges": [{"from": "n_1", "to": "n_2", "type": "related"}],
    "nodeSeq": 2,
    "seqCounter": 2,
}


async def _host_with_store(tmp_path, chat: str = "c", **settings) -> Host:
    """A started host whose chat `chat` holds STORE (imported through the CLI command)."""
    host = await started_host(tmp_path / "d", **settings)
    path = tmp_path / "store.json"
    path.write_text(json.dumps(STORE))
    assert await _run(host, "import", chat, str(path)) == 0
    return host


async def _run(host: Host, *argv: str) -> int:
    commands = {c.name: c for cs in host.pm.hook.host_cli_commands(host=host) for c in cs or ()}
    parser = argparse.ArgumentParser(prog="memgraph-host")
    sub = parser.add_subparsers(dest="cmd", required=True)
    for c in commands.values():
        c.add_arguments(sub.add_parser(c.name, help=c.help))
    args = parser.parse_args(list(argv))
    return await commands[args.cmd].run(host, args)


async def test_commands_are_contributed_through_the_hook(tmp_path):
    host = await started_host(tmp_path / "d")
    names = {c.name for cs in host.pm.hook.host_cli_commands(host=host) for c in cs or ()}
    assert {"history", "rollback", "import", "export", "reindex"} <= names
    await host.stop()


async def test_import_export_history_rollback(tmp_path, capsys):
    evil = "x' OR '1'='1"
    host = await _host_with_store(tmp_path, evil)
    capsys.readouterr()
    assert await _run(host, "export", evil) == 0
    exported = json.loads(capsys.readouterr().out)
    assert set(exported["nodes"]) == {"n_1", "n_2"}
    assert exported["edges"] == [{"from": "n_1", "to": "n_2", "type": "related"}]
    assert exported["seqCounter"] == 0  # anchored to the chat's messages: it has none

    # a session write, then history and a rollback to the import
    api = host.registry.get("memory-graph")
    s = await api.open_session(host.get_context(evil))
    await s.create_node(type="event", fields={"summary": "later"})
    await host.drain()
    assert len(s.list_nodes()) == 3
    assert await _run(host, "history", evil) == 0
    out = capsys.readouterr().out
    assert "import" in out and "write" in out
    assert await _run(host, "history", evil, "--json") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["version"] for r in rows] == [1, 2] and rows[0]["kind"] == "import"

    kinds: list[tuple[str, str, int]] = []

    class Spy:
        @hookimpl
        def memgraph_commit(self, chat_id, commit):
            kinds.append((chat_id, commit.kind, commit.version))

    host.register_plugin(Spy(), name="spy")
    assert await _run(host, "rollback", evil, "--to", "1") == 0
    assert "new commit version 3" in capsys.readouterr().out
    await host.drain()
    assert kinds == [(evil, "rollback", 3)]  # a rollback is a persisted mutation too
    assert await _run(host, "export", evil, "--version", "2") == 0  # before the rollback
    assert len(json.loads(capsys.readouterr().out)["nodes"]) == 3
    s2 = await api.open_session(host.get_context(evil))  # sees the rollback
    assert {n.id for n in s2.list_nodes()} == {"n_1", "n_2"}
    assert await _run(host, "rollback", evil, "--seq", "0") == 0  # the import is at seq 0
    capsys.readouterr()
    s_import = await api.open_session(host.get_context(evil))
    assert {n.id for n in s_import.list_nodes()} == {"n_1", "n_2"}
    assert await _run(host, "rollback", evil, "--to", "0") == 0  # before the first commit
    capsys.readouterr()
    s3 = await api.open_session(host.get_context(evil))
    assert s3.list_nodes() == ()
    # other chats never saw any of it: "x" is still no chat at all
    from host.errors import CommandError

    with pytest.raises(CommandError, match="unknown chat 'x'"):
        await _run(host, "export", "x")
    await host.stop()


async def test_bad_import_file_is_a_clear_error_and_changes_nothing(tmp_path, capsys):
    host = await _host_with_store(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    # a user error is exit status 1 (docs/cli.md), said in one line
    assert await _run(host, "import", "c", str(bad)) == 1
    assert "bad.json: line 1 column 2: not valid JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"nodes": {"n_9": {"id": "n_9"}}, "edges": "nope"}))
    assert await _run(host, "import", "c", str(bad)) == 1
    assert "error" in capsys.readouterr().err
    assert await _run(host, "import", "c", str(tmp_path / "missing.json")) == 1
    assert await _run(host, "rollback", "c", "--to", "99") == 1
    assert "no version 99" in capsys.readouterr().err
    assert await _run(host, "export", "c", "--version", "99") == 1
    err = capsys.readouterr().err
    assert "no version 99" in err and "STORAGE_ERROR" not in err and len(err.splitlines()) == 1
    assert await _run(host, "export", "c") == 0
    assert set(json.loads(capsys.readouterr().out)["nodes"]) == {"n_1", "n_2"}
    await host.stop()


async def test_reindex_needs_a_profile_and_shows_progress(tmp_path, capsys):
    host = await _host_with_store(tmp_path, embedding_profile="none")  # default: wordllama
    assert await _run(host, "reindex") == 1
    assert "no embedding profile" in capsys.readouterr().err
    await host.stop()

    host = await started_host(tmp_path / "d", embedding_profile="hashing")
    assert await _run(host, "reindex") == 0
    captured = capsys.readouterr()
    assert "2 nodes embedded with 'hashing'" in captured.out
    assert "reindex c" in captured.err and "2/2" in captured.err  # rich's progress bar
    s = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    assert (await s.vector_search(query="harbor", k=1))[0].id == "n_1"
    await host.stop()


def test_progress_bar_renders(capsys):
    """Progress goes through rich on stderr (no hand-made bar)."""
    from host.cli.console import progress

    with progress("x") as update:
        update(0, 4)
        update(4, 4)
    err = capsys.readouterr().err
    assert "x" in err and "4/4" in err


@pytest.mark.parametrize("argv", [["rollback", "c"], ["rollback", "c", "--to", "1", "--seq", "2"]])
async def test_rollback_needs_exactly_one_target(tmp_path, argv):
    host = await started_host(tmp_path / "d")
    with pytest.raises(SystemExit):
        await _run(host, *argv)
    await host.stop()


@pytest.mark.slow
def test_commands_through_the_real_cli_entry(tmp_path, capsys):
    """`memgraph-host` itself (host.cli.cli.main): import, export, history, rollback, reindex."""
    from host.cli.cli import main

    data = tmp_path / "cli-data"
    data.mkdir()
    (data / "memgraph-host.toml").write_text('embedding_profile = "hashing"\n')
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    evil = "x' OR '1'='1"

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(data), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert run("import", evil, str(store))[0] == 0
    smaller = dict(STORE, nodes={"n_1": STORE["nodes"]["n_1"]}, edges=[])
    store.write_text(json.dumps(smaller))
    assert run("import", evil, str(store))[0] == 0
    code, out, _ = run("history", evil, "--json")
    assert code == 0
    assert [json.loads(line)["kind"] for line in out.splitlines()] == ["import", "import"]
    code, out, _ = run("export", evil)
    assert code == 0 and set(json.loads(out)["nodes"]) == {"n_1"}
    code, out, _ = run("rollback", evil, "--to", "1")
    assert code == 0 and "new commit version 3" in out
    code, out, _ = run("export", evil)
    assert set(json.loads(out)["nodes"]) == {"n_1", "n_2"}
    code, out, err = run("reindex", evil)
    assert code == 0 and "2 nodes embedded with 'hashing'" in out and "2/2" in err
    code, out, err = run("export", "x")  # the quote-laden chat id never leaked into another chat
    assert code == 1 and out == "" and "unknown chat 'x'" in err
    code, _, err = run("rollback", evil, "--to", "42")
    assert code != 0 and "no version 42" in err
