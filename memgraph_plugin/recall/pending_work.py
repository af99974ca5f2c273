"""Catch-up work a host still has to do on a chat, as `memgraph-host status` reports it.

The host process doing the work (the turn pipeline's background compaction of an imported
graph, `turn/catch_up.py`) writes one small JSON file per chat under ``<data_dir>/pending``
and removes it when nothing is left, so any process (the status command has no host of its
own running) reads the same answer. A file whose writer is gone (killed) is reported as such:
the next host to open the chat picks the work up again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import attrs

from .trace import safe_file_name

PENDING_DIR = "pending"


@attrs.frozen
class PendingWork:
    """What is left to do on one chat: `what` (e.g. ``compaction``) -> how many units."""

    chat_id: str
    work: dict[str, int]
    pid: int
    updated: float
    alive: bool  # whether the process doing it still runs

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _path(data_dir: str | Path, chat_id: str) -> Path:
    return Path(data_dir) / PENDING_DIR / safe_file_name(chat_id).replace(".jsonl", ".json")


def write_pending(data_dir: str | Path, chat_id: str, work: dict[str, int]) -> None:
    """Record what is left on `chat_id` (an empty or all-zero `work`: nothing, the file goes)."""
    path = _path(data_dir, chat_id)
    if not any(work.values()):
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"chat_id": chat_id, "work": work, "pid": os.getpid(), "updated": time.time()}
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)  # readers never see half a file


def read_pending(data_dir: str | Path, chat_id: str) -> PendingWork | None:
    """The chat's pending work, or None when there is none (or the file cannot be read)."""
    try:
        body = json.loads(_path(data_dir, chat_id).read_text(encoding="utf-8"))
        work = {str(k): int(v) for k, v in dict(body["work"]).items()}
        pid = int(body["pid"])
        updated = float(body["updated"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return PendingWork(chat_id, work, pid, updated, _alive(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
