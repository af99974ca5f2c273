"""The real SillyTavern 1.12.6 for tests: unpacked from the tarball `MEMGRAPH_SILLYTAVERN_TARBALL`
names into a cache folder (``~/.cache/memgraph-host/sillytavern-<sha12>/``, ``npm ci`` once, kept
between runs), started as ``node server.js`` on a free loopback port with its own data root."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.processes import stop_process

TARBALL_ENV = "MEMGRAPH_SILLYTAVERN_TARBALL"
SKIP_REASON = (
    f"the SillyTavern tests need {TARBALL_ENV}=/path/to/sillytavern-1.12.6.tar.gz "
    "(.ci/run sets it to ../shared/vendor/sillytavern-1.12.6.tar.gz)"
)
LISTENING = "SillyTavern is listening"


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memgraph-host"


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def installed_sillytavern(tarball: Path) -> Path:
    """SillyTavern's folder, unpacked and ``npm ci``-installed once per tarball content (a lock
    file keeps two test processes from installing at once)."""
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"sillytavern-{_digest(tarball)[:12]}"
    app = folder / "SillyTavern"
    with (root / (folder.name + ".lock")).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".installed").exists():
            return app
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        with tarfile.open(tarball) as archive:
            archive.extractall(folder, filter="data")
        npm = shutil.which("npm")
        assert npm, "npm is missing (SillyTavern is installed with npm ci)"
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=app, capture_output=True, text=True,
            timeout=900, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, f"npm ci failed in {app}:\n{proc.stderr[-4000:]}"
        (folder / ".installed").touch()
    return app


def free_port() -> int:
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SillyTavern:
    """A running ``node server.js``: ``url``, ``origin`` (what its page sends as ``Origin``),
    ``user_dir`` (``<dataRoot>/default-user``), and a CSRF-carrying client of its own API."""

    def __init__(self, app: Path, data_root: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.origin = f"http://127.0.0.1:{self.port}"
        self.user_dir = data_root / "default-user"
        node = shutil.which("node")
        assert node, "node is missing (SillyTavern runs on node 18+)"
        self.proc = subprocess.Popen(
            [node, "server.js", "--port", str(self.port), "--listen", "false",
             "--autorun", "false", "--whitelist", "true", "--enableIPv6", "false",
             "--dataRoot", str(data_root)],
            cwd=app, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(timeout=180) or self.proc.poll() is not None:
            self.stop()
            raise AssertionError("SillyTavern did not start:\n" + "".join(self.lines[-40:]))
        self.client = httpx.Client(base_url=self.url, timeout=60)
        token = self.client.get("csrf-token").json()["token"]
        self.client.headers["X-CSRF-Token"] = token

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if LISTENING in line:
                self.ready.set()
        self.ready.set()  # ended: the waiter looks at the exit status

    def install_extension(self) -> None:
        """The memory extension, put into this profile by its install command."""
        script = Path(sys.executable).with_name("memgraph-host")
        proc = subprocess.run(
            [str(script), "sillytavern", "install", str(self.user_dir), "--origin", self.origin],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr

    def create_character(self, name: str, description: str, first_mes: str) -> str:
        """A character through SillyTavern's own API; its avatar file name."""
        answer = self.client.post("api/characters/create", data={
            "ch_name": name, "description": description, "first_mes": first_mes,
            "personality": "", "scenario": "", "mes_example": "", "talkativeness": "0.5",
            "fav": "false", "tags": "",
        })  # fmt: skip
        assert answer.status_code == 200, answer.text
        return answer.text.strip()

    def write_settings(self, **changes: Any) -> None:
        """Change the profile's settings file (no page open: a page saves its own copy)."""
        path = self.user_dir / "settings.json"
        settings = json.loads(path.read_text("utf-8"))
        for key, value in changes.items():
            if isinstance(value, dict) and isinstance(settings.get(key), dict):
                settings[key].update(value)
            else:
                settings[key] = value
        path.write_text(json.dumps(settings, indent=4), "utf-8")

    def stop(self) -> None:
        stop_process(self.proc, grace=30)
