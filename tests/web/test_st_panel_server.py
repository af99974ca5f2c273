"""What the SillyTavern memory panel needs from the server, against real `memgraph-host serve`
processes over real HTTP: a note a person adds to a character is in the next recall's block
(clipped to ``recall_item_chars``) and the edit keeps the node's seq; undo takes the note out of
the block again; ``GET /api/chats/ID/recalls/last`` answers the chat's newest proxied recall
(its query, each injected item and why), says when none ran yet, and is a 404 for an unknown
chat."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.proxy.upstream import Upstream

from .test_request_guard import started

pytestmark = [pytest.mark.process]

TOKEN = "panel-test-token"
WRITE = {"X-Memgraph-Token": TOKEN}
TALK = [
    {"role": "user", "content": "Mira rowed out to the Old lighthouse at dawn."},
    {"role": "assistant", "content": "The lamp room was dark when Mira arrived."},
    {"role": "user", "content": "She lit the lamp and waited for the fishing boats."},
]


@contextmanager
def _client(data_dir: Path, *args: str) -> Iterator[httpx.Client]:
    """An httpx client of a real `memgraph-host` server process over `data_dir`."""
    with (
        started(data_dir, *args, lines=2) as printed,
        httpx.Client(base_url=printed[0].split()[2], timeout=120) as client,
    ):
        yield client


def _node(client: httpx.Client, title: str) -> dict:
    nodes = client.get("api/chats/harbor/graph").json()["nodes"]
    return next(n for n in nodes if n["title"] == title)


def _recall(client: httpx.Client, query: str) -> dict:
    answer = client.post("api/chats/harbor/recall", json={"query": query})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_note_on_a_character_reaches_the_block_keeps_its_seq_and_undo_removes_it(
    data_dir: Path,
) -> None:
    args = ("--set", f"serve_token={TOKEN}", "--set", "recall_item_chars=120", "serve",
            "--port", "0")  # fmt: skip
    with _client(data_dir, *args) as client:
        added = client.post("api/chats/harbor/messages", json={"messages": TALK}, headers=WRITE)
        assert added.status_code == 200, added.text
        mira = _node(client, "Mira")
        seq_before = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()["seq"]
        assert seq_before is not None
        assert "fear of deep water" not in _recall(client, "Who is Mira?")["block"]

        note = "Mira hides a fear of deep water. " + "She never says so aloud. " * 10
        edit = client.post(
            f"api/chats/harbor/nodes/{mira['id']}/edit",
            json={"fields": {"note": note}},
            headers=WRITE,
        )
        assert edit.status_code == 200, edit.text
        version = edit.json()["version"]

        detail = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()
        assert detail["fields"]["note"] == note
        assert detail["seq"] == seq_before  # the correction did not move it in time
        latest = max(m["seq"] for m in added.json()["added"])
        assert latest > seq_before  # so an edit stamped with the chat's seq would show

        recalled = _recall(client, "Who is Mira?")
        assert mira["id"] in [i["id"] for i in recalled["items"]]
        row = next(line for line in recalled["block"].splitlines() if mira["id"] in line)
        assert "Mira hides a fear of deep water." in row
        cell = next(c for c in row.strip("| ").split(" | ") if "fear of deep water" in c)
        assert len(cell) <= 120 and cell.endswith("…")  # the item budget

        undone = client.post("api/chats/harbor/undo", json={"version": version}, headers=WRITE)
        assert undone.status_code == 200, undone.text
        assert "fear of deep water" not in _recall(client, "Who is Mira?")["block"]


def test_the_last_recall_of_a_chat_over_http(data_dir: Path) -> None:
    upstream = Upstream()
    args = ("--set", f"serve_token={TOKEN}", "serve", "--port", "0",
            "--proxy-upstream", upstream.url)  # fmt: skip
    try:
        with started(data_dir, *args, lines=2) as printed:
            url = printed[0].split()[2]
            with httpx.Client(base_url=url, timeout=120) as client:
                none_yet = client.get("api/chats/harbor/recalls/last")
                assert none_yet.status_code == 200, none_yet.text
                assert none_yet.json() == {
                    "chat": "harbor", "available": False, "query": None, "time": None,
                    "items": [],
                }  # fmt: skip

                unknown = client.get("api/chats/nope/recalls/last")
                assert unknown.status_code == 404
                assert "nope" in unknown.json()["error"]

                question = "What did Mira find in the Old lighthouse?"
                filler = [
                    {"role": r, "content": f"{r} talks about the weather, day {i}."}
                    for i in range(6)
                    for r in ("user", "assistant")
                ]
                answer = {"role": "assistant", "content": upstream.behaviour.answer}
                asked = {"role": "user", "content": question}
                # two proxied turns: the second's recall ranks the graph (what a panel shows)
                for messages in ([*TALK, *filler], [*TALK, *filler, answer, asked]):
                    turn = client.post(
                        "v1/chat/completions",
                        json={"model": "m", "messages": messages},
                        headers={"X-Memgraph-Chat": "harbor"},
                    )
                    assert turn.status_code == 200, turn.text

                last = client.get("api/chats/harbor/recalls/last")
                assert last.status_code == 200, last.text
                recall = last.json()
                assert recall["available"] is True
                assert recall["query"] == question
                assert isinstance(recall["time"], float)
                titles = {i["title"]: i for i in recall["items"]}
                assert "Old lighthouse" in titles, recall
                lighthouse = titles["Old lighthouse"]
                assert lighthouse["type"] == "location_state"
                assert lighthouse["why"] and lighthouse["why"] != "always injected"
                sent = upstream.requests[-1]["body"]["messages"]
                block = "\n".join(str(m["content"]) for m in sent)
                for item in recall["items"]:
                    assert item["id"] in block  # each listed item was injected
    finally:
        upstream.stop()
