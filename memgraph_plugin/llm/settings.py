"""The LLM settings, read from the host settings (``<data_dir>/memgraph-host.toml``).

Nothing here talks to a server: `llm_settings(settings)` is ``None`` when ``llm_base_url`` is not
set, and then no LLM code path runs at all (the offline extractor, router and summariser answer).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import attrs

#: The hooks an LLM can answer, by their short names in ``llm_hooks``.
HOOKS: tuple[str, ...] = ("extract", "route", "summarise")

#: Every setting this package reads, its default and what it does (docs/llm.md mirrors this).
SETTINGS: Mapping[str, tuple[Any, str]] = {
    "llm_base_url": (
        None,
        "URL of an OpenAI-compatible chat-completions server, up to /v1 "
        "(e.g. http://localhost:11434/v1 for Ollama). Unset: no LLM, the offline defaults answer.",
    ),
    "llm_model": (None, "Model name the server knows (required with llm_base_url)."),
    "llm_api_key_env": (
        None,
        "NAME of the environment variable holding the API key (the key itself never goes in the "
        "settings file). Unset: a placeholder key, fine for local servers.",
    ),
    "llm_timeout_s": (60.0, "Seconds one request may take before it counts as timed out."),
    "llm_retries": (2, "Extra attempts after a 429, a 5xx, a timeout or a refused connection."),
    "llm_backoff_s": (1.0, "First wait between attempts; doubles each retry."),
    "llm_backoff_max_s": (30.0, "Longest wait between attempts (a Retry-After is capped at it)."),
    "llm_hooks": (list(HOOKS), "Which hooks go through the model: extract, route, summarise."),
    "llm_response_format": (
        "json_schema",
        "json_schema (structured output) or json_object; json_schema falls back to json_object "
        "by itself when the server rejects it.",
    ),
    "llm_rerank_count": (20, "How many fused candidates the LLM router reranks at most."),
    "llm_temperature": (0.0, "Sampling temperature sent with every request."),
    "llm_max_tokens": (2048, "Most tokens one answer may have."),
    "llm_down_after": (
        3,
        "Consecutive calls that cannot reach the server (refused, timed out) after which it is "
        "not called for llm_cooloff_s seconds.",
    ),
    "llm_cooloff_s": (
        60.0,
        "Seconds the server is not called after llm_down_after failures in a row or a "
        "model-not-found answer (the offline defaults answer meanwhile).",
    ),
}

RESPONSE_FORMATS = ("json_schema", "json_object")


class LlmSettingsError(ValueError):
    """An LLM setting has a value that cannot work; the message names the setting."""


@attrs.frozen
class LlmSettings:
    """The validated LLM settings of one host."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 60.0
    retries: int = 2
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    hooks: frozenset[str] = frozenset(HOOKS)
    response_format: str = "json_schema"
    rerank_count: int = 20
    temperature: float = 0.0
    max_tokens: int = 2048
    down_after: int = 3
    cooloff_s: float = 60.0

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


def _number(settings: Mapping[str, Any], key: str, *, minimum: float, integer: bool) -> Any:
    value = settings.get(key)
    if value is None:
        return SETTINGS[key][0]
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < minimum:
        kind = "an integer" if integer else "a number"
        raise LlmSettingsError(f"setting {key}={value!r} must be {kind} >= {minimum}")
    return value if integer else float(value)


def _text(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise LlmSettingsError(f"setting {key}={value!r} must be a non-empty string")
    return value.strip()


def _hooks(settings: Mapping[str, Any]) -> frozenset[str]:
    value = settings.get("llm_hooks")
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
    base_url = _text(settings, "llm_base_url")
    if base_url is None:
        return None
    if not base_url.startswith(("http://", "https://")):
        raise LlmSettingsError(f"setting llm_base_url={base_url!r} must start with http(s)://")
    model = _text(settings, "llm_model")
    if model is None:
        raise LlmSettingsError("setting llm_model is required when llm_base_url is set")
    response_format = _text(settings, "llm_response_format") or "json_schema"
    if response_format not in RESPONSE_FORMATS:
        raise LlmSettingsError(
            f"setting llm_response_format={response_format!r} must be one of "
            f"{', '.join(RESPONSE_FORMATS)}"
        )
    return LlmSettings(
        base_url=base_url.rstrip("/"),
        model=model,
        api_key_env=_text(settings, "llm_api_key_env"),
        timeout_s=_number(settings, "llm_timeout_s", minimum=0.001, integer=False),
        retries=_number(settings, "llm_retries", minimum=0, integer=True),
        backoff_s=_number(settings, "llm_backoff_s", minimum=0, integer=False),
        backoff_max_s=_number(settings, "llm_backoff_max_s", minimum=0, integer=False),
        hooks=_hooks(settings),
        response_format=response_format,
        rerank_count=_number(settings, "llm_rerank_count", minimum=1, integer=True),
        temperature=_number(settings, "llm_temperature", minimum=0, integer=False),
        max_tokens=_number(settings, "llm_max_tokens", minimum=1, integer=True),
        down_after=_number(settings, "llm_down_after", minimum=1, integer=True),
        cooloff_s=_number(settings, "llm_cooloff_s", minimum=0, integer=False),
    )
