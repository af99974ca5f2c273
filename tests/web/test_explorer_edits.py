"""The explorer's edits against a real `memgraph-host serve` process over real
HTTP: each edit one ``edit`` commit with an undo, and who may write (token, Origin, Host,
--read-only, a non-loopback bind)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import SCRIPT

TOKEN = "tok-for-tests"


def _start(data_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data_dir), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    return proc, lines


@pytest.fixture
def writable(data_dir: Path) -> Iterator[tuple[str, str]]:
    """``(url, token)`` of a `serve` with edits, its token the one it printed."""
    proc, lines = _start(data_dir, "serve", "--port", "0")
    try:
        assert "http://127.0.0.1:" in lines[0], (lines, proc.stderr.read() if proc.stderr else "")
        assert lines[1].startswith("edit token (X-Memgraph-Token header): "), lines
        yield lines[0].split()[2], lines[1].split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _node(client: httpx.Client, title: str) -> dict:
    graph = client.get("api/chats/harbor/graph").json()
    return next(n for n in graph["nodes"] if n["title"] == title)


def _history(data_dir: Path) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(data_dir), "history", "harbor", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_edits_need_the_token_and_each_is_one_edit_commit_with_an_undo(
    writable: tuple[str, str], data_dir: Path
) -> None:
    url, token = writable
    with httpx.Client(base_url=url, timeout=60) as client:
        mira = _node(client, "Mira")
        edit = f"api/chats/harbor/nodes/{mira['id']}/edit"
        before = _history(data_dir)

        # who may write: each refusal changes nothing
        assert client.post(edit, json={"title": "Mirabel"}).status_code == 401
        wrong = client.post(edit, json={"title": "Mirabel"}, headers={"X-Memgraph-Token": "x"})
        assert wrong.status_code == 401 and wrong.json()["error"] == "wrong token"
        good = {"X-Memgraph-Token": token}
        foreign = client.post(
            edit, json={"title": "Mirabel"}, headers={**good, "Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403 and "cross-origin" in foreign.json()["error"]
        rebound = client.post(
            edit, json={"title": "Mirabel"}, headers={**good, "Host": "evil.example"}
        )
        assert rebound.status_code == 400  # the Host header names another site
        assert _node(client, "Mira")["title"] == "Mira"
        assert _history(data_dir) == before

        # a bad value: an error at the field, nothing written
        bad = client.post(edit, json={"title": ""}, headers=good)
        assert bad.status_code == 422 and bad.json()["field"] == "title"
        long = client.post(edit, json={"title": "M" * 5000}, headers=good)
        assert long.status_code == 422 and long.json()["field"] == "title", long.json()
        assert _history(data_dir) == before

        # the edit: one commit of kind edit, seen after a reload
        own = {**good, "Origin": url.rstrip("/")}
        done = client.post(edit, json={"title": "Mirabel", "fields": {"mood": "calm"}}, headers=own)
        assert done.status_code == 200 and done.json()["changed"], done.json()
        version = done.json()["version"]
        detail = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()
        assert detail["title"] == "Mirabel" and detail["fields"]["mood"] == "calm"
        history = _history(data_dir)
        assert len(history) == len(before) + 1 and '"kind": "edit"' in history[-1]
        edits = client.get("api/chats/harbor/edits").json()["edits"]
        assert edits[0]["version"] == version and mira["id"] in edits[0]["nodes"]

        # an edge added and removed, a node archived: one edit commit each
        storm = _node(client, "Harbor storm")
        link = {"source": mira["id"], "target": storm["id"], "relation": "witnessed"}
        assert client.post("api/chats/harbor/edges", json=link, headers=good).status_code == 200
        edges = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()["edges"]
        assert {"witnessed"} <= {e["type"] for e in edges}
        gone = client.request("DELETE", "api/chats/harbor/edges", json=link, headers=good)
        assert gone.status_code == 200 and gone.json()["changed"]
        edges = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()["edges"]
        assert "witnessed" not in {e["type"] for e in edges}
        archived = client.post(f"api/chats/harbor/nodes/{storm['id']}/archive", headers=good)
        assert archived.status_code == 200
        titles = {n["title"] for n in client.get("api/chats/harbor/graph").json()["nodes"]}
        assert "Harbor storm" not in titles
        assert len(_history(data_dir)) == len(before) + 4

        # undo the title edit: back to the version before it
        assert client.post("api/chats/harbor/undo", json={"version": version}).status_code == 401
        undone = client.post("api/chats/harbor/undo", json={"version": version}, headers=good)
        assert undone.status_code == 200, undone.json()
        detail = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()
        assert detail["title"] == "Mira" and "mood" not in detail["fields"]
        titles = {n["title"] for n in client.get("api/chats/harbor/graph").json()["nodes"]}
        assert "Harbor storm" in titles  # later edits are undone with it
        assert '"kind": "rollback"' in _history(data_dir)[-1]
        not_edit = client.post("api/chats/harbor/undo", json={"version": 1}, headers=good)
        assert not_edit.status_code == 422 and not_edit.json()["field"] == "version"


def test_read_only_serves_no_write_route_and_a_public_bind_needs_a_token(data_dir: Path) -> None:
    proc, lines = _start(data_dir, "serve", "--port", "0", "--read-only")
    try:
        url = lines[0].split()[2]
        assert lines[1].strip() == "read-only: no write route"
        with httpx.Client(base_url=url, timeout=60) as client:
            mira = _node(client, "Mira")
            answer = client.post(
                f"api/chats/harbor/nodes/{mira['id']}/edit",
                json={"title": "Mirabel"},
                headers={"X-Memgraph-Token": "anything"},
            )
            assert answer.status_code in (404, 405)
            access = client.get("api/edit-access")  # the page shows no controls
            assert access.status_code == 200 and access.json() == {"writable": False}
            assert _node(client, "Mira")["title"] == "Mira"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    run = subprocess.run(
        [str(SCRIPT), "--data-dir", str(data_dir), "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1 and "without serve_token" in run.stderr, run.stderr
    proc, lines = _start(data_dir, "--set", f"serve_token={TOKEN}", "serve", "--port", "0")
    try:
        assert lines[1].strip() == "edit token (X-Memgraph-Token header): (serve_token)"
        url = lines[0].split()[2]
        with httpx.Client(base_url=url, timeout=60) as client:
            mira = _node(client, "Mira")
            edit = f"api/chats/harbor/nodes/{mira['id']}/edit"
            done = client.post(edit, json={"title": "Mirabel"}, headers={"X-Memgraph-Token": TOKEN})
            assert done.status_code == 200 and _node(client, "Mirabel")["id"] == mira["id"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_pin_restore_and_merge_routes_are_edit_commits_refused_without_the_token(
    writable: tuple[str, str], data_dir: Path
) -> None:
    url, token = writable
    good = {"X-Memgraph-Token": token}
    with httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("api/edit-access").json() == {
            "writable": True,
            "header": "x-memgraph-token",
        }
        mira, storm = _node(client, "Mira"), _node(client, "Harbor storm")
        house = _node(client, "Old lighthouse")
        pin = f"api/chats/harbor/nodes/{mira['id']}/pin"
        before = _history(data_dir)
        assert client.post(pin).status_code == 401
        assert client.post(f"api/chats/harbor/nodes/{storm['id']}/restore").status_code == 401
        merge = f"api/chats/harbor/nodes/{mira['id']}/merge"
        assert client.post(merge, json={"absorb": house["id"]}).status_code == 401
        assert _history(data_dir) == before and not _node(client, "Mira")["pinned"]

        assert client.post(pin, headers=good).json()["changed"]
        assert _node(client, "Mira")["pinned"]
        assert client.request("DELETE", pin, headers=good).json()["changed"]
        assert not _node(client, "Mira")["pinned"]

        restore = f"api/chats/harbor/nodes/{storm['id']}/restore"
        active = client.post(restore, headers=good)
        assert active.status_code == 422 and "not archived" in active.json()["error"]
        client.post(f"api/chats/harbor/nodes/{storm['id']}/archive", headers=good)
        assert client.post(restore, headers=good).json()["changed"]
        assert _node(client, "Harbor storm")["archived"] is False

        other = client.post(merge, json={"absorb": house["id"]}, headers=good)
        assert other.status_code == 422 and other.json()["field"] == "absorb"
        assert "TYPE_MISMATCH" in other.json()["error"]
        missing = client.post(merge, json={}, headers=good)
        assert missing.status_code == 400 and missing.json()["field"] == "absorb"
        added = _history(data_dir)[len(before) :]  # pin, unpin, archive, restore
        assert len(added) == 4 and all('"kind": "edit"' in line for line in added)
