"""The demo: continues a stored run, reports a finished story, starts over with --fresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memgraph_plugin.tools.demo import MARKER, STORY_PATH, DemoError, run_demo
from memgraph_plugin.turn import load_story
from tests.story_hosts import FIXTURE_STORY as FIXTURE


@pytest.mark.slow
async def test_demo_continues_then_reports_complete_then_fresh(tmp_path):
    data = tmp_path / "demo-data"
    lines: list[str] = []
    first = await run_demo(data, story_path=FIXTURE, replay=True, max_turns=2, out=lines.append)
    assert (first.turns_before, first.turns_run, first.complete) == (0, 2, False)
    text = "\n".join(lines)
    assert "turn 1/4" in text and "turn 2/4" in text and "turn 3/4" not in text
    assert "recall [builtin-hybrid, canary" in text and "extraction:" in text

    lines.clear()
    second = await run_demo(data, story_path=FIXTURE, replay=True, out=lines.append)
    assert (second.turns_before, second.turns_run, second.complete) == (2, 2, True)
    text = "\n".join(lines)
    assert "continuing from the stored graph: 2 of 4" in text and "turn 1/4" not in text
    assert second.nodes_by_type["event"] == 4  # turns 1-2 were not extracted twice

    lines.clear()
    third = await run_demo(data, story_path=FIXTURE, replay=True, out=lines.append)
    text = "\n".join(lines)
    assert third.turns_run == 0 and "showing state" in text
    # a finished story still shows what the next turn gets: why each node is in, and the prompt
    assert "memory the next turn receives" in text and "recall [builtin-hybrid" in text
    prompt = third.final_prompt  # recalled (most relevant first), then the pinned scene
    assert prompt.startswith("## Recalled memory") and "\n## Pinned memory" in prompt
    assert "### event_table" in text
    assert second.final_prompt is not None and first.final_prompt is None
    assert third.nodes_by_type == second.nodes_by_type
    assert third.picture.exists() and "<svg" in third.picture.read_text()

    fresh = await run_demo(
        data, story_path=FIXTURE, replay=True, fresh=True, max_turns=1, out=lambda s: None
    )
    assert (fresh.turns_before, fresh.turns_run) == (0, 1)
    assert fresh.nodes_by_type["event"] == 1


async def test_demo_refuses_a_folder_it_did_not_make(tmp_path):
    precious = tmp_path / "mine"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(DemoError, match="not a demo folder"):
        await run_demo(precious, story_path=FIXTURE, replay=True, fresh=True, out=lambda s: None)
    assert (precious / "notes.txt").read_text() == "keep me"
    assert not (precious / MARKER).exists()


async def test_demo_builds_its_graph_from_raw_text_by_default(tmp_path):
    """Without --replay the built-in offline extractor reads every message's raw text."""
    lines: list[str] = []
    summary = await run_demo(tmp_path / "d", story_path=FIXTURE, out=lines.append)
    text = "\n".join(lines)
    assert summary.complete and "memgraph-extract-offline" in text
    assert "demo.replay-extractor" not in text
    story = load_story(FIXTURE)
    # one event per message (user and assistant), some of them rolled up
    assert summary.nodes_by_type["event"] - summary.rollups == 2 * len(story.turns)
    assert summary.nodes_by_type.get("character_sheet", 0) >= 2
    assert summary.edges > 2 * len(story.turns)


def test_shipped_story_loads():
    assert len(load_story(STORY_PATH).turns) >= 40


@pytest.mark.slow
@pytest.mark.process
def test_demo_command_as_a_subprocess_twice(tmp_path):
    exe = Path(sys.executable).with_name("memgraph-host")
    cmd = [str(exe), "demo", "--data", "d", "--story", str(FIXTURE)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "turn 4/4" in run.stdout and "picture of the graph:" in run.stdout
    assert "explore it live: memgraph-host --data-dir d serve" in run.stdout
    picture = Path(run.stdout.rsplit("picture of the graph:", 1)[1].strip())
    assert picture.exists() and picture.is_relative_to(tmp_path)
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "story is complete" in again.stdout and "turn 1/4" not in again.stdout
    fresh = subprocess.run(
        [*cmd, "--fresh"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert fresh.returncode == 0, fresh.stderr
    assert "turn 1/4" in fresh.stdout


async def test_demo_resumes_a_run_stopped_mid_turn(tmp_path):
    """An answer that never reached the graph is extracted; a dangling user message is cut."""
    from host import Host
    from memgraph_plugin.tools.demo import CHAT_ID

    data = tmp_path / "demo-data"
    story = load_story(FIXTURE)
    await run_demo(data, story_path=FIXTURE, replay=True, max_turns=2, out=lambda s: None)
    host = Host(data_dir=data, entry_points=False, builtins=False)
    chat = host.chat(CHAT_ID)
    chat.add_message("user", story.turns[2].user)
    chat.add_message("assistant", story.turns[2].assistant)  # stopped before its extraction
    chat.add_message("user", story.turns[3].user)  # stopped before the answer
    lines: list[str] = []
    summary = await run_demo(data, story_path=FIXTURE, replay=True, out=lines.append)
    assert (summary.turns_before, summary.turns_run) == (3, 1)
    assert summary.nodes_by_type["event"] == 4 and summary.nodes_by_type["thread"] == 1
    roles = [m.role for m in Host(data_dir=data, builtins=False).get_context(CHAT_ID).messages]
    assert roles == ["user", "assistant"] * 4


async def test_demo_refuses_a_chat_of_another_story(tmp_path):
    data = tmp_path / "demo-data"
    await run_demo(data, story_path=FIXTURE, replay=True, max_turns=1, out=lambda s: None)
    with pytest.raises(DemoError, match="--fresh"):
        await run_demo(data, story_path=STORY_PATH, replay=True, max_turns=1, out=lambda s: None)


@pytest.mark.slow
async def test_demo_on_the_shipped_story_shows_every_companion(tmp_path):
    """The real story: each turn says what was injected and why; the scout's finds, the
    curator's merges and the compactor's rollups are printed as they happen."""
    from tests.turn.test_story_e2e import PLANTED

    lines: list[str] = []
    summary = await run_demo(tmp_path / "demo-data", out=lines.append, replay=True)
    text = "\n".join(lines)
    total = len(load_story(STORY_PATH).turns)
    assert summary.complete and summary.turns_run == total
    assert "keyword+vector+recency" in text  # the demo recalls with the offline hashing profile
    assert sum(f"── turn {n}/{total} " in text for n in range(1, total + 1)) == total
    plugins = next(line for line in lines if line.startswith("plugins: "))
    for name in ("memgraph (built-in)", "scout (folder)", "curator (folder)", "compactor (folder)"):
        assert name in plugins  # the host really loaded and lists its plugins
    assert text.count("curator:   merged") == summary.merges == sum(map(len, PLANTED.values()))
    assert text.count("compactor: rolled up") == summary.rollups > 0
    assert "scout:     found" in text
    assert "-[involved_in]- 1 hop" in text  # an expanded node with its seed, relation and hops
    assert f"graph: {sum(summary.nodes_by_type.values())} active nodes" in text
    assert summary.final_prompt and "## Recalled memory" in summary.final_prompt
    assert text.rstrip().endswith(str(summary.picture)) and summary.picture.exists()


def test_the_story_ships_as_package_data():
    """``memgraph-host demo`` from a wheel needs the story: ``sample_plugins/story`` is found as a
    namespace package and every package's ``*.json`` is package data (checked by hand with a
    built wheel; this keeps the configuration that makes it so)."""
    import fnmatch
    import tomllib

    from memgraph_plugin.tools.demo import SAMPLE_PLUGINS

    root = Path(__file__).resolve().parents[2]
    conf = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = conf["packages"]["find"]
    assert "sample_plugins*" in find["include"] and find.get("namespaces", True)
    assert any(fnmatch.fnmatch(STORY_PATH.name, pattern) for pattern in conf["package-data"]["*"])
    assert STORY_PATH.parent.parent == SAMPLE_PLUGINS and STORY_PATH.exists()


def test_demo_command_refuses_bad_turns_and_a_missing_story(tmp_path, capsys):
    from host.cli.cli import main

    data = tmp_path / "d"
    assert main(["demo", "--data", str(data), "--turns", "0"]) == 2
    assert "--turns must be at least 1" in capsys.readouterr().err
    missing = tmp_path / "nope.json"
    assert main(["demo", "--data", str(data), "--story", str(missing)]) == 1  # a user error
    assert "story file not found" in capsys.readouterr().err


COMPANION = '''
from pathlib import Path

from host import hookimpl

SEEN = Path(__file__).with_name("seen.txt")


@hookimpl
def memgraph_injection_changed(chat_id, state):
    with SEEN.open("a") as fh:
        fh.write(f"{chat_id} {len(state.always_inject_ids)}\\n")
'''


def test_demo_takes_the_global_data_dir_and_plugin_folders(tmp_path, monkeypatch, capsys):
    """``memgraph-host --data-dir D --plugins-dir P demo``: the demo writes into D (not
    ./demo-data), loads the plugins of P beside the samples, and names the trace command
    that reads its traces back."""
    from host.cli.cli import main
    from memgraph_plugin.tools.demo import CHAT_ID, PICTURE

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMGRAPH_HOST_DATA_DIR", raising=False)
    extra = tmp_path / "mine"
    extra.mkdir()
    (extra / "companion.py").write_text(COMPANION)
    data = tmp_path / "elsewhere"
    argv = ["--data-dir", str(data), "--plugins-dir", str(extra), "demo", "--story", str(FIXTURE),
            "--replay"]  # the recorded ops: one pinned event per earlier turn
    assert main([*argv, "--turns", "2"]) == 0
    out = capsys.readouterr().out
    assert (data / MARKER).exists() and (data / PICTURE).exists()
    assert not (tmp_path / "demo-data").exists()
    assert "companion (folder)" in out.splitlines()[1]
    assert (extra / "seen.txt").read_text().split() == [CHAT_ID, "0", CHAT_ID, "1"]
    hint = f"recall traces: memgraph-host --data-dir {data} trace {CHAT_ID}"
    assert hint in out
    assert main(["--data-dir", str(data), "trace", CHAT_ID]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["1", "2"]
    # --data still wins over the global folder
    assert main([*argv, "--data", str(tmp_path / "own"), "--turns", "1"]) == 0
    assert (tmp_path / "own" / MARKER).exists()
