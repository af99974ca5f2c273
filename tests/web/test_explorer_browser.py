"""The explorer page in a real headless Chromium (Debian's, driven by Playwright): it loads a chat,
search finds a node, clicking shows its detail, and another process's commit appears live."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from .conftest import write_nodes

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: no background traffic: this machine has no network but loopback
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's chromium, headless, driven by Playwright (its own browser download never runs)."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(served: str) -> Iterator[Page]:
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(served)
        expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        yield tab
        assert errors == []


def _node_id(page: Page, title: str) -> str:
    return page.evaluate(
        "(t) => explorer.cy.nodes().filter((n) => n.data('title') === t).id()", title
    )


def test_page_loads_the_chat_and_draws_its_graph(page: Page) -> None:
    expect(page.locator("#chat-select")).to_have_value("harbor")
    expect(page.locator("#status")).to_contain_text("4 nodes")
    assert page.evaluate("explorer.cy.nodes().length") == 4
    assert page.evaluate("explorer.cy.edges().length") == 2
    labels = page.locator("#type-filter label")
    expect(labels).to_have_count(3)  # character_sheet, event, location_state


def test_search_finds_a_node_and_clicking_it_shows_its_detail(page: Page) -> None:
    page.locator("#search").fill("storm")
    hit = page.locator("#search-results li[data-node]")
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text("Harbor storm")
    hit.click()
    detail = page.locator("#detail")
    expect(detail.locator("h2")).to_have_text("Harbor storm")
    expect(detail.locator(".fields")).to_contain_text("Harbor storm in the harbour town")
    expect(detail.locator(".edges")).to_contain_text("involved_in")
    expect(detail.locator(".edges")).to_contain_text("Mira")
    expect(detail.locator(".history li")).to_have_count(1)

    # a click on the drawn node itself (real mouse coordinates on the canvas)
    mira = _node_id(page, "Mira")
    where = """(id) => { const p = explorer.cy.getElementById(id).renderedPosition();
                         const box = document.getElementById('graph').getBoundingClientRect();
                         return [box.left + p.x, box.top + p.y]; }"""
    # where it rests: the search hit's focus animates the view (the layout itself never animates);
    # `cy.animated()` holds until that animation has ended
    page.wait_for_function("() => !explorer.cy.animated()")
    x, y = page.evaluate(where, mira)
    page.mouse.click(x, y)
    expect(detail.locator("h2")).to_have_text("Mira")
    expect(detail).to_have_attribute("data-node", mira)


def test_type_filter_hides_a_type(page: Page) -> None:
    page.locator("#type-filter input[data-type='event']").uncheck()
    hidden = page.evaluate("explorer.cy.nodes('.filtered').map((n) => n.data('type'))")
    assert hidden == ["event", "event"]
    page.locator("#type-filter input[data-type='event']").check()
    assert page.evaluate("explorer.cy.nodes('.filtered').length") == 0


def test_a_commit_by_another_process_appears_live(page: Page, data_dir: Path) -> None:
    expect(page.locator("#status")).to_have_attribute("data-version", "4")
    write_nodes(data_dir, "harbor", "Quay:location_state", "Boat race:event:Quay")
    expect(page.locator("#status")).to_have_attribute("data-version", "6", timeout=30_000)
    expect(page.locator("#status")).to_contain_text("6 nodes")
    assert page.evaluate("explorer.cy.nodes().map((n) => n.data('title')).sort()") == [
        "Boat race", "Harbor storm", "Lantern found in the lighthouse", "Mira",
        "Old lighthouse", "Quay",
    ]  # fmt: skip
    expect(page.locator("#toast")).to_contain_text("version 6")
