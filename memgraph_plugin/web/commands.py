"""``memgraph-host serve``: run the explorer over the host's data dir until interrupted."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

from .explorer import GraphExplorer
from .server import start_server

DEFAULT_PORT = 8765


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )


async def serve(
    host: Any,
    args: argparse.Namespace,
    storage: Any,
    store_from_dict: Callable[[dict[str, Any]], Any],
) -> int:
    """Serve until Ctrl-C; prints the page's address first (one line, flushed)."""
    explorer = GraphExplorer(storage, store_from_dict, host.data_dir)
    server, _ = start_server(explorer, host=args.host, port=args.port)
    print(f"memgraph explorer: {server.url}  (data dir {host.data_dir}; Ctrl-C stops)", flush=True)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        pass
    finally:
        server.stop()
    return 0
