"""The plugin's `memgraph-host` sub-commands: history, rollback, import, fork, export, reindex,
serve, ingest.

The plugin hands `commands` the function that gives the service it runs on the host
(`plugin.running_service`); each command is run with that service. ``history``, ``rollback``
and ``import`` go through it; the others read the database through its storage handle. This is
the CLI's edge: a chat id named on the command line is checked here once (`checked_chat_id`)
when the service does not check it itself, and the chats layer's `UnknownChatError` becomes the
CLI's `CommandError`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from host.cli.console import print_json, print_table, progress
from host.cli.namespace_option import add_namespace_option
from host.errors import CommandError
from host.plugin_commands import Command
from memgraph_plugin.errors import MemoryGraphError

if TYPE_CHECKING:  # the commands load what they use when they run: listing them stays cheap
    from memgraph_plugin.engine.model.values import Limits
    from memgraph_plugin.service import MemoryGraph
    from memgraph_plugin.storage.lance import LanceStorage

#: What the plugin hands `commands`: the service it runs on a host (None: not running).
ServiceOf = Callable[[Any], "MemoryGraph | None"]
#: A command's work: ``(host, args, service) -> exit code``.
ServiceRun = Callable[[Any, argparse.Namespace, "MemoryGraph | None"], Any]


def _settings(host: Any) -> Mapping[str, Any]:
    return getattr(host, "settings", None) or {}


def _schema(host: Any) -> Any:
    from memgraph_plugin.engine.model.schema import resolve_schema

    return resolve_schema(_settings(host).get("schema"))


def _store_cls() -> Any:
    from memgraph_plugin.engine.graph.store import Store

    return Store


def open_storage(host: Any, service: MemoryGraph | None = None) -> LanceStorage:
    """The host's database: the running `service`'s handle when there is one."""
    from memgraph_plugin.chats.chat_cache import PersistedChats
    from memgraph_plugin.chats.factory import with_keyword_schema
    from memgraph_plugin.storage.settings import StorageSettings
    from memgraph_plugin.storage.shards import open_storage as open_shards

    persistence = getattr(service, "persistence", None)
    if isinstance(persistence, PersistedChats):
        return persistence.storage
    from host.chats.chat_ids import chat_id_problem

    settings = StorageSettings.from_settings(_settings(host), data_dir=host.data_dir)
    return open_shards(with_keyword_schema(settings, _schema(host)), chat_id_rule=chat_id_problem)


def _normalise(host: Any, data: Any) -> dict[str, Any]:
    """A store dict through the engine's own reader (validates, fills defaults)."""
    if not isinstance(data, Mapping):
        raise MemoryGraphError("BAD_ARGS", f"expected a JSON object, got {type(data).__name__}")
    store = _store_cls().from_dict(data, schema=_schema(host))
    return store.to_dict()


def _fail(message: str) -> int:
    """A user error (docs/cli.md: exit status 1), said in one line."""
    print(f"memgraph-host: error: {message}", file=sys.stderr)
    return 1


# ------------------------------------------------------------------ history


def _add_history(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    add_namespace_option(p)
    p.add_argument("--limit", type=int, default=None, help="only the newest N commits")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


async def _history(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.chats.chat_lookup import require_chat

    records = await _running(service).history(args.chat, limit=args.limit)  # checks the id
    if not records:
        require_chat(host, open_storage(host, service), args.chat)
    rows = [
        {
            "version": r.version,
            "seq": r.seq,
            "kind": r.kind,
            "applied": r.applied,
            "nodes": r.nodes_changed,
            "edges": r.edges_changed,
            "created_at": r.created_at,
            "note": r.note,
        }
        for r in records
    ]
    if args.json:
        print_json(rows, lines=True)
        return 0
    if not rows:
        print(f"chat {args.chat!r} has no commits")
        return 0
    print_table(
        ["VERSION", "SEQ", "KIND", "APPLIED", "NODES", "EDGES", "CREATED", "NOTE"],
        [
            [
                *(r[k] for k in ("version", "seq", "kind", "applied", "nodes", "edges")),
                datetime.fromtimestamp(r["created_at"], UTC).strftime("%Y-%m-%d %H:%M:%S"),
                r["note"],
            ]
            for r in rows
        ],
    )
    return 0


# ----------------------------------------------------------------- rollback


def _add_rollback(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    add_namespace_option(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--to", type=int, dest="version", help="the commit version to go back to")
    target.add_argument(
        "--seq", type=int, help="go back to the state after the messages of seq N (N >= 0)"
    )


def _running(service: MemoryGraph | None) -> MemoryGraph:
    """The service a command writes or reads history through (its commits persist and fire
    ``memgraph_commit``); ``OP_FAILED`` when the memory graph is not running on the host."""
    if service is None or service.closed:
        raise MemoryGraphError("OP_FAILED", "the memory graph is not running on this host")
    return service


async def _rollback(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    """Roll a known chat back through the service (`rollback_target`: a target past the chat
    or below 0 is refused, and a target that is the chat's state already makes no commit)."""
    from memgraph_plugin.chats.chat_lookup import require_chat
    from memgraph_plugin.versions.chat_versions import checked_chat_id
    from memgraph_plugin.versions.rollback_target import checked_target

    graph = _running(service)
    checked_target(args.version, args.seq)  # a bad target is refused before the chat is looked up
    require_chat(host, open_storage(host, service), checked_chat_id(args.chat))

    async def run() -> Any:
        return await graph.rollback(args.chat, version=args.version, seq=args.seq)

    rec = await retry_conflicts(run)
    if rec is None:
        print(f"chat {args.chat!r} is in that state already: nothing rolled back, no commit")
        return 0
    print(
        f"chat {args.chat!r} rolled back: new commit version {rec.version} "
        f"(seq {rec.seq}, {rec.applied} changes)"
    )
    return 0


# ------------------------------------------------------------ import/export


#: How often a CLI writer (import, rollback) tries again when another writer committed first.
CONFLICT_ATTEMPTS = 5


async def retry_conflicts(
    run: Callable[[], Awaitable[Any]], attempts: int = CONFLICT_ATTEMPTS
) -> Any:
    """`run()`, again (with a short growing pause) while it raises `ConflictError`: another
    writer committed the chat first; each attempt starts from the chat's newest state."""
    from memgraph_plugin.storage.errors import ConflictError

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
    add_namespace_option(p)
    p.add_argument("file", help="a store in the contract's JSON shape ('-' reads stdin)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="allow an empty graph to replace a chat that has nodes",
    )


async def _import(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.engine.load import gc_paused
    from memgraph_plugin.engine.model.values import Limits

    graph = _running(service)
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc}")
    # One collector pause from the file's parse to the commit: the parse alone makes about ten
    # objects per node and edge, none in a cycle, which the collector otherwise walked again
    # and again as they piled up (a 100k-node file: 1.1 -> 0.7 s to parse). The pause ends
    # once they are dropped, so its closing collection walks what outlives the import only.
    with gc_paused():
        read = await _import_file(graph, args, raw, Limits.from_settings(_settings(host)))
        del raw
    if isinstance(read, int):
        return read
    nodes, edges, version = read
    print(
        f"imported {nodes} nodes and {edges} edges into chat {args.chat!r}: "
        f"commit version {version}"
    )
    return 0


async def _import_file(
    graph: MemoryGraph, args: argparse.Namespace, raw: bytes, limits: Limits
) -> tuple[int, int, int] | int:
    """Check store file `raw` and import it into the chat: (nodes, edges, commit version), or
    the command's exit status when it cannot (every problem printed, the chat untouched)."""
    from memgraph_plugin.engine.load.store_file import StoreFileError, read_normal_store
    from memgraph_plugin.versions.chat_versions import checked_chat_id

    try:
        # checked and normalised once, in one pass: import_graph takes the normal form as it is
        # (a NormalStore), and anchors it
        data = read_normal_store(raw, args.file, limits)
    except StoreFileError as exc:  # every problem, one line each; the chat is untouched
        for line in exc.lines():
            print(f"memgraph-host: error: {line}", file=sys.stderr)
        return 1
    replace = getattr(args, "replace", False)
    if not data["nodes"] and not replace:
        held = await graph.store_for(checked_chat_id(args.chat))
        if any(True for _ in held.node_ids()):
            return _fail(
                f"{args.file}: the file holds an empty graph and chat {args.chat!r} has nodes; "
                "give --replace to empty it"
            )

    async def run() -> Any:
        return await graph.import_graph(args.chat, data)

    rec = await retry_conflicts(run)
    return len(data["nodes"]), len(data["edges"]), rec.version


def _add_fork(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", help="the chat whose memory the new chat starts with")
    p.add_argument("new", help="the new chat's id (no graph and no messages yet)")
    add_namespace_option(p)
    p.add_argument(
        "--upto", type=int, default=None, help="SRC's graph as of message seq N (default: newest)"
    )


async def _fork(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    """Start chat NEW with chat SRC's graph (`MemoryGraph.fork`): one ``fork`` commit."""
    from memgraph_plugin.chats.chat_lookup import require_chat
    from memgraph_plugin.versions.chat_versions import checked_chat_id

    graph = _running(service)
    require_chat(host, open_storage(host, service), checked_chat_id(args.src))
    rec = await graph.fork(args.src, args.new, upto=args.upto)
    print(
        f"forked chat {args.src!r} into {args.new!r}: {len(rec.node_ids)} nodes, "
        f"{rec.edges_added} edges, commit version {rec.version}"
    )
    return 0


def _add_export(p: argparse.ArgumentParser) -> None:
    p.add_argument("chat", help="chat id")
    add_namespace_option(p)
    p.add_argument("--output", "-o", default="-", help="file to write ('-': stdout)")
    p.add_argument("--version", type=int, default=None, help="export an older version")


def _export(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.chats.chat_lookup import require_chat
    from memgraph_plugin.versions.chat_versions import checked_chat_id

    storage = open_storage(host, service)
    require_chat(host, storage, checked_chat_id(args.chat))
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
    add_namespace_option(p)


async def _reindex(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.chats.chat_cache import PersistedChats
    from memgraph_plugin.embedding.registry import UnknownProfileError, resolve_profile
    from memgraph_plugin.versions.chat_versions import checked_chat_id

    try:
        profile = resolve_profile(_settings(host).get("embedding_profile"), host.pm)
    except UnknownProfileError as exc:
        return _fail(str(exc))
    if profile is None:
        return _fail("no embedding profile configured (set embedding_profile, e.g. 'hashing')")
    storage = open_storage(host, service)
    schema = _schema(host)
    store_cls = _store_cls()
    running = getattr(service, "persistence", None)
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
    names = [checked_chat_id(c) for c in args.chats] or list(storage.chats_sync())
    for chat_id in names:
        with progress(f"reindex {chat_id}") as update:
            count = await chats.reindex(chat_id, update)
        print(f"chat {chat_id!r}: {count} nodes embedded with {profile.name!r}")
    return 0


# -------------------------------------------------------------------- serve


def _add_serve(p: argparse.ArgumentParser) -> None:
    from memgraph_plugin.web.serve_commands import add_serve_arguments

    add_serve_arguments(p)


async def _serve(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.web.serve_commands import serve

    schema, store_cls = _schema(host), _store_cls()
    return await serve(
        host,
        args,
        open_storage(host, service),
        lambda data: store_cls.from_dict(data, schema=schema),
        service,
    )


def _add_proxy(p: argparse.ArgumentParser) -> None:
    from memgraph_plugin.web.serve_commands import add_proxy_arguments

    add_proxy_arguments(p)


async def _proxy(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.web.serve_commands import run_proxy

    return await run_proxy(host, args)


# ------------------------------------------------------------------- ingest


def _add_ingest(p: argparse.ArgumentParser) -> None:
    from memgraph_plugin.ingest.ingest_command import add_ingest_arguments

    add_ingest_arguments(p)


async def _ingest(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from memgraph_plugin.ingest.ingest_command import run_ingest

    return await run_ingest(host, args)


async def _check(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from host.cli.namespace_option import scope_of
    from memgraph_plugin.storage.settings import StorageSettings
    from memgraph_plugin.tools.storage_checks import run_check

    return await run_check(
        host,
        StorageSettings.from_settings(_settings(host), data_dir=host.data_dir),
        scope_of(args),
    )


async def _repair(host: Any, args: argparse.Namespace, service: MemoryGraph | None) -> int:
    from host.cli.namespace_option import scope_of
    from memgraph_plugin.storage.settings import StorageSettings
    from memgraph_plugin.tools.storage_checks import run_repair

    return await run_repair(
        host,
        StorageSettings.from_settings(_settings(host), data_dir=host.data_dir),
        scope_of(args),
    )


def _guarded(run: ServiceRun, service_of: ServiceOf) -> Any:
    """The command's ``run(host, args)``: the work with the service `service_of` gives then.
    Engine/storage errors are one clear line and exit code 1 (nothing is changed); an unknown
    chat is the CLI's `CommandError` (the CLI prints it as one line too)."""
    import functools

    from memgraph_plugin.chats.chat_lookup import UnknownChatError

    @functools.wraps(run)
    async def wrapper(host: Any, args: argparse.Namespace) -> int:
        try:
            result = run(host, args, service_of(host))
            if asyncio.iscoroutine(result):
                result = await result
            return int(result or 0)
        except MemoryGraphError as exc:  # the message says what was wrong; the code is for programs
            return _fail(exc.message)
        except UnknownChatError as exc:
            raise CommandError(str(exc)) from None

    return wrapper


_ROLLBACK_HELP = "roll a chat back to a commit (--to) or a message seq (--seq)"
_SERVE_HELP = "the graph explorer page and the JSON memory API (and the proxy: --proxy-upstream)"


def commands(service_of: ServiceOf) -> list[Command]:
    """The sub-commands contributed through `host_cli_commands`; `service_of(host)` gives the
    service the plugin runs on the host when a command runs."""
    specs = [
        ("history", "list a chat's commits", _add_history, _history),
        ("rollback", _ROLLBACK_HELP, _add_rollback, _rollback),
        ("import", "replace a chat's graph by a JSON store file", _add_import, _import),
        ("fork", "start a new chat with another chat's memory", _add_fork, _fork),
        ("export", "print a chat's graph as JSON (the contract's shape)", _add_export, _export),
        ("reindex", "re-embed chats with the configured embedding profile", _add_reindex, _reindex),
        ("serve", _SERVE_HELP, _add_serve, _serve),
        ("proxy", "an OpenAI-compatible memory proxy in front of --upstream", _add_proxy, _proxy),
        ("ingest", "replay a chat transcript through the live pipeline", _add_ingest, _ingest),
        (
            "check",
            "read every table and fragment; say what is damaged",
            add_namespace_option,
            _check,
        ),
        (
            "repair",
            "bring chats back to their newest intact state",
            add_namespace_option,
            _repair,
        ),
    ]
    return [Command(name, text, add, _guarded(run, service_of)) for name, text, add, run in specs]
