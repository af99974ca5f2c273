"""Shared fixtures: a host environment free of the developer's env switches, a started host
with the built-in plugins only (`host`), the engine's story graph (engine and API tests), the
storage targets (storage and loaded-chats tests), and the SillyTavern goals table gathered from
the xdist workers and printed at the end of the run."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from host import Host
from memgraph_plugin.engine.graph.store import Store
from tests.sillytavern import goals as sillytavern_goals
from tests.storage.targets import S3Server, Target, local_target
from tests.story_graph import story_data

#: every property test's settings: MEMGRAPH_PROPERTY_EXAMPLES raises the example count for a
#: longer hunt; no deadline (the machine is shared and noisy)
settings.register_profile(
    "memgraph",
    max_examples=int(os.environ.get("MEMGRAPH_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("memgraph")


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    """A host over ``tmp_path/data`` with the built-in plugins only, started and then stopped."""
    started = Host(data_dir=tmp_path / "data", entry_points=False)
    await started.start()
    yield started
    await started.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    sillytavern_goals.handed_over(session.config)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a worker's session ended
def pytest_testnodedown(node: object, error: object) -> None:
    sillytavern_goals.merge(getattr(node, "workeroutput", None) or {})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    sillytavern_goals.summary(terminalreporter)


@pytest.fixture(autouse=True)
def _clean_host_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMGRAPH_HOST_STRICT / MEMGRAPH_HOST_BLOCK from the shell must not change test outcomes."""
    monkeypatch.delenv("MEMGRAPH_HOST_STRICT", raising=False)
    monkeypatch.delenv("MEMGRAPH_HOST_BLOCK", raising=False)


# ------------------------------------------------------------------ the engine's story graph


@pytest.fixture
def story() -> Store:
    """A small realistic chat: events with a rollup, characters (CJK aliases), a place, a thread,
    an archived character, a diagnostic node and an episodic node."""
    return Store.from_dict(story_data())


@pytest.fixture
def empty_store() -> Store:
    return Store()


# ------------------------------------------------------------------ storage targets


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-compatible server (moto server mode, one per test process, on a free loopback
    port)."""
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture(params=["local", pytest.param("s3", marks=[pytest.mark.s3, pytest.mark.slow])])
def target(request: pytest.FixtureRequest, tmp_path) -> Target:
    """Runs a test once on a local folder and once on the S3 server (that run is marked `s3`, and
    `slow`: most of those runs are among the slowest tenth)."""
    if request.param == "s3":
        return request.getfixturevalue("s3_server").target()
    return local_target(tmp_path)


@pytest.fixture
def s3_target(s3_server: S3Server) -> Target:
    return s3_server.target()
