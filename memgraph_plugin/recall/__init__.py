"""Recall: the built-in hybrid router, rollout modes, rendering and traces.

The names load on first use (PEP 562): the recall commands (``trace``, ``status``) are listed by
``memgraph-host --help`` without loading the router and the engine behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..hook_contract import Inclusion, RouteRequest, RouteResult
    from .render import render_injection, render_table
    from .rollout import FallbackReason, QualityGate, RolloutDecision, RolloutMode, decide
    from .router import HybridRouter
    from .trace import RecallTrace, TraceLog

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "FallbackReason": "memgraph_plugin.recall.rollout",
    "HybridRouter": "memgraph_plugin.recall.router",
    "Inclusion": "memgraph_plugin.hook_contract",
    "QualityGate": "memgraph_plugin.recall.rollout",
    "RecallTrace": "memgraph_plugin.recall.trace",
    "RolloutDecision": "memgraph_plugin.recall.rollout",
    "RolloutMode": "memgraph_plugin.recall.rollout",
    "RouteRequest": "memgraph_plugin.hook_contract",
    "RouteResult": "memgraph_plugin.hook_contract",
    "TraceLog": "memgraph_plugin.recall.trace",
    "decide": "memgraph_plugin.recall.rollout",
    "render_injection": "memgraph_plugin.recall.render",
    "render_table": "memgraph_plugin.recall.render",
}

__all__ = [
    "FallbackReason",
    "HybridRouter",
    "Inclusion",
    "QualityGate",
    "RecallTrace",
    "RolloutDecision",
    "RolloutMode",
    "RouteRequest",
    "RouteResult",
    "TraceLog",
    "decide",
    "render_injection",
    "render_table",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
