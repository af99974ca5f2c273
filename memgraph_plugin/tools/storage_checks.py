"""``memgraph-host check`` and ``memgraph-host repair``: the CLI over
`storage/integrity/integrity.py` and `storage/integrity/repair.py` (one line per finding; exit
status 0 when every fragment is readable). A database split in shards (`storage/shards.py`) is
checked and repaired shard by shard, each shard's lines after a ``shard N:`` line.

With ``--namespace NAME`` both still read every table (a damaged file holds rows of any chat,
and a scan of its table fails for every chat until it is repaired), but they name only that
namespace's chats, by their ids in it, and count the others. ``repair --namespace`` repairs
only when the damage touches no chat outside the namespace (dropping a damaged fragment changes
every chat with rows in it); otherwise it changes nothing and says to run ``repair`` without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from host.chats.namespaces import ChatScope
from memgraph_plugin.storage import StorageSettings
from memgraph_plugin.storage.database.connect import connect_database, local_folder, unreachable
from memgraph_plugin.storage.database.tables import table_names
from memgraph_plugin.storage.integrity.integrity import IntegrityReport, check_database
from memgraph_plugin.storage.integrity.repair import repair_database
from memgraph_plugin.storage.shards import shard_uris


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


def _outside(report: IntegrityReport, scope: ChatScope) -> list[str]:
    """The chats the damage touches that are not `scope`'s."""
    return [c for c in report.affected_chats() if not scope.owns(c)]


def _within(report: IntegrityReport, scope: ChatScope) -> IntegrityReport:
    """`report` with only `scope`'s chats, named by their ids in it."""
    return attrs.evolve(
        report,
        chats=tuple(
            attrs.evolve(c, chat_id=scope.external(c.chat_id))
            for c in report.chats
            if scope.owns(c.chat_id)
        ),
        snapshot_chats=tuple(scope.external(c) for c in report.snapshot_chats if scope.owns(c)),
        unheaded=tuple(
            (scope.external(chat), first, snap)
            for chat, first, snap in report.unheaded
            if scope.owns(chat)
        ),
    )


def _renamed(line: str, report: IntegrityReport, scope: ChatScope) -> str:
    """`line` with each of `scope`'s affected chats (quoted, as the reports name chats) named
    by its id in the namespace."""
    for chat in report.affected_chats():
        if scope.prefix and scope.owns(chat):
            line = line.replace(repr(chat), repr(scope.external(chat)))
    return line


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


async def run_check(host: Any, settings: StorageSettings, scope: ChatScope | None = None) -> int:
    """Print what `check_database` found (of `scope`'s chats) in each shard; 1 when something is
    damaged."""
    return await _each_shard(settings, lambda s: _check_one(s, scope or ChatScope.everything()))


async def run_repair(host: Any, settings: StorageSettings, scope: ChatScope | None = None) -> int:
    """Repair each shard, print every loss; 0 when every fragment reads afterwards. Of `scope`'s
    chats only: refused (1, nothing changed) when the damage touches chats outside it."""
    return await _each_shard(settings, lambda s: _repair_one(s, scope or ChatScope.everything()))


async def _check_one(settings: StorageSettings, scope: ChatScope) -> int:
    """Print what `check_database` found (of `scope`'s chats); 1 when something is damaged."""

    def work() -> Any:
        return check_database(
            settings.uri,
            _tables(settings),
            settings.storage_options,
            history_pruned=settings.history_seconds is not None,
        )

    full = await asyncio.to_thread(work)
    report = _within(full, scope)
    for line in report.lines():
        print(line)
    if not report.ok:
        affected = report.affected_chats()
        others = _outside(full, scope)
        none = f"none of namespace {scope.namespace!r}" if others else "(unknown)"
        print("affected chats: " + (", ".join(repr(c) for c in affected) or none))
        if others:
            print(f"and {len(others)} chat(s) outside namespace {scope.namespace!r}")
        print("run `memgraph-host repair` to bring every chat back to its newest intact state")
    return 0 if report.ok else 1


async def _repair_one(settings: StorageSettings, scope: ChatScope) -> int:
    """Repair, print every loss; 0 when every fragment reads afterwards. Of `scope`'s chats
    only: refused (1, nothing changed) when the damage touches chats outside it."""
    history_pruned = settings.history_seconds is not None

    def work() -> Any:
        tables = _tables(settings)
        if scope.namespace is not None:
            found = check_database(
                settings.uri, tables, settings.storage_options, history_pruned=history_pruned
            )
            refusal = _refusal(found, scope)
            if refusal is not None:
                return refusal
        return repair_database(
            settings.uri, tables, settings.storage_options, history_pruned=history_pruned
        )

    report = await asyncio.to_thread(work)
    if isinstance(report, str):
        print(report)
        return 1
    for line in report.lines:
        print(_renamed(line, report.before, scope))
    if not report.after.ok:
        print("still damaged after repair:")
        for line in report.after.lines():
            print(f"  {_renamed(line, report.after, scope)}")
        return 1
    return 0


def _refusal(report: IntegrityReport, scope: ChatScope) -> str | None:
    """Why ``repair --namespace`` must not run on `report`'s damage (None: it may)."""
    others = _outside(report, scope)
    unplaced = report.unplaced_commit_rows()
    if not others and not unplaced:
        return None
    reasons = []
    if others:
        reasons.append(f"{len(others)} chat(s) outside namespace {scope.namespace!r}")
    if unplaced:
        reasons.append(f"{unplaced} lost commit row(s) of chats it cannot name")
    return (
        f"repair --namespace {scope.namespace}: the damage also touches "
        + " and ".join(reasons)
        + "; nothing changed: run `memgraph-host repair` without --namespace"
    )
