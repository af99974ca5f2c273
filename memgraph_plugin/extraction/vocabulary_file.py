"""A chat's word counts (`vocabulary.ChatWords`) kept in a file, so a restarted host does not count
the whole message log again on the chat's first message (61k messages: ~0.2 s of short lines,
seconds of real ones).

One JSON file per chat under ``<data_dir>/vocabulary``: the counts, how many messages they
cover and a fingerprint of the last of them (seq, role, a hash of its text). A file whose last
message is not the chat's message at that position (the chat was cut or rewritten), or that
covers more messages than the chat has, or that cannot be read, counts as none: the messages
are counted again, as before. Written whole to a temporary file, then renamed (a reader never
sees half of one).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["VOCABULARY_DIR", "load_counts", "save_counts", "words_path"]

VOCABULARY_DIR = "vocabulary"
_FORMAT = 1
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def words_path(data_dir: str | Path, chat_id: str) -> Path:
    """The chat's file: safe characters of its id kept, the rest ``_``, plus a short hash (two
    ids that differ only in unsafe characters stay apart)."""
    stem = _SAFE.sub("_", chat_id).lstrip(".")[:60] or "chat"
    digest = hashlib.sha256(chat_id.encode("utf-8")).hexdigest()[:10]
    return Path(data_dir) / VOCABULARY_DIR / f"{stem}-{digest}.json"


def _fingerprint(message: Any) -> list[Any]:
    text = getattr(message, "text", "") or ""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return [getattr(message, "seq", None), str(getattr(message, "role", "")), digest]


def save_counts(
    path: Path, fed: int, last: Any, lower: Counter[str], capital: Counter[str]
) -> None:
    """Write the counts of a chat's first `fed` messages (`last`: the last of them)."""
    body = {
        "format": _FORMAT,
        "fed": fed,
        "last": _fingerprint(last),
        "lower": dict(lower),
        "capital": dict(capital),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def load_counts(
    path: Path, messages: Sequence[Any], index: int
) -> tuple[int, Counter[str], Counter[str]] | None:
    """``(fed, lower, capital)`` from the file when it covers a prefix of `messages` no longer
    than `index` whose last message is the one it names; None otherwise."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        fed = int(body["fed"])
        if body.get("format") != _FORMAT or not 0 < fed <= min(index, len(messages)):
            return None
        if body["last"] != _fingerprint(messages[fed - 1]):
            return None
        lower, capital = body["lower"], body["capital"]
        for counts in (lower, capital):
            if not all(isinstance(k, str) and type(v) is int for k, v in counts.items()):
                return None
        return fed, Counter(lower), Counter(capital)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
