"""What says a chat file changed since a process last read or wrote it: its size, modification
time, inode and a digest of its tail (`Signature`). A process compares it when it takes the chat's
lock (`Chat.refresh`): a change by another process shows in one of them (an equal-size rewrite
within one clock tick shows in the tail)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["TAIL_BYTES", "Signature", "signature", "signature_of"]

#: what says a chat file changed: size, modification time, inode and a digest of its tail
Signature = tuple[int, int, int, bytes]
#: the tail the signature digests (a change of equal size within one clock tick shows there)
TAIL_BYTES = 4096


def signature_of(stat: os.stat_result, data: bytes) -> Signature:
    """The `Signature` of a file from its ``stat`` and its bytes (all, or the last ones)."""
    tail = hashlib.blake2b(data[-TAIL_BYTES:], digest_size=16).digest()
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino, tail)


def signature(path: Path) -> Signature | None:
    """The chat file's `Signature` now (None: no file)."""
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            handle.seek(max(0, stat.st_size - TAIL_BYTES))
            return signature_of(stat, handle.read(TAIL_BYTES))
    except FileNotFoundError:
        return None
