"""Storage failures as one-line `StorageError`s: what went wrong and where, never a raw
``RuntimeError: lance error ...`` or ``OSError``.

- a damaged or missing data file (``STORAGE_DAMAGED``): names the file and the table it belongs
  to, and says to run ``memgraph-host check`` / ``repair``;
- a full disk (``STORAGE_FULL``) and a folder that cannot be written (``STORAGE_READ_ONLY``).

`storage_failure(exc)` classifies one exception (None: not one of these); `translated` wraps
every ``*_sync`` method of a storage class so its callers (sessions, ``history``, the CLI) get
the `StorageError`.
"""

from __future__ import annotations

import errno
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memgraph_plugin.storage.errors import StorageError

#: A path inside a Lance table folder: ``<...>/<table>.lance/<data|_versions|...>/<file>``.
_LANCE_PATH = re.compile(r"((?:[A-Za-z]+://)?/?[^\s,'\"]*?/([^/\s,'\"]+)\.lance/[^\s,'\"]+)")
_DAMAGE_WORDS = (
    "not found",
    "no such file",
    "corrupt",
    "unexpected eof",
    "unexpected end",
    "invalid",
    "invalid range",
    "out of range",
    "failed to fill whole buffer",
    "not a lance file",
    "does not contain",
    "decode",
)
_FULL = ("no space left", "disk quota exceeded", "file too large")
_READ_ONLY = ("read-only file system", "permission denied", "operation not permitted")

T = TypeVar("T")


def damaged_file(text: str) -> tuple[str, str] | None:
    """(file path, table name) a storage error message names, or None."""
    for match in _LANCE_PATH.finditer(text):
        path = match.group(1).rstrip(".:;)")
        # a data, index or deletion file; a manifest that vanished is a concurrent cleanup
        # (another writer's maintenance), which the caller's retry handles: not damage
        if any(part in path for part in ("/data/", "/_indices/", "/_deletions/")):
            return path, match.group(2)
    return None


def clean_cause(text: str) -> str:
    """The cause without Lance's wrapping and source locations (``/rustc/...``, ``.rs:12:3``)."""
    text = re.sub(
        r"lance error: |LanceError\(\w+\): |Generic \S+ error: |Wrapped error: |External error: ",
        "",
        text,
    )
    text = re.sub(r"(Not found: )+", "not found: ", text)
    parts = [p.strip() for p in text.replace("\n", " ").split(", ")]
    kept = [p for p in parts if "/rustc/" not in p and not re.search(r"\.rs:\d+", p)]
    line = ", ".join(kept) or text.strip()
    return line[:400]


def locate_damage(uri: str) -> tuple[str, str] | None:
    """(file, table) of the first data file of a local database that is missing or not the
    size its table's manifest records (a file cut short): a stat per file, no data read."""
    import lance

    root = Path(uri)
    if "://" in uri or not root.is_dir():
        return None
    for folder in sorted(root.glob("*.lance")):
        try:
            fragments = lance.dataset(str(folder)).get_fragments()
        except Exception:  # noqa: BLE001 - a manifest that does not open: that table
            return str(folder), folder.name[: -len(".lance")]
        for fragment in fragments:
            for data_file in fragment.metadata.files:
                path = folder / "data" / data_file.path
                expected = data_file.file_size_bytes
                try:
                    size = path.stat().st_size
                except OSError:
                    return str(path), folder.name[: -len(".lance")]
                if expected and size != expected:
                    return str(path), folder.name[: -len(".lance")]
    return None


def storage_failure(
    exc: BaseException, *, where: str = "", uri: str | None = None
) -> StorageError | None:
    """The `StorageError` ``exc`` stands for (damaged file, disk full, read-only), or None."""
    if isinstance(exc, StorageError):
        return None
    if not isinstance(exc, (OSError, RuntimeError, ValueError, IOError)):
        return None
    text = str(exc)
    low = text.lower()
    code = getattr(exc, "errno", None)
    place = f" ({where})" if where else ""
    if code == errno.ENOSPC or code == errno.EDQUOT or any(w in low for w in _FULL):
        return StorageError(
            f"disk full: no space left to write the storage{place}; free some space and retry "
            f"(nothing acknowledged before was lost): {clean_cause(text)}",
            code="STORAGE_FULL",
        )
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or any(w in low for w in _READ_ONLY):
        filename = getattr(exc, "filename", None)
        target = f" {filename}" if filename else place
        return StorageError(
            f"cannot write the storage folder{target}: it is read-only or not permitted "
            f"({clean_cause(text)})",
            code="STORAGE_READ_ONLY",
        )
    found = damaged_file(text)
    lance_error = "lance" in low or isinstance(exc, OSError)
    damage = lance_error and any(w in low for w in _DAMAGE_WORDS)
    if found is None and damage and uri is not None and ".lance/" not in text:
        found = locate_damage(uri)  # e.g. "Invalid range 0..3662": a file cut short
    if found is not None and damage:
        path, table = found
        return StorageError(
            f"damaged storage file {path} (table {table!r}): {clean_cause(text)}; run "
            "`memgraph-host check` to see which chats it touches and `memgraph-host "
            "repair` to bring them back",
            code="STORAGE_DAMAGED",
        )
    return None


def translated(function: Callable[..., T]) -> Callable[..., T]:
    """The method ``function`` raising the `StorageError` of a damaged file, full disk or
    read-only folder instead of the raw exception (the original is chained); its object's
    ``settings.uri`` is where a damaged file is looked for when the error names none."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return function(*args, **kwargs)
        except (OSError, RuntimeError, ValueError) as exc:
            uri = getattr(getattr(args[0], "settings", None), "uri", None) if args else None
            error = storage_failure(exc, uri=uri if isinstance(uri, str) else None)
            if error is None:
                raise
            raise error from exc

    return wrapper


def translate_sync_methods(cls: type[T]) -> type[T]:
    """Class decorator: every public ``*_sync`` method goes through `translated`."""
    for name, value in list(vars(cls).items()):
        if name.endswith("_sync") and not name.startswith("_") and callable(value):
            setattr(cls, name, translated(value))
    return cls
