"""The recall bench's proxy path (`bench/locomo_proxy.py`) end to end on a small hand-written
conversation: a real `memgraph-host proxy` subprocess, the openai SDK as the chat app, the
loopback upstream answering with the conversation's turns. What a person said sessions ago
reaches the upstream in the request's own messages, which the bench counts as found; the memory
block repeats none of them."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.process  # the proxy runs as its own process

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _bench(name: str) -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(
        f"memgraph_bench_{name}_test", BENCH / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _turn(dia: str, speaker: str, text: str) -> dict[str, str]:
    return {"dia_id": dia, "speaker": speaker, "text": text}


SAMPLE = {
    "sample_id": "tiny",
    "conversation": {
        "speaker_a": "Ada",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Ada", "Hi Ben! I finally adopted a grey cat and named her Pepper."),
            _turn("D1:2", "Ben", "Pepper is a lovely name. I spent the weekend fixing my boat."),
            _turn("D1:3", "Ada", "A boat! Where do you sail it?"),
            _turn("D1:4", "Ben", "On Lake Orta, every Sunday morning with my brother."),
        ],
        "session_2_date_time": "10:02 am on 20 May, 2023",
        "session_2": [
            _turn("D2:1", "Ada", "I started pottery classes on Tuesday evenings."),
            _turn("D2:2", "Ben", "Nice. My brother and I entered a regatta next month."),
            _turn("D2:3", "Ada", "Good luck with the regatta!"),
            _turn("D2:4", "Ben", "Thanks, we will need it."),
        ],
    },
    "qa": [
        {"question": "What did Ada name her cat?", "category": 4, "evidence": ["D1:1"]},
        {"question": "Where does Ben sail his boat?", "category": 4, "evidence": ["D1:4"]},
    ],
}


def test_the_proxy_path_carries_what_was_said_to_the_upstream() -> None:
    locomo = _bench("recall_locomo")
    proxy_bench = _bench("locomo_proxy")
    turns = locomo.turns_of(SAMPLE)
    questions = locomo.questions_of(SAMPLE, turns)

    async def run() -> list[Any]:
        with proxy_bench.ProxyRun({"embedding_profile": "hashing"}) as proxy:
            got = await proxy_bench.ask_through_proxy(proxy, "tiny", turns, questions)
            history = proxy.upstream.received
            return [got, history]

    got, last_body = asyncio.run(run())
    assert [q.text for q, *_ in got] == [q.text for q in questions]
    said = {" ".join(t.raw.lower().split()) for t in turns}
    for q, items, _ms, _chars, carried in got:
        assert carried == set(q.evidence), q.text  # the request carries its evidence
        assert locomo.hits_at(items, q.evidence, 10, carried) == 1.0, (q.text, items)
        assert locomo.hits_at(items, q.evidence, 10) == 0.0, (q.text, items)  # not injected
        assert not [row for row in items if any(text in row for text in said)], items
    # the questions replaced each other: the last request is the conversation plus one question
    sent = [m["content"] for m in last_body["messages"] if m["role"] != "system"]
    assert sent == [t.raw for t in turns] + ["Where does Ben sail his boat?"]
