"""Reads never make a chat: the JSON API's reads of an unknown chat answer 404 and the chat is
not listed afterwards (the proxy, `serve` and its explorer); listings show each chat's real commit
version, and `memgraph-host chats` lists an imported chat that has no messages."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.tools.test_cli import STORE
from tests.web.conftest import SCRIPT, serve_process, write_nodes

from .harness import RunningProxy

NOTES = [
    {"role": "user", "content": "Mira keeps the brass lantern in the Zanzibar tower."},
    {"role": "assistant", "content": "Noted: the lantern is in the Zanzibar tower."},
]


def _unknown(answer: httpx.Response) -> None:
    assert answer.status_code == 404, answer.text
    body = answer.json()
    assert body["code"] == "unknown_chat" and "'nope'" in body["error"]


def _reads_of_nope(client: httpx.Client, writer: dict[str, str] | None = None) -> None:
    _unknown(client.post("api/chats/nope/recall", json={"query": "where is the lantern?"}))
    _unknown(client.get("api/chats/nope/history"))
    if writer is not None:
        _unknown(client.post("api/chats/nope/forget", json={"from": 0}, headers=writer))


def test_the_proxy_api_answers_404_for_an_unknown_chat_and_lists_real_versions(
    proxy: RunningProxy,
) -> None:
    with httpx.Client(base_url=proxy.base, timeout=60) as client:
        _reads_of_nope(client, proxy.writer)
        assert client.get("api/chats").json() == {"chats": []}
        added = client.post("api/chats/notes/messages", json={"messages": NOTES},
                            headers=proxy.writer)  # fmt: skip
        assert added.status_code == 200, added.text
        _reads_of_nope(client, proxy.writer)
        listed = client.get("api/chats").json()["chats"]
    storage = proxy.memory.pipeline.service.persistence.storage
    version = storage.latest_version_sync("notes")
    assert version >= 2  # one commit per extracted message at least
    assert [(c["id"], c["messages"], c["version"]) for c in listed] == [("notes", 2, version)]


@pytest.mark.process
def test_serve_and_its_explorer_read_an_unknown_chat_without_making_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_nodes(data, "harbor", "Mira:character_sheet", "Harbor storm:event:Mira")
    with serve_process(data) as url, httpx.Client(base_url=url, timeout=120) as client:
        before = client.get("api/chats").json()["chats"]
        assert [c["id"] for c in before] == ["harbor"] and before[0]["version"] > 0
        for path in ("api/chats/nope/graph", "api/chats/nope/search?q=Mira",
                     "api/chats/nope/nodes/n_1"):  # fmt: skip
            assert client.get(path).status_code == 404, path
        _reads_of_nope(client)
        assert client.get("api/chats").json()["chats"] == before
        history = client.get("api/chats/harbor/history").json()
        assert history["total"] == 0  # a chat of commits only is a chat: its history is empty


def _cli(data: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "--data-dir", str(data), *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.process
def test_chats_lists_an_imported_chat_with_its_version(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert "no chats" in _cli(data, "chats").stdout  # and listing made no database
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    imported = _cli(data, "import", "imported", str(store))
    assert imported.returncode == 0, imported.stderr
    listed = _cli(data, "chats", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["messages"], r["version"]) for r in rows] == [("imported", 0, 1)]
    table = _cli(data, "chats").stdout.splitlines()
    assert table[0].split()[:3] == ["CHAT", "MESSAGES", "VERSION"]
    assert table[1].split()[:3] == ["imported", "0", "1"]
