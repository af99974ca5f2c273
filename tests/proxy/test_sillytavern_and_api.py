"""A SillyTavern-shaped request through the proxy (fixture: its documented request format), and
the JSON memory API (docs/http-api.md)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from .harness import RunningProxy
from .upstream import Upstream

FIXTURE = Path(__file__).with_name("sillytavern_request.json")


def test_a_sillytavern_request_keeps_names_and_drops_system_and_prefill(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    body = json.loads(FIXTURE.read_text())
    del body["_about"]
    upstream.behaviour.answer = " Juno Kade keeps the stalls lit until she returns."
    with httpx.stream("POST", proxy.url + "/chat/completions", json=body, timeout=60) as answer:
        assert answer.status_code == 200
        chat = answer.headers["x-memgraph-chat"]
        streamed = b"".join(answer.iter_bytes()).decode()
    assert "Juno" in streamed and chat.startswith("auto-")  # no setting: a derived chat id
    stored = proxy.host.chat(chat).messages
    proxy.idle(chat)
    stored = proxy.host.chat(chat).messages
    assert [(m.role, m.name) for m in stored] == [
        ("assistant", "Quill"), ("user", "Ilya"), ("assistant", "Quill"), ("user", "Ilya"),
        ("assistant", "Quill"),
    ]  # fmt: skip
    assert all("[Start a new Chat]" not in m.text and "Author" not in m.text for m in stored)
    # the prefill and the answer are one message, in the shape SillyTavern sends it back
    assert stored[-1].text == "Quill: Juno Kade keeps the stalls lit until she returns."
    sent = upstream.completions_received()[-1]["body"]["messages"]
    assert sent[-1] == {"role": "assistant", "content": "Quill:"}  # the prefill stays last
    assert sent == body["messages"]  # a new chat's first request: nothing to recall yet
    # the next request (SillyTavern sends the whole history again) adds only the new turn
    body["messages"][-1] = {"role": "assistant", "content": stored[-1].text}
    body["messages"].append({"role": "user", "content": "Ilya: Thanks, Quill."})
    body["stream"] = False
    assert httpx.post(proxy.url + "/chat/completions", json=body, timeout=60).status_code == 200
    assert len(proxy.messages(chat)) == 7
    sent = upstream.completions_received()[-1]["body"]["messages"]
    # after the leading system messages (main prompt, card, examples), before the history
    block = sent[6]["content"]
    assert sent[6]["role"] == "system" and block.startswith("Long-term memory")
    assert "| Ilya |" in block and "| Quill |" in block  # the people of the chat
    assert "Skyharbor" not in block  # the history the request carries is not repeated
    assert sent[:6] == body["messages"][:6] and sent[7:] == body["messages"][6:]


def test_the_json_memory_api(proxy: RunningProxy) -> None:
    api = proxy.base + "api/chats"
    write = proxy.writer
    added = httpx.post(api + "/notes/messages", timeout=60, headers=write, json={"messages": [
        {"role": "user", "content": "Mira keeps the brass lantern in the Zanzibar tower."},
        {"role": "assistant", "text": "Noted: the lantern is in the Zanzibar tower.", "name": "Q"},
    ]})  # fmt: skip
    assert added.status_code == 200 and [m["index"] for m in added.json()["added"]] == [0, 1]
    recall = httpx.post(api + "/notes/recall", json={"query": "where is the lantern?"}, timeout=60)
    found = recall.json()
    assert "Zanzibar" in found["block"] and found["items"]
    assert all(item["why"] for item in found["items"])
    history = httpx.get(api + "/notes/history", timeout=60).json()
    assert [m["text"] for m in history["messages"]][0].startswith("Mira keeps")
    assert history["total"] == 2  # the recall question was not stored
    assert history["messages"][1]["name"] == "Q"
    listed = httpx.get(api, timeout=60).json()["chats"]
    assert [(c["id"], c["messages"], c["source"]) for c in listed] == [("notes", 2, "api")]
    forgot = httpx.post(api + "/notes/forget", json={"from": 1}, headers=write, timeout=60).json()
    assert forgot == {"chat": "notes", "removed": 1, "messages": 1}
    assert "Noted" not in proxy.graph_text("notes")
    bad = httpx.post(api + "/notes/forget", json={"from": "x"}, headers=write, timeout=60)
    assert bad.status_code == 400 and "'from'" in bad.json()["error"]
    assert httpx.post(api + "/notes/recall", json={}, timeout=60).status_code == 400


def test_the_json_memory_api_cuts_an_echoed_value_short(proxy: RunningProxy) -> None:
    """An error that repeats a client's value (`?since=`, `from`, a role) shows its first 80
    characters and "..." (`host/echoed.py`), never the whole value."""
    api = proxy.base + "api/chats/notes"
    long = "9x" * 2_500
    since = httpx.get(api + "/history", params={"since": long}, timeout=60)
    assert since.status_code == 400
    said = since.json()["error"]
    assert said.startswith("?since must be an integer, got '9x9x") and said.endswith("...")
    assert len(said) < 200
    forget = httpx.post(api + "/forget", json={"from": long}, headers=proxy.writer, timeout=60)
    assert forget.status_code == 400 and len(forget.json()["error"]) < 200
    assert "'from' must be a message index" in forget.json()["error"]
    role = httpx.post(
        api + "/messages", json={"role": long, "text": "hi"}, headers=proxy.writer, timeout=60
    )
    assert role.status_code == 400 and len(role.json()["error"]) < 200
    assert role.json()["error"].startswith("messages[0].role must be 'user' or 'assistant', got")
