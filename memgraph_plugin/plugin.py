"""The built-in memory-graph plugin: adds the hook specs, runs one `MemoryGraph` per host.

On ``host_startup`` the service is published in ``host.registry`` as ``memory-graph`` (owner: this
plugin's name, version ``1.0``), so other plugins reach it with
``host.registry.get("memory-graph").open_session(ctx)``.

This module is where the rooms are wired: it makes the service and hands it down, to the turn
pipeline (``TurnPipeline(host, service)``), the LLM plugins and the commands it contributes;
none of them looks the service up from the host.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

import pluggy

from . import hookspecs, settings_keys  # noqa: F401 - settings_keys declares the plugin's keys
from .hosts import settings as _hosts_keys  # noqa: F401 - declares the chat_lease_* keys
from .proxy import settings as _proxy_keys  # noqa: F401 - declares the proxy_* keys

if TYPE_CHECKING:  # the service and its rooms load on host_startup: listing plugins stays cheap
    from .service import MemoryGraph

try:  # the host's marker (the same project name either way)
    from host.markers import hookimpl
except ImportError:  # pragma: no cover - host package always ships with this one
    hookimpl = pluggy.HookimplMarker("memgraph_host")

__all__ = [
    "API_VERSION",
    "PLUGIN_NAME",
    "host_addhooks",
    "host_cli_commands",
    "host_shutdown",
    "host_startup",
]

log = logging.getLogger(__name__)

#: The version the service is published with.
API_VERSION = "1.0"
#: The owner name used when the host cannot tell this plugin's registered name.
PLUGIN_NAME = "memgraph_plugin"


def _plugin_name(host: Any) -> str:
    pm = getattr(host, "pm", None)
    module = sys.modules[__name__]
    if pm is not None:
        try:
            name = pm.get_name(module)
        except Exception:
            name = None
        if name:
            return str(name)
    return PLUGIN_NAME


def make_service(host: Any) -> MemoryGraph:
    """The service this plugin runs on `host`, persisted in the host's LanceDB (`storage_uri`);
    its sessions answer ``get_retrieval_status`` with recall's status."""
    from .chats.factory import persistence_for_host
    from .embedding.registry import UnknownProfileError
    from .recall.status import retrieval_status
    from .service import MemoryGraph

    service = MemoryGraph(host, retrieval_status=retrieval_status)

    try:
        service.persistence = persistence_for_host(host, service)
    except UnknownProfileError as exc:  # keep the graph working; vector search reports no profile
        log.error("memory graph: %s; vector search is off", exc)
        service.persistence = persistence_for_host(host, service, profile=None)
    return service


@hookimpl
def host_addhooks(pm: pluggy.PluginManager) -> None:
    """Add the memory graph's hook specs (``memgraph_commit`` and the others)."""
    pm.add_hookspecs(hookspecs)


@hookimpl
def host_startup(host: Any) -> None:
    """Create the host's `MemoryGraph` and publish it as ``memory-graph``."""
    from .service import SERVICE_NAME, memory_graph_for
    from .turn.pipeline import TurnPipeline, use_pipeline

    old = memory_graph_for(host)
    if old is not None and not old.closed:
        return
    service = make_service(host).attach()
    host.registry.register(SERVICE_NAME, service, owner=_plugin_name(host), version=API_VERSION)
    use_pipeline(host, TurnPipeline(host, service))
    log.debug("memory graph started on %r", host)
    if host.settings.get("llm_base_url"):  # no LLM code is even imported without it
        from .llm.plugin import attach_llm

        attach_llm(host, service=service)


def running_service(host: Any) -> MemoryGraph | None:
    """The service this plugin runs on `host` (None before ``host_startup`` or after
    ``host_shutdown``): what the commands it contributes are handed when they run."""
    if "memgraph_plugin.service" not in sys.modules:  # never started in this process
        return None
    from .service import memory_graph_for

    service = memory_graph_for(host)
    return service if service is not None and not service.closed else None


@hookimpl
def host_cli_commands(host: Any) -> list[Any]:
    """``memgraph-host history/rollback/import/export/reindex/...`` (`tools.graph_commands`),
    recall's ``trace`` and ``status`` (`recall.trace_commands`), ``demo`` (`tools.demo_command`) and
    ``llm-check`` / ``llm-trace`` (`llm.llm_commands`) and ``sillytavern install``
    (`sillytavern.install_command`)."""
    from .llm.llm_commands import llm_commands
    from .proxy.chat_commands import proxy_commands
    from .recall.trace_commands import recall_commands
    from .sillytavern.install_command import sillytavern_commands
    from .tools.demo_command import demo_command
    from .tools.graph_commands import commands

    # the commands are contributed before the host starts; they are handed the service the
    # plugin runs then (the CLI starts the host before a command runs)
    return (
        commands(running_service)
        + recall_commands()
        + proxy_commands()
        + [demo_command()]
        + llm_commands()
        + sillytavern_commands()
    )


@hookimpl
def host_shutdown(host: Any) -> None:
    """Unpublish and close the host's `MemoryGraph` (and take the LLM plugins out)."""
    if "memgraph_plugin.service" not in sys.modules:  # never started in this process
        return
    from .service import SERVICE_NAME, memory_graph_for
    from .turn.pipeline import use_pipeline

    if "memgraph_plugin.llm.plugin" in sys.modules:
        from .llm.plugin import detach_llm

        detach_llm(host)
    use_pipeline(host, None)
    service = memory_graph_for(host)
    if service is None:
        return
    registry = getattr(host, "registry", None)
    if registry is not None and registry.get(SERVICE_NAME) is service:
        registry.unregister(SERVICE_NAME)
    service.close()
