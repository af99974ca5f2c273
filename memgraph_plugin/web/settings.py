"""The HTTP server's own settings (``http_*``, declared in `memgraph_plugin.settings_keys`) read
into `HttpSettings`: the request body limit and the other origins allowed to call ``/api`` and
``/v1`` (`request_guard`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs

from host.settings.settings_schema import read_room
from memgraph_plugin.settings_keys import HTTP, HttpKeys

DEFAULT_MAX_BODY_BYTES: int = HTTP.http_max_body_bytes.default


class HttpSettingsError(ValueError):
    """An ``http_*`` setting that cannot work (the message names it)."""


@attrs.frozen
class HttpSettings:
    """The body limit and the allowed other origins (normalised ``scheme://host[:port]``)."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    cors_origins: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> HttpSettings:
        keys = read_room(settings, HttpKeys, error=HttpSettingsError)
        return cls(keys.http_max_body_bytes, origins_of(keys.http_cors_origins))


def origins_of(value: Any) -> tuple[str, ...]:
    """``http_cors_origins`` as normalised origins; an error naming the setting and the entry
    for anything that is not ``http(s)://host[:port]`` (no path, no ``*``)."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        entries: list[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        entries = list(value)
    else:
        raise HttpSettingsError(
            f"http_cors_origins must be a list of origins or a comma-separated string, "
            f"got {type(value).__name__}"
        )
    out: list[str] = []
    for entry in entries:
        origin = normal_origin(entry) if isinstance(entry, str) else None
        if origin is None:
            raise HttpSettingsError(
                f"http_cors_origins: {str(entry)[:200]!r} is not an origin such as "
                "http://localhost:3000 (scheme://host[:port], no path, no '*')"
            )
        if origin not in out:
            out.append(origin)
    return tuple(out)


def normal_origin(text: str) -> str | None:
    """``scheme://host[:port]`` lower-cased, or None when `text` is not one."""
    text = text.strip().rstrip("/")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or "*" in text:
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        return None
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
