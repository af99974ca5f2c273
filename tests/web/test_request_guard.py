"""Who may call which route (web/request_guard.py, proxy/guard/access.py), against real
`memgraph-host serve`, `serve --read-only` and `proxy` processes over real HTTP: a browser-shaped
request from another site (its ``Origin``, or only ``Sec-Fetch-Site``) is refused and changes
nothing, reads included; a write needs the token; a listed origin gets CORS; a read-only server has
no write route."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.proxy.upstream import Upstream

from .conftest import SCRIPT

pytestmark = [pytest.mark.process]

EVIL = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
CROSS_SITE = {"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}
LISTED = "http://allowed.example:3000"
STARTUP_S = 120
NOTES = [
    {"role": "user", "content": "Mira keeps the brass lantern in the Zanzibar tower."},
    {"role": "assistant", "content": "Noted: the lantern is in the Zanzibar tower."},
]


@contextmanager
def started(data_dir: Path, *args: str, lines: int) -> Iterator[list[str]]:
    """A real `memgraph-host` server process: the first `lines` lines it printed (a server that
    prints fewer fails the test instead of hanging it)."""
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(data_dir), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    printed: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: [printed.put(line) for line in proc.stdout or ()],
                     daemon=True).start()  # fmt: skip
    try:
        first = [printed.get(timeout=STARTUP_S) for _ in range(lines)]
        assert "http://127.0.0.1:" in first[0], first
        yield first
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"the server printed fewer than {lines} lines") from None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _history(client: httpx.Client, chat: str) -> list[str]:
    answer = client.get(f"api/chats/{chat}/history")
    assert answer.status_code == 200, answer.text
    return [m["text"] for m in answer.json()["messages"]]


def _refused(answer: httpx.Response, status: int = 403) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    error = answer.json()["error"]
    return error["message"] if isinstance(error, dict) else error


def _graph_titles(client: httpx.Client) -> set[str]:
    return {n["title"] for n in client.get("api/chats/harbor/graph").json()["nodes"]}


def test_serve_refuses_cross_site_calls_and_writes_without_the_token(data_dir: Path) -> None:
    args = ("--set", f"http_cors_origins={LISTED}", "serve", "--port", "0")
    with started(data_dir, *args, lines=2) as printed:
        url, token = printed[0].split()[2], printed[1].split()[-1]
        good = {"X-Memgraph-Token": token}
        with httpx.Client(base_url=url, timeout=120) as client:
            added = client.post("api/chats/notes/messages", json={"messages": NOTES}, headers=good)
            assert added.status_code == 200, added.text
            before = _history(client, "notes")
            mira = next(n for n in client.get("api/chats/harbor/graph").json()["nodes"]
                        if n["title"] == "Mira")  # fmt: skip
            edit = f"api/chats/harbor/nodes/{mira['id']}/edit"
            writes = [
                ("api/chats/notes/forget", '{"from": 0}'),
                ("api/chats/notes/messages", '{"role": "user", "content": "Forget the lantern."}'),
                (edit, '{"title": "Mallory"}'),
            ]
            for path, body in writes:
                # what a page on another site can send without asking (no preflight)
                message = _refused(client.post(path, content=body, headers=EVIL))
                assert "'http://evil.example'" in message and "http_cors_origins" in message
                assert "Sec-Fetch-Site" in _refused(client.post(path, content=body,
                                                                headers=CROSS_SITE))  # fmt: skip
                # even with the token, another site's page is refused
                _refused(client.post(path, content=body, headers={**EVIL, **good}))
                # and a same-origin write needs the token, and a JSON body
                own = {"Content-Type": "application/json"}
                assert "x-memgraph-token" in _refused(
                    client.post(path, content=body, headers=own), 401
                )
                assert "application/json" in _refused(
                    client.post(path, content=body, headers={**good, "Content-Type": "text/plain"}),
                    415,
                )
            null = client.post("api/chats/notes/forget", json={"from": 0},
                               headers={**good, "Origin": "null"})  # fmt: skip
            _refused(null)
            # reads of a chat's memory from another site are refused too
            _refused(
                client.get("api/chats/notes/history", headers={"Origin": "http://evil.example"})
            )
            _refused(client.post("api/chats/notes/recall", json={"query": "lantern"},
                                 headers={"Sec-Fetch-Site": "same-site"}))  # fmt: skip
            _refused(client.get("api/chats", headers={"Sec-Fetch-Site": "cross-site"}))
            # a body nested too deep, a Host naming another site: JSON errors, nothing written
            deep = b'{"title": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
            nested = client.post(edit, content=deep,
                                 headers={**good, "Content-Type": "application/json"})  # fmt: skip
            assert "nested too deep" in _refused(nested, 400)
            rebound = client.get("api/chats", headers={"Host": "evil.example"})
            assert rebound.status_code == 400 and rebound.json()["code"] == "bad_host"
            assert _history(client, "notes") == before
            assert "Mira" in _graph_titles(client) and "Mallory" not in _graph_titles(client)

            # the page itself stays reachable from anywhere
            page = client.get("/", headers={"Sec-Fetch-Site": "cross-site"})
            assert page.status_code == 200 and "<html" in page.text.lower()
            # the own origin (a browser's same-origin POST) with the token writes
            own_origin = {**good, "Origin": url.rstrip("/"), "Sec-Fetch-Site": "same-origin"}
            forgot = client.post("api/chats/notes/forget", json={"from": 1}, headers=own_origin)
            assert forgot.status_code == 200 and forgot.json()["messages"] == 1, forgot.text

            # a listed origin: a working preflight, CORS headers on the answers
            preflight = client.options(
                "api/chats/notes/recall",
                headers={
                    "Origin": LISTED,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type,x-memgraph-token",
                    "Sec-Fetch-Site": "cross-site",
                },
            )
            assert preflight.status_code == 200, preflight.text
            assert preflight.headers["access-control-allow-origin"] == LISTED
            allowed = preflight.headers["access-control-allow-headers"].lower()
            assert "x-memgraph-token" in allowed and "content-type" in allowed
            assert "POST" in preflight.headers["access-control-allow-methods"]
            assert "origin" in preflight.headers["vary"].lower()
            listed = {"Origin": LISTED, "Sec-Fetch-Site": "cross-site"}
            recall = client.post("api/chats/notes/recall", json={"query": "lantern"},
                                 headers=listed)  # fmt: skip
            assert recall.status_code == 200 and recall.json()["chat"] == "notes", recall.text
            assert recall.headers["access-control-allow-origin"] == LISTED
            assert "x-memgraph-warning" in recall.headers["access-control-expose-headers"]
            assert "origin" in recall.headers["vary"].lower()
            # a listed origin still writes only with the token
            _refused(client.post("api/chats/notes/forget", json={"from": 0}, headers=listed), 401)
            unlisted = client.options(
                "api/chats/notes/recall",
                headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
            )
            assert unlisted.status_code == 403
            assert "access-control-allow-origin" not in unlisted.headers
            assert _history(client, "notes") == before[:1]


def test_read_only_serves_no_write_route_at_all(data_dir: Path, tmp_path: Path) -> None:
    with started(data_dir, "serve", "--port", "0", "--read-only", lines=2) as printed:
        url = printed[0].split()[2]
        assert printed[1].strip() == "read-only: no write route"
        with httpx.Client(base_url=url, timeout=120) as client:
            same_origin = {"Origin": url.rstrip("/"), "X-Memgraph-Token": "anything"}
            for path, body in [
                ("api/chats/harbor/messages", {"role": "user", "content": "Mira is gone."}),
                ("api/chats/harbor/forget", {"from": 0}),
            ]:
                assert client.post(path, json=body, headers=same_origin).status_code in (404, 405)
            assert client.get("api/edit-access").json() == {"writable": False}
            assert _history(client, "harbor") == []
            assert client.post("api/chats/harbor/recall", json={"query": "Mira"}).status_code == 200
    refused = subprocess.run(
        [str(SCRIPT), "--data-dir", str(tmp_path / "other"), "serve", "--port", "0",
         "--read-only", "--proxy-upstream", "http://127.0.0.1:9/v1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2, (refused.returncode, refused.stderr)
    assert "--read-only cannot go with --proxy-upstream" in refused.stderr


def test_the_proxy_guards_its_json_api_with_a_printed_token(tmp_path: Path) -> None:
    upstream = Upstream()
    try:
        args = ("--set", "embedding_profile=hashing", "proxy", "--upstream", upstream.url,
                "--port", "0")  # fmt: skip
        with started(tmp_path / "data", *args, lines=2) as printed:
            base = printed[0].split()[2].removesuffix("v1")
            assert printed[1].startswith("write token for the JSON API (X-Memgraph-Token header)")
            token = printed[1].split()[-1]
            with httpx.Client(base_url=base, timeout=120) as client:
                good = {"X-Memgraph-Token": token}
                added = client.post("api/chats/notes/messages", json={"messages": NOTES},
                                    headers=good)  # fmt: skip
                assert added.status_code == 200, added.text
                for headers in (EVIL, CROSS_SITE):
                    _refused(client.post("api/chats/notes/forget", content='{"from": 0}',
                                         headers=headers))  # fmt: skip
                _refused(client.post("api/chats/notes/forget", json={"from": 0}), 401)
                assert len(_history(client, "notes")) == 2

                # /v1: the cross-site refusal and JSON-only, in OpenAI's error shape
                ask = '{"model": "tiny", "messages": [{"role": "user", "content": "Hi"}]}'
                chat = {"X-Memgraph-Chat": "notes"}
                foreign = client.post("v1/chat/completions", content=ask, headers={**EVIL, **chat})
                assert foreign.status_code == 403
                assert foreign.json()["error"]["code"] == "cross_site_refused"
                plain = client.post("v1/chat/completions", content=ask,
                                    headers={**chat, "Content-Type": "text/plain"})  # fmt: skip
                assert plain.status_code == 415
                assert plain.json()["error"]["code"] == "unsupported_media_type"
                models = client.get("v1/models", headers={"Sec-Fetch-Site": "cross-site"})
                assert models.status_code == 403
                assert upstream.completions_received() == []
                assert [r["path"] for r in upstream.requests] == []
                # a client that is not a browser goes through as before
                answer = client.post(
                    "v1/chat/completions",
                    content=ask,
                    headers={**chat, "Content-Type": "application/json"},
                )
                assert answer.status_code == 200, answer.text
                assert len(upstream.completions_received()) == 1
    finally:
        upstream.stop()
