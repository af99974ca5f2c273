"""The explorer's HTTP server: the page, its JSON endpoints and a server-sent event stream.

Standard library only (``ThreadingHTTPServer``): one thread per request, loopback by default.
``/api/chats/<chat>/events`` streams ``commit`` events when the chat's journal version moves, so
the page redraws whoever wrote (this process, the CLI, another host on the same data dir).
"""

from __future__ import annotations

import json
import logging
import mimetypes
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .explorer import GraphExplorer, UnknownChat

STATIC = Path(__file__).resolve().parent / "static"
POLL_SECONDS = 0.5  # how often an open event stream looks for a new journal version
KEEPALIVE_SECONDS = 15.0

log = logging.getLogger(__name__)


class ExplorerServer(ThreadingHTTPServer):
    """Serves one `GraphExplorer`; ``stop()`` ends the event streams and the server."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], explorer: GraphExplorer, *, poll: float = POLL_SECONDS
    ) -> None:
        super().__init__(address, ExplorerHandler)
        self.explorer = explorer
        self.poll = poll
        self.stopping = threading.Event()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


class ExplorerHandler(BaseHTTPRequestHandler):
    """Routes GET requests; every answer is JSON except the page, its files and the stream."""

    server: ExplorerServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s " + format, self.address_string(), *args)

    # ---------------------------------------------------------------- routing

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            self._route(parts, query)
        except UnknownChat as exc:
            self._json({"error": f"unknown chat {exc.args[0]!r}"}, HTTPStatus.NOT_FOUND)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # one bad request never takes the server down
            log.exception("explorer request %s failed", self.path)
            self._json({"error": f"{type(exc).__name__}: {exc}"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def _route(self, parts: list[str], query: dict[str, str]) -> None:
        explorer = self.server.explorer
        if not parts:
            self._file(STATIC / "index.html")
        elif parts[0] == "static":
            self._file(STATIC.joinpath(*parts[1:]))
        elif parts == ["api", "chats"]:
            self._json({"chats": explorer.chats()})
        elif len(parts) == 4 and parts[:2] == ["api", "chats"]:
            chat, what = parts[2], parts[3]
            if what == "graph":
                include = [i for i in query.get("include", "").split(",") if i]
                self._json(explorer.graph(chat, include=include))
            elif what == "search":
                self._json({"results": explorer.search(chat, query.get("q", ""))})
            elif what == "events":
                self._events(chat)
            else:
                self._not_found()
        elif len(parts) == 5 and parts[:2] == ["api", "chats"] and parts[3] == "nodes":
            detail = explorer.node(parts[2], parts[4])
            if detail is None:
                self._json({"error": f"no node {parts[4]!r}"}, HTTPStatus.NOT_FOUND)
            else:
                self._json(detail)
        else:
            self._not_found()

    # ---------------------------------------------------------------- answers

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, data: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        body = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _not_found(self) -> None:
        self._json({"error": f"not found: {self.path}"}, HTTPStatus.NOT_FOUND)

    def _file(self, path: Path) -> None:
        path = path.resolve()
        if not path.is_relative_to(STATIC) or not path.is_file():
            self._not_found()
            return
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith("javascript"):
            kind += "; charset=utf-8"
        self._send(HTTPStatus.OK, path.read_bytes(), kind)

    def _events(self, chat: str) -> None:
        """A server-sent event stream: ``commit`` with the new version whenever one lands."""
        explorer, server = self.server.explorer, self.server
        last = explorer.version(chat)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self._event("hello", {"chat": chat, "version": last})
        quiet_since = time.monotonic()
        while not server.stopping.wait(server.poll):
            version = explorer.version(chat)
            if version != last:
                last = version
                self._event("commit", {"chat": chat, "version": version})
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
                self.wfile.write(b": keepalive\n\n")
                self.wfile.flush()
                quiet_since = time.monotonic()

    def _event(self, name: str, data: Any) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


def start_server(
    explorer: GraphExplorer, *, host: str = "127.0.0.1", port: int = 0, poll: float = POLL_SECONDS
) -> tuple[ExplorerServer, threading.Thread]:
    """Bind (``port=0``: a free port) and serve in a daemon thread; ``server.stop()`` ends it."""
    server = ExplorerServer((host, port), explorer, poll=poll)
    thread = threading.Thread(target=server.serve_forever, name="memgraph-explorer", daemon=True)
    thread.start()
    return server, thread
