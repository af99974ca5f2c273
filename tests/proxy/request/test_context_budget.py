"""The context budget: a long history forwarded as its system messages, the newest turns that
fit and the memory block (`proxy/request/context_budget.py`), through a real proxy and the openai
SDK."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memgraph_plugin.proxy.request.context_budget import requested_budget, trim
from memgraph_plugin.proxy.request.token_count import (
    LLAMA2,
    TokenCounter,
    estimate_tokens,
    for_model,
)

from ..conftest import client
from ..harness import RunningProxy
from ..upstream import Upstream

SYSTEM = {"role": "system", "content": "You are Quill, a harbour guide."}
COUNT = TokenCounter(estimate_tokens, "estimate")


def _chat(turns: int) -> list[dict]:
    messages: list[dict] = [SYSTEM]
    for n in range(turns):
        messages.append({"role": "user", "content": f"Tell me about pier number {n} please."})
        messages.append({"role": "assistant", "content": f"Pier {n} holds fishing boats."})
    return messages


def test_a_history_that_fits_is_left_alone() -> None:
    assert trim(_chat(3), 4000, COUNT, recall_chars=2000, memory_share=0.35) is None


def test_the_newest_turns_that_fit_are_kept_whole_with_system_and_question() -> None:
    messages = [*_chat(200), {"role": "user", "content": "Which pier has the ferry?"}]
    cut = trim(messages, 1200, COUNT, recall_chars=400, memory_share=0.35)
    assert cut is not None
    assert cut.messages[0] == SYSTEM
    assert cut.messages[-1] == messages[-1]  # the question
    kept = cut.messages[1:]
    assert kept == messages[len(messages) - len(kept) :]  # a tail, nothing from the middle
    assert cut.dropped == len(messages) - len(cut.messages) > 300
    assert cut.first_kept == len(messages) - len(kept)
    assert cut.tokens_kept + cut.tokens_saved == cut.tokens_full
    assert cut.tokens_kept + cut.block_chars / 3.5 <= 1200 + 10  # the block's share counted
    assert cut.block_chars == int(0.35 * 1200 * 3.5)  # grown past recall_chars


def test_the_question_and_a_prefill_stay_even_over_the_budget() -> None:
    question = {"role": "user", "content": "x " * 5000}
    prefill = {"role": "assistant", "content": "Quill:"}
    cut = trim([SYSTEM, *_chat(5)[1:], question, prefill], 300, COUNT,
               recall_chars=100, memory_share=0.2)  # fmt: skip
    assert cut is not None
    assert cut.messages == [SYSTEM, question, prefill]


def test_a_tool_call_keeps_its_results() -> None:
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "t1"}]}
    result = {"role": "tool", "tool_call_id": "t1", "content": "sunny " * 40}
    question = {"role": "user", "content": "And tomorrow?"}
    messages = [*_chat(50), call, result, question]
    cut = trim(messages, 260, COUNT, recall_chars=100, memory_share=0.1)
    assert cut is not None
    assert (call in cut.messages) == (result in cut.messages)
    small = trim(messages, 100, COUNT, recall_chars=100, memory_share=0.1)
    assert small is not None and result not in small.messages and call not in small.messages


def test_the_budget_header_is_checked() -> None:
    assert requested_budget({}, 500) == 500
    assert requested_budget({"x-memgraph-context-tokens": " 0 "}, 500) == 0
    with pytest.raises(ValueError, match="X-Memgraph-Context-Tokens"):
        requested_budget({"x-memgraph-context-tokens": "-3"}, 500)


def test_a_llama_2_model_is_counted_with_its_tokenizer() -> None:
    llama = for_model("llama-2-13b-chat")
    assert llama.name == LLAMA2
    assert for_model("qwen2.5:7b").name == "estimate"
    assert llama.text("hello world") == 2  # "▁hello", "▁world"
    assert estimate_tokens("hello world") == 4  # 11 bytes / 3.5, rounded up


@pytest.fixture
def budget_proxy(tmp_path: Path, upstream: Upstream):  # type: ignore[no-untyped-def]
    running = RunningProxy(tmp_path / "data", upstream.url, proxy_context_tokens=600)
    yield running
    running.stop()


def test_the_proxy_forwards_recent_turns_plus_memory_of_the_dropped_ones(
    budget_proxy: RunningProxy, upstream: Upstream
) -> None:
    history: list[dict] = [SYSTEM]
    facts = [
        ("My sister Lena lives in Porto.", "Noted: Lena lives in Porto."),
        ("My dog is called Biscuit.", "Biscuit is a fine name."),
    ]
    chatter = [(f"Tell me about pier number {n}.", f"Pier {n} holds fishing boats.")
               for n in range(40)]  # fmt: skip
    for user, answer in [*facts, *chatter]:
        upstream.behaviour.answer = answer
        history.append({"role": "user", "content": user})
        sdk = client(budget_proxy, "budget")
        sent = sdk.chat.completions.create(model="tiny", messages=history)
        history.append({"role": "assistant", "content": sent.choices[0].message.content})
    history.append({"role": "user", "content": "Where does my sister Lena live?"})
    raw = client(budget_proxy, "budget").chat.completions.with_raw_response.create(
        model="tiny", messages=history
    )
    header = dict(part.split("=") for part in raw.headers["x-memgraph-context"].split("; "))
    forwarded = upstream.completions_received()[-1]["body"]["messages"]
    assert int(header["dropped"]) > 20 and int(header["saved"]) > 0
    assert forwarded[0] == SYSTEM and forwarded[-1] == history[-1]
    block = next(m["content"] for m in forwarded[1:] if m["role"] == "system")
    turns = [m for m in forwarded if m["role"] != "system"]
    assert turns == history[len(history) - len(turns) :]
    assert len(turns) == len(history) - 1 - int(header["dropped"])
    assert "Porto" in block  # a dropped turn, back through memory
    for message in turns[:-1]:  # the kept turns are not repeated in the block
        assert message["content"] not in block
    assert len(budget_proxy.messages("budget")) == len(history)  # all stored, and the answer
    trace_files = list((budget_proxy.data_dir / "traces").rglob("*.jsonl"))
    last = json.loads(trace_files[0].read_text().splitlines()[-1])
    assert last["window_dropped"] == int(header["dropped"])
    assert last["window_kept_from"] == len(history) - 1 - len(turns)


def test_a_request_can_turn_the_budget_off(budget_proxy: RunningProxy, upstream: Upstream) -> None:
    upstream.behaviour.answer = "Pier 1 holds fishing boats."
    messages = _chat(60)[:-1]
    raw = client(budget_proxy, "whole").chat.completions.with_raw_response.create(
        model="tiny", messages=messages, extra_headers={"X-Memgraph-Context-Tokens": "0"}
    )
    assert "x-memgraph-context" not in raw.headers
    forwarded = upstream.completions_received()[-1]["body"]["messages"]
    assert [m for m in forwarded if m["role"] != "system"] == messages[1:]


def _lena_then_piers(
    proxy: RunningProxy, upstream: Upstream, chat: str, piers: int
) -> list[dict]:
    """A chat through the proxy: one fact, then `piers` turns of chatter; its history."""
    history: list[dict] = [SYSTEM]
    turns = [("My sister Lena lives in Porto.", "Noted: Lena lives in Porto.")]
    turns += [(f"Tell me about pier {n}.", f"Pier {n} holds boats.") for n in range(piers)]
    for user, answer in turns:
        upstream.behaviour.answer = answer
        history.append({"role": "user", "content": user})
        client(proxy, chat).chat.completions.create(model="tiny", messages=history)
        history.append({"role": "assistant", "content": answer})
    return history


def test_the_json_api_recall_returns_the_window_it_recalled_for(
    budget_proxy: RunningProxy, upstream: Upstream
) -> None:
    import httpx

    history = _lena_then_piers(budget_proxy, upstream, "api", 40)
    question = {"query": "Where does my sister Lena live?", "context_tokens": 300}
    got = httpx.post(budget_proxy.base + "api/chats/api/recall", json=question, timeout=60)
    assert got.status_code == 200, got.text
    context = got.json()["context"]
    assert context["messages"][-1] == {"role": "user", "content": question["query"]}
    assert context["messages"][:-1] == history[len(history) - len(context["messages"]) + 1 :]
    assert context["dropped"] > 30 and context["tokens_saved"] > 0
    assert "Porto" in got.json()["block"]
    bad = httpx.post(budget_proxy.base + "api/chats/api/recall",
                     json={"query": "x", "context_tokens": -1}, timeout=60)  # fmt: skip
    assert bad.status_code == 400 and "context_tokens" in bad.json()["error"]


@pytest.mark.process
def test_the_cli_recall_shows_the_window(budget_proxy: RunningProxy, upstream: Upstream) -> None:
    import subprocess
    import sys

    _lena_then_piers(budget_proxy, upstream, "cli", 30)
    script = Path(sys.executable).with_name("memgraph-host")
    command = [str(script), "--data-dir", str(budget_proxy.data_dir), "--set",
               "embedding_profile=hashing", "recall", "cli", "Where does Lena live?"]  # fmt: skip
    shown = subprocess.run([*command, "--context-tokens", "300"], capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "context budget 300 tokens:" in shown.stdout and "dropped" in shown.stdout
    assert "Porto" in shown.stdout
    answer = subprocess.run([*command, "--context-tokens", "300", "--json"],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    context = json.loads(answer.stdout)["context"]
    assert context["dropped"] > 20 and context["messages"][-1]["content"] == "Where does Lena live?"


def test_the_block_shrinks_to_what_a_small_budget_leaves() -> None:
    messages = [*_chat(100), {"role": "user", "content": "Which pier has the ferry?"}]
    cut = trim(messages, 500, COUNT, recall_chars=6000, memory_share=0.5)
    assert cut is not None
    assert cut.block_chars < 6000  # recall_budget_chars would not fit in 500 tokens
    assert cut.tokens_kept + math.ceil(cut.block_chars / 3.5) + 4 <= 500
    roomy = trim(messages, 4000, COUNT, recall_chars=6000, memory_share=0.5)
    assert roomy is not None and roomy.block_chars == 7000  # grown to half the budget


def test_turns_are_read_newest_first_with_their_tool_results() -> None:
    from memgraph_plugin.proxy.request.context_budget import _turns_back

    roles = ["system", "user", "assistant", "tool", "tool", "system", "tool", "user", "tool"]
    messages = [{"role": r, "content": "x"} for r in roles]
    assert list(_turns_back(messages, len(messages))) == [(7, 9), (6, 7), (2, 5), (1, 2)]


def test_the_dropped_tokens_are_estimated_from_their_length() -> None:
    messages = [*_chat(400), {"role": "user", "content": "Which pier has the ferry?"}]
    cut = trim(messages, 1000, COUNT, recall_chars=400, memory_share=0.3)
    assert cut is not None
    counted = sum(COUNT.message(m) for m in messages)
    assert abs(cut.tokens_full - counted) <= 0.1 * counted  # the estimate, near the count
