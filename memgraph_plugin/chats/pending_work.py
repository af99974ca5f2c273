"""Catch-up work a host still has to do on a chat, as `memgraph-host status` reports it.

The host process doing the work (the turn pipeline's background compaction of an imported
graph, `turn/catch_up.py`; the background embedding of nodes without a vector of the current
profile, `chats/chat_vectors.py`) writes one small JSON file per chat and kind of work under
``<data_dir>/pending``
and removes it when nothing is left, so any process (the status command has no host of its
own running) reads the same answer. A file whose writer is gone (killed) is reported as such:
the next host to open the chat picks the work up again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import attrs

PENDING_DIR = "pending"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


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


def _stem(chat_id: str) -> str:
    """A file name stem for a chat id: safe characters kept, the rest ``_``, plus a short hash
    (two ids that differ only in unsafe characters stay apart)."""
    stem = _SAFE.sub("_", chat_id).lstrip(".")[:60] or "chat"
    return f"{stem}-{hashlib.sha256(chat_id.encode('utf-8')).hexdigest()[:10]}"


def _paths(data_dir: str | Path, chat_id: str) -> list[Path]:
    folder = Path(data_dir) / PENDING_DIR
    return sorted(folder.glob(f"{_stem(chat_id)}.*.json")) if folder.is_dir() else []


def write_pending(data_dir: str | Path, chat_id: str, work: dict[str, int]) -> None:
    """Record what is left on `chat_id` of the kinds of work in `work` (all zero: nothing of
    them, their file goes). Each kind has its own file, so two workers never overwrite each
    other's count."""
    kind = "-".join(sorted(work)) or "work"
    path = Path(data_dir) / PENDING_DIR / f"{_stem(chat_id)}.{kind}.json"
    if not any(work.values()):
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"chat_id": chat_id, "work": work, "pid": os.getpid(), "updated": time.time()}
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)  # readers never see half a file


def read_pending(data_dir: str | Path, chat_id: str) -> PendingWork | None:
    """The chat's pending work (every kind recorded), or None when there is none. A file that
    cannot be read counts as none; of several writers, the newest update's pid is reported,
    and the work is alive when any of them is."""
    work: dict[str, int] = {}
    pid, updated, alive = 0, 0.0, False
    for path in _paths(data_dir, chat_id):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            if body.get("chat_id") != chat_id:
                continue
            items = {str(k): int(v) for k, v in dict(body["work"]).items()}
            when, who = float(body["updated"]), int(body["pid"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        work.update(items)
        alive = alive or _alive(who)
        if when >= updated:
            pid, updated = who, when
    if not any(work.values()):
        return None
    return PendingWork(chat_id, work, pid, updated, alive)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
