"""The memory panel inside the real SillyTavern 1.12.6, in both modes: opened from SillyTavern's
extensions (wand) menu, it shows why each item of the last generation was recalled; a note added
to a character in the panel is in the next generation's memory block (what the loopback upstream
receives: the proxy's block in proxy mode, the extension's injected prompt in direct mode), and
undo in the panel takes it out of the block after."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, expect

from tests.proxy.upstream import Upstream

from .chat_page import TIMEOUT_MS, ChatPage, open_chat_page
from .goals import record
from .memory_server import MemoryServer
from .sillytavern_app import SillyTavern

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

MARKER = "Long-term memory of this conversation"
#: a folder: the proxy-mode run saves the panel's picture for docs/sillytavern.md there
SCREENSHOTS = os.environ.get("SILLYTAVERN_SCREENSHOT_DIR")
TALK = (
    "Mira rowed out to the Old lighthouse at dawn.",
    "She lit the lamp and waited for the fishing boats.",
)
QUESTION = "Who is Mira?"
NOTE = "Mira hides a fear of deep water."
CHARACTERS = {"proxy": "Sable", "direct": "Ember"}


@pytest.fixture(scope="module")
def characters(sillytavern: SillyTavern) -> None:
    for name in CHARACTERS.values():
        sillytavern.create_character(name, f"{name} keeps the harbour log.", f"I am {name}.")


def _blocks(upstream: Upstream) -> list[str]:
    """The memory blocks of the newest request the upstream received."""
    messages = upstream.completions_received()[-1]["body"]["messages"]
    return [str(m["content"]) for m in messages if MARKER in str(m["content"])]


def _block(upstream: Upstream) -> str:
    """The one memory block of the newest request the upstream received."""
    blocks = _blocks(upstream)
    assert len(blocks) == 1, blocks  # injected exactly once
    return blocks[0]


def _open_panel(chat: ChatPage) -> Locator:
    """The panel, opened from the extensions menu (the wand) as a person opens it."""
    page = chat.page
    page.locator("#extensionsMenuButton").click()
    page.locator("#memgraph-panel-open").click()
    panel = page.locator("#memgraph-panel")
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    box, form = panel.bounding_box(), page.locator("#send_form").bounding_box()
    assert box and form and box["y"] + box["height"] <= form["y"], (box, form)  # chat goes on
    return panel


def _why_ids(panel: Locator, question: str) -> list[str]:
    """The node ids "why recalled" lists, once it shows the generation that asked `question`."""
    expect(panel.locator(".mgp-why-query")).to_have_text(f"for: {question}", timeout=TIMEOUT_MS)
    items = panel.locator(".mgp-why li.mgp-why-item")
    expect(items.first).to_be_visible(timeout=TIMEOUT_MS)
    return [items.nth(i).get_attribute("data-node") or "" for i in range(items.count())]


def _last_recall(chat: ChatPage, memory: MemoryServer, chat_id: str) -> dict[str, Any]:
    """The recall made for the last generation: the proxy's (the server keeps its trace) or in
    direct mode the extension's own call of the JSON API."""
    recall = chat.evaluate("() => globalThis.memgraphMemory.lastRecall()")
    if chat.evaluate("() => globalThis.memgraphMemory.mode()") == "proxy":
        assert recall is None
        recall = memory.api.get(f"/api/chats/{chat_id}/recalls/last").json()
    assert recall["query"] == QUESTION and recall["items"], recall
    return recall


def _add_note(panel: Locator, node: str) -> None:
    panel.locator(f".mgp-lists li[data-node='{node}'] button.mgp-open").click()
    detail = panel.locator(f".mgp-detail[data-node='{node}']")
    expect(detail).to_be_visible(timeout=TIMEOUT_MS)
    expect(detail.locator("input[data-field='title']")).to_have_count(1)  # one title row
    detail.locator("input.mgp-new-name").fill("note")
    detail.locator("input.mgp-new-value").fill(NOTE)
    detail.locator("button.mgp-save").click()
    expect(panel.locator(".mgp-message")).to_have_text("Saved Mira.", timeout=TIMEOUT_MS)
    expect(detail.locator("input[data-field='note']")).to_have_value(NOTE, timeout=TIMEOUT_MS)


def _undo_newest_edit(panel: Locator) -> None:
    edits = panel.locator("details.mgp-section:has(ol.mgp-edits)")
    if edits.get_attribute("open") is None:
        edits.locator("summary").click()
    newest = edits.locator("li.mgp-edit[data-kind='edit']").first
    version = newest.get_attribute("data-version")
    newest.locator("button.mgp-undo").click()
    expect(panel.locator(".mgp-message")).to_have_text(
        f"Undid edit v{version}.", timeout=TIMEOUT_MS
    )


@pytest.mark.parametrize("mode", ["proxy", "direct"])
def test_a_note_added_in_the_panel_reaches_the_next_block_and_undo_takes_it_out(
    mode: str,
    browser: Browser,
    sillytavern: SillyTavern,
    memory: MemoryServer,
    upstream: Upstream,
    characters: None,
) -> None:
    custom_url = memory.url + "/v1" if mode == "proxy" else upstream.url
    context, chat = open_chat_page(browser, sillytavern, memory, custom_url, 4000)
    goals: dict[str, Any] = {}
    try:
        chat.open_character(CHARACTERS[mode])
        assert chat.evaluate("() => globalThis.memgraphMemory.mode()") == mode
        for text in TALK:
            chat.send(text)
        chat.send(QUESTION)
        chat_id = chat.memory_chat_id()
        mira = next(n for n in memory.graph(chat_id) if n["title"] == "Mira")
        # the request carries every message yet: a block, if any, holds nothing of them
        assert len(_blocks(upstream)) <= 1 and not any(NOTE in b for b in _blocks(upstream))

        panel = _open_panel(chat)
        expect(panel.locator(".mgp-chat")).to_have_text(chat_id, timeout=TIMEOUT_MS)

        _add_note(panel, mira["id"])
        chat.send(QUESTION)
        goals["panel edit in the next block"] = NOTE in _block(upstream)
        goals["why recalled shows the last generation"] = _why_ids(panel, QUESTION) == [
            item["id"] for item in _last_recall(chat, memory, chat_id)["items"]
        ]
        if SCREENSHOTS and mode == "proxy":
            _why_ids(panel, QUESTION)
            chat.page.screenshot(path=str(Path(SCREENSHOTS) / "sillytavern-panel.png"))

        _undo_newest_edit(panel)
        expect(panel.locator(".mgp-detail input[data-field='note']")).to_have_count(
            0, timeout=TIMEOUT_MS
        )
        chat.send(QUESTION)
        block = _block(upstream)
        goals["panel undo takes it out"] = NOTE not in block and "Mira" in block
    finally:
        record(mode, goals)
        context.close()
    assert goals == {
        "why recalled shows the last generation": True,
        "panel edit in the next block": True,
        "panel undo takes it out": True,
    }, goals
