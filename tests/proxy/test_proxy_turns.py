"""The proxy with the real openai SDK as client and a real upstream on loopback: injection,
answers stored after the response, streaming, and the history rules (edit, delete, regenerate,
swipe, context-window trimming)."""

from __future__ import annotations

import json

from .conftest import client
from .harness import RunningProxy
from .upstream import Upstream

SYSTEM = {"role": "system", "content": "You are Quill, a harbour guide."}


def ask(proxy: RunningProxy, chat: str, messages: list[dict], *, stream: bool = False) -> str:
    sdk = client(proxy, chat)
    if stream:
        with sdk.chat.completions.create(model="tiny", messages=messages, stream=True) as events:
            return "".join(e.choices[0].delta.content or "" for e in events if e.choices)
    answer = sdk.chat.completions.create(model="tiny", messages=messages)
    return answer.choices[0].message.content or ""


def test_the_injected_block_is_what_the_upstream_received(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.answer = "Mira keeps the brass lantern in the Zanzibar tower."
    history = [SYSTEM, {"role": "user", "content": "Where does Mira keep the brass lantern?"}]
    first = ask(proxy, "harbour", history)
    assert first == upstream.behaviour.answer
    # a front end whose window holds the newest message only: the first exchange is not sent
    history = [SYSTEM, {"role": "user", "content": "Remind me: where is the lantern kept?"}]
    raw = client(proxy, "harbour").chat.completions.with_raw_response.create(
        model="tiny", messages=history
    )
    assert raw.headers["x-memgraph-chat"] == "harbour"
    assert raw.headers["x-memgraph-recall"].startswith("seq=")
    sent = upstream.completions_received()[-1]["body"]["messages"]
    assert sent[0] == SYSTEM  # after the system prompt (the default position)
    assert sent[1]["role"] == "system" and "Zanzibar" in sent[1]["content"]
    assert sent[2:] == history[1:]  # the rest exactly as the client sent it
    assert proxy.messages("harbour") == [
        ("user", "Where does Mira keep the brass lantern?"),
        ("assistant", "Mira keeps the brass lantern in the Zanzibar tower."),
        ("user", "Remind me: where is the lantern kept?"),
        ("assistant", "Mira keeps the brass lantern in the Zanzibar tower."),
    ]
    traces = (proxy.data_dir / "traces").rglob("*.jsonl")
    seqs = [json.loads(line)["seq"] for path in traces for line in path.read_text().splitlines()]
    assert int(raw.headers["x-memgraph-recall"].split(";")[0].split("=")[1]) in seqs


def test_a_streamed_answer_is_relayed_and_then_stored(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.answer = "The ferry to Skyharbor leaves at dawn from pier nine."
    text = ask(proxy, "ferry", [{"role": "user", "content": "When is the ferry?"}], stream=True)
    assert text == upstream.behaviour.answer
    assert proxy.messages("ferry")[-1] == ("assistant", upstream.behaviour.answer)
    assert "Skyharbor" in proxy.graph_text("ferry")


def _turns(proxy: RunningProxy, upstream: Upstream, chat: str) -> list[dict]:
    """Three exchanges in `chat`; returns the history as a front end shows it."""
    history: list[dict] = [SYSTEM]
    for user, answer in [
        ("Who guards the Lantern Market?", "Juno Kade guards the Lantern Market."),
        ("Where did Mara go?", "Mara left for Skyharbor on the night ferry."),
        ("What does Ilya carry?", "Ilya carries a Qelbrass compass."),
    ]:
        upstream.behaviour.answer = answer
        history.append({"role": "user", "content": user})
        history.append({"role": "assistant", "content": ask(proxy, chat, history)})
    return history


def test_regenerate_and_swipe_forget_the_discarded_answer(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    history = _turns(proxy, upstream, "regen")
    assert "Qelbrass" in proxy.graph_text("regen")
    upstream.behaviour.answer = "Ilya carries a Vantorine spyglass."
    again = ask(proxy, "regen", history[:-1])  # regenerate: the last answer is not sent
    assert again == "Ilya carries a Vantorine spyglass."
    graph = proxy.graph_text("regen")
    assert "Qelbrass" not in graph and "Vantorine" in graph
    assert proxy.messages("regen")[-1] == ("assistant", "Ilya carries a Vantorine spyglass.")
    # a swipe back to the first answer: the next request carries it instead of the stored one
    upstream.behaviour.answer = "Nothing else."
    swiped = [*history, {"role": "user", "content": "Anything else?"}]
    ask(proxy, "regen", swiped)
    graph = proxy.graph_text("regen")
    assert "Qelbrass" in graph and "Vantorine" not in graph
    assert [t for _, t in proxy.messages("regen")][-3:] == [
        "Ilya carries a Qelbrass compass.", "Anything else?", "Nothing else."
    ]  # fmt: skip


def test_an_edit_or_a_delete_forgets_from_that_message(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    history = _turns(proxy, upstream, "edits")
    edited = [dict(m) for m in history]
    edited[4] = {"role": "assistant", "content": "Mara left for Dunmorrow on the night ferry."}
    upstream.behaviour.answer = "Understood."
    ask(proxy, "edits", [*edited, {"role": "user", "content": "Thanks."}])
    graph = proxy.graph_text("edits")
    assert "Skyharbor" not in graph and "Dunmorrow" in graph and "Juno" in graph
    texts = [t for _, t in proxy.messages("edits")]
    assert texts[3] == "Mara left for Dunmorrow on the night ferry." and len(texts) == 8
    # delete the exchange about Ilya (messages 5 and 6): the chat forgets from there
    kept = [
        *edited[:5],
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Understood."},
    ]
    ask(proxy, "edits", [*kept, {"role": "user", "content": "Bye."}])
    texts = [t for _, t in proxy.messages("edits")]
    assert "What does Ilya carry?" not in texts and texts[-2:] == ["Bye.", "Understood."]
    assert "Qelbrass" not in proxy.graph_text("edits")


def test_a_trimmed_context_window_is_not_a_deletion(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    history = _turns(proxy, upstream, "trim")
    before = proxy.messages("trim")
    upstream.behaviour.answer = "At the old quay."
    tail = [SYSTEM, *history[3:], {"role": "user", "content": "Where do they meet?"}]
    ask(proxy, "trim", tail)  # the front end dropped the first exchange out of its window
    after = proxy.messages("trim")
    assert after[: len(before)] == before
    assert after[len(before) :] == [
        ("user", "Where do they meet?"),
        ("assistant", "At the old quay."),
    ]
    assert "Juno" in proxy.graph_text("trim")  # the first exchange is still remembered


def test_a_chat_without_an_id_keeps_one_derived_chat(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    sdk = client(proxy)
    history = [SYSTEM, {"role": "user", "content": "Who guards the Lantern Market?"}]
    raw = sdk.chat.completions.with_raw_response.create(model="tiny", messages=history)
    chat = raw.headers["x-memgraph-chat"]
    assert chat.startswith("auto-")
    history += [{"role": "assistant", "content": raw.parse().choices[0].message.content},
                {"role": "user", "content": "And the quay?"}]  # fmt: skip
    again = sdk.chat.completions.with_raw_response.create(model="tiny", messages=history)
    assert again.headers["x-memgraph-chat"] == chat
    # trimmed so the opening is gone: still the same chat (its tail continues it)
    tail = [SYSTEM, *history[2:], {"role": "assistant", "content": upstream.behaviour.answer},
            {"role": "user", "content": "And the ferry?"}]  # fmt: skip
    third = sdk.chat.completions.with_raw_response.create(model="tiny", messages=tail)
    assert third.headers["x-memgraph-chat"] == chat
    assert len(proxy.messages(chat)) == 6
    by_user = sdk.chat.completions.with_raw_response.create(
        model="tiny", messages=history, user="someone-7"
    )
    assert by_user.headers["x-memgraph-chat"] == "someone-7"


def test_a_long_history_is_read_from_its_new_messages_and_stays_right(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    """A history past the reader's threshold, grown, regenerated and edited near its end: the
    proxy decodes only the new part (`HistoryReader.reused`), and the chat and what the upstream
    received are what the whole bodies say."""
    history = [SYSTEM]
    for i in range(200):
        history.append({"role": "user", "content": f"Log {i}: the tide at pier {i % 9} is high."})
        history.append({"role": "assistant", "content": f"Noted, pier {i % 9} at tide {i}."})
    upstream.behaviour.answer = "The Orravel beacon is lit."
    history.append({"role": "user", "content": "Is the beacon lit?"})
    ask(proxy, "long", history)
    for turn in range(3):
        history += [
            {"role": "assistant", "content": "The Orravel beacon is lit."},
            {"role": "user", "content": f"And the bell, round {turn}?"},
        ]
        ask(proxy, "long", history, stream=turn == 1)
        assert upstream.completions_received()[-1]["body"]["messages"][-1] == history[-1]
    assert proxy.proxy.history.reused >= 3
    upstream.behaviour.answer = "Quiet tonight."
    edited = [*history[:-3], {"role": "assistant", "content": "The Pellion beacon is dark."}]
    ask(proxy, "long", [*edited, {"role": "user", "content": "Which beacon?"}])
    texts = [t for _, t in proxy.messages("long")]
    assert texts[-3:] == ["The Pellion beacon is dark.", "Which beacon?", "Quiet tonight."]
    assert len(texts) == len(edited) + 1  # the edited history, the question and its answer
    assert "Pellion" in proxy.graph_text("long")


def test_messages_added_through_the_api_then_proxied_turns_keep_one_history(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    """A front end moving from the JSON API to the proxy (a SillyTavern chat switched from
    direct to proxy mode): the proxy continues the chat the API built, word for word."""
    import httpx

    said = [("user", "My sister Lena lives in Porto."), ("assistant", "Noted, Lena is in Porto."),
            ("user", "My dog is Biscuit."), ("assistant", "Biscuit is a fine dog.")]  # fmt: skip
    added = httpx.post(
        proxy.base + "api/chats/mixed/messages",
        json={"messages": [{"role": r, "text": t} for r, t in said]},
        headers=proxy.writer,
        timeout=60,
    )
    assert added.status_code == 200, added.text
    history = [{"role": r, "content": t} for r, t in said]
    for question, answer in [("Where does Lena live?", "Lena lives in Porto."),
                             ("And the dog?", "The dog is Biscuit.")]:  # fmt: skip
        upstream.behaviour.answer = answer
        history.append({"role": "user", "content": question})
        client(proxy, "mixed").chat.completions.create(model="tiny", messages=history)
        history.append({"role": "assistant", "content": answer})
    assert proxy.messages("mixed") == [(m["role"], m["content"]) for m in history]
