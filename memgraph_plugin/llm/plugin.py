"""Wiring: with ``llm_base_url`` set, the host gets the LLM extractor, router and summariser
(those ``llm_hooks`` names) as plugins; without it nothing here runs.

`attach_llm(host, service=...)` is called by the built-in memory-graph plugin on ``host_startup``
with the host's `MemoryGraph` (the extractor reads the chat's graph through it);
`detach_llm(host)` on shutdown. The plugins are named ``memgraph-llm-<hook>``.
"""

from __future__ import annotations

import logging
from typing import Any

from .openai_compat import OpenAICompatibleProvider
from .provider import LlmProvider
from .settings import LlmSettings, LlmSettingsError, llm_settings
from .trace import LlmTraceLog

log = logging.getLogger(__name__)

PLUGIN_PREFIX = "memgraph-llm-"


def plugin_name(hook: str) -> str:
    return PLUGIN_PREFIX + hook


def offline_extractor(service: Any) -> Any:
    """The offline extractor the LLM extractor falls back to (the built-in one, which steps
    aside while the LLM extractor is registered), reading the chat's graph through `service`."""
    import functools

    from memgraph_plugin.extraction import offline_extract

    return functools.partial(offline_extract, service=service)


def make_plugins(
    host: Any,
    settings: LlmSettings,
    provider: LlmProvider | None = None,
    *,
    service: Any = None,
) -> dict[str, Any]:
    """hook -> plugin object for every hook the settings give to the model."""
    from .hooks.extractor import LlmExtractor
    from .hooks.llm_router import LlmRouter
    from .hooks.summariser import LlmSummariser

    provider = provider or OpenAICompatibleProvider(settings)
    trace = LlmTraceLog(host.data_dir)
    plugins: dict[str, Any] = {}
    if settings.uses("extract"):
        plugins["extract"] = LlmExtractor(
            host,
            provider,
            settings,
            offline=offline_extractor(service),
            trace=trace,
            service=service,
        )
    if settings.uses("route"):
        plugins["route"] = LlmRouter(host, provider, settings, trace=trace)
    if settings.uses("summarise"):
        plugins["summarise"] = LlmSummariser(host, provider, settings, trace=trace)
    return plugins


def attach_llm(
    host: Any, provider: LlmProvider | None = None, *, service: Any = None
) -> tuple[str, ...]:
    """Register the LLM plugins the host's settings ask for; their names (none: no LLM).
    `service`: the host's `MemoryGraph`, which the extractor reads the chat's graph through.

    A setting that cannot work is logged as an error and the offline defaults stay.
    """
    detach_llm(host)
    try:
        settings = llm_settings(host.settings)
    except LlmSettingsError as exc:
        log.error("LLM off, the offline defaults answer: %s", exc)
        return ()
    if settings is None:
        return ()
    names = []
    for hook, plugin in make_plugins(host, settings, provider, service=service).items():
        name = plugin_name(hook)
        host.register_plugin(plugin, name=name)
        names.append(name)
    log.info("LLM %s @ %s answers: %s", settings.model, settings.base_url, ", ".join(names))
    return tuple(names)


def detach_llm(host: Any) -> None:
    """Unregister the LLM plugins, if any."""
    for hook in ("extract", "route", "summarise"):
        name = plugin_name(hook)
        if host.pm.get_plugin(name) is not None:
            host.unregister_plugin(name)
