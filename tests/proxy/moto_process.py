"""moto's server (S3 and DynamoDB) as a child process on a free loopback port, with one bucket,
counting the requests it serves from its request log: the hosts over one bucket (tests and
`bench/service_s3.py`). A process of its own keeps its work off the test process (which also
runs the upstream and the clients)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import httpx

from tests.processes import stop_process
from tests.storage.targets import BUCKET, Target, free_port

#: a request line of werkzeug's log: ``"PUT /bucket/key HTTP/1.1" 200 -``
_REQUEST = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')
OPTIONS = {
    "aws_access_key_id": "memgraph-test",
    "aws_secret_access_key": "memgraph-test-secret",
    "region": "us-east-1",
    "allow_http": "true",
}


def _shape(path: str) -> str:
    """A request path without the bucket, the database prefix and file names; a listing's
    prefix likewise."""
    path, _, query = path.partition("?")
    parts = path.split("/")[3:]  # "", bucket, database prefix
    shaped = "/".join([*parts[:-1], "*"]) if parts else ""
    listed = [v for k, _, v in (q.partition("=") for q in query.split("&")) if k == "prefix"]
    if listed:
        folders = listed[0].replace("%2F", "/").split("/")[1:]
        return f"LIST /{'/'.join(folders)}"
    return f"/{shaped}"


class MotoProcess:
    """``endpoint``; `counts()`: requests served so far, by service (``s3``, ``dynamodb``)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.options = {**OPTIONS, "endpoint": self.endpoint}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._counts: Counter[str] = Counter()
        #: requests by method and path with the database prefix and ids cut (`kinds`)
        self._kinds: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 60
        while True:  # until it answers (it binds within a second or two)
            try:
                httpx.get(self.endpoint + "/moto-api/", timeout=5)
                break
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError("moto's server did not start") from None
                time.sleep(0.05)
        httpx.put(f"{self.endpoint}/{BUCKET}", timeout=30).raise_for_status()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            found = _REQUEST.search(line)
            if found is None or found.group(2).startswith("/moto-api"):
                continue
            service = "dynamodb" if found.group(1) == "POST" and found.group(2) == "/" else "s3"
            kind = f"{found.group(1)} {_shape(found.group(2))} {found.group(3)}"
            with self._lock:
                self._counts[service] += 1
                self._kinds[kind] += 1

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)

    def kinds(self) -> Counter[str]:
        """Requests so far by method, path shape and status (what a turn's requests are)."""
        with self._lock:
            return Counter(self._kinds)

    def target(self) -> Target:
        """A database of its own (a new prefix in the bucket)."""
        return Target(f"s3://{BUCKET}/{uuid.uuid4().hex}", dict(self.options))

    def stop(self) -> None:
        stop_process(self.proc, grace=30)
        self._reader.join(timeout=10)
