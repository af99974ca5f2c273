"""An imported graph is never rolled back by chatting in its chat, and the rollback
command's arguments are checked: through the real `memgraph-host` CLI in
subprocesses, and through the Python API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from host import Host
from memgraph_plugin.turn import pipeline_for


def _rows(count: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Message {i}: Mara met Juno Kade at the Lantern Market.",
        }
        for i in range(start, start + count)
    ]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(data: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "host", "--data-dir", str(data), *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def test_import_then_ingest_keeps_the_import_and_rollback_arguments_are_checked(tmp_path) -> None:
    data = tmp_path / "data"
    t = _write(tmp_path / "t.jsonl", _rows(63))
    other = _write(tmp_path / "other.jsonl", _rows(10, start=100))
    assert _cli(data, "ingest", str(t), "--chat", "src", "--quiet").returncode == 0
    exported = tmp_path / "s.json"
    run = _cli(data, "export", "src", "--output", str(exported))
    assert run.returncode == 0, run.stderr
    imported_nodes = len(json.loads(exported.read_text())["nodes"])
    assert _cli(data, "import", "dst", str(exported)).returncode == 0
    run = _cli(data, "ingest", str(other), "--chat", "dst", "--quiet")
    assert run.returncode == 0, run.stderr  # was: CONFLICT ... based on version -1
    run = _cli(data, "history", "dst", "--json")
    kinds = [json.loads(line)["kind"] for line in run.stdout.splitlines()]
    assert kinds[0] == "import" and "rollback" not in kinds and len(kinds) >= 11
    run = _cli(data, "export", "dst")
    nodes = json.loads(run.stdout)["nodes"]
    assert len(nodes) > imported_nodes  # the import and the new messages' events
    summaries = {n["fields"].get("summary") for n in nodes.values()}
    assert "Message 0: Mara met Juno Kade at the Lantern Market." in summaries  # imported
    assert "Message 109: Mara met Juno Kade at the Lantern Market." in summaries  # chatted

    before = _cli(data, "history", "src", "--json").stdout
    for argv, says in [
        (["--seq", "-5"], "seq must be >= 0"),
        (["--seq", "999"], "seq 999 is past chat 'src'"),
        (["--to", "-1"], "version must be >= 0"),
    ]:
        run = _cli(data, "rollback", "src", *argv)
        assert run.returncode == 1 and says in run.stderr, run  # a user error, one line
    assert _cli(data, "history", "src", "--json").stdout == before  # no commit made
    run = _cli(data, "rollback", "nope", "--seq", "3")
    assert run.returncode != 0 and "unknown chat 'nope'" in run.stderr
    run = _cli(data, "history", "nope")
    assert run.returncode != 0 and "unknown chat 'nope'" in run.stderr  # not created


async def test_api_import_then_turns_keep_the_import(tmp_path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        for row in _rows(12):
            add = (
                pipeline.add_user_message if row["role"] == "user" else
                pipeline.add_assistant_message
            )
            await add("src", row["content"])
        api = host.registry.get("memory-graph")
        session = await pipeline.open_session("src")
        exported = session.store.to_dict()
        await api.import_graph("dst", exported)
        await pipeline.run_turn("dst", "Where is Mara now?", "At the Lantern Market.")
        await pipeline.run_turn("dst", "And Juno Kade?", "Gone to Skyharbor.")
        kinds = [r.kind for r in await api.history("dst")]
        assert kinds[0] == "import" and "rollback" not in kinds
        store = (await pipeline.open_session("dst")).store
        summaries = {n.fields.get("summary") for n in store.iter_nodes()}
        assert {r["content"] for r in _rows(12)} <= summaries
        assert {"Where is Mara now?", "Gone to Skyharbor."} <= summaries
        # editing the newest message rolls back that message only, never the import
        host.chat("dst").truncate(len(host.chat("dst").messages) - 2)
        await pipeline.add_assistant_message("dst", "Gone to Qel.")
        store = (await pipeline.open_session("dst")).store
        summaries = {n.fields.get("summary") for n in store.iter_nodes()}
        assert {r["content"] for r in _rows(12)} <= summaries
        assert "Gone to Qel." in summaries and "Gone to Skyharbor." not in summaries
    finally:
        await host.stop()
