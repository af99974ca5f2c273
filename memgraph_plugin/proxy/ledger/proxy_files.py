"""The proxy's files under ``<data dir>/proxy/``: one JSON line per chat source noted and per
request forwarded without memory (appended, never failing a request), and the file stats the
proxy compares to see that another process wrote a file."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from host.chats.jsonl import read_objects

log = logging.getLogger(__name__)

SOURCES_FILE = "chat_sources.jsonl"


def read_sources(folder: Path) -> dict[str, dict[str, Any]]:
    """The chat-source lines of a data dir's proxy folder (the newest line per chat wins)."""
    rows: dict[str, dict[str, Any]] = {}
    for row in read_lines(folder / SOURCES_FILE):
        if isinstance(row.get("chat_id"), str):
            rows[row["chat_id"]] = row
    return rows


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (none when it is missing)."""
    return read_objects(path)


def append_line(path: Path, row: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:  # bookkeeping only: never fails a request
        log.warning("proxy: cannot write %s: %s", path, exc)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def file_stat(path: Path) -> tuple[int, int, int] | None:
    """(size, mtime in ns, inode) of a chat file (None: no file): whether it moved on."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns, found.st_ino


def file_mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
