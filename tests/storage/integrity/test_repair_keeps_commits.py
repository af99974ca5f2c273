"""``memgraph-host repair`` keeps every commit it can: a lost journal row becomes an empty commit
of kind ``repair``, and the later commits stay as long as their changes still apply to what the
kept commits give (the first one that needs a node or edge the lost commit made, and every one
after it, are removed and listed). Afterwards ``check`` is clean, ``export`` works and the chat
takes new commits.

Real LanceDB folders on disk, driven through the CLI; one journal row's data file is deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pytest

from host.cli.cli import main
from memgraph_plugin.storage import LanceStorage, StorageSettings

from ..helpers import change, edge, node

#: chat A's commits, version = index + 1. Version 5 links n_1 (made by version 1) to n_4.
COMMITS = [
    change(node("n_1"), node_seq=1, seq=1),
    change(node("n_2"), node_seq=2, seq=2),
    change(node("n_3"), edges=[edge("n_2", "n_3")], node_seq=3, seq=3),
    change(node("n_4"), node_seq=4, seq=4),
    change(edges=[edge("n_1", "n_4")], node_seq=4, seq=5),
    change(node("n_6"), node_seq=6, seq=6),
]


def _build(data: Path, *, snapshot_at: int | None = None) -> None:
    storage = LanceStorage(StorageSettings(uri=str(data / "lancedb")))
    for version, commit in enumerate(COMMITS, start=1):
        storage.commit_sync("A", commit, base_version=version - 1)
        if version == snapshot_at:
            assert storage.snapshot_sync("A") == version
    storage.commit_sync("B", change(node("b_1"), node_seq=1, seq=1), base_version=0)
    storage.close()


def _lose(data: Path, chat: str, version: int) -> None:
    """Delete the data file of the fragment that holds exactly `chat`'s row of `version`."""
    folder = data / "lancedb" / "commits.lance"
    for fragment in lance.dataset(str(folder)).get_fragments():
        rows = fragment.to_table(columns=["chat_id", "version"]).to_pylist()
        if rows == [{"chat_id": chat, "version": version}]:
            (data_file,) = fragment.metadata.files
            (folder / "data" / data_file.path).unlink()
            return
    raise AssertionError(f"no fragment holds only {chat!r} version {version}")


def _cli(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str]:
    status = main(["--data-dir", str(data), *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def _exported(capsys: pytest.CaptureFixture[str], data: Path, chat: str) -> dict:
    status = main(["--data-dir", str(data), "export", chat])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def _graph(exported: dict) -> tuple[set[str], set[tuple[str, str]]]:
    return set(exported["nodes"]), {(e["from"], e["to"]) for e in exported["edges"]}


@pytest.mark.parametrize(
    ("lost", "said", "nodes", "edges", "kinds"),
    [
        # version 1 (no snapshot): versions 2-4 still apply; 5 links n_1, so 5 and 6 go
        (
            1,
            "commit(s) 1 lost, each now an empty commit marked 'repair' (their changes are "
            "gone); kept the later commit(s) 2-4; removed 2 commit(s) from version 5 on "
            "(version 5 links node 'n_1', which the kept commits do not hold)",
            {"n_2", "n_3", "n_4"},
            {("n_2", "n_3")},
            ["repair", "write", "write", "write"],
        ),
        # a middle version: every later commit still applies
        (
            3,
            "commit(s) 3 lost, each now an empty commit marked 'repair' (their changes are "
            "gone); kept the later commit(s) 4-6",
            {"n_1", "n_2", "n_4", "n_6"},
            {("n_1", "n_4")},
            ["write", "write", "repair", "write", "write", "write"],
        ),
    ],
)
def test_repair_keeps_the_commits_after_a_lost_one_that_still_apply(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    lost: int,
    said: str,
    nodes: set[str],
    edges: set[tuple[str, str]],
    kinds: list[str],
) -> None:
    data = tmp_path / "d"
    _build(data)
    _lose(data, "A", lost)

    status, out = _cli(capsys, data, "check")
    assert (
        status == 1 and f"chat 'A': commit(s) {lost} lost; intact up to version {lost - 1}" in out
    )

    status, out = _cli(capsys, data, "repair")
    assert status == 0, out
    assert f"chat 'A': {said}" in out
    assert "newest commit" not in out

    status, out = _cli(capsys, data, "check")
    assert status == 0 and out.startswith("ok:"), out
    assert _graph(_exported(capsys, data, "A")) == (nodes, edges)
    assert _graph(_exported(capsys, data, "B")) == ({"b_1"}, set())

    storage = LanceStorage(StorageSettings(uri=str(data / "lancedb")))
    history = storage.history_sync("A")
    assert [r.kind for r in history] == kinds
    assert [r.version for r in history] == list(range(1, len(kinds) + 1))
    # the chat takes new commits on top of what repair kept
    storage.commit_sync("A", change(node("n_9"), node_seq=9, seq=9), base_version=len(kinds))
    assert "n_9" in storage.load_sync("A").data["nodes"]
    storage.close()


def test_a_lost_newest_commit_takes_the_chat_back_one_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d"
    _build(data)
    _lose(data, "A", 6)

    status, out = _cli(capsys, data, "check")
    assert status == 1
    assert "1 lost commit row(s) are in no chat's gap: each was a chat's newest commit" in out
    status, out = _cli(capsys, data, "repair")
    assert status == 0 and "each was a chat's newest commit" in out, out
    status, out = _cli(capsys, data, "check")
    assert status == 0 and out.startswith("ok:"), out
    assert _graph(_exported(capsys, data, "A")) == (
        {"n_1", "n_2", "n_3", "n_4"},
        {("n_2", "n_3"), ("n_1", "n_4")},
    )


def test_a_lost_first_commit_under_a_snapshot_is_history_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The snapshot at version 3 holds version 1's change: only its history row is gone, and
    the report says so (not "a chat's newest commit")."""
    data = tmp_path / "d"
    _build(data, snapshot_at=3)
    _lose(data, "A", 1)

    status, out = _cli(capsys, data, "repair")
    assert status == 0, out
    assert "chat 'A': history rows of version(s) 1 lost; its state is whole (snapshot at " in out
    assert "newest commit" not in out
    status, out = _cli(capsys, data, "check")
    assert status == 0 and out.startswith("ok:"), out
    assert _graph(_exported(capsys, data, "A")) == (
        {"n_1", "n_2", "n_3", "n_4", "n_6"},
        {("n_2", "n_3"), ("n_1", "n_4")},
    )
