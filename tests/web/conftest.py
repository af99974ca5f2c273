"""Explorer fixtures: a data dir written by a real second process, and `memgraph-host serve`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

WRITER = Path(__file__).with_name("writer_child.py")
SCRIPT = Path(sys.executable).with_name("memgraph-host")


def write_nodes(data_dir: Path, chat: str, *specs: str) -> None:
    """Create nodes (``title:type[:linked title]``) in ``chat`` from a separate writer process."""
    proc = subprocess.run(
        [sys.executable, str(WRITER), str(data_dir), chat, *specs],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    write_nodes(
        folder, "harbor",
        "Mira:character_sheet", "Old lighthouse:location_state",
        "Harbor storm:event:Mira", "Lantern found in the lighthouse:event:Old lighthouse",
    )  # fmt: skip
    return folder


@pytest.fixture
def served(data_dir: Path) -> Iterator[str]:
    """The URL of a real `memgraph-host serve` process over ``data_dir`` (any free port)."""
    with serve_process(data_dir) as url:
        yield url


@contextmanager
def serve_process(data_dir: Path, *options: str) -> Iterator[str]:
    """A real `memgraph-host serve` process over ``data_dir`` (any free port): its URL."""
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data_dir), "serve", "--port", "0", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.stderr else "")
        yield line.split()[2]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
