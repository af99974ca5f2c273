"""The explorer's server on uvicorn: a NUL in a static path is a 404 that
names no exception; idle and slow connections hold no thread each and are closed; a foreign
Host header is refused (DNS rebinding)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx

from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.web import GraphExplorer, build_app
from memgraph_plugin.web.server import ExplorerRoutes, ExplorerServer, bind


def _server(tmp_path: Path, keep_alive: float = 5.0) -> ExplorerServer:
    storage = LanceStorage(StorageSettings.from_settings({}, data_dir=tmp_path))
    routes = ExplorerRoutes(GraphExplorer(storage, Store.from_dict, tmp_path))
    return ExplorerServer(build_app(explorer=routes), bind("127.0.0.1", 0), keep_alive=keep_alive)


def test_a_nul_in_a_static_path_is_not_found(tmp_path: Path) -> None:
    server = _server(tmp_path)
    try:
        for path in ("static/%00", "static/a%00b.js", "static/..%2F..%2Fapp.py", "static/"):
            answer = httpx.get(server.url + path, timeout=30)
            assert answer.status_code == 404, path
            assert "Error" not in answer.text and "Traceback" not in answer.text
        assert httpx.get(server.url + "api/chats", timeout=30).status_code == 200
    finally:
        server.stop()


def test_idle_and_slow_connections_hold_no_thread(tmp_path: Path) -> None:
    server = _server(tmp_path, keep_alive=1.0)
    host, port = server.url.split("//")[1].rstrip("/").split(":")
    before = threading.active_count()
    idle = [socket.create_connection((host, int(port)), timeout=30) for _ in range(40)]
    slow = []
    for _ in range(40):  # a request line sent, the headers never finished
        conn = socket.create_connection((host, int(port)), timeout=30)
        conn.sendall(b"GET /api/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        slow.append(conn)
    try:
        answer = httpx.get(server.url + "api/chats", timeout=30)
        assert answer.status_code == 200  # served while 80 connections hang
        assert threading.active_count() <= before + 2  # no thread per connection
        # a kept-alive connection that goes quiet is closed by the server (keep_alive=1 s)
        kept = socket.create_connection((host, int(port)), timeout=30)
        kept.sendall(b"GET /api/chats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = b""
        while True:
            chunk = kept.recv(65536)  # blocks until data or the server's close
            if not chunk:
                break
            received += chunk
        assert received.startswith(b"HTTP/1.1 200")
        kept.close()
    finally:
        for conn in idle + slow:
            conn.close()
        server.stop()


def test_a_foreign_host_header_is_refused(tmp_path: Path) -> None:
    server = _server(tmp_path)
    try:
        evil = httpx.get(server.url + "api/chats", headers={"host": "evil.example"}, timeout=30)
        assert evil.status_code == 400
        local = httpx.get(server.url + "api/chats", headers={"host": "localhost"}, timeout=30)
        assert local.status_code == 200
    finally:
        server.stop()
