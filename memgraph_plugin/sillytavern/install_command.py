"""``memgraph-host sillytavern install USER_DIR``: put the extension into SillyTavern and say
which settings make it work (``docs/sillytavern.md``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from host.errors import CommandError
from host.plugin_commands import Command

DEFAULT_SERVER = "http://127.0.0.1:8765"
DEFAULT_ORIGIN = "http://127.0.0.1:8000"


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = actions.add_parser(
        "install", help="copy the extension into a SillyTavern user folder (default-user)"
    )
    install.add_argument(
        "user_dir", metavar="USER_DIR", type=Path,
        help="SillyTavern's user data folder, e.g. SillyTavern/data/default-user",
    )  # fmt: skip
    install.add_argument(
        "--origin", default=DEFAULT_ORIGIN,
        help=f"where SillyTavern's page is opened (default {DEFAULT_ORIGIN})",
    )  # fmt: skip
    install.add_argument(
        "--server", default=DEFAULT_SERVER,
        help=f"the memgraph server the extension calls (default {DEFAULT_SERVER})",
    )  # fmt: skip


def next_steps(origin: str, server: str) -> list[str]:
    """The settings that make the installed extension work, as printed after an install."""
    server = server.rstrip("/")
    return [
        "next:",
        "  1. start the memory server with SillyTavern's page origin allowed (its JSON API refuses",
        "     other pages' calls otherwise) and a token you choose:",
        "       memgraph-host serve --proxy-upstream YOUR_MODEL_URL/v1 \\",
        f"         --set http_cors_origins={origin} --set serve_token=YOUR_TOKEN",
        "  2. restart SillyTavern (or reload its page); in Extensions > Memgraph memory set",
        f"     Server URL {server} and Token YOUR_TOKEN",
        "  3. proxy mode: API Chat Completion, source Custom (OpenAI-compatible), Custom Endpoint",
        f"     {server}/v1; any other API or source: the extension injects memory itself (direct)",
    ]


def run_sillytavern(host: Any, args: argparse.Namespace) -> int:
    from .install import InstallError, install_extension

    try:
        installed = install_extension(args.user_dir)
    except InstallError as exc:
        raise CommandError(str(exc)) from None
    verb = "replaced the earlier copy in" if installed.replaced else "installed into"
    print(f"Memgraph memory extension {verb} {installed.target}")
    print(f"  files: {', '.join(installed.files)}")
    for line in next_steps(args.origin, args.server):
        print(line)
    return 0


def sillytavern_commands() -> list[Command]:
    return [
        Command("sillytavern", "install the SillyTavern extension (sillytavern install USER_DIR)",
                _arguments, run_sillytavern, start_host=False),
    ]  # fmt: skip
