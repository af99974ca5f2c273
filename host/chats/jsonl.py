"""JSON-lines files: split at ``"\\n"`` only, append on a line of its own.

``str.splitlines()`` also splits at ``\\v \\f \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029``, which JSON
written with ``ensure_ascii=False`` keeps raw inside strings: a message holding U+2028 would be cut
in two and the file would no longer read. Every JSON-lines reader of the project splits here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The characters `str.splitlines()` splits at besides "\n" and "\r" (tests check each one).
UNICODE_LINE_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(text: str) -> list[str]:
    """The lines of JSON-lines ``text``: cut at ``"\\n"`` only (a ``"\\r"`` before it is dropped,
    for files written on Windows); a final newline does not make an empty last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def append_lines(path: Path, lines: Iterable[str]) -> None:
    """Append ``lines`` (each ending in ``"\\n"``) to ``path``, beginning on a new line: a last
    line cut short by a crash stays a line of its own instead of swallowing the first appended
    one."""
    text = "".join(lines)
    if not text:
        return
    with path.open("a+b") as handle:
        end = handle.seek(0, 2)
        if end:
            handle.seek(end - 1)
            if handle.read(1) != b"\n":
                text = "\n" + text
            handle.seek(0, 2)
        handle.write(text.encode("utf-8"))


def read_objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, oldest first: a missing file is empty, and a line
    that is not a JSON object (one cut short by a crash) is passed over."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    rows = []
    for line in split_lines(text):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows
