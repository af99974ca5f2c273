"""The LLM settings, read from the host settings (``<data_dir>/memgraph-host.toml``).

Nothing here talks to a server: `llm_settings(settings)` is ``None`` when ``llm_base_url`` is not
set, and then no LLM code path runs at all (the offline extractor, router and summariser answer).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from host.settings.settings_schema import read_room
from memgraph_plugin.settings_keys import LLM, LlmKeys

#: The hooks an LLM can answer, by their short names in ``llm_hooks`` (its default: all).
HOOKS: tuple[str, ...] = tuple(LLM.llm_hooks.default)

#: Every setting this package reads: its default and what it does (docs/llm.md mirrors this),
#: read off the declarations in ``memgraph_plugin/settings_keys.py``.
SETTINGS: Mapping[str, tuple[Any, str]] = {
    f.name: (f.default, f.metadata["doc"]) for f in attrs.fields(LlmKeys)
}

class LlmSettingsError(ValueError):
    """An LLM setting has a value that cannot work; the message names the setting."""


@attrs.frozen
class LlmSettings:
    """The validated LLM settings of one host."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = LLM.llm_timeout_s.default
    retries: int = LLM.llm_retries.default
    backoff_s: float = LLM.llm_backoff_s.default
    backoff_max_s: float = LLM.llm_backoff_max_s.default
    hooks: frozenset[str] = frozenset(HOOKS)
    response_format: str = LLM.llm_response_format.default
    rerank_count: int = LLM.llm_rerank_count.default
    temperature: float = LLM.llm_temperature.default
    max_tokens: int = LLM.llm_max_tokens.default
    down_after: int = LLM.llm_down_after.default
    cooloff_s: float = LLM.llm_cooloff_s.default

    def uses(self, hook: str) -> bool:
        """True when ``hook`` (``extract``, ``route``, ``summarise``) goes through the model."""
        return hook in self.hooks

    def api_key(self, environ: Mapping[str, str] | None = None) -> str:
        """The key from the variable ``api_key_env`` names (a placeholder when none is named)."""
        if not self.api_key_env:
            return "not-needed"
        env = os.environ if environ is None else environ
        key = env.get(self.api_key_env, "").strip()  # a "\r" pasted along is no header
        if not key:
            raise LlmSettingsError(
                f"llm_api_key_env names the environment variable {self.api_key_env!r}, "
                "which is not set (or empty)"
            )
        return key


def _text(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise LlmSettingsError(f"setting {key}={value!r} must be a non-empty string")
    return value.strip()


def _hooks(settings: Mapping[str, Any]) -> frozenset[str]:
    value = settings.get(LLM.llm_hooks.name)
    if value is None:
        return frozenset(HOOKS)
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise LlmSettingsError(f"setting llm_hooks={value!r} must be a list of hook names")
    unknown = sorted({v.strip().lower() for v in value} - set(HOOKS))
    if unknown:
        raise LlmSettingsError(
            f"setting llm_hooks: unknown hook(s) {unknown}; known: {', '.join(HOOKS)}"
        )
    return frozenset(v.strip().lower() for v in value)


def llm_settings(settings: Mapping[str, Any]) -> LlmSettings | None:
    """The LLM settings of a host, or ``None`` when ``llm_base_url`` is not set.

    Raises `LlmSettingsError` naming the setting when a value cannot work (a missing model,
    a negative timeout, an unknown hook).
    """
    base_url = _text(settings, LLM.llm_base_url.name)
    if base_url is None:
        return None
    if not base_url.startswith(("http://", "https://")):
        raise LlmSettingsError(f"setting llm_base_url={base_url!r} must start with http(s)://")
    model = _text(settings, LLM.llm_model.name)
    if model is None:
        raise LlmSettingsError("setting llm_model is required when llm_base_url is set")
    keys = read_room(settings, LlmKeys, error=LlmSettingsError)
    return LlmSettings(
        base_url=base_url.rstrip("/"),
        model=model,
        api_key_env=_text(settings, LLM.llm_api_key_env.name),
        timeout_s=keys.llm_timeout_s,
        retries=keys.llm_retries,
        backoff_s=keys.llm_backoff_s,
        backoff_max_s=keys.llm_backoff_max_s,
        hooks=_hooks(settings),
        response_format=keys.llm_response_format,
        rerank_count=keys.llm_rerank_count,
        temperature=keys.llm_temperature,
        max_tokens=keys.llm_max_tokens,
        down_after=keys.llm_down_after,
        cooloff_s=keys.llm_cooloff_s,
    )
