"""A rollback's target, checked before anything is read or written: exactly one of ``version=``
and ``seq=``, each a whole number (never a bool, a float, a string or a list), never below 0, and
never past the chat (a version it has not reached, a message seq it has not had). Every problem
is a ``BAD_ARGS`` `MemoryGraphError` saying which argument and why.

`target_version` turns a checked target into the commit version the chat goes back to, from the
chat's commit marks ``(version, seq, kind)``; `replacement_version` is the target of undoing one
message (an edit, a swipe): after the messages before it, and never before an import or a fork.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import MemoryGraphError

__all__ = ["checked_target", "replacement_version", "target_version"]

Mark = tuple[int, int, str]  # (version, seq, kind) of one commit
#: Commits that replace the whole graph from outside the chat (an import, a fork of another
#: chat): undoing a message never goes back past one (that graph is not the message's doing).
REPLACING_KINDS = frozenset({"import", "fork"})


def _whole(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemoryGraphError(
            "BAD_ARGS", f"{name} must be a whole number, got {value!r} ({type(value).__name__})"
        )
    if value < 0:
        raise MemoryGraphError("BAD_ARGS", f"{name} must be >= 0, got {value}")
    return value


def checked_target(version: Any, seq: Any) -> tuple[int | None, int | None]:
    """``(version, seq)`` with exactly one set, each a whole number >= 0; else ``BAD_ARGS``."""
    if (version is None) == (seq is None):
        raise MemoryGraphError("BAD_ARGS", "give exactly one of version= or seq=")
    if version is not None:
        return _whole("version", version), None
    return None, _whole("seq", seq)


def target_version(
    chat_id: str,
    marks: Sequence[Mark],
    *,
    version: int | None,
    seq: int | None,
    newest_seq: int = 0,
) -> int:
    """The version a checked rollback target lands on: `version` itself, or the newest version
    whose seq is <= `seq` (0: before the first commit). ``BAD_ARGS`` for a version past the
    chat's newest commit, or a seq past both its newest commit's and `newest_seq` (the seq of
    the chat's newest message)."""
    latest = marks[-1][0] if marks else 0
    if version is not None:
        if version > latest:
            raise MemoryGraphError(
                "BAD_ARGS", f"chat {chat_id!r} has no version {version} (its newest is {latest})"
            )
        return version
    assert seq is not None
    reached = max([newest_seq, *(m[1] for m in marks)])
    if seq > reached:
        raise MemoryGraphError(
            "BAD_ARGS",
            f"seq {seq} is past chat {chat_id!r} (its newest message seq is {reached})",
        )
    best = 0
    for at_version, at_seq, _kind in marks:
        if at_seq <= seq:
            best = at_version
    return best


def replacement_version(marks: Sequence[Mark], seq: int) -> int:
    """The version undoing a message of seq `seq` goes back to: after every commit of an earlier
    seq, and not before the newest import (the chat's earlier messages of seq `seq` that the
    graph then lacks are extracted again by the caller)."""
    best = 0
    for version, at_seq, kind in marks:
        if at_seq <= seq - 1 or kind in REPLACING_KINDS:
            best = version
    return best
