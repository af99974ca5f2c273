"""The ``memgraph-host`` CLI: plugins / hooks listings, plugin commands, strict, a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from host.cli.cli import main

GOOD = """
from host import hookimpl

__version__ = "3.1"


@hookimpl
def host_startup(host):
    host.publish("good", "good-api", object(), version=__version__)
"""

COMMANDS = """
import asyncio

from host import Command, hookimpl

STARTED = []


@hookimpl
def host_startup(host):
    STARTED.append(True)


async def greet(host, args):
    await asyncio.sleep(0)
    print(f"hello {args.who} started={bool(STARTED)} data={host.data_dir.name}")
    return args.code


def add_arguments(parser):
    parser.add_argument("who", help="whom to greet")
    parser.add_argument("--code", type=int, default=0, help="exit code to return")


@hookimpl
def host_cli_commands(host):
    return [
        Command("greet", "greet someone", add_arguments, greet),
        Command("plugins", "tries to take a built-in name", add_arguments, greet),
    ]
"""


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "good.py").write_text(textwrap.dedent(GOOD))
    (folder / "broken.py").write_text("raise RuntimeError('cannot start: no config')\n")
    (folder / "cmds.py").write_text(textwrap.dedent(COMMANDS))
    return folder


def plugin_folder(tmp_path: Path, name: str, source: str) -> Path:
    """A plugins folder ``<name>_plugins`` holding the one plugin ``<name>.py`` of `source`."""
    folder = tmp_path / f"{name}_plugins"
    folder.mkdir()
    (folder / f"{name}.py").write_text(source)
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plugins_table(tmp_path: Path, plugins: Path, capsys) -> None:
    dirs = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins)]
    code, out, _err = run(capsys, *dirs, "plugins", "--start")
    assert code == 0
    lines = out.splitlines()
    header = ["NAME", "SOURCE", "VERSION", "STATUS", "HOOKS", "PUBLISHES", "ORIGIN"]
    assert lines[0].split() == header
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) >= {"good", "broken", "cmds", "memgraph"}
    good = rows["good"].split()
    assert good[:5] == ["good", "folder", "3.1", "loaded", "host_startup"]
    assert "good-api" in rows["good"]
    assert "failed: failed to import: RuntimeError: cannot start: no config" in rows["broken"]
    assert "memory-graph" in rows["memgraph"]  # published by the built-in plugin at startup
    assert "already taken" in rows["cmds"]  # its second command tried to take "plugins"


def test_plugins_json(tmp_path: Path, plugins: Path, capsys) -> None:
    dirs = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins)]
    code, out, _err = run(capsys, *dirs, "plugins", "--json", "--start")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["good"] == {
        "name": "good",
        "source": "folder",
        "origin": str(plugins / "good.py"),
        "version": "3.1",
        "status": "loaded",
        "hooks": ["host_startup"],
        "published": ["good-api"],
        "published_known": True,
        "error": None,
        "traceback": None,
        "stuck": None,
        "stuck_text": None,
    }
    assert rows["broken"]["status"] == "failed"
    assert "Traceback" in rows["broken"]["traceback"]
    assert rows["memgraph"]["source"] == "built-in"


def test_plugins_without_start_says_why_publishes_is_not_known(
    tmp_path: Path, plugins: Path, capsys
) -> None:
    """As the README shows it (no --start): a plugin that publishes from host_startup has not
    published yet, and the column says so instead of an empty "-"."""
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins), "plugins"]
    code, out, _err = run(capsys, *argv)
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "--start shows it" in rows["good"] and "--start shows it" in rows["memgraph"]
    code, out, _err = run(capsys, *argv, "--json")
    by_name = {row["name"]: row for row in json.loads(out)}
    assert by_name["good"]["published"] == [] and by_name["good"]["published_known"] is False


def test_blocked_plugin_shows_as_blocked(
    tmp_path: Path, plugins: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("MEMGRAPH_HOST_BLOCK", "good,broken")
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins), "plugins", "--json"]
    code, out, _err = run(capsys, *argv)
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0
    assert rows["good"]["status"] == rows["broken"]["status"] == "blocked"
    assert rows["good"]["published"] == []


def test_hooks_lists_flags_and_call_order(tmp_path: Path, plugins: Path, capsys) -> None:
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins), "hooks"]
    code, out, _err = run(capsys, *argv)
    assert code == 0
    assert "host_addhooks [historic]  (host.hookspecs)" in out
    after = out.split("host_startup  (host.hookspecs)\n", 1)[1].splitlines()
    block = after[: next(i for i, line in enumerate(after) if not line.startswith("    "))]
    order = [line.split(". ", 1)[1] for line in block]
    order = [name for name in order if name in {"good", "cmds", "memgraph"}]
    # host_startup: built-in first (providers before consumers), then folder plugins (later first)
    assert order == ["memgraph", "good", "cmds"]
    code, out, _err = run(capsys, *argv, "--json")
    hooks = {row["name"]: row for row in json.loads(out)}
    assert hooks["host_addhooks"]["historic"] is True
    assert hooks["host_startup"]["firstresult"] is False
    assert [i["plugin"] for i in hooks["host_startup"]["implementations"]] == order


def test_plugin_command_is_dispatched_with_a_started_host(
    tmp_path: Path, plugins: Path, capsys
) -> None:
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins), "greet"]
    code, out, _err = run(capsys, *argv, "world", "--code", "3")
    assert code == 3
    assert out.strip() == "hello world started=True data=d"
    code, out, _err = run(capsys, *argv, "--help")
    assert code == 0 and "whom to greet" in out


def test_help_lists_every_command(tmp_path: Path, plugins: Path, capsys) -> None:
    code, out, _err = run(capsys, "--plugins-dir", str(plugins), "--data-dir", str(tmp_path), "-h")
    assert code == 0
    for command in ("plugins", "hooks", "greet", "dev"):
        assert f"    {command} " in out


def test_version(capsys) -> None:
    from importlib.metadata import version

    code, out, _err = run(capsys, "--version")
    assert code == 0 and out == f"memgraph-host {version('memgraph-host')}\n"


def test_strict_flag_makes_a_broken_plugin_fatal(tmp_path: Path, plugins: Path, capsys) -> None:
    argv = ["--strict", "--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins), "plugins"]
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert "'broken'" in err and "cannot start: no config" in err
    assert out == ""


@pytest.mark.slow
@pytest.mark.process
def test_cli_as_a_real_process(tmp_path: Path, plugins: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGRAPH_HOST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(tmp_path / "d"),
         "--plugins-dir", str(plugins), "plugins", "--json", "--start"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows["good"]["published"] == ["good-api"]
    assert rows["broken"]["status"] == "failed"
    assert "plugin 'broken'" in proc.stderr  # the failure is logged with the plugin's name


def test_every_command_and_option_has_help_text(tmp_path: Path, plugins: Path, capsys) -> None:
    import argparse

    from host import Host
    from host.cli.cli import _plugin_commands, build_parser

    host = Host(data_dir=tmp_path / "d", plugin_dirs=[plugins])
    host.load_plugins()
    parser = build_parser(_plugin_commands(host))
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {action.dest: action.help for action in sub._choices_actions}
    assert set(listed) >= {"plugins", "hooks", "dev", "greet", "demo"}
    for name, child in sub.choices.items():
        assert listed[name] and child.description, name
        for action in child._actions + parser._actions:
            assert action.help or isinstance(action, argparse._SubParsersAction), (name, action)
        code, out, _err = run(capsys, "--data-dir", str(tmp_path / "d"), "--plugins-dir",
                              str(plugins), name, "--help")  # fmt: skip
        assert code == 0 and out.startswith(f"usage: memgraph-host {name}"), name
        assert child.description.split()[0] in out


def test_hooks_shows_implementation_flags_in_call_order(tmp_path: Path) -> None:
    import argparse
    import io

    from host import Host, hookimpl
    from host.cli.cli import cmd_hooks

    class Early:
        @hookimpl(tryfirst=True)
        def host_startup(self, host):
            pass

    class Late:
        @hookimpl(trylast=True)
        def host_startup(self, host):
            pass

    class Plain:
        @hookimpl
        def host_startup(self, host):
            pass

    class Wrap:
        @hookimpl(wrapper=True)
        def host_startup(self, host):
            return (yield)

    host = Host(data_dir=tmp_path / "d", entry_points=False, builtins=False)
    for plugin in (Late(), Early(), Wrap(), Plain()):
        host.register_plugin(plugin, name=type(plugin).__name__.lower())
    out = io.StringIO()
    assert cmd_hooks(host, argparse.Namespace(json=False), out) == 0
    block = out.getvalue().split("host_startup  (host.hookspecs)\n", 1)[1].splitlines()[:4]
    assert block == [
        "    1. wrap [wrapper]",
        "    2. early [tryfirst]",
        "    3. plain",
        "    4. late [trylast]",
    ]


def test_a_hook_failure_shows_as_the_plugins_last_error(tmp_path: Path, capsys) -> None:
    folder = plugin_folder(
        tmp_path,
        "grumpy",
        "from host import hookimpl\n\n\n@hookimpl\ndef host_startup(host):\n"
        "    raise LookupError('no startup today')\n",
    )
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(folder), "plugins", "--start"]
    code, out, _err = run(capsys, *argv)
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("grumpy ")]
    assert "loaded: host_startup: LookupError: no startup today" in row
    code, out, _err = run(capsys, *argv, "--json")
    grumpy = {r["name"]: r for r in json.loads(out)}["grumpy"]
    assert (grumpy["status"], grumpy["hooks"]) == ("loaded", ["host_startup"])
    assert grumpy["error"] == "host_startup: LookupError: no startup today"
    assert "no startup today" in grumpy["traceback"] and str(folder) in grumpy["traceback"]


def test_what_plugins_print_never_mixes_with_a_commands_output(tmp_path: Path, capsys) -> None:
    """``plugins --json``, ``hooks --json`` and a plugin command's output stay parseable when a
    plugin prints while it is imported, started or stopped: that goes to stderr."""
    folder = plugin_folder(
        tmp_path,
        "chatty",
        textwrap.dedent(
            """
            from host import Command, hookimpl

            print("chatty: imported")


            @hookimpl
            def host_startup(host):
                print("chatty: started")


            @hookimpl
            def host_shutdown(host):
                print("chatty: stopped")


            @hookimpl
            def host_cli_commands(host):
                return [Command("say", "say one line", lambda p: None, lambda h, a: print("said"))]
            """
        ),
    )
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(folder)]
    code, out, err = run(capsys, *argv, "plugins", "--json", "--start")
    assert code == 0
    assert {r["name"]: r["status"] for r in json.loads(out)}["chatty"] == "loaded"
    assert [line for line in err.splitlines() if line.startswith("chatty:")] == [
        "chatty: imported",
        "chatty: started",
        "chatty: stopped",
    ]
    code, out, err = run(capsys, *argv, "hooks", "--json")
    assert code == 0 and "host_startup" in {row["name"] for row in json.loads(out)}
    code, out, err = run(capsys, *argv, "say")
    assert (code, out) == (0, "said\n")
    assert "chatty: started" in err and "chatty: stopped" in err


def test_listing_plugins_runs_no_startup_side_effects(tmp_path: Path, capsys) -> None:
    """``plugins`` lists without calling ``host_startup`` (``--start`` opts in)."""
    marker = tmp_path / "started.txt"
    folder = plugin_folder(
        tmp_path,
        "effect",
        "from pathlib import Path\nfrom host import hookimpl\n\n\n@hookimpl\n"
        f"def host_startup(host):\n    Path({str(marker)!r}).write_text('x')\n",
    )
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(folder), "plugins"]
    code, out, _err = run(capsys, *argv, "--json")
    assert code == 0 and {r["name"] for r in json.loads(out)} >= {"effect", "memgraph"}
    assert not marker.exists()
    assert not (tmp_path / "d" / "lancedb").exists()  # the memory graph did not open storage
    code, out, _err = run(capsys, *argv, "--start")
    assert code == 0 and marker.exists()


def test_global_options_are_accepted_anywhere(tmp_path: Path, plugins: Path, capsys) -> None:
    """``memgraph-host greet world --data-dir d --plugins-dir p`` works."""
    code, out, err = run(
        capsys, "greet", "world", "--data-dir", str(tmp_path / "d"), "--plugins-dir", str(plugins)
    )
    assert (code, out.strip()) == (0, "hello world started=True data=d"), err
    code, out, err = run(
        capsys, "--data-dir", str(tmp_path / "x"), "greet", "--plugins-dir", str(plugins), "w"
    )
    assert (code, out.strip()) == (0, "hello w started=True data=x"), err
    code, out, _err = run(
        capsys, "config", "--json", "--set", "recall_hops=4", "--data-dir", str(tmp_path / "c")
    )
    assert code == 0
    assert {r["key"]: r["value"] for r in json.loads(out)}["recall_hops"] == 4


def test_an_error_is_one_line_without_traceback_unless_debug(tmp_path: Path, capsys) -> None:
    folder = plugin_folder(
        tmp_path,
        "oops",
        "from host import Command, hookimpl\n\n\ndef boom(host, args):\n"
        "    raise KeyError('no such thing')\n\n\n@hookimpl\ndef host_cli_commands(host):\n"
        "    return [Command('boom', 'fails', lambda p: None, boom)]\n",
    )
    argv = ["--data-dir", str(tmp_path / "d"), "--plugins-dir", str(folder), "boom"]
    code, _out, err = run(capsys, *argv)
    assert code == 1
    assert err.strip().splitlines()[-1].startswith("memgraph-host boom: error: KeyError")
    assert "Traceback" not in err
    code, _out, err = run(capsys, *argv, "--debug")
    assert code == 1 and "Traceback" in err and "no such thing" in err
    code, _out, err = run(capsys, "--set", "nonsense", "config", "--data-dir", str(tmp_path))
    assert (
        code == 2 and err.strip() == "memgraph-host: error: --set expects KEY=VALUE, got 'nonsense'"
    )


@pytest.mark.parametrize("command", [["config", "--json"], ["plugins", "--json"], ["hooks"]])
def test_a_closed_output_pipe_exits_quietly(tmp_path: Path, command: list[str]) -> None:
    """``memgraph-host config --json | head -1``: the reader is gone before the command writes
    (the pipe's read end is closed before the process starts, so every write fails)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "host", "--data-dir", str(tmp_path / "d"), *command],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Broken" not in done.stderr and "error" not in done.stderr, done.stderr
