"""``X-Memgraph-Fork-From`` on a chat's first proxied request starts it with another chat's
memory: the real openai SDK, the proxy on loopback, a real upstream."""

from __future__ import annotations

import httpx
import openai
import pytest

from .conftest import chat_through, client
from .harness import RunningProxy
from .upstream import Upstream


def _forking(proxy: RunningProxy, chat: str, src: str) -> openai.OpenAI:
    """The openai SDK sending the chat header and ``X-Memgraph-Fork-From: src``."""
    return openai.OpenAI(
        base_url=proxy.url,
        api_key="sk-client-test",
        default_headers={"X-Memgraph-Chat": chat, "X-Memgraph-Fork-From": src},
        max_retries=0,
        timeout=60,
    )


def test_fork_header_starts_a_chat_with_the_old_chats_memory(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.answer = "Mira keeps the brass lantern in the Zanzibar tower."
    old = [{"role": "user", "content": "Where does Mira keep the brass lantern?"}]
    client(proxy, "old").chat.completions.create(model="tiny", messages=old)
    assert "Zanzibar" in proxy.graph_text("old")

    forked = _forking(proxy, "new", "old")
    upstream.behaviour.answer = "It is in the tower."
    ask = [{"role": "user", "content": "Remind me about the brass lantern of Mira."}]
    forked.chat.completions.create(model="tiny", messages=ask)
    sent = upstream.completions_received()[-1]["body"]["messages"]
    assert sent[0]["role"] == "system" and "Zanzibar" in sent[0]["content"]  # old memory recalled
    assert proxy.messages("new") == [
        ("user", "Remind me about the brass lantern of Mira."),
        ("assistant", "It is in the tower."),
    ]
    assert "Zanzibar" in proxy.graph_text("new") and "in the tower" in proxy.graph_text("new")

    async def history() -> list[tuple[str, str]]:
        graph = proxy.memory.pipeline.service
        return [(r.kind, r.note) for r in await graph.history("new")]

    kinds = proxy.call(history())
    assert kinds[0][0] == "fork" and kinds[0][1].startswith("forked from old at seq ")
    assert "rollback" not in {k for k, _ in kinds}
    # a later request with the header again changes nothing (the chat has messages now)
    forked.chat.completions.create(
        model="tiny",
        messages=[
            *ask,
            {"role": "assistant", "content": "It is in the tower."},
            {"role": "user", "content": "Thanks."},
        ],
    )
    proxy.idle("new")
    assert [k for k, _ in proxy.call(history())].count("fork") == 1


def test_fork_header_naming_an_unknown_chat_is_a_400(proxy: RunningProxy) -> None:
    sdk = _forking(proxy, "fresh", "nope")
    with pytest.raises(openai.BadRequestError) as err:
        sdk.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "Hi"}])
    assert "X-Memgraph-Fork-From" in str(err.value) and "'nope'" in str(err.value)
    assert proxy.messages("fresh") == []


def test_the_json_apis_fork_route_starts_a_chat_with_the_old_chats_memory(
    proxy: RunningProxy,
) -> None:
    api = proxy.base + "api/chats"
    note = {"role": "user", "content": "Mira keeps the brass lantern in the Zanzibar tower."}
    added = httpx.post(api + "/old/messages", json=note, headers=proxy.writer, timeout=60)
    assert added.status_code == 200
    # a write: no token, nothing forked
    refused = httpx.post(api + "/new/fork", json={"from": "old"}, timeout=60)
    assert refused.status_code == 401 and proxy.graph_text("new") == ""
    forked = httpx.post(api + "/new/fork", json={"from": "old"}, headers=proxy.writer, timeout=60)
    assert forked.status_code == 200, forked.text
    assert forked.json()["chat"] == "new" and forked.json()["forked_from"] == "old"
    assert "Zanzibar" in proxy.graph_text("new")
    recalled = httpx.post(api + "/new/recall", json={"query": "where is the lantern?"}, timeout=60)
    assert "Zanzibar" in recalled.json()["block"]
    assert httpx.get(api + "/new/history", timeout=60).json()["total"] == 0  # no messages copied
    again = httpx.post(api + "/new/fork", json={"from": "old"}, headers=proxy.writer, timeout=60)
    assert again.status_code == 409 and "already has memory" in again.json()["error"]
    unknown = httpx.post(api + "/b/fork", json={"from": "nope"}, headers=proxy.writer, timeout=60)
    assert unknown.status_code == 400 and "'nope'" in unknown.json()["error"]
    bad = httpx.post(api + "/c/fork", json={"from": "old", "upto": -1}, headers=proxy.writer,
                     timeout=60)  # fmt: skip
    assert bad.status_code == 400 and "'upto'" in bad.json()["error"]


def test_the_first_forked_request_ranks_the_old_chats_people(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    """The person asked about is older than the pinned scene: only ranking can bring her."""
    turns = [
        ("My sister Maria moved to Lisbon last spring.", "How does Maria like Lisbon?"),
        ("My friend Tom plays the violin in an orchestra.", "Tom must practise a lot."),
        ("Yesterday I adopted a grey cat named Pixel.", "Pixel is a great name."),
        ("I repainted the kitchen green over the weekend.", "Green kitchens feel fresh."),
        ("We had pancakes for breakfast today.", "Pancakes are a fine start."),
    ]
    chat_through(proxy, upstream, "long", turns)
    upstream.behaviour.answer = "She lives in Lisbon."
    ask = [{"role": "user", "content": "Where does Maria live?"}]
    _forking(proxy, "branch", "long").chat.completions.create(model="tiny", messages=ask)
    block = upstream.completions_received()[-1]["body"]["messages"][0]["content"]
    recalled = block.split("## Pinned memory")[0]
    assert "## Recalled memory" in recalled, block
    assert "My sister Maria moved to Lisbon last spring." in recalled
