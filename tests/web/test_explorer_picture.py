"""The explorer's picture on the demo chat, in a real headless Chromium: events run
left to right by seq, no two labels overlap, a rollup collapses and expands on a click, a search
hit is centred and highlighted, an unknown ``?chat=`` is an error on the page, the favicon is
there, and the types have graph.html's colours. It also takes the screenshot in docs/explorer.md
(``make screenshot`` writes it there: ``EXPLORER_SCREENSHOT=docs/explorer.png``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from memgraph_plugin.type_colours import colour_of

from .conftest import SCRIPT, serve_process, write_nodes
from .test_explorer_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

CHAT = "lantern-ledger"  # the demo's chat
VIEWPORT = {"width": 1400, "height": 850}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the demo's chat, written by `memgraph-host demo` (a real process)."""
    folder = tmp_path_factory.mktemp("picture") / "demo-data"
    run = subprocess.run(
        [str(SCRIPT), "demo", "--data", str(folder)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    return folder


@pytest.fixture(scope="module")
def demo_url(demo_dir: Path) -> Iterator[str]:
    with serve_process(demo_dir, "--read-only") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser, demo_url: str) -> Iterator[Page]:
    """The demo chat, drawn; no script error and no failed request (a favicon included)."""
    tab = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    failed: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    try:
        tab.goto(f"{demo_url}?chat={CHAT}")
        expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        expect(tab.locator("#chat-select")).to_have_value(CHAT)
        settle(tab)
        yield tab
        assert errors == []
        assert failed == []
    finally:
        tab.close()


STILL = "() => !explorer.cy.animated() && explorer.cy.nodes().every((n) => !n.animated())"


def settle(page: Page) -> None:
    """Wait until no view or node animation runs and the labels were fitted to the view."""
    page.wait_for_function(STILL)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
    page.evaluate("() => explorerLayout.fitLabels(explorer.cy)")


def click_node(page: Page, node_id: str) -> None:
    """A real mouse click on a drawn node: once nothing moves, with the node inside the frame
    (panned to the centre when it is not)."""
    page.wait_for_function(STILL)
    page.evaluate(
        """(id) => { const cy = explorer.cy, p = cy.getElementById(id).renderedPosition();
                     if (p.x < 0 || p.y < 0 || p.x > cy.width() || p.y > cy.height())
                       cy.center(cy.getElementById(id)); }""",
        node_id,
    )
    x, y = page.evaluate(
        """(id) => { const p = explorer.cy.getElementById(id).renderedPosition();
                     const box = document.getElementById('graph').getBoundingClientRect();
                     return [box.left + p.x, box.top + p.y]; }""",
        node_id,
    )
    page.mouse.click(x, y)


LABEL_BOXES = """() => explorer.cy.nodes('.labelled').filter((n) => n.visible()).map((n) => {
  const b = n.renderedBoundingBox({ includeNodes: false, includeEdges: false,
                                    includeLabels: true });
  return { id: n.id(), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2 };
})"""


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    """Pairs of label boxes that overlap by more than a pixel either way."""
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                min(a["x2"], b["x2"]) - max(a["x1"], b["x1"]) > 1
                and min(a["y2"], b["y2"]) - max(a["y1"], b["y1"]) > 1
            ):
                pairs.append((a["id"], b["id"]))
    return pairs


def test_events_run_left_to_right_by_seq_with_people_and_places_below(page: Page) -> None:
    row = page.evaluate(
        """() => explorer.cy.nodes(':visible').filter((n) => n.data('type') === 'event'
              && (!n.data('rollup') || n.hasClass('collapsed')))
            .map((n) => ({ x: n.position('x'), y: n.position('y'), seq: n.data('seq') }))"""
    )
    assert len(row) > 10
    assert len({r["y"] for r in row}) == 1  # one timeline
    by_x = [r["seq"] for r in sorted(row, key=lambda r: r["x"])]
    assert by_x == sorted(by_x)
    line = row[0]["y"]
    others = page.evaluate(
        """() => explorer.cy.nodes(':visible').filter((n) => n.data('type') !== 'event')
            .map((n) => [n.data('type'), n.position('y')])"""
    )
    assert {t for t, _ in others} == {"character_sheet", "location_state"}
    assert all(y > line for _, y in others)  # beside the timeline, in their own bands
    # an expanded rollup sits above the events it sums up
    above = page.evaluate(
        """() => explorer.cy.nodes('.rollup:visible').filter((n) => !n.hasClass('collapsed'))
            .map((n) => n.position('y'))"""
    )
    assert above and all(y < line for y in above)
    # the first drawing of a big chat is small: old rollups start collapsed
    assert page.evaluate("explorer.cy.nodes(':visible').length") <= 60
    assert page.evaluate("explorer.cy.nodes('.collapsed').length") > 0


def test_no_two_labels_overlap_at_any_zoom(page: Page) -> None:
    fitted = page.evaluate(LABEL_BOXES)
    assert len(fitted) >= 8
    assert overlapping(fitted) == []
    total = page.evaluate("explorer.cy.nodes(':visible').length")
    assert len(fitted) < total  # a label only where it fits
    zoom = "(level) => { explorer.cy.zoom({ level, renderedPosition: { x: 500, y: 400 } }); }"
    page.evaluate(zoom, 2.5)  # (returns nothing: the cytoscape object is no JSON)
    settle(page)
    zoomed = page.evaluate(LABEL_BOXES)
    assert zoomed and overlapping(zoomed) == []
    page.evaluate(zoom, 0.1)
    settle(page)
    assert overlapping(page.evaluate(LABEL_BOXES)) == []


def test_a_click_collapses_a_rollup_and_another_expands_it(page: Page) -> None:
    kids_of = """(n) => n.outgoers('edge').filter((e) =>
        ['contains', 'semantic_contains'].includes(e.data('type'))).targets()"""
    rollup = page.evaluate(
        f"""() => explorer.cy.nodes('.rollup:visible').filter((n) => !n.hasClass('collapsed')
            && ({kids_of})(n).length > 1).id()"""
    )
    kids = page.evaluate(
        f"(id) => ({kids_of})(explorer.cy.getElementById(id)).map((n) => n.id())", rollup
    )
    assert len(kids) > 1
    visible = "(ids) => ids.filter((id) => explorer.cy.getElementById(id).visible()).length"
    assert page.evaluate(visible, kids) == len(kids)
    click_node(page, rollup)
    expect(page.locator("#detail")).to_have_attribute("data-node", rollup, timeout=15_000)
    assert page.evaluate(visible, kids) == 0
    label = page.evaluate("(id) => explorer.cy.getElementById(id).data('label')", rollup)
    assert re.search(r"\(\+\d+\)$", label), label  # says how many it holds
    settle(page)
    click_node(page, rollup)
    page.wait_for_function(f"() => ({visible})({kids!r}) === {len(kids)}")


def test_a_selected_person_is_linked_with_the_folded_time_it_was_in(page: Page) -> None:
    person = page.evaluate(
        """() => explorer.cy.nodes('[type = "character_sheet"]').filter((n) => n.connectedEdges()
            .filter((e) => !e.data('via')).connectedNodes('.folded').length > 0)[0].id()"""
    )
    shown_via = "() => explorer.cy.edges('.via').filter((e) => e.visible()).length"
    assert page.evaluate(shown_via) == 0  # not drawn until asked: no hairball
    settle(page)
    click_node(page, person)
    expect(page.locator("#detail")).to_have_attribute("data-node", person)
    lit = page.evaluate(
        """(id) => explorer.cy.edges('.via').filter((e) => e.visible()).map((e) =>
             [e.source().id(), e.target().id(), e.connectedNodes('.collapsed').length])""",
        person,
    )
    assert lit and all(person in (a, b) and folded == 1 for a, b, folded in lit)


def test_a_search_hit_is_centred_and_highlighted(page: Page) -> None:
    # an early event: inside a rollup collapsed at first, so finding it unfolds its rollups
    hidden = page.evaluate(
        """() => explorer.cy.nodes('.folded').filter((n) => !n.data('rollup'))
            .sort((a, b) => a.data('seq') - b.data('seq'))[0].data()"""
    )
    page.locator("#search").fill(hidden["title"])
    page.locator(f"#search-results li[data-node='{hidden['id']}']").click()
    expect(page.locator("#detail")).to_have_attribute("data-node", hidden["id"])
    settle(page)
    where = page.evaluate(
        """(id) => { const n = explorer.cy.getElementById(id);
                     return { p: n.renderedPosition(), w: explorer.cy.width(),
                              h: explorer.cy.height(), hit: n.hasClass('hit'),
                              visible: n.visible(), labelled: n.hasClass('labelled') }; }""",
        hidden["id"],
    )
    assert where["visible"] and where["hit"] and where["labelled"]
    assert abs(where["p"]["x"] - where["w"] / 2) < 2
    assert abs(where["p"]["y"] - where["h"] / 2) < 2
    assert overlapping(page.evaluate(LABEL_BOXES)) == []


def test_the_types_have_the_colours_of_graph_html(page: Page, demo_dir: Path) -> None:
    picture = (demo_dir / "graph.html").read_text(encoding="utf-8")
    fills = dict(
        re.findall(
            r'data-type="([a-z_]+)"><title>[^<]*</title><(?:circle|rect)[^>]*fill="(#[0-9a-f]+)"',
            picture,
        )
    )
    drawn = page.evaluate(
        "() => Object.fromEntries(explorer.cy.nodes().map((n) => [n.data('type'), "
        "n.style('background-color')]))"
    )
    assert set(fills) == set(drawn) == {"event", "character_sheet", "location_state"}
    for type_name, fill in fills.items():
        assert fill == colour_of(type_name)
        rgb = tuple(int(fill[i : i + 2], 16) for i in (1, 3, 5))
        assert drawn[type_name] == "rgb({},{},{})".format(*rgb)


def test_an_unknown_chat_is_an_error_on_the_page(browser: Browser, demo_url: str) -> None:
    tab = browser.new_page(viewport=VIEWPORT)
    try:
        tab.goto(demo_url + "?chat=nope")
        expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        expect(tab.locator("#graph-error")).to_be_visible()
        expect(tab.locator("#graph-error")).to_contain_text("unknown chat “nope”")
        expect(tab.locator("#status")).to_contain_text("error: unknown chat")
        assert tab.evaluate("explorer.cy.nodes().length") == 0  # no other chat in its place
        expect(tab.locator("#chat-select")).to_have_value("")
        tab.locator("#chat-select").select_option(CHAT)
        expect(tab.locator("#graph-error")).to_be_hidden()
        tab.wait_for_function("() => explorer.cy.nodes().length > 0")
    finally:
        tab.close()


def test_a_chat_without_a_timeline_is_laid_out_by_fcose(
    browser: Browser, demo_url: str, demo_dir: Path
) -> None:
    write_nodes(
        demo_dir, "cast",
        "Mira:character_sheet", "Quay:location_state:Mira", "Oren:character_sheet:Mira",
        "Tidewatch:location_state:Oren", "Sela:character_sheet:Quay", "Dunmore:location_state",
    )  # fmt: skip
    tab = browser.new_page(viewport=VIEWPORT)
    try:
        tab.goto(demo_url + "?chat=cast")
        expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        settle(tab)
        assert tab.evaluate("explorerLayout.state.engine") == "fcose"
        bodies = tab.evaluate(
            """() => explorer.cy.nodes().map((n) => {
                 const b = n.renderedBoundingBox({ includeLabels: false });
                 return { id: n.id(), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2 }; })"""
        )
        assert len(bodies) == 6 and overlapping(bodies) == []  # spread, not piled up
        labels = tab.evaluate(LABEL_BOXES)
        assert len(labels) == 6 and overlapping(labels) == []  # few nodes: every label fits
    finally:
        tab.close()


def test_the_favicon_is_served(demo_url: str) -> None:
    with urllib.request.urlopen(demo_url + "favicon.ico", timeout=30) as answer:
        assert answer.status == 200
        assert answer.headers["content-type"] == "image/svg+xml"
        assert answer.read().startswith(b"<svg")
    index = urllib.request.urlopen(demo_url, timeout=30).read().decode()
    assert '<link rel="icon" href="/static/favicon.svg"' in index


def test_screenshot_of_the_demo_chat(page: Page, tmp_path: Path) -> None:
    """The picture docs/explorer.md shows; `make screenshot` copies it there."""
    shot = tmp_path / "explorer.png"
    page.screenshot(path=str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    target = os.environ.get("EXPLORER_SCREENSHOT")
    if target:
        shutil.copyfile(shot, target)
