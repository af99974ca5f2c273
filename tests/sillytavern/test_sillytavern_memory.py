"""The extension in the real SillyTavern 1.12.6, driven through its own UI in headless chromium,
in both modes: proxy (Chat Completion through ``memgraph-host serve --proxy-upstream``) and
direct (SillyTavern calls the upstream itself; the extension keeps the memory in step through
the JSON API and injects the recall block)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.proxy.upstream import Upstream

from .chat_page import ChatPage, open_chat_page
from .goals import record
from .memory_server import MemoryServer
from .sillytavern_app import SillyTavern

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

MARKER = "Long-term memory of this conversation"
#: a folder: the tests save the pictures docs/sillytavern.md shows there
SCREENSHOTS = os.environ.get("SILLYTAVERN_SCREENSHOT_DIR")
CONTEXT_TOKENS = 600  # SillyTavern's context size: the five facts fall out of the window


@pytest.fixture(scope="module")
def characters(sillytavern: SillyTavern) -> dict[str, str]:
    return {
        mode: sillytavern.create_character(
            name, f"{name} is a terse archivist.", f"Hello, I am {name}."
        )
        for mode, name in (("proxy", "Quill"), ("direct", "Wren"))
    }


FACTS = {
    "Lisbon": "My sister Anna lives in Lisbon.",
    "Biscuit": "My dog is called Biscuit.",
    "Brest": "I work as a lighthouse keeper in Brest.",
    "teal": "My favourite colour is teal.",
    "cello": "My brother Tomas plays the cello.",
}
QUESTION = (
    "Remind me: where does Anna live, what is my dog called, where do I work, "
    "my favourite colour, and what does Tomas play?"
)
FILLER = "Turn {}: what do you think of the weather today?"
RAINY = "Turn 3: what do you think of the rain today?"
FILLER_TURNS = 33  # with the five facts and the question: 39 turns before the checks


def _blocks(request: dict[str, Any]) -> list[str]:
    """The request's memory blocks (any system message carrying the memory heading)."""
    return [m["content"] for m in request["body"]["messages"] if MARKER in str(m["content"])]


def _facts_recalled(request: dict[str, Any]) -> set[str]:
    block = "\n".join(_blocks(request))
    return {word for word in FACTS if word in block}


def _dialogue(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] != "system"]


def _count_upstream_requests(chat: ChatPage, upstream: Upstream) -> None:
    """A failure's message also says what the upstream received."""
    servers = chat.describe_servers

    def described() -> str:
        paths = [r["path"] for r in upstream.requests]
        return f"upstream: {len(paths)} requests, the last {paths[-3:]}\n" + servers()

    chat.describe_servers = described


def run_chat(chat: ChatPage, memory: MemoryServer, upstream: Upstream) -> dict[str, Any]:
    """The whole story in one SillyTavern chat; what each step's upstream request recalled. A
    failed check says what the page and the servers showed at that moment."""
    try:
        return _story(chat, memory, upstream)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n{chat.failure_state()}") from None


def _story(chat: ChatPage, memory: MemoryServer, upstream: Upstream) -> dict[str, Any]:
    first = len(upstream.completions_received())
    for text in FACTS.values():
        chat.send(text)
    for turn in range(FILLER_TURNS):
        chat.send(FILLER.format(turn))
    parent = chat.memory_chat_id()
    assert parent.startswith("st-") and parent.isascii()
    goals: dict[str, Any] = {}
    chat.send(QUESTION)
    last = upstream.completions_received()[-1]
    dialogue = _dialogue(last)  # the early turns were trimmed out of the window: all five facts
    assert not any(fact in said for fact in FACTS.values() for said in dialogue), dialogue
    goals["after trimming"] = _facts_recalled(last)
    chat.regenerate()
    goals["after a regenerate"] = _facts_recalled(upstream.completions_received()[-1])
    chat.swipe()
    goals["after a swipe"] = _facts_recalled(upstream.completions_received()[-1])
    assert list(memory.chats()) == [parent]  # one memory all along
    # an edit of an early message (outside the window): the old fact is replaced
    messages = [m["mes"] for m in chat.chat()]
    chat.edit(messages.index(FACTS["Biscuit"]), "My dog is called Pepper.")
    chat.send(QUESTION)
    block = "\n".join(_blocks(upstream.completions_received()[-1]))
    goals["edit replaces the fact"] = "Pepper" in block and "Biscuit" not in block
    assert "My dog is called Pepper." in memory.history(parent)
    # a delete: the fact is forgotten
    messages = [m["mes"] for m in chat.chat()]
    chat.delete(messages.index(FACTS["teal"]))
    chat.send(QUESTION)
    goals["delete forgets the fact"] = "teal" not in _facts_recalled(
        upstream.completions_received()[-1]
    )
    assert FACTS["teal"] not in memory.history(parent)
    # an edit while the character is answering: kept, and so is the answer
    upstream.behaviour.hold = hold = threading.Event()
    upstream.held.clear()
    before = chat.start_send("Tell me about the sea.")
    try:
        assert upstream.held.wait(timeout=120), "the upstream got no request"
        messages = [m["mes"] for m in chat.chat()]
        chat.edit(messages.index(FILLER.format(3)), RAINY, settle=False)
    finally:
        hold.set()
        upstream.behaviour.hold = None
    chat.wait_answer("Tell me about the sea.", before)
    stored = memory.history(parent)
    goals["edit while answering kept"] = RAINY in stored and FILLER.format(3) not in stored
    assert stored[-1] == chat.chat()[-1]["mes"], stored[-3:]
    # a branch: a new memory chat forked from the parent; the parent untouched
    parent_messages = memory.chats()[parent]
    chat.branch()
    branch = chat.memory_chat_id()
    assert branch != parent and branch.startswith("st-")
    chat.send(QUESTION)
    goals["in a branch"] = _facts_recalled(upstream.completions_received()[-1])
    chats = memory.chats()
    goals["parent untouched"] = chats[parent] == parent_messages and branch in chats
    requests = upstream.completions_received()[first:]
    goals["double injections"] = sum(len(_blocks(r)) > 1 for r in requests)
    goals["requests"] = len(requests)
    return goals


def _chat_keeps_its_memory(
    chat: ChatPage, memory: MemoryServer, upstream: Upstream, character: str, mode: str
) -> None:
    """`character`'s chat, its memory in `mode` ("proxy" or "direct"), through the scripted
    chat: every goal met (recorded under `mode`)."""
    chat.open_character(character)
    _count_upstream_requests(chat, upstream)
    assert chat.evaluate("() => globalThis.memgraphMemory.mode()") == mode
    goals = run_chat(chat, memory, upstream)
    record(mode, goals)
    remaining = set(FACTS) - {"teal", "Biscuit"}  # deleted, and edited into Pepper
    assert goals["after trimming"] == set(FACTS), goals
    assert goals["after a regenerate"] == set(FACTS), goals
    assert goals["after a swipe"] == set(FACTS), goals
    assert goals["edit replaces the fact"] and goals["delete forgets the fact"], goals
    assert goals["edit while answering kept"], goals
    assert goals["in a branch"] == remaining, goals
    assert goals["parent untouched"] and goals["double injections"] == 0, goals


@pytest.fixture
def chat_page(
    browser: Browser,
    sillytavern: SillyTavern,
    memory: MemoryServer,
    characters: dict[str, str],
) -> Iterator[Callable[[str], ChatPage]]:
    """Opens the SillyTavern page with the memory extension, its chat API at a URL; the page's
    browser context is closed at the end."""
    contexts = []

    def opened(api_url: str) -> ChatPage:
        context, chat = open_chat_page(browser, sillytavern, memory, api_url, CONTEXT_TOKENS)
        contexts.append(context)
        return chat

    yield opened
    for context in contexts:
        context.close()


def test_proxy_mode_keeps_one_memory_through_trimming_edits_and_a_branch(
    chat_page: Callable[[str], ChatPage], memory: MemoryServer, upstream: Upstream
) -> None:
    chat = chat_page(memory.url + "/v1")
    _chat_keeps_its_memory(chat, memory, upstream, "Quill", "proxy")
    if SCREENSHOTS:
        chat.page.screenshot(path=str(Path(SCREENSHOTS) / "sillytavern-chat.png"))
        chat.screenshot_settings(str(Path(SCREENSHOTS) / "sillytavern-settings.png"))


def test_direct_mode_keeps_and_injects_memory_and_goes_on_without_the_server(
    chat_page: Callable[[str], ChatPage], memory: MemoryServer, upstream: Upstream
) -> None:
    chat = chat_page(upstream.url)
    _chat_keeps_its_memory(chat, memory, upstream, "Wren", "direct")
    # the memory server stops: the chat answers without memory, and says so once
    chat.evaluate("""() => { window.memgraphToasts = [];
        const warn = toastr.warning.bind(toastr);
        toastr.warning = (...args) => { window.memgraphToasts.push(String(args[0]));
                                        return warn(...args); }; }""")
    memory.stop()
    before = len(upstream.completions_received())
    assert chat.send("Are you still there?").startswith("Noted.")
    assert chat.send("And now?").startswith("Noted.")
    assert len(upstream.completions_received()) == before + 2
    assert not _blocks(upstream.completions_received()[-1])
    toasts = chat.evaluate("() => window.memgraphToasts")
    assert len([t for t in toasts if "without memory" in t]) == 1, toasts
