"""``memgraph-host serve`` (explorer + JSON memory API, and the proxy with ``--proxy-upstream``)
and ``memgraph-host proxy`` (proxy + JSON memory API): one app (`app.build_app`) on uvicorn in the
command's event loop, until Ctrl-C or SIGTERM (then the answers still being stored are stored)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.errors import CommandError

if TYPE_CHECKING:  # the web stack loads when a server starts (listing commands stays cheap)
    from memgraph_plugin.proxy.settings import ProxySettings


DEFAULT_PORT = 8765


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
        help="serve no write route (the explorer only shows the memory)",
    )


def add_proxy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--upstream", default=None, metavar="URL",
        help="the OpenAI-compatible base URL to forward to (default: setting proxy_upstream)",
    )  # fmt: skip
    parser.add_argument("--host", default=None, help="address to bind (setting proxy_host)")
    parser.add_argument("--port", type=int, default=None, help="port (setting proxy_port; 0: any)")


def _settings(owner: Any, **override: Any) -> ProxySettings:
    from memgraph_plugin.proxy.settings import ProxySettings, ProxySettingsError

    try:
        return ProxySettings.from_settings(owner.settings, **override)
    except ProxySettingsError as exc:
        raise CommandError(str(exc)) from None


async def _run(app: Any, sock: Any, announce: str, stop: Callable[[], Any] | None) -> int:
    from .server import SignalStoppedServer, uvicorn_server

    base = uvicorn_server(app)
    server = SignalStoppedServer(base.config)
    print(announce, flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        if stop is not None:
            await stop()
        sock.close()
    return 0


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
    reaches the server or a log."""
    from memgraph_plugin.proxy.chat_memory import ChatMemory
    from memgraph_plugin.proxy.completions import Proxy
    from memgraph_plugin.proxy.memory_api import MemoryApi
    from memgraph_plugin.proxy.settings import ProxySettingsError, require_key_off_loopback
    from memgraph_plugin.settings_keys import SERVE_TOKEN

    from .app import build_app
    from .explorer import GraphExplorer
    from .server import ExplorerRoutes, url_of

    settings = _settings(host, upstream=args.proxy_upstream)
    edits, token_line = _edit_routes(host, args, service)
    try:
        require_key_off_loopback(args.host, settings.api_key)
    except ProxySettingsError as exc:
        raise CommandError(str(exc)) from None
    explorer = ExplorerRoutes(GraphExplorer(storage, store_from_dict, host.data_dir))
    memory = ChatMemory(host)
    api = MemoryApi(
        host, memory, api_key=settings.api_key, versions=explorer.versions,
        memory_share=settings.context_memory_share,
    )  # fmt: skip
    proxy = Proxy(host, settings, memory) if args.proxy_upstream else None
    sock = _bind(args.host, args.port)
    app = build_app(
        explorer=explorer, memory_api=api, proxy=proxy, edits=edits, bound_host=args.host
    )
    url = url_of(sock)
    extra = f"; proxy {url}v1 -> {settings.upstream}" if proxy is not None else ""
    announce = f"memgraph explorer: {url}  (data dir {host.data_dir}{extra}; Ctrl-C stops)"
    announce += "\n" + token_line
    if edits is not None and not host.settings.get(SERVE_TOKEN.key):  # a token made here
        announce += f"\nopen to edit: {url}#token={edits.token}"
    return await _run(app, sock, announce, proxy.aclose if proxy is not None else memory.drain)


def _edit_routes(host: Any, args: argparse.Namespace, service: Any) -> tuple[Any, str]:
    """The explorer's write routes and the line ``serve`` prints about them: none with
    ``--read-only``; else guarded by ``serve_token`` (or a random token, printed). A
    non-loopback ``--host`` without ``serve_token`` set is refused."""
    from memgraph_plugin.proxy.settings import is_loopback
    from memgraph_plugin.settings_keys import SERVE_TOKEN

    from .edits import EditRoutes, new_token

    if getattr(args, "read_only", False):
        return None, "read-only: no edits"
    configured = host.settings.get(SERVE_TOKEN.key)
    if not is_loopback(args.host) and not configured:
        raise CommandError(
            f"refusing to serve edits on {args.host!r} (not loopback) without serve_token: set "
            "serve_token, or give --read-only"
        )
    if service is None:
        return None, "read-only: the memory graph is not running, no edits"
    token = str(configured) if configured else new_token()
    shown = "(serve_token)" if configured else token
    return EditRoutes(service, token), f"edit token (X-Memgraph-Token header): {shown}"


async def run_proxy(host: Any, args: argparse.Namespace) -> int:
    """``memgraph-host proxy``: the proxy and the JSON memory API until stopped."""
    from memgraph_plugin.proxy.chat_memory import ChatMemory
    from memgraph_plugin.proxy.completions import Proxy
    from memgraph_plugin.proxy.memory_api import MemoryApi
    from memgraph_plugin.proxy.settings import ProxySettingsError, require_key_off_loopback

    from .app import build_app
    from .server import url_of

    settings = _settings(host, upstream=args.upstream, host=args.host, port=args.port)
    if not settings.upstream:
        raise CommandError(
            "no upstream: give --upstream URL (e.g. http://127.0.0.1:11434/v1) or set "
            "proxy_upstream",
            exit_code=2,
        )
    try:
        require_key_off_loopback(settings.host, settings.api_key)
    except ProxySettingsError as exc:
        raise CommandError(str(exc)) from None
    memory = ChatMemory(host)
    proxy = Proxy(host, settings, memory)
    api = MemoryApi(
        host, memory, api_key=settings.api_key, memory_share=settings.context_memory_share
    )
    sock = _bind(settings.host, settings.port)
    app = build_app(memory_api=api, proxy=proxy, bound_host=settings.host)
    url = url_of(sock)
    announce = (
        f"memgraph proxy: {url}v1  (upstream {settings.upstream}; data dir {host.data_dir}; "
        "Ctrl-C stops)"
    )
    return await _run(app, sock, announce, proxy.aclose)


def _bind(address: str, port: int) -> Any:
    from .server import bind

    try:
        return bind(address, port)
    except OSError as exc:
        raise CommandError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
