"""The plugin's `memgraph-host` sub-commands: history, rollback, import, export, reindex, serve,
ingest."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from host.commands import Command
from host.console import print_json, print_table, progress
from memgraph_plugin.embedding.registry import UnknownProfileError, resolve_profile
from memgraph_plugin.engine.store_file import StoreFileError, anchor_store, read_store_file
from memgraph_plugin.engine.values import Limits
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.chat_cache import PersistedChats
from memgraph_plugin.storage.chat_lookup import require_chat
from memgraph_plugin.storage.errors import ConflictError
from memgraph_plugin.storage.factory import with_keyword_schema


def _settings(host: Any) -> Mapping[str, Any]:
    return getattr(host, "settings", None) or {}


def _schema(host: Any) -> Any:
    from memgraph_plugin.engine.schema import resolve_schema

    return resolve_schema(_settings(host).get("schema"))


def _store_cls() -> Any:
    from memgraph_plugin.engine.store import Store

    return Store


def open_storage(host: Any) -> LanceStorage:
    """The host's database (the running service's handle when there is one)."""
    from memgraph_plugin.service import memory_graph_for

    persistence = getattr(memory_graph_for(host), "persistence", None)
    if isinstance(persistence, PersistedChats):
        return persistence.storage
    settings = StorageSettings.from_settings(_settings(host), data_dir=host.data_dir)
    return LanceStorage(with_keyword_schema(settings, _schema(host)))


def _normalise(host: Any, data: Any) -> dict[str, Any]:
    """A store dict through the engine's own reader (validates, fills defaults)."""
    if not isinstance(data, Mapping):
        raise MemoryGraphError("BAD_ARGS", f"expected a JSON object, got {type(data).__name__}")
    store = _store_cls().from_dict(data, schema=_schema(host))
    return store.to_dict()


def _fail(message: str) -> int:
    print(f"memgraph-host: error: {message}", file=sys.stderr)
    return 2


# ------------------------------------------------------------------ history


def _add_history(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    p.add_argument("--limit", type=int, default=None, help="only the newest N commits")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def _history(host: Any, args: argparse.Namespace) -> int:
    storage = open_storage(host)
    require_chat(host, storage, args.chat)
    rows = [
        {
            "version": r.version,
            "seq": r.seq,
            "kind": r.kind,
            "applied": r.applied,
            "nodes": r.nodes_changed,
            "edges": r.edges_changed,
            "created_at": r.created_at,
        }
        for r in storage.history_sync(args.chat, limit=args.limit)
    ]
    if args.json:
        print_json(rows, lines=True)
        return 0
    if not rows:
        print(f"chat {args.chat!r} has no commits")
        return 0
    print_table(
        ["VERSION", "SEQ", "KIND", "APPLIED", "NODES", "EDGES", "CREATED"],
        [
            [
                *(r[k] for k in ("version", "seq", "kind", "applied", "nodes", "edges")),
                datetime.fromtimestamp(r["created_at"], UTC).strftime("%Y-%m-%d %H:%M:%S"),
            ]
            for r in rows
        ],
    )
    return 0


# ----------------------------------------------------------------- rollback


def _add_rollback(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--to", type=int, dest="version", help="the commit version to go back to")
    target.add_argument("--seq", type=int, help="go back to the state after message seq N")


def _running_service(host: Any) -> Any | None:
    """The host's running `MemoryGraph` when it persists (its commits fire `memgraph_commit`)."""
    from memgraph_plugin.service import memory_graph_for

    service = memory_graph_for(host)
    persisted = isinstance(getattr(service, "persistence", None), PersistedChats)
    return service if persisted and not service.closed else None


async def _rollback(host: Any, args: argparse.Namespace) -> int:
    service = _running_service(host)

    async def run() -> Any:
        if service is not None:
            return await service.rollback(args.chat, version=args.version, seq=args.seq)
        storage = _writable_storage(host)
        return storage.rollback_sync(args.chat, version=args.version, seq=args.seq)

    rec = await retry_conflicts(run)
    print(
        f"chat {args.chat!r} rolled back: new commit version {rec.version} "
        f"(seq {rec.seq}, {rec.applied} changes)"
    )
    return 0


def _writable_storage(host: Any) -> LanceStorage:
    """The database, set up so rollback/import commits carry vectors of the nodes they change
    when a profile is configured (vectors stay current on every write)."""
    storage = open_storage(host)
    if storage.embedder is None:
        profile = resolve_profile(_settings(host).get("embedding_profile"), host.pm)
        if profile is not None:
            from memgraph_plugin.embedding.embedder import NodeEmbedder

            storage.embedder = NodeEmbedder(profile, _schema(host))
    return storage


# ------------------------------------------------------------ import/export


#: How often a CLI writer (import, rollback) tries again when another writer committed first.
CONFLICT_ATTEMPTS = 5


async def retry_conflicts(
    run: Callable[[], Awaitable[Any]], attempts: int = CONFLICT_ATTEMPTS
) -> Any:
    """`run()`, again (with a short growing pause) while it raises `ConflictError`: another
    writer committed the chat first; each attempt starts from the chat's newest state."""
    for attempt in range(attempts):
        try:
            return await run()
        except ConflictError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _add_import(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    p.add_argument("file", help="a store in the original's JSON shape ('-' reads stdin)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="allow an empty graph to replace a chat that has nodes",
    )


def _message_seq(host: Any, chat_id: str) -> int:
    """The seq of the chat's newest message (what an import is anchored to)."""
    messages = host.chat(chat_id).messages if hasattr(host, "chat") else ()
    return messages[-1].seq if messages else 0


async def _import(host: Any, args: argparse.Namespace) -> int:
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc}")
    try:
        checked = read_store_file(raw, args.file, Limits.from_settings(_settings(host)))
    except StoreFileError as exc:  # every problem, one line each; the chat is untouched
        for line in exc.lines():
            print(f"memgraph-host: error: {line}", file=sys.stderr)
        return 2
    data = _normalise(host, checked)
    replace = getattr(args, "replace", False)
    if not data["nodes"] and not replace and open_storage(host).load_sync(args.chat).data["nodes"]:
        return _fail(
            f"{args.file}: the file holds an empty graph and chat {args.chat!r} has nodes; "
            "give --replace to empty it"
        )
    service = _running_service(host)

    async def run() -> Any:
        if service is not None:
            return await service.import_graph(args.chat, data)
        anchored = anchor_store(data, _message_seq(host, args.chat))
        return _writable_storage(host).import_sync(args.chat, anchored)

    rec = await retry_conflicts(run)
    print(
        f"imported {len(data['nodes'])} nodes and {len(data['edges'])} edges into chat "
        f"{args.chat!r}: commit version {rec.version}"
    )
    return 0


def _add_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    p.add_argument("--output", "-o", default="-", help="file to write ('-': stdout)")
    p.add_argument("--version", type=int, default=None, help="export an older version")


def _export(host: Any, args: argparse.Namespace) -> int:
    storage = open_storage(host)
    require_chat(host, storage, args.chat)
    if args.version is None:
        state = storage.load_sync(args.chat)
    else:
        state = storage.state_at_sync(args.chat, version=args.version)
    data = _normalise(host, state.data)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output == "-":
        sys.stdout.write(text + "\n")
    else:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(
            f"exported chat {args.chat!r} (version {state.version}) to {args.output}",
            file=sys.stderr,
        )
    return 0


# ------------------------------------------------------------------ reindex


def _add_reindex(p: argparse.ArgumentParser) -> None:
    p.add_argument("chats", nargs="*", help="chat ids (default: every chat)")


async def _reindex(host: Any, args: argparse.Namespace) -> int:
    try:
        profile = resolve_profile(_settings(host).get("embedding_profile"), host.pm)
    except UnknownProfileError as exc:
        return _fail(str(exc))
    if profile is None:
        return _fail("no embedding profile configured (set embedding_profile, e.g. 'hashing')")
    storage = open_storage(host)
    schema = _schema(host)
    store_cls = _store_cls()
    from memgraph_plugin.service import memory_graph_for

    running = getattr(memory_graph_for(host), "persistence", None)
    chats = (
        running
        if isinstance(running, PersistedChats) and running.profile
        else PersistedChats(
            storage,
            store_from_dict=lambda data: store_cls.from_dict(data, schema=schema),
            schema=schema,
            profile=profile,
        )
    )
    names = list(args.chats) or list(storage.chats_sync())
    for chat_id in names:
        with progress(f"reindex {chat_id}") as update:
            count = await chats.reindex(chat_id, update)
        print(f"chat {chat_id!r}: {count} nodes embedded with {profile.name!r}")
    return 0


# -------------------------------------------------------------------- serve


def _add_serve(p: argparse.ArgumentParser) -> None:
    from memgraph_plugin.web.commands import add_serve_arguments

    add_serve_arguments(p)


async def _serve(host: Any, args: argparse.Namespace) -> int:
    from memgraph_plugin.web.commands import serve

    schema, store_cls = _schema(host), _store_cls()
    return await serve(
        host, args, open_storage(host), lambda data: store_cls.from_dict(data, schema=schema)
    )


# ------------------------------------------------------------------- ingest


def _add_ingest(p: argparse.ArgumentParser) -> None:
    from memgraph_plugin.ingest.commands import add_ingest_arguments

    add_ingest_arguments(p)


async def _ingest(host: Any, args: argparse.Namespace) -> int:
    from memgraph_plugin.ingest.commands import run_ingest

    return await run_ingest(host, args)


def _no_args(p: argparse.ArgumentParser) -> None:
    return None


async def _check(host: Any, args: argparse.Namespace) -> int:
    from memgraph_plugin.tools.storage_checks import run_check

    return await run_check(
        host, StorageSettings.from_settings(_settings(host), data_dir=host.data_dir)
    )


async def _repair(host: Any, args: argparse.Namespace) -> int:
    from memgraph_plugin.tools.storage_checks import run_repair

    return await run_repair(
        host, StorageSettings.from_settings(_settings(host), data_dir=host.data_dir)
    )


def _guarded(run: Any) -> Any:
    """Report engine/storage errors as one clear line and exit code 2 (nothing is changed);
    other errors (``unknown chat``) go to the CLI, which prints them as one line too."""
    import asyncio
    import functools

    @functools.wraps(run)
    async def wrapper(host: Any, args: argparse.Namespace) -> int:
        try:
            result = run(host, args)
            if asyncio.iscoroutine(result):
                result = await result
            return int(result or 0)
        except MemoryGraphError as exc:
            return _fail(f"{exc.code}: {exc.message}")

    return wrapper


def commands() -> list[Command]:
    """The sub-commands contributed through `host_cli_commands`."""
    specs = [
        ("history", "list a chat's commits", _add_history, _history),
        (
            "rollback",
            "roll a chat back to a commit (--to) or a message seq (--seq)",
            _add_rollback,
            _rollback,
        ),
        ("import", "replace a chat's graph by a JSON store file", _add_import, _import),
        ("export", "print a chat's graph as JSON (the original's shape)", _add_export, _export),
        ("reindex", "re-embed chats with the configured embedding profile", _add_reindex, _reindex),
        ("serve", "a live graph explorer page over the data dir's chats", _add_serve, _serve),
        ("ingest", "replay a chat transcript through the live pipeline", _add_ingest, _ingest),
        ("check", "read every table and fragment; say what is damaged", _no_args, _check),
        ("repair", "bring chats back to their newest intact state", _no_args, _repair),
    ]
    return [Command(name, text, add, _guarded(run)) for name, text, add, run in specs]
