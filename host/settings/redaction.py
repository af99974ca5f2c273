"""Secrets never printed: every configured secret is replaced by ``***``, by value, wherever text
leaves the process (``config``, log records, plugin errors, traces, the CLI's error line).

A secret is a setting whose key names one (``*secret*``, ``*token*``, ``*password*``,
``*api_key*``, ``*access_key*``...), a value inside a table setting under such a key
(``storage_options.aws_secret_access_key``), or the value of the environment variable an
``*_env`` setting of that kind names (``llm_api_key_env``). Each is redacted as configured, with
surrounding whitespace stripped (a key with a trailing ``\\r`` pasted from a Windows file), and
as it appears inside JSON text. The password of a URL (``http://user:pass@host``) is a secret too:
the password of any URL a setting holds is redacted wherever it appears, and every URL's password
in redacted text is replaced (``http://user:***@host``) whether a setting holds it or not
(a ``--upstream`` flag).

`redactor_for(settings)` / `redact(text, settings)` serve one host (the proxy uses them);
`register_secrets` adds a host's secrets to the process-wide set that log records and traces go
through (a redaction of more secrets than one host's is harmless).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

REDACTED = "***"

#: Setting or option names that hold a secret.
SECRET_NAME = re.compile(
    r"secret|token|passw|api_?key|access_?key|private_?key|credential|signature|sas_|auth",
    re.IGNORECASE,
)

#: Shorter values are not redacted as substrings (they would blank out ordinary words).
MIN_LENGTH = 4

#: The password of a URL's user info: ``scheme://user:PASSWORD@``.
URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@")


def without_password(url: str) -> str:
    """`url` (or any text) with each URL's password replaced: ``http://user:***@host``."""
    if "@" not in url or "://" not in url:
        return url
    return URL_PASSWORD.sub(lambda m: f"{m['head']}{REDACTED}@", url)


def url_passwords(text: str) -> set[str]:
    """The passwords of the URLs in `text`, as written and percent-decoded."""
    if "@" not in text or "://" not in text:
        return set()
    found = set()
    for match in URL_PASSWORD.finditer(text):
        password = match[0][len(match["head"]) : -1]
        found |= {password, unquote(password)}
    return found


def secret_forms(value: str) -> set[str]:
    """The texts a secret can appear as: as set, stripped, and escaped inside JSON."""
    forms = set()
    for form in (value, value.strip()):
        if len(form.strip()) >= MIN_LENGTH:
            forms.add(form)
            forms.add(json.dumps(form)[1:-1])
    return forms


def secret_values(
    settings: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> frozenset[str]:
    """Every secret configured in ``settings`` (and the environment variables they name)."""
    env = os.environ if environ is None else environ
    found: set[str] = set()
    for key, value in settings.items():
        if not isinstance(key, str):
            continue
        for text in _texts(value):
            for password in url_passwords(text):
                found |= secret_forms(password)
        if isinstance(value, Mapping):
            for inner, item in value.items():
                if isinstance(item, str) and SECRET_NAME.search(str(inner)):
                    found |= secret_forms(item)
        elif isinstance(value, str) and SECRET_NAME.search(key):
            if key.endswith("_env"):
                found |= secret_forms(env.get(value.strip(), ""))
            else:
                found |= secret_forms(value)
    return frozenset(found)


def _texts(value: Any) -> list[str]:
    """The strings of a setting's value (itself, a table's values, a list's items)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [v for v in value.values() if isinstance(v, str)]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


class Redactor:
    """Replaces each of a set of secrets, and every URL's password, by `REDACTED` in text, bytes
    and JSON-like values."""

    def __init__(self, secrets: Iterable[str]) -> None:
        ordered = sorted({s for s in secrets if s}, key=len, reverse=True)  # longest first
        self.secrets = tuple(ordered)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        encoded = sorted({s.encode("utf-8", "replace") for s in ordered}, key=len, reverse=True)
        self._bytes = re.compile(b"|".join(map(re.escape, encoded))) if encoded else None
        #: the longest secret in UTF-8 bytes (a stream keeps this much less one back)
        self.longest = len(encoded[0]) if encoded else 0

    def __bool__(self) -> bool:
        """Whether any secret is configured (URL passwords are replaced regardless)."""
        return self._pattern is not None

    def with_secrets(self, extra: Iterable[str]) -> Redactor:
        """This redactor with more secrets (each in every form `secret_forms` gives)."""
        more: set[str] = set()
        for value in extra:
            if value:
                more |= secret_forms(value)
        return Redactor((*self.secrets, *more)) if more else self

    def __call__(self, text: str) -> str:
        """``text`` with every secret and every URL's password replaced."""
        if not isinstance(text, str):
            return text
        if self._pattern is not None:
            text = self._pattern.sub(REDACTED, text)
        return without_password(text)

    def bytes(self, data: bytes) -> bytes:
        """``data`` (UTF-8 text, JSON or not) with every secret and URL password replaced."""
        if self._bytes is not None:
            data = self._bytes.sub(REDACTED.encode(), data)
        if b"@" in data and b"://" in data:
            text = data.decode("utf-8", "surrogateescape")
            data = without_password(text).encode("utf-8", "surrogateescape")
        return data

    def value(self, value: Any) -> Any:
        """``value`` with every string in it (nested dicts, lists, tuples) redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(v) for v in value)
        return value


def redactor_for(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Redactor:
    """The redactor of one host's settings."""
    return Redactor(secret_values(settings, environ))


def redact(text: str, settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret configured in ``settings`` replaced by ``***``."""
    return redactor_for(settings, environ)(text)


# ---------------------------------------------------------------------- process-wide

_lock = threading.Lock()
_known: set[str] = set()
_process = Redactor(())
_factory_installed = False


def register_secrets(settings: Mapping[str, Any]) -> None:
    """Add the secrets of ``settings`` to the process-wide set (log records, traces); the
    first call also routes every log record through it (URL passwords with no secret set)."""
    global _process, _factory_installed
    found = secret_values(settings)
    with _lock:
        if not _factory_installed:
            _install_record_factory()
            _factory_installed = True
        if not found - _known:
            return
        _known.update(found)
        _process = Redactor(_known)


def redact_known(text: str) -> str:
    """``text`` with every secret registered in this process replaced."""
    return _process(text)


def _install_record_factory() -> None:
    """Every log record's message (and exception text) goes through `redact_known`."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        redactor = _process
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's to report
            return record
        clean = redactor(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redactor(text)
        return record

    logging.setLogRecordFactory(factory)
