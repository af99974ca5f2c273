"""The explorer's edit controls in a real headless Chromium (Debian's, driven by
Playwright) against a real `memgraph-host serve` process: edit a field and see it after a reload,
the edit in the node's history, undo from the recent edits, merge two characters (their edges
follow), pin and the next recall pins the node; without the token a write is a 401 and changes
nothing; a read-only server shows no edit controls."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import SCRIPT, write_nodes
from .test_explorer_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

READY = 30_000  # ms: a page's first load (the server opens the chat on its first request)


@pytest.fixture
def chat_dir(tmp_path: Path) -> Path:
    """A demo-like chat: two characters that are one person, places and the events they are in."""
    folder = tmp_path / "data"
    write_nodes(
        folder, "harbor",
        "Mira:character_sheet", "Mirabel:character_sheet", "Old lighthouse:location_state",
        "Harbor storm:event:Mira", "Market quarrel:event:Mirabel",
        "Lantern found in the lighthouse:event:Old lighthouse",
    )  # fmt: skip
    return folder


def _serve(data_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data_dir), "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    if "--read-only" not in extra:
        lines += [proc.stdout.readline(), proc.stdout.readline()]
    assert "http://127.0.0.1:" in lines[0], (lines, proc.stderr.read() if proc.stderr else "")
    return proc, lines


@pytest.fixture
def server(chat_dir: Path) -> Iterator[tuple[str, str, str]]:
    """``(url, token, link)``: a writable `serve` and the ready-to-open link it printed."""
    proc, lines = _serve(chat_dir)
    try:
        token = lines[1].split()[-1]
        assert lines[2].startswith("open to edit: "), lines
        link = lines[2].split()[-1]
        assert link == f"{lines[0].split()[2]}#token={token}"
        yield lines[0].split()[2], token, link
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def _open(browser: Browser, url: str, *, edits: bool = True) -> Page:
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    tab.goto(url)
    expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=READY)
    if edits:
        expect(tab.locator("body")).to_have_attribute("data-edit-ready", "1", timeout=READY)
    return tab


def _select(page: Page, title: str) -> None:
    """Select a node as a person does: search its title, click the hit."""
    page.locator("#search").fill(title)
    hit = page.locator("#search-results li[data-node]").filter(has_text=title).first
    expect(hit).to_be_visible(timeout=READY)  # the search asks the server: slow under load
    hit.click()
    expect(page.locator("#detail h2")).to_have_text(title)
    expect(page.locator("#edit-panel")).to_be_visible()


def _recall(url: str, query: str) -> dict:
    with httpx.Client(base_url=url, timeout=120) as client:
        answer = client.post("api/chats/harbor/recall", json={"query": query})
        assert answer.status_code == 200, answer.text
        return answer.json()


def test_edit_reload_history_undo_merge_and_pin(
    browser: Browser, server: tuple[str, str, str]
) -> None:
    url, token, link = server
    page = _open(browser, link)
    assert "token" not in page.url  # the fragment is taken out of the address bar
    assert page.evaluate("sessionStorage.getItem('memgraph-edit-token')") == token
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # edit a field: saved, shown, one edit commit in the node's history
    _select(page, "Mira")
    detail = page.locator("#detail")
    expect(detail.locator(".history li")).to_have_count(1)
    page.locator("#edit-form [data-field='summary']").fill("Mira keeps the lighthouse lamp")
    page.locator("#edit-save").click()
    expect(detail.locator(".fields")).to_contain_text("Mira keeps the lighthouse lamp")
    expect(detail.locator(".history li")).to_have_count(2)
    expect(detail.locator(".history li").last).to_contain_text("edit")

    # a value the schema refuses: the error at its field, nothing written
    page.locator("#edit-form [data-field='title']").fill("M" * 5000)
    page.locator("#edit-save").click()
    error = page.locator("#edit-form [data-error-for='title']")
    expect(error).to_contain_text("title")
    expect(page.locator("#edit-form [data-field='title']")).to_have_class("invalid")
    expect(detail.locator(".history li")).to_have_count(2)

    # reload: the value is there (read back from storage), the token too
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=READY)
    expect(page.locator("body")).to_have_attribute("data-edit-ready", "1", timeout=READY)
    _select(page, "Mira")
    expect(detail.locator(".fields")).to_contain_text("Mira keeps the lighthouse lamp")
    expect(detail.locator(".history li").last).to_contain_text("edit")

    # undo from the recent edits: the value before the edit is back
    page.locator("#edit-log summary").click()
    edit = page.locator("#edit-log li[data-kind='edit']")
    expect(edit).to_have_count(1)
    edit.locator("button.undo").click()
    expect(detail.locator(".fields")).to_contain_text("Mira in the harbour town")
    expect(detail.locator(".fields")).not_to_contain_text("lighthouse lamp")
    expect(page.locator("#edit-log li[data-kind='rollback']")).to_have_count(1)
    page.locator("#edit-log summary").click()

    # merge Mirabel into Mira: her event follows, her name becomes an alias, she is gone
    mirabel = page.evaluate("explorer.cy.nodes().filter((n) => n.data('title') === 'Mirabel').id()")
    page.locator("#merge-with").select_option(mirabel)
    page.locator("#merge-button").click()
    expect(detail.locator(".edges")).to_contain_text("Market quarrel")
    expect(detail.locator(".edges")).to_contain_text("Harbor storm")
    expect(detail.locator(".fields")).to_contain_text("Mirabel")  # aliases
    page.wait_for_function(
        "() => explorer.cy.nodes().filter((n) => n.data('title') === 'Mirabel').empty()"
    )
    quarrel = page.evaluate(
        "explorer.cy.nodes().filter((n) => n.data('title') === 'Market quarrel').id()"
    )
    mira = page.locator("#detail").get_attribute("data-node")
    drawn = page.evaluate(
        "explorer.cy.edges().map((e) => [e.source().id(), e.data('type'), e.target().id()])"
    )
    assert [quarrel, "involved_in", mira] in drawn, drawn  # the drawn graph follows too

    # pin: the next recall injects Mira, and says she is pinned
    before = {item["id"]: item for item in _recall(url, "the price of fish")["items"]}
    assert not before.get(mira, {}).get("pinned")
    page.locator("#edit-pin").click()
    expect(page.locator("#edit-panel .edit-status")).to_contain_text("pinned")
    expect(page.locator("#edit-pin")).to_have_text("unpin")
    items = {item["id"]: item for item in _recall(url, "the price of fish")["items"]}
    assert items[mira]["pinned"] and items[mira]["why"] == "pinned", items
    assert errors == []


def test_a_write_without_the_token_is_refused_and_changes_nothing(
    browser: Browser, server: tuple[str, str, str]
) -> None:
    url, _, _ = server
    page = _open(browser, url)  # no fragment: this tab has no token
    assert page.locator("#edit-token").input_value() == ""
    _select(page, "Harbor storm")
    page.locator("#edit-form [data-field='summary']").fill("changed without a token")
    with page.expect_response(lambda r: r.url.endswith("/edit")) as answer:
        page.locator("#edit-save").click()
    assert answer.value.status == 401
    expect(page.locator("#edit-message")).to_contain_text("token")
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "1", timeout=READY)
    expect(page.locator("body")).to_have_attribute("data-edit-ready", "1", timeout=READY)
    _select(page, "Harbor storm")
    expect(page.locator("#detail .fields")).to_contain_text("Harbor storm in the harbour town")
    expect(page.locator("#detail .history li")).to_have_count(1)
    with httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("api/chats/harbor/edits").json()["edits"] == []
    # the token typed into the field: the same edit goes through
    page.locator("#edit-token").fill(server[1])
    page.locator("#edit-token").dispatch_event("change")
    page.locator("#edit-form [data-field='summary']").fill("changed with the token")
    page.locator("#edit-save").click()
    expect(page.locator("#detail .fields")).to_contain_text("changed with the token")

    # add an edge and remove it; archive (forget) and restore
    lighthouse = page.evaluate(
        "explorer.cy.nodes().filter((n) => n.data('title') === 'Old lighthouse').id()"
    )
    page.locator("#edge-relation").fill("sheltered_in")
    page.locator("#edge-target").select_option(lighthouse)
    page.locator("#edge-add").click()
    edges = page.locator("#edit-panel .edit-edges li")
    expect(edges.filter(has_text="sheltered_in")).to_have_count(1)
    edges.filter(has_text="sheltered_in").locator("button.edge-remove").click()
    expect(edges.filter(has_text="sheltered_in")).to_have_count(0)
    page.locator("#edit-archive").click()
    expect(page.locator("#edit-panel .edit-status")).to_contain_text("archived")
    page.locator("#edit-restore").click()
    expect(page.locator("#edit-archive")).to_be_visible()
    with httpx.Client(base_url=url, timeout=60) as client:
        kinds = [e["kind"] for e in client.get("api/chats/harbor/edits").json()["edits"]]
    assert kinds == ["edit"] * 5  # each edit one commit: field, edge +, edge -, archive, restore


def test_a_read_only_server_shows_no_edit_controls(browser: Browser, chat_dir: Path) -> None:
    proc, lines = _serve(chat_dir, "--read-only")
    try:
        page = _open(browser, lines[0].split()[2], edits=False)
        # the edit script has asked the server and found no write route
        expect(page.locator("body")).to_have_attribute("data-edit-ready", "0")
        page.locator("#search").fill("Mira")
        page.locator("#search-results li[data-node]").first.click()
        expect(page.locator("#detail h2")).to_have_text("Mira")
        assert page.locator("#edit-token").count() == 0
        assert page.locator("#edit-panel").count() == 0
        assert page.locator("#edit-log").count() == 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
