"""The first recall after ``import`` or ``fork`` ranks the graph it brought: a chat exported,
imported as a new chat and forked, then asked about a person of it, all through real
``memgraph-host`` processes on one data dir (LanceDB on disk)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXE = Path(sys.executable).with_name("memgraph-host")

#: The person asked about speaks early; later turns fill the pinned (newest) scene.
TRANSCRIPT = [
    ("user", "Alice", "My sister Maria moved to Lisbon last spring."),
    ("assistant", "Bot", "How does Maria like Lisbon?"),
    ("user", "Alice", "She loves it. Maria works at a bakery near the river."),
    ("assistant", "Bot", "A bakery by the river sounds lovely."),
    ("user", "Alice", "My friend Tom plays the violin in an orchestra."),
    ("assistant", "Bot", "Tom must practise a lot."),
    ("user", "Alice", "Yesterday I adopted a grey cat named Pixel."),
    ("assistant", "Bot", "Pixel is a great name for a cat."),
    ("user", "Alice", "I repainted the kitchen green over the weekend."),
    ("assistant", "Bot", "Green kitchens feel fresh."),
]
QUESTION = "Where does Maria live?"


def _run(data: Path, *argv: str) -> str:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [str(EXE), "--data-dir", str(data), "--set", "embedding_profile=hashing", *argv]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, f"{argv}: {run.stderr}"
    return run.stdout


def _recall(data: Path, chat: str) -> dict[str, Any]:
    return json.loads(_run(data, "recall", "--json", chat, QUESTION))


def _ranked(recall: dict[str, Any]) -> dict[str, str]:
    """Title -> why, of the items recall ranked (the always-injected scene left out)."""
    return {i["title"]: i["why"] for i in recall["items"] if not i["pinned"]}


@pytest.mark.slow
@pytest.mark.process
def test_first_recall_after_import_and_fork_ranks_the_imported_graph(tmp_path: Path) -> None:
    data = tmp_path / "data"
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        "".join(
            json.dumps({"role": r, "name": n, "content": c}) + "\n" for r, n, c in TRANSCRIPT
        ),
        encoding="utf-8",
    )
    _run(data, "ingest", str(transcript), "--chat", "src")
    source = _recall(data, "src")
    assert any("Maria" in title for title in _ranked(source))
    exported = tmp_path / "src.json"
    exported.write_text(_run(data, "export", "src"), encoding="utf-8")
    _run(data, "import", "imported", str(exported))
    _run(data, "fork", "src", "forked")
    for chat in ("imported", "forked"):
        recall = _recall(data, chat)
        ranked = _ranked(recall)
        assert "Maria" in ranked, (chat, recall["items"])  # the person asked about
        lisbon = [t for t in ranked if "Lisbon" in t and t != "Lisbon"]
        assert lisbon, (chat, ranked)  # and the events that place her
        assert all(why.startswith(("seed", "baseline", "via")) for why in ranked.values())
        block = recall["block"]
        assert "## Recalled memory" in block
        assert "My sister Maria moved to Lisbon last spring." in block
