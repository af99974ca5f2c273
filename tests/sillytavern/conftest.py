"""The real SillyTavern (the extension installed), a recording upstream, ``memgraph-host serve``
and headless chromium. The tests that need SillyTavern skip (one line naming the variable) when
`MEMGRAPH_SILLYTAVERN_TARBALL` is unset. Under xdist each worker that runs one of them starts
its own SillyTavern and browser once (session fixtures)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.proxy.upstream import Upstream

from .memory_server import MemoryServer
from .sillytavern_app import SKIP_REASON, TARBALL_ENV, SillyTavern, installed_sillytavern

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="session")
def sillytavern_app() -> Path:
    tarball = os.environ.get(TARBALL_ENV)
    if not tarball:
        pytest.skip(SKIP_REASON)
    path = Path(tarball)
    assert path.is_file(), f"{TARBALL_ENV}={tarball} is not a file"
    return installed_sillytavern(path)


@pytest.fixture(scope="session")
def sillytavern(
    sillytavern_app: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SillyTavern]:
    server = SillyTavern(sillytavern_app, tmp_path_factory.mktemp("sillytavern-data"))
    try:
        server.install_extension()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    server.behaviour.answer = "Noted."
    server.behaviour.numbered = True  # "Noted. #N": every answer differs
    yield server
    server.stop()


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Chromium for one test: Playwright's sync API keeps an event loop running on this thread
    while it is started, which every later test of the worker calling `asyncio.run` would meet."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def memory(tmp_path: Path, upstream: Upstream, sillytavern: SillyTavern) -> Iterator[MemoryServer]:
    """A fresh ``memgraph-host serve --proxy-upstream`` that SillyTavern's page may call."""
    server = MemoryServer(tmp_path / "memgraph", upstream.url, sillytavern.origin)
    yield server
    server.stop()
