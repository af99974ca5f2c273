"""Shared fixtures (kept small): a host environment free of the developer's env switches."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_host_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMGRAPH_HOST_STRICT / MEMGRAPH_HOST_BLOCK from the shell must not change test outcomes."""
    monkeypatch.delenv("MEMGRAPH_HOST_STRICT", raising=False)
    monkeypatch.delenv("MEMGRAPH_HOST_BLOCK", raising=False)
