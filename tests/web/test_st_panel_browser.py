"""The SillyTavern memory panel (`memgraph_plugin/sillytavern/extension/panel.js`) in a real
headless Chromium (Debian's, driven by Playwright): a static test page on its own loopback
origin imports the panel's module and gives it the extension's `api` (server URL, token, chat
id, `fetchJson`, `onGenerated`), pointed at a real `memgraph-host serve --proxy-upstream`
process that lists the page's origin in `http_cors_origins`. The panel lists the chat's people,
places and events, searches, edits a field (the JSON API's next recall block shows it; undo takes
it out), pins, archives, merges, shows why each item of the last generation was recalled (direct
mode: the recall the extension made; proxy mode: the server's last recall), cuts long titles with
an ellipsis, and says once that the server is down when it is."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Locator, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from memgraph_plugin.web.server import ExplorerServer, bind
from tests.proxy.upstream import Upstream

from .conftest import SCRIPT, write_nodes
from .test_explorer_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

EXTENSION = Path(__file__).resolve().parents[2] / "memgraph_plugin/sillytavern/extension"
TOKEN = "panel-browser-token"
READY = 30_000  # ms: the server opens the chat on its first request
LONG = "Captain " + "Longname " * 30
TALK = [
    {"role": "user", "content": "Mira rowed out to the Old lighthouse at dawn."},
    {"role": "assistant", "content": "The lamp room was dark when Mira arrived."},
    {"role": "user", "content": "She lit the lamp and waited for the fishing boats."},
]

#: The test page: the panel's module with a stand-in for the extension's `api` (index.js builds
#: the real one), configured by the page's query string.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>panel test page</title></head>
<body>
<script type="module">
import { mountPanel } from '/ext/panel.js';
const config = new URLSearchParams(location.search);
const listeners = [];
const api = {
  serverUrl: config.get('server'),
  token: config.get('token'),
  chatId: async () => config.get('chat'),
  async fetchJson(path, options = {}) {
    const headers = { 'X-Memgraph-Token': this.token, ...(options.headers ?? {}) };
    let body = options.body;
    if (body !== undefined) {
      body = JSON.stringify(body);
      headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(this.serverUrl.replace(/\\/$/, '') + path,
                             { ...options, headers, body });
    } catch (error) {
      throw Object.assign(new Error(`unreachable: ${error}`), { status: 0 });
    }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw Object.assign(new Error(`${path}: ${response.status} ${answer.error ?? ''}`),
                          { status: response.status, answer });
    }
    return answer;
  },
  onGenerated: (listener) => listeners.push(listener),
};
window.memgraphPanel = mountPanel(api);
window.fireGenerated = (event) => Promise.all(listeners.map((l) => l(event)));
document.body.dataset.ready = '1';
</script>
</body></html>
"""


def _page(request: Request) -> Response:
    return HTMLResponse(PAGE)


def _extension_file(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ("panel.js", "panel.css"):
        return Response(status_code=404)
    kind = "text/javascript" if name.endswith(".js") else "text/css"
    return FileResponse(EXTENSION / name, media_type=kind, headers={"cache-control": "no-store"})


@pytest.fixture
def test_page() -> Iterator[str]:
    """The test page's server, on an origin of its own."""
    app = Starlette(routes=[Route("/", _page), Route("/ext/{name}", _extension_file)])
    server = ExplorerServer(app, bind("127.0.0.1", 0))
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def serving(
    data_dir: Path, origin: str, upstream: Upstream
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A real `serve --proxy-upstream` that lets the test page's origin call it."""
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data_dir), "--set", f"serve_token={TOKEN}",
         "--set", f"http_cors_origins={origin}", "serve", "--port", "0",
         "--proxy-upstream", upstream.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.stderr else "")
        yield line.split()[2], proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def chat_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    write_nodes(
        folder, "harbor",
        "Mira:character_sheet", "Mirabel:character_sheet", f"{LONG}:character_sheet",
        "Old lighthouse:location_state", "Harbor storm:event:Mira",
        "Market quarrel:event:Mirabel", "Lantern found in the lighthouse:event:Old lighthouse",
    )  # fmt: skip
    return folder


def _recall(client: httpx.Client, query: str) -> dict:
    answer = client.post("api/chats/harbor/recall", json={"query": query})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _node_id(client: httpx.Client, title: str) -> str:
    nodes = client.get("api/chats/harbor/graph").json()["nodes"]
    return next(n["id"] for n in nodes if n["title"] == title)


def _open_node(panel: Locator, node: str) -> Locator:
    """Open a node's detail, closed first so that the detail seen is the one this click drew."""
    shown = panel.locator(".mgp-detail")
    if shown.is_visible():
        shown.locator("button.mgp-detail-close").click()
        expect(shown).to_be_hidden()
    panel.locator(f".mgp-lists li[data-node='{node}'] button.mgp-open").click()
    detail = panel.locator(f".mgp-detail[data-node='{node}']")
    expect(detail).to_be_visible()
    return detail


def _people(panel: Locator) -> Locator:
    return panel.locator(".mgp-group[data-type='character_sheet'] li.mgp-item")


@pytest.fixture
def patient() -> Iterator[None]:
    """Each step of the panel waits on the server: on a busy machine that takes more than
    Playwright's default 5 s; put back afterwards for the other tests."""
    expect.set_options(timeout=READY)
    try:
        yield
    finally:
        expect.set_options(timeout=5_000)


@pytest.mark.usefixtures("patient")
def test_the_panel_against_a_real_server(
    chat_dir: Path, test_page: str, upstream: Upstream
) -> None:
    origin = test_page.rstrip("/")
    with (
        serving(chat_dir, origin, upstream) as (url, proc),
        httpx.Client(base_url=url, timeout=120) as client,
        chromium() as browser,
    ):
        # the chat goes on through the proxy (two turns: the second's recall ranks the graph)
        question = "What did Mira find in the Old lighthouse?"
        answer = {"role": "assistant", "content": upstream.behaviour.answer}
        first = [*TALK, answer, {"role": "user", "content": "Is the lamp still lit?"}]
        for messages in (first, [*first, answer, {"role": "user", "content": question}]):
            turn = client.post(
                "v1/chat/completions",
                json={"model": "m", "messages": messages},
                headers={"X-Memgraph-Chat": "harbor"},
            )
            assert turn.status_code == 200, turn.text
        mira, mirabel = _node_id(client, "Mira"), _node_id(client, "Mirabel")
        lighthouse = _node_id(client, "Old lighthouse")

        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        query = urlencode({"server": url, "token": TOKEN, "chat": "harbor"})
        page.goto(f"{test_page}?{query}")
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        page.locator("#memgraph-panel-open").click()
        panel = page.locator("#memgraph-panel")

        # the lists: people, places, events
        expect(_people(panel)).to_have_count(3, timeout=READY)
        places = panel.locator(".mgp-group[data-type='location_state'] li.mgp-item")
        expect(places).to_have_count(1)
        expect(places).to_contain_text("Old lighthouse")
        expect(panel.locator(".mgp-group[data-type='event'] li.mgp-item").first).to_be_visible()
        link = panel.locator("a.mgp-explorer")
        expect(link).to_have_attribute("href", f"{url}?chat=harbor#token={TOKEN}")

        # a long title keeps one line: cut with an ellipsis, the whole title on hover
        long_title = panel.locator(".mgp-lists .mgp-title").filter(has_text="Captain Longname")
        expect(long_title).to_have_attribute("title", LONG.strip())
        assert long_title.evaluate("e => e.scrollWidth > e.clientWidth")
        assert long_title.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
        box = panel.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1200

        # search
        panel.locator(".mgp-search").fill("lantern")
        found = panel.locator(".mgp-lists li.mgp-item")
        expect(found).to_have_count(1)
        expect(found).to_contain_text("Lantern found in the lighthouse")
        panel.locator(".mgp-search").fill("")
        expect(_people(panel)).to_have_count(3)

        # edit a field: the next recall block has it; undo takes it out again
        assert "afraid of deep water" not in _recall(client, "Who is Mira?")["block"]
        detail = _open_node(panel, mira)
        detail.locator(".mgp-new-name").fill("note")
        note = "Mira is afraid of deep water"
        detail.locator(".mgp-new-value").fill(note)
        detail.locator("button.mgp-save").click()
        expect(detail.locator("input[data-field='note']")).to_have_value(note)
        recalled = _recall(client, "Who is Mira?")
        assert mira in [i["id"] for i in recalled["items"]]
        assert "Mira is afraid of deep water" in recalled["block"]
        panel.locator(".mgp-section summary").filter(has_text="Recent edits").click()
        edit = panel.locator(".mgp-edits li[data-kind='edit']")
        expect(edit).to_have_count(1)
        edit.locator("button.mgp-undo").click()
        expect(panel.locator(".mgp-edits li[data-kind='rollback']")).to_have_count(1)
        expect(detail.locator("input[data-field='note']")).to_have_count(0)
        assert "afraid of deep water" not in _recall(client, "Who is Mira?")["block"]

        # pin: the next recall injects the node as pinned
        detail.locator("button.mgp-pin-button").click()
        expect(panel.locator(f".mgp-lists li[data-node='{mira}'] .mgp-pin")).to_be_visible()
        pinned = _recall(client, "What happened at the market?")
        assert {"id": mira, "why": "pinned"} in [
            {"id": i["id"], "why": i["why"]} for i in pinned["items"]
        ]

        # why recalled, direct mode: the recall the extension made before the generation
        page.evaluate(
            "r => fireGenerated({mode: 'direct', chat: 'harbor', query: r.query, recall: r})",
            pinned,
        )
        why = panel.locator(".mgp-why li.mgp-why-item")
        expect(why).to_have_count(len(pinned["items"]))
        expect(panel.locator(".mgp-why-query")).to_have_text("for: What happened at the market?")
        mira_why = panel.locator(f".mgp-why li[data-node='{mira}'] .mgp-why-text")
        expect(mira_why).to_have_text("pinned")

        # why recalled, proxy mode: the panel asks the server for the chat's last recall
        last = client.get("api/chats/harbor/recalls/last").json()
        assert last["query"] == question and last["items"]
        page.evaluate(
            "q => fireGenerated({mode: 'proxy', chat: 'harbor', query: q, recall: null})", question
        )
        expect(panel.locator(".mgp-why-query")).to_have_text(f"for: {question}")
        expect(why).to_have_count(len(last["items"]))
        for item in last["items"]:
            row = panel.locator(f".mgp-why li[data-node='{item['id']}']")
            expect(row.locator(".mgp-why-text")).to_have_text(item["why"])

        # merge: Mirabel into Mira; she leaves the list and is one of Mira's names
        detail = _open_node(panel, mira)
        detail.locator(".mgp-merge-pick").select_option(mirabel)
        detail.locator("button.mgp-merge").click()
        expect(panel.locator(f".mgp-lists li[data-node='{mirabel}']")).to_have_count(0)
        expect(detail.locator("input[data-field='aliases']")).to_have_value("Mirabel")
        assert client.get(f"api/chats/harbor/nodes/{mirabel}").json()["superseded_by"] == mira

        # archive: the place leaves the panel and the graph
        detail = _open_node(panel, lighthouse)
        detail.locator("button.mgp-archive").click()
        expect(places).to_have_count(0)
        expect(detail).to_be_hidden()
        nodes = client.get("api/chats/harbor/graph").json()["nodes"]
        assert lighthouse not in [n["id"] for n in nodes]

        shot = os.environ.get("SILLYTAVERN_PANEL_SCREENSHOT")
        if shot:
            _open_node(panel, mira)
            panel.screenshot(path=shot)

        # the server stops: one message, nothing else
        proc.terminate()
        proc.wait(timeout=30)
        panel.locator("button.mgp-refresh").click()
        status = panel.locator(".mgp-status")
        expect(status).to_contain_text("not reachable")
        expect(status).to_contain_text("the chat goes on without memory")
        expect(panel.locator(".mgp-body")).to_be_hidden()
        page.evaluate("fireGenerated({mode: 'proxy', chat: 'harbor', query: 'x', recall: null})")
        panel.locator("button.mgp-refresh").click()
        expect(status).to_have_count(1)
        expect(panel.locator(".mgp-message.mgp-error")).to_have_count(0)
        assert errors == []
