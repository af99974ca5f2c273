"""The proxy's settings (``proxy_*``), declared in the host's schema, read into `ProxySettings`."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from host.settings.redaction import without_password
from host.settings.settings_schema import read_room, setting, settings_room

AFTER_SYSTEM = "after_system"
BEFORE_LAST_USER = "before_last_user"
DEFAULT_TEMPLATE = (
    "Long-term memory of this conversation (notes for you, not part of the dialogue):\n{memory}"
)
DEFAULT_PORT = 8766
DEFAULT_MEMORY_SHARE = 0.5


@settings_room
class ProxyKeys:
    proxy_upstream: str | None = setting(
        None,
        "The OpenAI-compatible server the proxy forwards to, as the openai SDK's base_url "
        "(e.g. http://127.0.0.1:11434/v1); `memgraph-host proxy --upstream` overrides it.",
    )
    proxy_host: str = setting(
        "127.0.0.1", "Address the proxy binds; a non-loopback address needs proxy_api_key."
    )
    proxy_port: int = setting(
        DEFAULT_PORT, "Port the proxy listens on (0: any free port).", minimum=0, maximum=65535
    )
    proxy_upstream_api_key_env: str | None = setting(
        None,
        "Environment variable holding the upstream's API key; unset: the client's own "
        "Authorization header is relayed, unless it holds no key (Bearer undefined, Bearer null, "
        "an empty bearer: then none is sent). The key is never logged, traced or shown.",
    )
    proxy_api_key: str | None = setting(
        None,
        "When set, clients must present this key (Authorization: Bearer, or X-Memgraph-Key) "
        "to use /v1/* and /api/*; it reaches every namespace's chats (the admin key). Prefer "
        "proxy_api_key_env to keep it out of files.",
    )
    proxy_api_key_env: str | None = setting(
        None, "Environment variable holding proxy_api_key (wins over proxy_api_key)."
    )
    namespace_keys_file: Path | None = setting(
        None,
        "A TOML or JSON file of access keys, each reaching one namespace (read-only or not) or "
        "every one (admin); docs/namespaces.md. proxy_api_key stays an admin key. Unset: one "
        "namespace, guarded by proxy_api_key alone.",
    )
    proxy_inject_position: Literal["after_system", "before_last_user"] = setting(
        AFTER_SYSTEM,
        "Where the recalled memory goes as a system message: after the system prompt, or just "
        "before the last user message.",
    )
    proxy_inject_template: str = setting(
        DEFAULT_TEMPLATE,
        "The injected system message; {memory} is replaced by the rendered recall block.",
    )
    proxy_timeout_s: float = setting(
        600.0,
        "Seconds the proxy waits for the upstream to answer (between two streamed chunks).",
        minimum=1,
    )
    proxy_memory_timeout_s: float = setting(
        15.0,
        "Seconds the memory step (history reconciliation + recall) may take before the request "
        "is forwarded without memory (with an X-Memgraph-Warning header).",
        minimum=0.1,
    )
    proxy_context_tokens: int = setting(
        0,
        "A context budget in tokens (0: off): a history over it is forwarded as its system "
        "messages, the newest turns that fit and the memory block; older turns are dropped whole "
        "(docs/proxy.md). A request's X-Memgraph-Context-Tokens header sets it for that request.",
        minimum=0,
    )
    proxy_context_memory_share: float = setting(
        DEFAULT_MEMORY_SHARE,
        "Inside a context budget, the share of it the memory block may take when that is more "
        "than recall_budget_chars (a token counted as 3.5 characters).",
        minimum=0.0,
        maximum=0.9,
    )


_KEYS = attrs.fields(ProxyKeys)
NAMESPACE_KEYS_FILE = _KEYS.namespace_keys_file
#: The `ProxySettings` fields read from the key of the same name after ``proxy_``.
_FROM_KEYS = (
    "upstream", "host", "port", "inject_position", "inject_template", "timeout_s",
    "memory_timeout_s", "context_tokens", "context_memory_share",
)  # fmt: skip


class ProxySettingsError(ValueError):
    """A proxy setting that cannot work (the message names it)."""


@attrs.frozen(repr=False)
class ProxySettings:
    """What the proxy reads from the host settings; keys are held, never shown (see `__repr__`)."""

    upstream: str | None = None
    host: str = _KEYS.proxy_host.default
    port: int = DEFAULT_PORT
    upstream_api_key: str | None = None
    api_key: str | None = None
    inject_position: str = AFTER_SYSTEM
    inject_template: str = DEFAULT_TEMPLATE
    timeout_s: float = _KEYS.proxy_timeout_s.default
    memory_timeout_s: float = _KEYS.proxy_memory_timeout_s.default
    context_tokens: int = 0
    context_memory_share: float = DEFAULT_MEMORY_SHARE

    def __repr__(self) -> str:  # keys never reach a log line or a traceback's locals
        return (
            f"ProxySettings(upstream={self.upstream!r}, host={self.host!r}, port={self.port}, "
            f"upstream_api_key={'set' if self.upstream_api_key else 'unset'}, "
            f"api_key={'set' if self.api_key else 'unset'})"
        )

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], environ: Mapping[str, str] | None = None, **override: Any
    ) -> ProxySettings:
        """Read the ``proxy_*`` keys; ``override`` wins (CLI flags), ``None`` values ignored."""
        env = os.environ if environ is None else environ
        keys = read_room(settings, ProxyKeys, error=ProxySettingsError)
        upstream_env = keys.proxy_upstream_api_key_env
        upstream_key = env.get(upstream_env) if upstream_env else None
        if upstream_env and not upstream_key:
            raise ProxySettingsError(
                f"proxy_upstream_api_key_env names the environment variable {upstream_env!r}, "
                "which is not set"
            )
        key_env = keys.proxy_api_key_env
        api_key = env.get(key_env) if key_env else keys.proxy_api_key
        if key_env and not api_key:
            raise ProxySettingsError(
                f"proxy_api_key_env names the environment variable {key_env!r}, which is not set"
            )
        values: dict[str, Any] = {name: getattr(keys, f"proxy_{name}") for name in _FROM_KEYS}
        values.update(upstream_api_key=upstream_key or None, api_key=api_key or None)
        values.update({k: v for k, v in override.items() if v is not None})
        if values["upstream"] is not None:
            values["upstream"] = check_upstream(values["upstream"])
        if "{memory}" not in values["inject_template"]:
            raise ProxySettingsError("proxy_inject_template must contain {memory}")
        return cls(**values)


def check_upstream(url: str) -> str:
    """The upstream base URL without a trailing slash; an error naming the setting when it is
    not an http(s) URL."""
    text = str(url).strip().rstrip("/")
    if not text.startswith(("http://", "https://")) or len(text) <= len("https://"):
        raise ProxySettingsError(
            "proxy_upstream / --upstream must be an http:// or https:// base URL, got "
            f"{without_password(str(url))!r}"
        )
    return text


def is_loopback(address: str) -> bool:
    """Whether binding `address` only reaches this machine (localhost names and 127/8, ::1)."""
    if address in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def require_key_off_loopback(address: str, api_key: str | None) -> None:
    """Refuse a non-loopback bind without a key: anyone on the network could use the upstream."""
    if not is_loopback(address) and not api_key:
        raise ProxySettingsError(
            f"refusing to listen on {address!r} (not loopback) without proxy_api_key: set "
            "proxy_api_key_env (or proxy_api_key, or namespace_keys_file) so clients must present "
            "a key"
        )
