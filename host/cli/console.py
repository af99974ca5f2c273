"""Terminal output for ``memgraph-host`` commands: `rich` tables and progress, and JSON listings.

Every listing command prints a table by default and JSON with ``--json`` (`add_json_option`,
`emit`); progress goes to stderr so stdout stays clean for tools.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

#: Width used when the output is not a terminal (pipes, files, tests): rows never wrap.
PIPE_WIDTH = 4000


def console(out: TextIO | None = None) -> Console:
    """A rich console on ``out`` (stdout); plain text, no wrapping, when it is not a terminal."""
    out = out or sys.stdout
    tty = bool(getattr(out, "isatty", lambda: False)())
    if tty:
        return Console(file=out, highlight=False)
    return Console(
        file=out, width=PIPE_WIDTH, highlight=False, color_system=None, force_terminal=False
    )


def add_json_option(parser: argparse.ArgumentParser, what: str = "rows") -> None:
    """The ``--json`` flag every listing command has."""
    parser.add_argument(
        "--json", action="store_true", help=f"print the {what} as JSON instead of a table"
    )


def table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None
) -> Table:
    """A rich table with ``columns`` headers; cells are shown with ``str`` as plain text (never
    read as rich markup: ``-[related]-`` stays), None or "" as ``-``."""
    result = Table(title=title, box=None, header_style="bold", pad_edge=False)
    for column in columns:
        result.add_column(column, overflow="fold")
    for row in rows:
        result.add_row(*(Text("-" if cell is None or cell == "" else str(cell)) for cell in row))
    return result


def print_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    out: TextIO | None = None,
    *,
    title: str | None = None,
) -> None:
    """Print ``rows`` under ``columns`` on ``out`` (stdout)."""
    console(out).print(table(columns, rows, title=title))


def table_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The table as plain text (no colours, no trailing blanks, no final newline)."""
    buffer = io.StringIO()
    console(buffer).print(table(columns, rows))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def print_json(value: Any, out: TextIO | None = None, *, lines: bool = False) -> None:
    """``value`` as indented JSON, or (``lines``) one compact JSON object per line."""
    out = out or sys.stdout
    if lines:
        for item in value:
            out.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")
        return
    json.dump(value, out, indent=2, ensure_ascii=False)
    out.write("\n")


@contextmanager
def progress(label: str, out: TextIO | None = None) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr; yields ``update(done, total)``."""
    stream = out or sys.stderr
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=stream, highlight=False),
        transient=False,
    )
    task = bar.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update
