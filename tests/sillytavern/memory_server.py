"""``memgraph-host serve --proxy-upstream`` as a real subprocess for the SillyTavern tests: the
JSON API with SillyTavern's origin in ``http_cors_origins`` and a ``serve_token``, the proxy on
``/v1`` of the same port."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.processes import stop_process

SCRIPT = Path(sys.executable).with_name("memgraph-host")
TOKEN = "st-test-token"


class MemoryServer:
    """``url``: the server's root (no trailing slash); ``api``: a client with the write token."""

    def __init__(self, data_dir: Path, upstream: str, origin: str) -> None:
        env = {**os.environ, "MEMGRAPH_HOST_EMBEDDING_PROFILE": "hashing"}
        self.proc = subprocess.Popen(
            [str(SCRIPT), "--data-dir", str(data_dir), "serve", "--port", "0",
             "--proxy-upstream", upstream, "--set", f"http_cors_origins={origin}",
             "--set", f"serve_token={TOKEN}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self._err: list[str] = []
        threading.Thread(target=self._read_err, daemon=True).start()
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if "http://127.0.0.1:" not in line:
            self.stop()
            raise AssertionError(f"serve did not start: {line!r}\n{''.join(self._err)}")
        self._out = [line]
        threading.Thread(target=self._read_out, daemon=True).start()  # a full pipe would block it
        self.url = line.split()[2].rstrip("/")
        self.api = httpx.Client(base_url=self.url, timeout=120, headers={"X-Memgraph-Token": TOKEN})

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._out.append(line)

    def log_tail(self, lines: int = 30) -> str:
        """The server's last output lines (stdout and stderr), for a failure's message."""
        return "".join(self._out[-lines:] + self._err[-lines:])

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._err.append(line)

    def chats(self) -> dict[str, int]:
        """Every chat's message count."""
        rows = self.api.get("/api/chats").json()["chats"]
        return {row["id"]: row["messages"] for row in rows}

    def graph(self, chat: str) -> list[dict]:
        """The chat's nodes (id, type, title, ...)."""
        answer = self.api.get(f"/api/chats/{chat}/graph")
        assert answer.status_code == 200, answer.text
        return answer.json()["nodes"]

    def history(self, chat: str) -> list[str]:
        answer = self.api.get(f"/api/chats/{chat}/history", params={"limit": 100000})
        return [m["text"] for m in answer.json()["messages"]]

    def stop(self) -> None:
        stop_process(self.proc, grace=60)
