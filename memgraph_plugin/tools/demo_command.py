"""``memgraph-host demo [--fresh]``: the command that runs the sample story (`tools.demo`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from host.plugin_commands import Command

from .demo import DEFAULT_DATA, STORY_PATH, DemoError, run_demo

CLI_DEFAULT_DATA_DIR = ".memgraph"  # the global --data-dir's default (host/cli/cli.py)


def _demo_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("--fresh", action="store_true", help="start over (wipe the demo folder)")
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="demo folder (default: the global --data-dir when given, else ./demo-data)",
    )
    parser.add_argument("--story", type=Path, default=STORY_PATH, help="story JSON file")
    parser.add_argument("--turns", type=int, default=None, help="stop after this many turns")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="replay the story's recorded ops instead of extracting the raw text",
    )


def demo_folder(args: argparse.Namespace) -> Path:
    """``--data``, else the global ``--data-dir`` when it was given on the command line (it
    differs from the CLI's default), else ``./demo-data``: the demo never silently writes
    somewhere other than the folder the user named."""
    from host.cli.cli import DATA_DIR_ENV

    if args.data is not None:
        return args.data
    given = getattr(args, "data_dir", None)
    if given is not None and str(given) != os.environ.get(DATA_DIR_ENV, CLI_DEFAULT_DATA_DIR):
        return Path(given)
    return DEFAULT_DATA


async def run_demo_command(host: Any, args: argparse.Namespace) -> int:
    """Run the demo on its own host (the CLI's host is not started for it)."""
    from memgraph_plugin.turn.story import StoryError

    if args.turns is not None and args.turns < 1:
        print("memgraph-host demo: --turns must be at least 1", file=sys.stderr)
        return 2
    try:
        await run_demo(
            demo_folder(args),
            fresh=args.fresh,
            story_path=args.story,
            max_turns=args.turns,
            plugin_dirs=tuple(getattr(args, "plugins_dir", None) or ()),
            replay=bool(getattr(args, "replay", False)),
        )
    except (DemoError, StoryError) as exc:
        print(f"memgraph-host demo: {exc}", file=sys.stderr)
        return 1
    return 0


def demo_command() -> Command:
    """The ``demo`` command the built-in plugin's ``host_cli_commands`` adds."""
    return Command(
        "demo",
        "run the sample story through the host (--fresh: start over)",
        _demo_arguments,
        run_demo_command,
        start_host=False,
    )
