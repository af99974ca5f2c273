"""A page on another loopback origin, in a real headless Chromium, tries what any web page the
user opens can do without asking: ``fetch(..., {mode: "no-cors"})`` POSTs with a ``text/plain``
body to a real `memgraph-host serve`'s forget, messages and edit routes. The chat and the graph
are unchanged afterwards (web/request_guard.py refuses the browser's cross-site requests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from memgraph_plugin.web.server import ExplorerServer, bind

from .test_explorer_browser import chromium
from .test_request_guard import NOTES, started

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

ATTACK = """async ([target, node]) => {
  const plain = { "content-type": "text/plain" };
  const tries = [
    ["api/chats/notes/forget", '{"from": 0}'],
    ["api/chats/notes/messages", '{"role": "user", "content": "Mira moved away for good."}'],
    [`api/chats/harbor/nodes/${node}/edit`, '{"title": "Mallory"}'],
  ];
  const kinds = [];
  for (const [path, body] of tries) {
    const answer = await fetch(target + path,
                               { method: "POST", mode: "no-cors", body, headers: plain });
    kinds.push(answer.type);
  }
  return kinds;
}"""


@pytest.fixture
def other_origin() -> Iterator[str]:
    """A second tiny server on loopback: the page of another site."""

    async def page(request: object) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>another site</title><p>hello</p>")

    server = ExplorerServer(Starlette(routes=[Route("/", page)]), bind("127.0.0.1", 0))
    try:
        yield server.url
    finally:
        server.stop()


def test_a_page_on_another_origin_cannot_change_a_chat(data_dir: Path, other_origin: str) -> None:
    with started(data_dir, "serve", "--port", "0", lines=2) as printed:
        url, token = printed[0].split()[2], printed[1].split()[-1]
        with httpx.Client(base_url=url, timeout=120) as client:
            added = client.post(
                "api/chats/notes/messages",
                json={"messages": NOTES},
                headers={"X-Memgraph-Token": token},
            )
            assert added.status_code == 200, added.text
            before = client.get("api/chats/notes/history").json()["messages"]
            mira = next(
                n for n in client.get("api/chats/harbor/graph").json()["nodes"]
                if n["title"] == "Mira"
            )  # fmt: skip
            localhost = other_origin.replace("127.0.0.1", "localhost")  # another site, too
            with chromium() as browser:
                for origin in (other_origin, localhost):
                    tab = browser.new_page()
                    tab.goto(origin)
                    assert tab.evaluate("location.origin") != url.rstrip("/")
                    kinds = tab.evaluate(ATTACK, [url, mira["id"]])
                    assert kinds == ["opaque"] * 3  # each request was sent and answered
                    tab.close()
            assert client.get("api/chats/notes/history").json()["messages"] == before
            detail = client.get(f"api/chats/harbor/nodes/{mira['id']}").json()
            assert detail["title"] == "Mira"
