"""A CLI error is one line whatever the input: an import whose id is 100k characters long shows
it cut short, and a bad import file exits with status 1 (a user error, docs/cli.md), through the
real ``memgraph-host`` process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from host.echoed import SHOWN_CHARS, capped, shown

LONG = "x" * 100_000


def _import(data: Path, store: object) -> subprocess.CompletedProcess[str]:
    path = data.parent / "store.json"
    path.write_text(json.dumps(store), "utf-8")
    return subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(data), "import", "c", str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("store", "said"),
    [
        ({"nodes": {LONG: {"type": "event", "title": "t"}}}, "over the limit of 512"),
        ({"nodes": {"n_1": {"type": "event", "title": "t", "parentId": LONG}}}, "no node 'xxx"),
        ({"nodes": {"n_1": {"type": "event", "title": "t"}}, "edges": [
            {"from": "n_1", "to": "x" * 500, "type": "related"}]}, "xxx..."),  # under 512
    ],
)
def test_a_bad_import_echoes_a_long_value_cut_short_and_exits_1(
    tmp_path: Path, store: object, said: str
) -> None:
    run = _import(tmp_path / "d", store)
    assert run.returncode == 1, run.stderr  # a user error, as docs/cli.md says
    assert run.stderr.count("\n") == 1 and said in run.stderr
    assert "x" * (SHOWN_CHARS + 1) not in run.stderr and "..." in run.stderr
    assert len(run.stderr) < 400


def test_capped_keeps_the_shape_of_a_message() -> None:
    assert capped("nodes.n_1.parentId: no node 'abc'") == "nodes.n_1.parentId: no node 'abc'"
    long = capped(f"nodes.{LONG}.id: too long")
    assert long == f"nodes.{'x' * SHOWN_CHARS}....id: too long"
    assert shown(LONG) == repr(LONG)[:SHOWN_CHARS] + "..."
    assert shown("ok") == "'ok'"


@pytest.mark.parametrize("command", ["check", "repair"])
def test_check_on_an_endpoint_that_does_not_answer_says_storage_unreachable(
    tmp_path: Path, command: str
) -> None:
    """An S3 endpoint on a closed loopback port: the documented sentence (docs/storage.md), not
    LanceDB's debug dump."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    data = tmp_path / "d"
    data.mkdir()
    (data / "memgraph-host.toml").write_text(
        'storage_uri = "s3://bucket/db"\n[storage_options]\naws_access_key_id = "k"\n'
        'aws_secret_access_key = "memgraph-test-secret"\nregion = "us-east-1"\n'
        f'endpoint = "http://127.0.0.1:{port}"\nallow_http = "true"\n'
    )
    run = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(data), command],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert run.stderr.count("\n") == 1
    assert "cannot open storage_uri 's3://bucket/db': the endpoint did not answer" in run.stderr
    assert "IO {" not in run.stderr and "Traceback" not in run.stderr
    assert "memgraph-test-secret" not in run.stderr
