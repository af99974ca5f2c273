"""The ``memgraph-host`` entry point: ``--version`` answered before anything else is imported,
everything else handed to `host.cli.cli.main` (which loads the plugins: their commands are part
of ``--help``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: global options that take a value (``--data-dir DIR``): their value is never the command
_VALUED = frozenset({"--data-dir", "--plugins-dir", "--set"})


def _asks_version(argv: Sequence[str]) -> bool:
    """``--version`` among the global options, before any command word."""
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--version":
            return True
        if word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            return False  # a command: its own arguments follow
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memgraph-host`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _asks_version(args):
        from host.version import own_version

        print(f"memgraph-host {own_version()}")
        return 0
    from host.cli.cli import main as run

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
