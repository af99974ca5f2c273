"""The explorer's header holds a long chat id (a front end's ids reach hundreds of characters):
the chat list, search, token field, edit log and status stay within the window, the id is cut
with an ellipsis and shown whole on hover; real `memgraph-host serve`, Debian's chromium."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from .conftest import SCRIPT, write_nodes
from .test_explorer_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

#: 400 characters, sharing a long opening with nothing else but ending in its own way
LONG_ID = ("sillytavern-" + "-".join(f"branch{i:03d}" for i in range(60)))[:396] + "-end"
READY = 30_000
CONTROLS = ("h1", "#chat-select", "#search", "#edit-token", "#edit-log", "#status")


@pytest.fixture
def writable(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(url, token)`` of a writable `serve` over a data dir with the long-id chat."""
    data = tmp_path / "data"
    write_nodes(data, LONG_ID, "Mira:character_sheet", "Harbor storm:event:Mira")
    write_nodes(data, "harbor", "Quay:location_state")
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data), "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert "http://127.0.0.1:" in first, (first, proc.stderr.read() if proc.stderr else "")
        yield first.split()[2], second.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _inside(page: Page, width: int) -> dict[str, tuple[float, float]]:
    """Each header control's (left, right) edge; every one must lie within the window."""
    edges = {}
    for selector in CONTROLS:
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        edges[selector] = (box["x"], box["x"] + box["width"])
    outside = {s: e for s, e in edges.items() if e[0] < 0 or e[1] > width}
    assert outside == {}, edges
    return edges


@pytest.mark.parametrize("width", [1280, 900])
def test_a_400_character_chat_id_keeps_the_header_in_the_window(
    writable: tuple[str, str], width: int
) -> None:
    url, token = writable
    with chromium() as browser:
        page = browser.new_page(viewport={"width": width, "height": 800})
        page.goto(f"{url}?chat={quote(LONG_ID, safe='')}#token={token}")
        expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=READY)
        expect(page.locator("body")).to_have_attribute("data-edit-ready", "1", timeout=READY)
        select = page.locator("#chat-select")
        expect(select).to_have_value(LONG_ID)
        expect(page.locator("#status")).to_contain_text("2 nodes")
        edges = _inside(page, width)
        assert edges["#chat-select"][1] <= edges["#search"][0]  # side by side, no overlap
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # the whole id on hover (the list and its option), an ellipsis in what is shown
        expect(select).to_have_attribute("title", LONG_ID)
        option = select.locator("option", has_text="…")
        expect(option).to_have_attribute("title", LONG_ID)
        shown = option.inner_text()
        assert len(shown) < 60 and shown.endswith(LONG_ID[-10:]), shown
        page.locator("#search").fill("storm")  # still usable
        expect(page.locator("#search-results li[data-node]")).to_have_count(1)


def test_an_unknown_400_character_id_keeps_the_status_in_the_window(
    writable: tuple[str, str],
) -> None:
    url, _ = writable
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}?chat={quote(LONG_ID + 'x', safe='')}")
        expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=READY)
        status = page.locator("#status")
        expect(status).to_contain_text("unknown chat")
        expect(status).to_have_attribute("title", re.compile(re.escape(f"“{LONG_ID}x”")))
        box = status.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
