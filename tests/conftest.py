"""Shared fixtures (kept small): a host environment free of the developer's env switches."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

#: every property test's settings: MEMGRAPH_PROPERTY_EXAMPLES raises the example count for a
#: longer hunt; no deadline (the machine is shared and noisy)
settings.register_profile(
    "memgraph",
    max_examples=int(os.environ.get("MEMGRAPH_PROPERTY_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("memgraph")


@pytest.fixture(autouse=True)
def _clean_host_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMGRAPH_HOST_STRICT / MEMGRAPH_HOST_BLOCK from the shell must not change test outcomes."""
    monkeypatch.delenv("MEMGRAPH_HOST_STRICT", raising=False)
    monkeypatch.delenv("MEMGRAPH_HOST_BLOCK", raising=False)
