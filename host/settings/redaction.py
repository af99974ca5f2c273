"""Secrets never printed: every configured secret is replaced by ``***``, by value, wherever text
leaves the process (``config``, log records, plugin errors, traces, the CLI's error line).

A secret is a setting whose key names one (``*secret*``, ``*token*``, ``*password*``,
``*api_key*``, ``*access_key*``...), a value inside a table setting under such a key
(``storage_options.aws_secret_access_key``), or the value of the environment variable an
``*_env`` setting of that kind names (``llm_api_key_env``). Each is redacted as configured, with
surrounding whitespace stripped (a key with a trailing ``\\r`` pasted from a Windows file), and
as it appears inside JSON text.

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

REDACTED = "***"

#: Setting or option names that hold a secret.
SECRET_NAME = re.compile(
    r"secret|token|passw|api_?key|access_?key|private_?key|credential|signature|sas_|auth",
    re.IGNORECASE,
)

#: Shorter values are not redacted as substrings (they would blank out ordinary words).
MIN_LENGTH = 4


def _forms(value: str) -> set[str]:
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
        if isinstance(value, Mapping):
            for inner, item in value.items():
                if isinstance(item, str) and SECRET_NAME.search(str(inner)):
                    found |= _forms(item)
        elif isinstance(value, str) and SECRET_NAME.search(key):
            if key.endswith("_env"):
                found |= _forms(env.get(value.strip(), ""))
            else:
                found |= _forms(value)
    return frozenset(found)


class Redactor:
    """Replaces each of a set of secrets by `REDACTED` in text and in JSON-like values."""

    def __init__(self, secrets: Iterable[str]) -> None:
        ordered = sorted({s for s in secrets if s}, key=len, reverse=True)  # longest first
        self.secrets = tuple(ordered)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced."""
        if self._pattern is None or not isinstance(text, str):
            return text
        return self._pattern.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """``value`` with every string in it (nested dicts, lists, tuples) redacted."""
        if self._pattern is None:
            return value
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
    """Add the secrets of ``settings`` to the process-wide set (log records, traces)."""
    global _process, _factory_installed
    found = secret_values(settings)
    with _lock:
        if not found - _known:
            return
        _known.update(found)
        _process = Redactor(_known)
        if not _factory_installed:
            _install_record_factory()
            _factory_installed = True


def redact_known(text: str) -> str:
    """``text`` with every secret registered in this process replaced."""
    return _process(text)


def _install_record_factory() -> None:
    """Every log record's message (and exception text) goes through `redact_known`."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        redactor = _process
        if not redactor:
            return record
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
