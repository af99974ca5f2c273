"""The LLM settings, read from the host settings (``<data_dir>/memgraph-host.toml``).

Nothing here talks to a server: `llm_settings(settings)` is ``None`` when ``llm_base_url`` is not
set, and then no LLM code path runs at all (the offline extractor, router and summariser answer).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from host.settings.setting_values import float_setting, int_setting
from host.settings.settings_schema import Setting
from memgraph_plugin.settings_keys import (
    LLM_API_KEY_ENV,
    LLM_BACKOFF_MAX_S,
    LLM_BACKOFF_S,
    LLM_BASE_URL,
    LLM_COOLOFF_S,
    LLM_DOWN_AFTER,
    LLM_HOOKS,
    LLM_MAX_TOKENS,
    LLM_MODEL,
    LLM_RERANK_COUNT,
    LLM_RESPONSE_FORMAT,
    LLM_RETRIES,
    LLM_TEMPERATURE,
    LLM_TIMEOUT_S,
)

#: The LLM keys, declared (type, default, bounds, doc) in ``memgraph_plugin/settings_keys.py``.
KEYS: tuple[Setting, ...] = (
    LLM_BASE_URL,
    LLM_MODEL,
    LLM_API_KEY_ENV,
    LLM_TIMEOUT_S,
    LLM_RETRIES,
    LLM_BACKOFF_S,
    LLM_BACKOFF_MAX_S,
    LLM_HOOKS,
    LLM_RESPONSE_FORMAT,
    LLM_RERANK_COUNT,
    LLM_TEMPERATURE,
    LLM_MAX_TOKENS,
    LLM_DOWN_AFTER,
    LLM_COOLOFF_S,
)

#: The hooks an LLM can answer, by their short names in ``llm_hooks`` (its default: all).
HOOKS: tuple[str, ...] = tuple(LLM_HOOKS.default)

#: Every setting this package reads: its default and what it does (docs/llm.md mirrors this),
#: read off the declarations.
SETTINGS: Mapping[str, tuple[Any, str]] = {s.key: (s.default, s.doc) for s in KEYS}

RESPONSE_FORMATS = LLM_RESPONSE_FORMAT.choices


class LlmSettingsError(ValueError):
    """An LLM setting has a value that cannot work; the message names the setting."""


@attrs.frozen
class LlmSettings:
    """The validated LLM settings of one host."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = LLM_TIMEOUT_S.default
    retries: int = LLM_RETRIES.default
    backoff_s: float = LLM_BACKOFF_S.default
    backoff_max_s: float = LLM_BACKOFF_MAX_S.default
    hooks: frozenset[str] = frozenset(HOOKS)
    response_format: str = LLM_RESPONSE_FORMAT.default
    rerank_count: int = LLM_RERANK_COUNT.default
    temperature: float = LLM_TEMPERATURE.default
    max_tokens: int = LLM_MAX_TOKENS.default
    down_after: int = LLM_DOWN_AFTER.default
    cooloff_s: float = LLM_COOLOFF_S.default

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


def _given(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without the keys set to ``None``: for the LLM, ``None`` is unset."""
    return {key: value for key, value in settings.items() if value is not None}


def _int(settings: Mapping[str, Any], setting: Setting) -> int:
    return int_setting(settings, setting, error=LlmSettingsError)


def _float(settings: Mapping[str, Any], setting: Setting) -> float:
    return float_setting(settings, setting, bounded=True, error=LlmSettingsError)


def _text(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise LlmSettingsError(f"setting {key}={value!r} must be a non-empty string")
    return value.strip()


def _hooks(settings: Mapping[str, Any]) -> frozenset[str]:
    value = settings.get(LLM_HOOKS.key)
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
    base_url = _text(settings, LLM_BASE_URL.key)
    if base_url is None:
        return None
    if not base_url.startswith(("http://", "https://")):
        raise LlmSettingsError(f"setting llm_base_url={base_url!r} must start with http(s)://")
    model = _text(settings, LLM_MODEL.key)
    if model is None:
        raise LlmSettingsError("setting llm_model is required when llm_base_url is set")
    response_format = _text(settings, LLM_RESPONSE_FORMAT.key) or LLM_RESPONSE_FORMAT.default
    if response_format not in RESPONSE_FORMATS:
        raise LlmSettingsError(
            f"setting llm_response_format={response_format!r} must be one of "
            f"{', '.join(RESPONSE_FORMATS)}"
        )
    given = _given(settings)
    return LlmSettings(
        base_url=base_url.rstrip("/"),
        model=model,
        api_key_env=_text(settings, LLM_API_KEY_ENV.key),
        timeout_s=_float(given, LLM_TIMEOUT_S),
        retries=_int(given, LLM_RETRIES),
        backoff_s=_float(given, LLM_BACKOFF_S),
        backoff_max_s=_float(given, LLM_BACKOFF_MAX_S),
        hooks=_hooks(settings),
        response_format=response_format,
        rerank_count=_int(given, LLM_RERANK_COUNT),
        temperature=_float(given, LLM_TEMPERATURE),
        max_tokens=_int(given, LLM_MAX_TOKENS),
        down_after=_int(given, LLM_DOWN_AFTER),
        cooloff_s=_float(given, LLM_COOLOFF_S),
    )
