"""``memgraph-host check`` and ``memgraph-host repair``: the CLI over
`storage/integrity/integrity.py` and `storage/integrity/repair.py` (one line per finding; exit
status 0 when every fragment is readable). A database split in shards (`storage/shards.py`) is
checked and repaired shard by shard, each shard's lines after a ``shard N:`` line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from memgraph_plugin.storage import StorageSettings
from memgraph_plugin.storage.connect import connect_database, local_folder, unreachable
from memgraph_plugin.storage.integrity.integrity import check_database
from memgraph_plugin.storage.integrity.repair import repair_database
from memgraph_plugin.storage.shards import shard_uris
from memgraph_plugin.storage.tables import table_names


def _tables(settings: StorageSettings) -> list[str]:
    """The tables to check; an object store that cannot be reached is `STORAGE_UNREACHABLE`
    (`connect.unreachable`), not LanceDB's dump."""
    db = connect_database(settings)
    try:
        return table_names(db)
    except (OSError, ValueError, RuntimeError) as exc:
        if local_folder(settings.uri) is not None:
            raise
        raise unreachable(settings.uri, exc) from exc


async def _each_shard(
    settings: StorageSettings, one: Callable[[StorageSettings], Awaitable[int]]
) -> int:
    """`one` on each shard's settings (a ``shard N: URI`` line before each, with shards); the
    worst exit status."""
    uris = shard_uris(settings.uri)
    if len(uris) == 1:
        return await one(settings)
    worst = 0
    for i, uri in enumerate(uris):
        print(f"shard {i}: {uri}")
        worst = max(worst, await one(attrs.evolve(settings, uri=uri)))
    return worst


async def run_check(host: Any, settings: StorageSettings) -> int:
    """Print what `check_database` found in each shard; 1 when something is damaged."""
    return await _each_shard(settings, _check_one)


async def run_repair(host: Any, settings: StorageSettings) -> int:
    """Repair each shard, print every loss; 0 when every fragment reads afterwards."""
    return await _each_shard(settings, _repair_one)


async def _on_tables(run: Callable[..., Any], settings: StorageSettings) -> Any:
    """`run` (`check_database` or `repair_database`) over the configured tables, on a thread
    (listing the tables too: it connects to the database)."""

    def work() -> Any:
        pruned = settings.history_seconds is not None
        return run(settings.uri, _tables(settings), settings.storage_options, history_pruned=pruned)

    return await asyncio.to_thread(work)


async def _check_one(settings: StorageSettings) -> int:
    """Print what `check_database` found; 1 when something is damaged."""
    report = await _on_tables(check_database, settings)
    for line in report.lines():
        print(line)
    if not report.ok:
        affected = report.affected_chats()
        print("affected chats: " + (", ".join(repr(c) for c in affected) or "(unknown)"))
        print("run `memgraph-host repair` to bring every chat back to its newest intact state")
    return 0 if report.ok else 1


async def _repair_one(settings: StorageSettings) -> int:
    """Repair, print every loss; 0 when every fragment reads afterwards."""
    report = await _on_tables(repair_database, settings)
    for line in report.lines:
        print(line)
    if not report.after.ok:
        print("still damaged after repair:")
        for line in report.after.lines():
            print(f"  {line}")
        return 1
    return 0
