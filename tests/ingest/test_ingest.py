"""Transcript ingest on a real host with LanceDB, from real files; the CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from host import Host
from memgraph_plugin.ingest import TranscriptError, ingest_file, read_transcript

CHAT = "imported"

ST_LINES = [
    {"user_name": "Ilya", "character_name": "Quill", "create_date": "2024-05-01"},
    {"name": "Ilya", "is_user": True, "mes": "Hello Quill, is Mara at the Lantern Market?",
     "send_date": "May 1, 2024 9:00pm"},
    {"name": "Quill", "is_user": False, "mes": "Mara left for Skyharbor. Ask Juno Kade.",
     "send_date": "May 1, 2024 9:01pm"},
    {"name": "Mara", "is_user": False, "mes": "I'm back, Ilya. Juno's men followed me.",
     "send_date": "May 1, 2024 9:02pm"},
    {"name": "Ilya", "is_user": True, "mes": "Then we hide in the Bank of Qel, Mara.",
     "send_date": "May 1, 2024 9:03pm"},
]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_formats_read_the_same_messages(tmp_path: Path) -> None:
    st = [m for m in read_transcript(write_jsonl(tmp_path / "st.jsonl", ST_LINES))]
    assert [(m.role, m.name) for m in st] == [
        ("user", "Ilya"), ("assistant", "Quill"), ("assistant", "Mara"), ("user", "Ilya")
    ]  # a group chat: every character is an assistant speaker
    assert st[0].time == "May 1, 2024 9:00pm" and st[0].where.endswith("st.jsonl:2")
    rows = [{"role": "user", "content": "hi"}, {"name": "Bo", "mes": "yo", "time": 5}]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    got = list(read_transcript(listed))
    assert [(m.role, m.text, m.time) for m in got] == [("user", "hi", ""), ("user", "yo", "5")]
    assert got[1].where.endswith("list.json:6")
    names_only = write_jsonl(tmp_path / "n.jsonl", [{"name": "A", "content": "x"},
                                                    {"name": "B", "content": "y"}])
    assert [m.role for m in read_transcript(names_only)] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        ('{"role": "user", "content": "ok"}\n{"role": "user", "content": \n', 2, "not valid JSON"),
        ('{"role": "user", "content": "ok"}\n{"role": "user"}\n', 2, "message has no text"),
        ('{"role": "user", "content": "ok"}\n{"role": "pirate", "content": "arr"}\n', 2,
         "unknown role"),
        ("role,content\nuser,hi\n", 1, "unknown format"),
        ('[{"role": "user", "content": "ok"},\n {"role": "user", "content": 5}]', 2,
         "must be a string"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path: Path, content: str, line: int, what: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TranscriptError) as info:
        list(read_transcript(path))
    assert info.value.where == f"{path}:{line}" and what in info.value.what


async def test_sillytavern_group_chat_builds_events_characters_edges(host, tmp_path) -> None:
    path = write_jsonl(tmp_path / "st.jsonl", ST_LINES)
    report = await ingest_file(host, path, CHAT)
    assert report.ok and (report.ingested, report.skipped, report.total) == (4, 0, 4)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    nodes = [n for n in session.store.iter_nodes() if not n.archived]
    people = sorted(n.title for n in nodes if n.type == "character_sheet")
    assert people == ["Ilya", "Juno Kade", "Mara", "Quill"]  # Juno's = Juno Kade, no doubles
    places = sorted(n.title for n in nodes if n.type == "location_state")
    assert places == ["Bank of Qel", "Lantern Market", "Skyharbor"]
    events = [n for n in nodes if n.type == "event"]
    assert [e.fields["time"] for e in events] == [r["send_date"] for r in ST_LINES[1:]]
    assert report.nodes_by_type == dict(sorted(Counter(n.type for n in nodes).items()))
    assert report.edges == session.store.edge_count > 0
    messages = host.chat(CHAT).messages
    assert [(m.name, m.role) for m in messages][2] == ("Mara", "assistant")

    again = await ingest_file(host, path, CHAT)  # resume: nothing added twice
    assert (again.ingested, again.skipped, again.total) == (0, 4, 4)
    assert again.nodes_by_type == report.nodes_by_type and again.edges == report.edges


async def test_a_bad_line_keeps_every_whole_message_before_it(host, tmp_path) -> None:
    rows = [json.dumps({"role": "user", "content": f"Message {i} for Mara."}) for i in range(3)]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([*rows, '{"role": "user"', rows[0]]) + "\n", encoding="utf-8")
    report = await ingest_file(host, path, CHAT)
    assert report.error is not None and report.error.where == f"{path}:4"
    assert (report.ingested, report.total) == (3, 3)
    assert report.nodes_by_type["event"] == 3
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_text("\n".join([*rows, json.dumps({"role": "user", "content": "Now."})]) + "\n")
    resumed = await ingest_file(host, fixed, CHAT)
    assert resumed.ok and (resumed.ingested, resumed.skipped, resumed.total) == (1, 3, 4)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"role": "user", "content": "Different."}) + "\n")
    clash = await ingest_file(host, other, CHAT)
    assert clash.error is not None and "already holds a different message 1" in str(clash.error)


async def test_a_run_that_died_mid_block_is_repaired(host, tmp_path) -> None:
    chat = host.chat(CHAT)
    chat.add_message("user", "Ask Mara.")  # in the chat, never extracted (the run died)
    path = write_jsonl(tmp_path / "t.jsonl", [{"role": "user", "content": "Ask Mara."},
                                              {"role": "assistant", "content": "Mara nods."}])
    report = await ingest_file(host, path, CHAT)
    assert (report.repaired, report.skipped, report.ingested) == (1, 1, 1)
    assert report.nodes_by_type["event"] == 2


@pytest.mark.slow
@pytest.mark.process
def test_cli_exit_status_and_summary(tmp_path: Path) -> None:
    data = tmp_path / "data"
    good = write_jsonl(tmp_path / "st.jsonl", ST_LINES)
    cmd = [sys.executable, "-m", "host", "--data-dir", str(data), "ingest"]
    run = subprocess.run([*cmd, str(good), "--chat", CHAT], capture_output=True, text=True,
                         timeout=240)
    assert run.returncode == 0, run.stderr
    assert "4 messages ingested" in run.stdout and "character_sheet 4" in run.stdout
    assert "edges:" in run.stdout and "seconds:" in run.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"role": "user", "content": "Hi."}) + "\n{oops\n")
    run = subprocess.run([*cmd, str(bad), "--chat", "other", "--quiet"], capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 1
    assert f"{bad}:2: not valid JSON" in run.stderr and "1 messages ingested" in run.stderr


async def test_what_an_ingest_built_is_on_disk_for_the_next_host(tmp_path) -> None:
    """Deferred commits persist the block's store: a new host over the same data dir loads the
    whole graph (one journal row per message, as a live chat), and a re-run resumes without
    re-extracting."""
    path = write_jsonl(tmp_path / "st.jsonl", ST_LINES)
    first = Host(data_dir=tmp_path / "data", entry_points=False)
    await first.start()
    try:
        report = await ingest_file(first, path, CHAT)
        history = await first.registry.get("memory-graph").history(CHAT)
    finally:
        await first.stop()
    assert report.ok and report.ingested == 4
    # one block, one commit per message: each at its message's seq (u0 0, a 1, a 2, u1 2)
    assert [(r.version, r.seq) for r in history] == [(1, 0), (2, 1), (3, 2), (4, 2)]
    second = Host(data_dir=tmp_path / "data", entry_points=False)
    await second.start()
    try:
        again = await ingest_file(second, path, CHAT)
    finally:
        await second.stop()
    assert (again.repaired, again.skipped, again.ingested) == (0, 4, 0)
    assert again.nodes_by_type == report.nodes_by_type and again.edges == report.edges
