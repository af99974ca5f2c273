"""The memory block earns every line: the proxy injects no event of a message the request
carries (the pinned scene included), and a model's canned replies, said again and again,
collapse to one row (the real openai SDK, the proxy on loopback, a recording upstream)."""

from __future__ import annotations

import json
import re

from .conftest import chat_through, client
from .harness import RunningProxy
from .upstream import Upstream

#: A person's facts, each answered by a model that only ever says it is not sure.
SAID = [
    ("My sister Maria moved to Lisbon last spring.", "I am not sure where your sister lives."),
    ("She rents a flat with a view of the river.", "I'm not sure where your sister lives!"),
    ("Maria works at a bakery near the cathedral.", "I am not sure where your sister lives."),
    ("Our cousin Pedro visits her every August.", "I am not sure where your sister lives..."),
    ("I might fly over for her birthday.", "I am not sure where your sister lives."),
    ("Do you remember any of this?", "I am NOT sure where your sister lives."),
    ("You keep saying that.", "I am not sure where your sister lives."),
]
QUESTION = "Where does my sister live?"
CANNED = re.compile(r"\| i('m| am) not sure where your sister lives", re.IGNORECASE)


def _block(upstream: Upstream) -> str:
    sent = upstream.completions_received()[-1]["body"]["messages"]
    return "\n".join(m["content"] for m in sent if m["role"] == "system")


def _last_trace(proxy: RunningProxy) -> dict:
    (path,) = (proxy.data_dir / "traces").glob("*.jsonl")
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])


def test_no_message_the_request_carries_is_injected_again(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    history = chat_through(proxy, upstream, "whole", SAID)
    upstream.behaviour.answer = "In Lisbon."
    client(proxy, "whole").chat.completions.create(
        model="tiny", messages=[*history, {"role": "user", "content": QUESTION}]
    )
    block = _block(upstream)
    for said, _ in SAID:
        assert said not in block, block  # neither recalled nor in the pinned scene
    assert not CANNED.search(block), block
    trace = _last_trace(proxy)
    assert trace["window_kept_from"] == 0  # the request carries the chat from its first message
    graph = proxy.graph_text("whole")
    assert "My sister Maria moved to Lisbon last spring." in graph  # remembered all the same


def test_canned_replies_collapse_to_one_row(proxy: RunningProxy, upstream: Upstream) -> None:
    history = chat_through(proxy, upstream, "trimmed", SAID)
    upstream.behaviour.answer = "In Lisbon."
    window = [*history[-2:], {"role": "user", "content": QUESTION}]  # a front end's window
    client(proxy, "trimmed").chat.completions.create(model="tiny", messages=window)
    block = _block(upstream)
    assert "My sister Maria moved to Lisbon last spring." in block
    assert len(CANNED.findall(block)) <= 1, block
    assert "You keep saying that." not in block  # the window carries it
    trace = _last_trace(proxy)
    assert len(trace["collapsed"]) >= 3, trace  # the trace says what collapsed
    assert "Maria works at a bakery near the cathedral." in block  # the room they freed
