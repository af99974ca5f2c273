"""The `memgraph-host` command line: parsing, the `Command` type, console output, listings."""

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
