"""``memgraph-host serve`` (explorer + JSON memory API, and the proxy with ``--proxy-upstream``)
and ``memgraph-host proxy`` (proxy + JSON memory API): one app (`app.build_app`) on uvicorn in the
command's event loop, until Ctrl-C or SIGTERM (then the answers still being stored are stored).
With ``--workers N`` the command supervises N processes serving the app on its port
(`workers.Supervisor`); each of them runs the command with ``--worker-fd``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.errors import CommandError
from host.settings.redaction import without_password

if TYPE_CHECKING:  # the web stack loads when a server starts (listing commands stays cheap)
    from memgraph_plugin.proxy.settings import ProxySettings


DEFAULT_PORT = 8765


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workers N`` and the children's hidden ``--worker-fd FD`` (`workers`)."""
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N",
        help="serve with N processes on the one port (default 1); each chat's requests go to "
        "one of them, and a process that ends is started again",
    )  # fmt: skip
    parser.add_argument("--worker-fd", type=int, default=None, help=argparse.SUPPRESS)


def _check_workers(args: argparse.Namespace) -> int:
    count = int(getattr(args, "workers", 1))
    if count < 1:
        raise CommandError(f"--workers must be 1 or more, got {count}", exit_code=2)
    return count


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    parser.add_argument(
        "--proxy-upstream",
        default=None,
        metavar="URL",
        help="also serve the memory proxy at /v1, forwarding to this OpenAI-compatible base URL",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="serve no write route (no edits, no JSON API messages/forget); not with "
        "--proxy-upstream (the proxy stores every turn)",
    )
    add_worker_arguments(parser)


def add_proxy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--upstream", default=None, metavar="URL",
        help="the OpenAI-compatible base URL to forward to (default: setting proxy_upstream)",
    )  # fmt: skip
    parser.add_argument("--host", default=None, help="address to bind (setting proxy_host)")
    parser.add_argument("--port", type=int, default=None, help="port (setting proxy_port; 0: any)")
    add_worker_arguments(parser)


def _settings(owner: Any, **override: Any) -> ProxySettings:
    from memgraph_plugin.proxy.settings import ProxySettings, ProxySettingsError

    try:
        return ProxySettings.from_settings(owner.settings, **override)
    except ProxySettingsError as exc:
        raise CommandError(str(exc)) from None


def _http_settings(owner: Any) -> Any:
    from .settings import HttpSettings, HttpSettingsError

    try:
        return HttpSettings.from_settings(owner.settings)
    except HttpSettingsError as exc:
        raise CommandError(str(exc), exit_code=2) from None


def _keys(owner: Any, settings: ProxySettings, address: str) -> Any:
    """The server's keys (`proxy_api_key` and ``namespace_keys_file``); a bad keys file, or a
    non-loopback `address` with no key at all, is a `CommandError`."""
    from memgraph_plugin.proxy.guard.access_keys import AccessKeys, AccessKeysError
    from memgraph_plugin.proxy.settings import ProxySettingsError, require_key_off_loopback

    try:
        keys = AccessKeys.from_settings(owner.settings, settings.api_key)
    except AccessKeysError as exc:
        raise CommandError(str(exc), exit_code=2) from None
    try:
        require_key_off_loopback(address, "set" if keys.any else None)
    except ProxySettingsError as exc:
        raise CommandError(str(exc)) from None
    return keys


def _keys_line(keys: Any) -> str:
    """What a start line says of the keys (how many, never which)."""
    if not keys.any:
        return ""
    return f"; {len(keys.entries)} access key{'s' if len(keys.entries) != 1 else ''}"


def _write_token(owner: Any, args: argparse.Namespace | None = None) -> tuple[str, str]:
    """The write token (``serve_token``, else a random one; a worker process: its parent's,
    from stdin) and how the start line shows it."""
    from memgraph_plugin.settings_keys import HTTP

    from .edits import new_token

    configured = owner.settings.get(HTTP.serve_token.name)
    if args is not None and getattr(args, "worker_fd", None) is not None:
        from .workers import WorkerStartError, read_token

        try:
            token = read_token()
        except WorkerStartError as exc:
            raise CommandError(str(exc), exit_code=2) from None
        return token, "(serve_token)" if configured else token
    if configured:
        return str(configured), "(serve_token)"
    token = new_token()
    return token, token


async def _run(
    app: Any, sock: Any, announce: str, stop: Callable[[], Any] | None, *, worker: bool = False
) -> int:
    """Serve `app` on `sock` until stopped, then `stop()`. The start line (`announce`) is
    printed here, or, in a worker process, the ready line its parent waits for."""
    from .server import SignalStoppedServer, uvicorn_server

    base = uvicorn_server(app)
    server = SignalStoppedServer(base.config)
    if worker:
        from .workers import WORKER_HEADER, announce_ready, stop_when_parent_goes

        server.config.headers = [(WORKER_HEADER, str(os.getpid()))]
        stop_when_parent_goes(server)
        announce_ready()
    else:
        print(announce, flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        if stop is not None:
            await stop()
        sock.close()
    return 0


async def _supervise(host: Any, sock: Any, count: int, token: str, announce: str) -> int:
    """``--workers N``: N processes serve `sock` (`workers.Supervisor`), each running this
    process's command line (``sys.argv``: the ``memgraph-host`` program's); the start line,
    with their pids, once every one is ready. A new local database is split in N shards first
    (`storage.shards.plan_shards`), so each process writes tables of its own."""
    from memgraph_plugin.storage import StorageSettings
    from memgraph_plugin.storage.shards import plan_shards

    from .workers import Supervisor, WorkerStartError

    plan_shards(StorageSettings.from_settings(host.settings, data_dir=host.data_dir).uri, count)

    def started(pids: list[int]) -> None:
        shown = ", ".join(str(p) for p in pids)
        print(f"{announce}\n{len(pids)} worker processes: {shown}", flush=True)

    try:
        return await Supervisor(sock, count, token, sys.argv[1:]).run(started)
    except WorkerStartError as exc:
        raise CommandError(f"{exc}; its error is above") from None
    finally:
        sock.close()


async def serve(
    host: Any,
    args: argparse.Namespace,
    storage: Any,
    store_from_dict: Callable[[dict[str, Any]], Any],
    service: Any = None,
) -> int:
    """Explorer + API (+ proxy) until stopped; prints the page's address first (one line), and
    the edit token on the next unless ``--read-only`` (`edits.EditRoutes`), then (a token made
    here) the page's address with it in the fragment, ready to open: the fragment never
    reaches the server or a log. The token guards the JSON API's writes too; ``--read-only``
    mounts no write route, and is refused with ``--proxy-upstream``."""
    from memgraph_plugin.proxy.completions import Proxy
    from memgraph_plugin.proxy.ledger.chat_memory import ChatMemory
    from memgraph_plugin.proxy.memory_api import MemoryApi
    from memgraph_plugin.settings_keys import HTTP

    from .app import build_app
    from .explorer import GraphExplorer
    from .server import ExplorerRoutes, url_of

    if args.read_only and args.proxy_upstream:
        raise CommandError(
            "--read-only cannot go with --proxy-upstream: the proxy stores every turn; serve "
            "the proxy without --read-only, or the read-only explorer without the proxy",
            exit_code=2,
        )
    count = _check_workers(args)
    settings = _settings(host, upstream=args.proxy_upstream)
    http = _http_settings(host)
    edits, token, token_line = _edit_routes(host, args, service)
    keys = _keys(host, settings, args.host)
    sock = _socket(args, args.host, args.port)
    url = url_of(sock)
    shown = without_password(settings.upstream or "")
    extra = (f"; proxy {url}v1 -> {shown}" if args.proxy_upstream else "") + _keys_line(keys)
    announce = f"memgraph explorer: {url}  (data dir {host.data_dir}{extra}; Ctrl-C stops)"
    announce += "\n" + token_line
    if token is not None and edits is not None and not host.settings.get(HTTP.serve_token.name):
        announce += f"\nopen to edit: {url}#token={token}"  # a token made here
    if count > 1 and args.worker_fd is None:
        return await _supervise(host, sock, count, token or "", announce)
    explorer = ExplorerRoutes(GraphExplorer(storage, store_from_dict, host.data_dir))
    memory = ChatMemory(host)
    api = MemoryApi(
        host, memory, token=token, read_only=args.read_only, versions=explorer.versions,
        memory_share=settings.context_memory_share,
    )  # fmt: skip
    proxy = Proxy(host, settings, memory) if args.proxy_upstream else None
    app = build_app(
        explorer=explorer, memory_api=api, proxy=proxy, edits=edits, bound_host=args.host,
        http=http, keys=keys,
    )  # fmt: skip
    stop = proxy.aclose if proxy is not None else memory.drain
    return await _run(app, sock, announce, stop, worker=args.worker_fd is not None)


def _edit_routes(
    host: Any, args: argparse.Namespace, service: Any
) -> tuple[Any, str | None, str]:
    """The explorer's write routes, the write token and the line ``serve`` prints about them:
    none with ``--read-only``; else guarded by ``serve_token`` (or a random token, printed) or
    a key that may write. A non-loopback ``--host`` without ``serve_token`` set is refused."""
    from memgraph_plugin.proxy.settings import is_loopback
    from memgraph_plugin.settings_keys import HTTP

    from .edits import EditRoutes

    if getattr(args, "read_only", False):
        return None, None, "read-only: no write route"
    if not is_loopback(args.host) and not host.settings.get(HTTP.serve_token.name):
        raise CommandError(
            f"refusing to serve edits on {args.host!r} (not loopback) without serve_token: set "
            "serve_token, or give --read-only"
        )
    token, shown = _write_token(host, args)
    line = f"edit token (X-Memgraph-Token header): {shown}"
    if service is None:
        return None, token, "the memory graph is not running: no edits; " + line
    return EditRoutes(service, token), token, line


async def run_proxy(host: Any, args: argparse.Namespace) -> int:
    """``memgraph-host proxy``: the proxy and the JSON memory API until stopped."""
    from memgraph_plugin.proxy.completions import Proxy
    from memgraph_plugin.proxy.ledger.chat_memory import ChatMemory
    from memgraph_plugin.proxy.memory_api import MemoryApi

    from .app import build_app
    from .server import url_of

    settings = _settings(host, upstream=args.upstream, host=args.host, port=args.port)
    if not settings.upstream:
        raise CommandError(
            "no upstream: give --upstream URL (e.g. http://127.0.0.1:11434/v1) or set "
            "proxy_upstream",
            exit_code=2,
        )
    keys = _keys(host, settings, settings.host)
    count = _check_workers(args)
    http = _http_settings(host)
    token, shown = _write_token(host, args)
    sock = _socket(args, settings.host, settings.port)
    url = url_of(sock)
    announce = (
        f"memgraph proxy: {url}v1  (upstream {without_password(settings.upstream)}; "
        f"data dir {host.data_dir}{_keys_line(keys)}; Ctrl-C stops)\n"
        f"write token for the JSON API (X-Memgraph-Token header): {shown}"
    )
    if count > 1 and args.worker_fd is None:
        return await _supervise(host, sock, count, token, announce)
    memory = ChatMemory(host)
    proxy = Proxy(host, settings, memory)
    api = MemoryApi(host, memory, token=token, memory_share=settings.context_memory_share)
    app = build_app(memory_api=api, proxy=proxy, bound_host=settings.host, http=http, keys=keys)
    return await _run(app, sock, announce, proxy.aclose, worker=args.worker_fd is not None)


def _socket(args: argparse.Namespace, address: str, port: int) -> Any:
    """The listening socket: the one a worker process inherited (``--worker-fd``), else bound
    here."""
    fd = getattr(args, "worker_fd", None)
    if fd is not None:
        from .workers import inherited_socket

        return inherited_socket(fd)
    return _bind(address, port)


def _bind(address: str, port: int) -> Any:
    from .server import bind

    try:
        return bind(address, port)
    except OSError as exc:
        raise CommandError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
