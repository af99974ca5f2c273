"""The keys file (setting ``namespace_keys_file``): which key reaches which namespace, and whether
it may write.

A TOML file of ``[[key]]`` tables, or a JSON file (``{"keys": [...]}`` or a list), one entry per
key::

    [[key]]
    sha256 = "9f86d081884c7d65..."   # the key's SHA-256 (hex); or key = "the key itself"
    namespace = "alice"              # the namespace it reaches (`host.chats.namespaces`)
    read_only = false                # true: reads only (writes are a 403)

    [[key]]
    sha256 = "..."
    admin = true                     # every namespace, by the chats' stored ids

``proxy_api_key`` (when set) is an admin key besides. A bad entry is an error naming the file,
the entry (its line in a TOML file) and the field. Keys are compared by their SHA-256 in
constant time and never shown: not in errors, logs, the settings listing or start lines.

A running server follows the file: a request looks at its modification time, size and inode
(one ``stat``, at most every `RECHECK_S`) and reads it again when they changed, so a key added
or removed takes effect without a restart. A changed file that cannot be used (a bad entry, no
key left at all, unreadable) keeps the keys the server had and logs why, with file and line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import threading
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from host.chats.namespaces import ChatScope, NamespaceError, check_namespace

from ..settings import NAMESPACE_KEYS_FILE

KEY_HEADER = "x-memgraph-key"
#: Where `access.AccessGuard` keeps a request's `Access` in the ASGI scope.
SCOPE_KEY = "memgraph.access"
#: The shortest key a file may hold as itself (a ``sha256`` entry hides any length).
MIN_KEY_CHARS = 16
_FIELDS = frozenset({"key", "sha256", "namespace", "read_only", "admin", "note"})
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TOML_ENTRY = re.compile(r"^\s*\[\[\s*key\s*\]\]")
#: the least time between two looks at the keys file of a running server
RECHECK_S = 1.0

log = logging.getLogger(__name__)


class AccessKeysError(ValueError):
    """A keys file that cannot be used; the message names the file, the entry and the field."""


@attrs.frozen
class Access:
    """What one request may reach: its chats (`scope`), whether it may write, whether it came
    with a key (then that key is its write credential), and whether the key came in the
    ``Authorization`` header (then that header is not relayed upstream)."""

    scope: ChatScope
    read_only: bool = False
    admin: bool = True
    by_key: bool = False
    consumed_auth: bool = False


#: A request to a server with no key: every chat, writes need the server's token.
OPEN = Access(ChatScope.everything())


@attrs.frozen(repr=False)
class KeyEntry:
    """One key: its SHA-256 (hex), its namespace (None: admin) and whether it is read-only."""

    digest: str
    namespace: str | None
    read_only: bool = False

    def __repr__(self) -> str:  # the digest never reaches a log either
        return f"KeyEntry(namespace={self.namespace!r}, read_only={self.read_only})"


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


class AccessKeys:
    """Every key a server takes; `resolve` finds the one a request presents. Made by `of`
    with a keys file, it follows that file (see the module)."""

    def __init__(self, entries: list[KeyEntry]) -> None:
        self.entries = tuple(entries)
        self._admin: list[KeyEntry] = []
        self._path: Path | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._next_look = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"AccessKeys({len(self.entries)} keys)"

    @property
    def any(self) -> bool:
        """Whether a key is needed at all."""
        return bool(self.entries)

    @property
    def namespaced(self) -> bool:
        """Whether some key reaches one namespace only."""
        return any(e.namespace is not None for e in self.entries)

    @classmethod
    def of(cls, admin_key: str | None = None, path: str | Path | None = None) -> AccessKeys:
        """`admin_key` (``proxy_api_key``) and the entries of the keys file at `path`."""
        admin = [KeyEntry(key_digest(admin_key), None)] if admin_key else []
        if not path:
            return cls(admin)
        file = Path(path).expanduser()
        stamp = _stamp(file)
        keys = cls([*admin, *read_keys_file(file)])
        keys._admin, keys._path, keys._stamp = admin, file, stamp
        keys._next_look = time.monotonic() + RECHECK_S
        return keys

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], admin_key: str | None) -> AccessKeys:
        return cls.of(admin_key, settings.get(NAMESPACE_KEYS_FILE.name))

    def refresh(self, now: float | None = None) -> None:
        """Read the keys file again when it changed on disk (looked at once per `RECHECK_S`);
        a file that cannot be used keeps the current keys and is logged once per change."""
        path = self._path
        if path is None:
            return
        now = time.monotonic() if now is None else now
        if now < self._next_look or not self._lock.acquire(blocking=False):
            return
        try:
            self._next_look = now + RECHECK_S
            stamp = _stamp(path)
            if stamp == self._stamp:
                return
            self._stamp = stamp
            try:
                entries = [*self._admin, *read_keys_file(path)]
                if not entries:
                    raise AccessKeysError(f"{path}: no key left (every request would be let in)")
            except AccessKeysError as exc:
                log.error("namespace_keys_file changed but cannot be used, the keys stay as "
                          "they were: %s", exc)  # fmt: skip
                return
            self.entries = tuple(entries)
            log.info("namespace_keys_file %s read again: %d key(s)", path, len(entries))
        finally:
            self._lock.release()

    def _find(self, given: str) -> KeyEntry | None:
        digest = key_digest(given.strip()).encode()
        found = None
        for entry in self.entries:  # every entry compared: the time says nothing of which
            if hmac.compare_digest(digest, entry.digest.encode()):
                found = entry
        return found

    def resolve(self, headers: Mapping[str, str]) -> Access | None:
        """The request's access: `OPEN` with no keys; else the key's in ``X-Memgraph-Key`` or
        ``Authorization: Bearer``, None when it presents none of them."""
        self.refresh()
        if not self.entries:
            return OPEN
        consumed = False
        entry = None
        given = headers.get(KEY_HEADER)
        if given is not None:
            entry = self._find(given)
        if entry is None:
            scheme, _, token = headers.get("authorization", "").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                entry = self._find(token)
                consumed = entry is not None
        if entry is None:
            return None
        return Access(
            ChatScope.of(entry.namespace),
            read_only=entry.read_only,
            admin=entry.namespace is None,
            by_key=True,
            consumed_auth=consumed,
        )


# ---------------------------------------------------------------- the file


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What says the file at `path` changed: modification time, size, inode (None: missing)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def read_keys_file(path: Path) -> list[KeyEntry]:
    """The entries of a TOML or JSON keys file; `AccessKeysError` naming what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise AccessKeysError(
            f"namespace_keys_file {str(path)!r}: cannot read it: {reason}"
        ) from None
    if path.suffix.lower() == ".json":
        raws, lines = _json_entries(path, text), None
    else:
        raws, lines = _toml_entries(path, text)
    entries: list[KeyEntry] = []
    seen: dict[str, str] = {}
    for number, raw in enumerate(raws, start=1):
        where = f"{path}:{lines[number - 1]}" if lines and number <= len(lines) else str(path)
        where += f": key entry {number}"
        entry = _entry(raw, where)
        if entry.digest in seen:
            raise AccessKeysError(f"{where}: the same key as {seen[entry.digest]}")
        seen[entry.digest] = f"key entry {number}"
        entries.append(entry)
    return entries


def _toml_entries(path: Path, text: str) -> tuple[list[Any], list[int]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AccessKeysError(f"namespace_keys_file {str(path)!r} is not TOML: {exc}") from None
    extra = sorted(set(data) - {"key"})
    if extra:
        raise AccessKeysError(
            f"{path}: unknown table or field {extra[0]!r}: the file holds [[key]] tables"
        )
    raws = data.get("key", [])
    if not isinstance(raws, list):
        raise AccessKeysError(f"{path}: 'key' must be [[key]] tables")
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if _TOML_ENTRY.match(line)]
    return raws, lines


def _json_entries(path: Path, text: str) -> list[Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise AccessKeysError(f"namespace_keys_file {str(path)!r} is not JSON: {exc}") from None
    raws = data.get("keys") if isinstance(data, dict) else data
    if not isinstance(raws, list):
        raise AccessKeysError(f"{path}: expected a list of keys or {{\"keys\": [...]}}")
    return raws


def _entry(raw: Any, where: str) -> KeyEntry:
    if not isinstance(raw, dict):
        raise AccessKeysError(f"{where}: an entry must be a table (an object)")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise AccessKeysError(
            f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(sorted(_FIELDS))})"
        )
    if ("key" in raw) == ("sha256" in raw):
        raise AccessKeysError(f"{where}: give exactly one of 'sha256' (better) and 'key'")
    if "key" in raw:
        key = raw["key"]
        if not isinstance(key, str) or len(key.strip()) < MIN_KEY_CHARS or key != key.strip():
            raise AccessKeysError(
                f"{where}: key: a string of at least {MIN_KEY_CHARS} characters, without "
                "spaces around it, is required (its value is not shown)"
            )
        digest = key_digest(key)
    else:
        digest = raw["sha256"]
        if not isinstance(digest, str) or _HEX64.fullmatch(digest.lower()) is None:
            raise AccessKeysError(f"{where}: sha256: 64 hex digits (the key's SHA-256) required")
        digest = digest.lower()
    for flag in ("read_only", "admin"):
        if not isinstance(raw.get(flag, False), bool):
            raise AccessKeysError(f"{where}: {flag}: true or false")
    admin = raw.get("admin", False)
    if admin == ("namespace" in raw):
        raise AccessKeysError(f"{where}: give a 'namespace', or 'admin = true' (not both)")
    namespace = None
    if not admin:
        try:
            namespace = check_namespace(raw["namespace"])
        except NamespaceError as exc:
            raise AccessKeysError(f"{where}: namespace: {exc}") from None
    return KeyEntry(digest, namespace, bool(raw.get("read_only", False)))
