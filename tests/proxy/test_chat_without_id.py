"""A front end that sends no chat id (SillyTavern): through a real proxy with the openai SDK, a
long chat keeps one memory when its window is trimmed and its last answer regenerated or its
last question edited, and no empty chat is left behind (docs/proxy.md, "Which chat a request
belongs to")."""

from __future__ import annotations

import httpx

from .conftest import client
from .harness import RunningProxy
from .upstream import Upstream

SYSTEM = {"role": "system", "content": "You are Quill, a harbour guide in the town of Veyl."}
FACTS = [
    "My sister Oriel lives in Kestrel Bay, above the chandlery.",
    "Captain Tamsin sails the Grey Heron out of Pellion harbour.",
    "The lighthouse keeper Brannoch keeps a tame gull named Pocket.",
    "Old Maudry sells smoked eel at the Lantern Market on Tuesdays.",
    "The ferry to Skyharbor leaves from pier nine at dawn.",
]
QUESTION = "Remind me, where does my sister Oriel live?"


def _send(proxy: RunningProxy, messages: list[dict]) -> tuple[str, dict[str, str]]:
    raw = client(proxy).chat.completions.with_raw_response.create(model="tiny", messages=messages)
    return raw.parse().choices[0].message.content or "", dict(raw.headers)


def _items(headers: dict[str, str]) -> int:
    fields = dict(part.split("=") for part in headers["x-memgraph-recall"].split("; "))
    return int(fields["items"])


def _long_chat(proxy: RunningProxy, upstream: Upstream) -> tuple[str, list[dict]]:
    """30 turns sent whole each time, no id: five facts first, the question last; the chat's id
    and the history (ending with the question's answer)."""
    upstream.behaviour.answer = "Noted."
    upstream.behaviour.numbered = True  # every answer differs: "Noted. #N"
    history: list[dict] = [SYSTEM]
    chat = ""
    for turn in range(30):
        if turn < len(FACTS):
            text = FACTS[turn]
        elif turn < 29:
            text = f"Tell me about the tide at pier {turn}."
        else:
            text = QUESTION
        history.append({"role": "user", "content": text})
        answer, headers = _send(proxy, history)
        if turn == 0:
            chat = headers["x-memgraph-chat"]
            assert chat.startswith("auto-") and headers["x-memgraph-chat-match"] == "new"
        else:
            assert headers["x-memgraph-chat"] == chat
            assert headers["x-memgraph-chat-match"] == "continued"
        history.append({"role": "assistant", "content": answer})
    proxy.idle(chat)
    return chat, history


def _block(upstream: Upstream) -> str:
    sent = upstream.completions_received()[-1]["body"]["messages"]
    return "\n".join(m["content"] for m in sent if m["role"] == "system" and m is not sent[0])


def test_a_trimmed_window_regenerated_or_edited_keeps_the_chat_and_its_memory(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    chat, history = _long_chat(proxy, upstream)
    assert len(proxy.messages(chat)) == 60
    # regenerate: the last answer left out, the window trimmed to the system prompt + 4
    regenerate = [SYSTEM, *history[:-1][-4:]]
    _, headers = _send(proxy, regenerate)
    assert headers["x-memgraph-chat"] == chat
    assert headers["x-memgraph-chat-match"] == "edited"
    assert _items(headers) > 0 and "Kestrel Bay" in _block(upstream)
    stored = proxy.messages(chat)
    assert len(stored) == 60 and stored[-1][1] != history[-1]["content"]  # the answer replaced
    # the last question edited, in a trimmed window
    edited = [SYSTEM, *history[-5:-2], {"role": "user", "content": "Who sails the Grey Heron?"}]
    _, headers = _send(proxy, edited)
    assert headers["x-memgraph-chat"] == chat
    assert headers["x-memgraph-chat-match"] == "edited"
    assert _items(headers) > 0 and "Tamsin" in _block(upstream)
    stored = proxy.messages(chat)
    assert stored[-2] == ("user", "Who sails the Grey Heron?") and len(stored) == 60
    # the conversation goes on from the trimmed window: still the one chat
    window = [SYSTEM, *edited[-3:], {"role": "assistant", "content": stored[-1][1]},
              {"role": "user", "content": "And who keeps the lighthouse?"}]  # fmt: skip
    _, headers = _send(proxy, window)
    assert headers["x-memgraph-chat"] == chat
    assert headers["x-memgraph-chat-match"] == "continued"
    assert "Brannoch" in _block(upstream)
    proxy.idle(chat)
    listed = httpx.get(proxy.base + "api/chats", timeout=60).json()["chats"]
    assert [(c["id"], c["messages"]) for c in listed] == [(chat, 62)]  # no empty auto- chat


def test_two_chats_sharing_an_opening_stay_apart(proxy: RunningProxy, upstream: Upstream) -> None:
    upstream.behaviour.answer = "Welcome."
    upstream.behaviour.numbered = True
    greeting = {"role": "assistant", "content": "Quill: *tips his cap* Welcome to Veyl."}
    first: list[dict] = [SYSTEM, greeting, {"role": "user", "content": "Hello."}]
    chats = []
    for story in ("Oriel moved to Kestrel Bay.", "Tamsin bought the Grey Heron."):
        history = list(first)
        answer, headers = _send(proxy, history)
        chats.append(headers["x-memgraph-chat"])
        assert headers["x-memgraph-chat-match"] == "new"
        for _ in range(3):
            history += [{"role": "assistant", "content": answer},
                        {"role": "user", "content": story}]  # fmt: skip
            answer, headers = _send(proxy, history)
            assert headers["x-memgraph-chat"] == chats[-1]
    assert chats[0] != chats[1] and chats[1] == chats[0] + "-2"
    for chat, word in zip(chats, ("Kestrel", "Heron"), strict=True):
        assert sum(word in text for _, text in proxy.messages(chat)) == 3
    assert len(proxy.messages(chats[0])) == len(proxy.messages(chats[1])) == 9


def test_a_tail_no_chat_holds_starts_a_new_chat_and_says_so(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    tail = [SYSTEM, {"role": "assistant", "content": "Pier nine, at dawn."},
            {"role": "user", "content": "Thanks. And where is the chandlery?"}]  # fmt: skip
    _, headers = _send(proxy, tail)
    chat = headers["x-memgraph-chat"]
    assert headers["x-memgraph-chat-match"] == "new"
    assert [t for _, t in proxy.messages(chat)][:2] == [
        "Pier nine, at dawn.",
        "Thanks. And where is the chandlery?",
    ]  # its messages are the new chat's memory from the start
    named = client(proxy, "named").chat.completions.with_raw_response.create(
        model="tiny", messages=tail
    )
    assert "x-memgraph-chat-match" not in named.headers  # an id was sent: nothing to match
