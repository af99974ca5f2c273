"""A real ``memgraph-host proxy`` process on a data dir (any free port), for the tests of several
processes on one data dir and of a data dir that fills up or turns read-only."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.processes import stop_process

SCRIPT = Path(sys.executable).with_name("memgraph-host")
#: settings every proxy process of these tests gets (as MEMGRAPH_HOST_* variables)
BASE_ENV = {"MEMGRAPH_HOST_EMBEDDING_PROFILE": "hashing"}


class ProxyProcess:
    """``url``: the proxy's ``/v1`` base; ``base``: the server's root (``/api`` lives there).
    Its stderr is collected on a thread (`log`) so a full pipe never stalls it."""

    def __init__(
        self, data_dir: Path, upstream: str, *, workers: int = 1, **settings: Any
    ) -> None:
        env = {**os.environ, **BASE_ENV}
        env.update({f"MEMGRAPH_HOST_{k.upper()}": str(v) for k, v in settings.items()})
        extra = ["--workers", str(workers)] if workers > 1 else []
        self.proc = subprocess.Popen(
            [str(SCRIPT), "--data-dir", str(data_dir), "proxy", "--upstream", upstream,
             "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self._seen = threading.Condition()
        self._err: list[str] = []
        self._reader = threading.Thread(target=self._read_err, daemon=True)
        self._reader.start()
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if "memgraph proxy: http://" not in line:
            self.proc.wait(timeout=60)
            self._reader.join(timeout=10)
            raise AssertionError(f"the proxy did not start: {line!r}\n{self.log}")
        self.url = line.split()[2]
        self.base = self.url.removesuffix("v1")
        self.pid = self.proc.pid
        token_line = self.proc.stdout.readline() if self.proc.stdout else ""
        #: the JSON API's write token, from the start's second line (or the serve_token setting)
        self.token = str(settings.get("serve_token") or token_line.rsplit(" ", 1)[-1].strip())
        #: the worker processes' pids (``--workers N``: the start's third line names them)
        self.workers: list[int] = []
        if workers > 1:
            pids = self.proc.stdout.readline() if self.proc.stdout else ""
            self.workers = [int(p) for p in pids.split(":", 1)[1].split(",")]

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._seen:
                self._err.append(line)
                self._seen.notify_all()

    def wait_for_log(self, text: str, timeout: float = 120) -> str:
        """The first stderr line holding `text`, once it is written (AssertionError past
        `timeout`)."""
        def found() -> str | None:
            return next((line for line in self._err if text in line), None)

        with self._seen:
            if not self._seen.wait_for(lambda: found() is not None, timeout):
                raise AssertionError(f"no log line with {text!r} in {timeout} s:\n{self.log}")
            return found() or ""

    @property
    def log(self) -> str:
        return "".join(self._err)

    def api(self) -> httpx.Client:
        """A client of the JSON API with the write token."""
        headers = {"X-Memgraph-Token": self.token}
        return httpx.Client(base_url=self.base, timeout=120, headers=headers)

    def stop(self) -> str:
        """Stop it (SIGTERM: the answers still being stored are stored first); its stderr."""
        stop_process(self.proc, grace=60)
        self._reader.join(timeout=10)
        return self.log
