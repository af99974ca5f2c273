"""Fixtures for the sample-plugin tests: real hosts on real LanceDB folders in tmp_path."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from host import Host
from tests.spies import CommitSpy

__all__ = ["CHAT", "CommitSpy", "event", "link", "open_session", "person", "place", "settle"]

CHAT = "c1"


@pytest.fixture
async def make_host(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await make_host(*plugins, builtins=True, settings=None, blocked=None)``: a started host."""
    hosts: list[Host] = []

    async def make(*plugins: Any, **kwargs: Any) -> Host:
        settings = kwargs.pop("settings", None) or {}
        host = Host(
            data_dir=tmp_path / f"data{len(hosts)}",
            settings=settings,
            entry_points=False,
            **kwargs,
        )
        for plugin in plugins:
            name = getattr(plugin, "__name__", type(plugin).__name__).rsplit(".", 1)[-1]
            host.register_plugin(plugin, name=name)
        await host.start()
        hosts.append(host)
        return host

    yield make
    for host in reversed(hosts):
        await host.stop()


async def open_session(host: Host, chat_id: str = CHAT) -> Any:
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(chat_id))
    assert session is not None
    return session


async def settle(host: Host) -> None:
    """Wait for work the sample plugins started from hooks (commit notifications are
    delivered by tasks: the host's, then the plugins' work, then what that work committed)."""
    for _ in range(3):
        await host.drain()
        for name in ("compactor", "curator", "scout"):
            drain = getattr(host.registry.get(name), "drain", None)
            if drain is not None:
                await drain()


def event(title: str, summary: str, ref: str | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {
        "op": "create",
        "type": "event",
        "title": title,
        "fields": {"summary": summary},
    }
    if ref:
        op["ref"] = ref
    return op


def entity(type_name: str, title: str, ref: str, **fields: Any) -> dict[str, Any]:
    """A ``create`` op for a named entity (its title repeated in the fields, as the schema asks)."""
    return {
        "op": "create",
        "type": type_name,
        "title": title,
        "fields": {"title": title, **fields},
        "ref": ref,
    }


person = functools.partial(entity, "character_sheet")
place = functools.partial(entity, "location_state")


def link(source_ref: str, target_ref: str, relation: str) -> dict[str, Any]:
    return {
        "op": "link_upsert",
        "source_ref": source_ref,
        "links": [{"target_ref": target_ref, "relation": relation, "direction": "outgoing"}],
    }
