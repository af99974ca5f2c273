"""The `memgraph-host` command line: parsing, the `Command` type, console output, listings.

The names of `host.cli.cli` load on first use (PEP 562), so the entry point (`entry.py`) answers
``--version`` before any of the host is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from host.cli.cli import (
        DATA_DIR_ENV,
        DEFAULT_DATA_DIR,
        PROG,
        CliError,
        build_parser,
        builtin_commands,
        global_options,
        main,
        plugin_commands,
        report_error,
        setting_texts,
    )

__all__ = [
    "CliError",
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "PROG",
    "build_parser",
    "builtin_commands",
    "global_options",
    "main",
    "plugin_commands",
    "report_error",
    "setting_texts",
]


__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "host.cli.cli"))
